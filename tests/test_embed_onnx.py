"""The encoder as an ONNX graph built from the pinned weights (``embed.onnx_graph``), run by ONNX
Runtime (``embed.onnx_bert``): the same vectors as sentence-transformers, the test oracle, and the
same graph bytes from the same weights. A candidate for issue 42, measured by
``benchmarks/encoders.py``; the daemon still runs ``embed.bert``."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ai_memory.embed.model import packaged_model_dir
from test_embed import TEXTS

onnxruntime = pytest.importorskip("onnxruntime")


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def encoder():
    from ai_memory.embed.onnx_bert import OnnxBert

    return OnnxBert(packaged_model_dir())


def test_pooled_and_piece_vectors_match_sentence_transformers(reference, encoder) -> None:
    found = encoder.encode(encoder.tokenizer(), TEXTS, pieces=True)
    expected = reference.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    outputs = reference.encode(TEXTS, output_value=None, convert_to_numpy=True)
    for text, ours, want, out in zip(TEXTS, found, expected, outputs):
        pooled = ours.pooled / np.linalg.norm(ours.pooled)
        assert float(pooled @ want) > 1 - 1e-5, text
        length = int(sum(int(m) for m in out["attention_mask"]))
        assert ours.token_vectors.shape == (length, 384), text
        assert np.allclose(ours.token_vectors, np.asarray(out["token_embeddings"][:length]), atol=1e-4), text


def test_texts_batched_together_read_as_each_alone(encoder) -> None:
    tokenizer = encoder.tokenizer()
    together = encoder.encode(tokenizer, TEXTS)
    for text, batched in zip(TEXTS, together):
        [alone] = encoder.encode(tokenizer, [text])
        assert np.allclose(batched.pooled, alone.pooled, atol=1e-5), text


def test_the_same_weights_give_the_same_graph_bytes() -> None:
    from ai_memory.embed.onnx_graph import model_bytes

    first, second = (hashlib.sha256(model_bytes(packaged_model_dir())).hexdigest() for _ in range(2))
    assert first == second
