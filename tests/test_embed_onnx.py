"""The encoder as an ONNX graph built from the pinned weights (``embed.onnx_graph``), run by ONNX
Runtime and by OpenVINO (``embed.onnx_bert``): the vectors of sentence-transformers, the test
oracle (float32 within rounding; OpenVINO's bfloat16 within a cosine of 0.9999), and the same
graph bytes from the same weights. Candidates for issue 42, measured by
``benchmarks/encoders.py``; the daemon still runs ``embed.bert``."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ai_memory.embed.model import packaged_model_dir
from test_embed import TEXTS

# (runtime, lowest cosine of a pooled vector, largest difference of a piece's vector)
RUNTIMES = [("onnxruntime", 1 - 1e-5, 1e-4), ("openvino", 0.9999, 0.1)]


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)


@pytest.fixture(scope="module", params=RUNTIMES, ids=[r[0] for r in RUNTIMES])
def runtime(request):
    name, cosine, piece = request.param
    pytest.importorskip(name)
    from ai_memory.embed.onnx_bert import GraphBert

    return GraphBert(packaged_model_dir(), name), cosine, piece


def test_pooled_and_piece_vectors_match_sentence_transformers(reference, runtime) -> None:
    encoder, cosine, piece = runtime
    found = encoder.encode(encoder.tokenizer(), TEXTS, pieces=True)
    expected = reference.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    outputs = reference.encode(TEXTS, output_value=None, convert_to_numpy=True)
    for text, ours, want, out in zip(TEXTS, found, expected, outputs):
        pooled = ours.pooled / np.linalg.norm(ours.pooled)
        assert float(pooled @ want) > cosine, text
        length = int(sum(int(m) for m in out["attention_mask"]))
        assert ours.token_vectors.shape == (length, 384), text
        assert np.abs(ours.token_vectors - np.asarray(out["token_embeddings"][:length])).max() < piece, text


def test_texts_batched_together_read_as_each_alone(runtime) -> None:
    encoder, cosine, _ = runtime
    tokenizer = encoder.tokenizer()
    together = encoder.encode(tokenizer, TEXTS)
    for text, batched in zip(TEXTS, together):
        [alone] = encoder.encode(tokenizer, [text])
        both = batched.pooled @ alone.pooled / (np.linalg.norm(batched.pooled) * np.linalg.norm(alone.pooled))
        assert float(both) > cosine, text


def test_the_same_weights_give_the_same_graph_bytes() -> None:
    from ai_memory.embed.onnx_graph import model_bytes

    first, second = (hashlib.sha256(model_bytes(packaged_model_dir())).hexdigest() for _ in range(2))
    assert first == second


def test_the_graph_is_kept_as_a_file_and_one_that_differs_is_built_again(tmp_path) -> None:
    from ai_memory.embed.onnx_graph import GRAPH_SHA256, cached_graph

    path = cached_graph(packaged_model_dir(), tmp_path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == GRAPH_SHA256
    path.write_bytes(b"not the graph")  # damaged, or planted
    assert cached_graph(packaged_model_dir(), tmp_path) == path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == GRAPH_SHA256
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_the_graph_encoders_need_no_torch() -> None:
    import subprocess
    import sys

    probe = "import sys, ai_memory.embed.onnx_bert; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
