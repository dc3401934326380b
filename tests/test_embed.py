"""The encoder reads all-MiniLM-L6-v2 as sentence-transformers (the test oracle) does: OpenVINO,
the daemon's runtime, within a cosine of 0.9999 in either precision; the graph it is made from,
run in float32 by ONNX Runtime, within float32 rounding. The graph and the compiled model are
made from the pinned weights alone, checked, and made again when damaged; torch is never loaded."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai_memory.embed.model import MiniLM, ModelError, packaged_model_dir
from conftest import MODEL_CACHE

TEXTS = ["hello", "Why did the Redis session cache time out in billing?", "def __eq__(self): return kw_only",
         "The LRU cache evicts after 300 s. " * 60, "naïve café — ünïcode ✓", ""]


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)


@pytest.fixture(scope="module", params=["auto", "float32"])
def model(request) -> MiniLM:
    return MiniLM(precision=request.param, cache_dir=MODEL_CACHE)


def _bfloat16_cpu() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    flags = {f for line in cpuinfo.read_text().splitlines() if line.startswith("flags") for f in line.split()}
    return bool(flags & {"amx_tile", "avx512_bf16"})


def test_pooled_vectors_match_sentence_transformers(reference, model) -> None:
    expected = reference.encode(TEXTS, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    cosines = np.sum(model.encode(TEXTS) * expected, axis=1)
    assert cosines.min() > (0.99999 if model.precision == "float32" else 0.9999), cosines


def test_pieces_and_their_vectors_match_sentence_transformers(reference, model) -> None:
    outputs = reference.encode(TEXTS, output_value=None, convert_to_numpy=True)
    for text, out, ours in zip(TEXTS, outputs, model.encode_tokens(TEXTS)):
        ids = [int(i) for i, m in zip(out["input_ids"], out["attention_mask"]) if int(m)]
        pieces = reference.tokenizer.convert_ids_to_tokens(ids)
        keep = [i for i, p in enumerate(pieces) if p not in reference.tokenizer.all_special_tokens]
        assert ours.pieces == tuple(pieces[i] for i in keep), text
        vectors = np.asarray(out["token_embeddings"][: len(ids)])[keep]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        assert ours.vectors.shape == vectors.shape and ours.vectors.dtype == np.float32, text
        assert not keep or np.sum(ours.vectors * vectors, axis=1).min() > 0.999, text


def test_texts_batched_together_read_as_each_alone(model) -> None:
    together = model.encode(TEXTS)
    alone = np.concatenate([model.encode([text]) for text in TEXTS])
    assert np.sum(together * alone, axis=1).min() > 0.9999


def test_a_sibling_shares_the_compiled_model_and_answers_alike() -> None:
    model = MiniLM(cache_dir=MODEL_CACHE)
    sibling = model.sibling()
    assert np.array_equal(model.encode(TEXTS[:3]), sibling.encode(TEXTS[:3]))
    assert sibling.load() is model.load()


def test_auto_precision_is_bfloat16_where_the_cpu_has_it_and_a_wrong_one_is_refused() -> None:
    assert MiniLM(precision="float32", cache_dir=MODEL_CACHE).precision is None  # not known before the model loads
    model = MiniLM(cache_dir=MODEL_CACHE)
    model.load()
    if Path("/proc/cpuinfo").exists():
        assert model.precision == ("bfloat16" if _bfloat16_cpu() else "float32")
    assert MiniLM(precision="float32", cache_dir=MODEL_CACHE).load().precision == "float32"
    with pytest.raises(ModelError, match="unknown embedding precision"):
        MiniLM(precision="int4", cache_dir=MODEL_CACHE).load()


def test_the_config_allows_the_precisions_the_model_knows() -> None:
    from ai_memory.config import KEYS
    from ai_memory.embed.encoder import PRECISIONS

    [key] = [k for k in KEYS if k.dotted == "embed.precision"]
    assert key.choices == PRECISIONS and key.default in PRECISIONS


def test_the_onnx_graph_is_the_models_own_in_float32(reference) -> None:
    """The graph, before OpenVINO stores its weights in float16: run by ONNX Runtime (a second,
    independent runtime), sentence-transformers' numbers within float32 rounding."""
    pytest.importorskip("onnxruntime")
    from ai_memory.embed.encoder import on_onnxruntime
    from ai_memory.embed.onnx_graph import model_bytes

    encoder = on_onnxruntime(packaged_model_dir(), model_bytes(packaged_model_dir()))
    found = encoder.encode(encoder.tokenizer(), TEXTS, pieces=True)
    expected = reference.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    outputs = reference.encode(TEXTS, output_value=None, convert_to_numpy=True)
    for text, ours, want, out in zip(TEXTS, found, expected, outputs):
        assert float(ours.pooled / np.linalg.norm(ours.pooled) @ want) > 1 - 1e-5, text
        length = int(sum(int(m) for m in out["attention_mask"]))
        assert np.abs(ours.token_vectors - np.asarray(out["token_embeddings"][:length])).max() < 1e-4, text


def test_the_same_weights_give_the_same_graph_bytes() -> None:
    from ai_memory.embed.encoding import GRAPH_SHA256
    from ai_memory.embed.onnx_graph import model_bytes

    first, second = (hashlib.sha256(model_bytes(packaged_model_dir())).hexdigest() for _ in range(2))
    assert first == second == GRAPH_SHA256


def test_the_compiled_model_is_made_once_and_made_again_when_damaged(tmp_path) -> None:
    from ai_memory.embed.compiled import model_folder

    folder = model_folder(packaged_model_dir(), tmp_path)
    digests = json.loads((folder / "digests.json").read_text())
    made = (folder / "model.bin").stat().st_mtime_ns
    assert model_folder(packaged_model_dir(), tmp_path) == folder and (folder / "model.bin").stat().st_mtime_ns == made
    with open(folder / "model.bin", "r+b") as fh:  # damaged, or planted
        fh.seek(1000)
        fh.write(b"\x7f" * 64)
    assert model_folder(packaged_model_dir(), tmp_path) == folder
    assert hashlib.sha256((folder / "model.bin").read_bytes()).hexdigest() == digests["model.bin"]
    (folder / "digests.json").unlink()  # a folder cut short before its digests were written
    model_folder(packaged_model_dir(), tmp_path)
    remade = json.loads((folder / "digests.json").read_text())
    assert remade["model.bin"] == digests["model.bin"]  # the weights, bit for bit (names of nodes may differ)
    assert all(hashlib.sha256((folder / name).read_bytes()).hexdigest() == remade[name] for name in remade)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", folder.name]  # no temporary folder left behind
    vectors = MiniLM(cache_dir=tmp_path).encode(["the login test flakes on CI", "CI login test is flaky"])
    assert float(vectors[0] @ vectors[1]) > 0.7


def test_a_model_folder_that_is_a_link_or_not_the_users_own_is_made_again(tmp_path) -> None:
    """Nothing another user (or a restored archive) placed is run, and nothing outside the cache
    folder is touched: a link is removed as a link, a stale staging folder a crash left goes."""
    import os
    import shutil

    from ai_memory.embed.compiled import GRAPH_NAME, model_folder

    made = model_folder(packaged_model_dir(), tmp_path / "first")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(made, elsewhere)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / GRAPH_NAME).symlink_to(elsewhere, target_is_directory=True)
    (cache / f".{GRAPH_NAME}.crashed").mkdir()
    folder = model_folder(packaged_model_dir(), cache)
    assert not folder.is_symlink() and folder.is_dir() and sorted(os.listdir(elsewhere)) == sorted(os.listdir(made))
    assert sorted(p.name for p in cache.iterdir()) == [".lock", GRAPH_NAME]
    mtime = (folder / "model.bin").stat().st_mtime_ns
    os.chmod(folder / "model.bin", 0o666)  # writable by anyone: not trusted
    model_folder(packaged_model_dir(), cache)
    assert (folder / "model.bin").stat().st_mtime_ns != mtime and (folder / "model.bin").stat().st_mode & 0o777 == 0o600


def test_two_processes_making_the_model_at_once_both_get_a_whole_one(tmp_path) -> None:
    probe = ("import sys; from pathlib import Path; from ai_memory.embed.model import MiniLM; "
             "print(MiniLM(cache_dir=Path(sys.argv[1])).encode(['a race']).shape[1])")
    runs = [subprocess.Popen([sys.executable, "-c", probe, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}) for _ in range(2)]
    outputs = [run.communicate(timeout=300) for run in runs]
    assert [out.strip() for out, _ in outputs] == ["384", "384"], [err[-500:] for _, err in outputs]


def test_a_wrong_checksum_refuses_to_load(tmp_path) -> None:
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(packaged_model_dir(), copy)
    with open(copy / "tokenizer.json", "ab") as fh:
        fh.write(b" ")
    with pytest.raises(ModelError, match="checksum mismatch for tokenizer.json"):
        MiniLM(copy, cache_dir=tmp_path / "cache").load()
    assert not (tmp_path / "cache").exists()


_LOAD = """
import sys, time
from pathlib import Path
from ai_memory.embed.model import MiniLM
started = time.perf_counter()
vector = MiniLM(cache_dir=Path(sys.argv[1])).encode(["a first query"])
print(vector.shape[1], "torch" in sys.modules, "onnx" in sys.modules, "sentence_transformers" in sys.modules)
"""


def test_the_model_loads_without_torch_and_once_made_without_onnx() -> None:
    MiniLM(cache_dir=MODEL_CACHE).load()  # made in the shared cache, if it was not yet
    done = subprocess.run([sys.executable, "-c", _LOAD, str(MODEL_CACHE)], capture_output=True, text=True,
                          timeout=120, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert done.stdout.split() == ["384", "False", "False", "False"], done.stderr


_GROWTH = """
import random, sys
from pathlib import Path
from ai_memory.embed.model import MiniLM
from ai_memory.heap import bound_heap, trim_heap
def rss():
    return next(int(l.split()[1]) // 1024 for l in open("/proc/self/status") if l.startswith("VmRSS"))
bound_heap()
model, rng = MiniLM(cache_dir=Path(sys.argv[1])), random.Random(1)
model.encode(["warm up"])
words = "the port of a url is checked before the query string is parsed again".split()
for i in range(45):
    model.encode([" ".join(rng.choices(words, k=rng.randint(3, 250))) for _ in range(rng.randint(1, 12))])
    trim_heap()
    if i == 4:
        first = rss()
print(rss() - first)
"""


def test_texts_of_every_length_do_not_grow_the_model_without_end() -> None:
    """Batches of every length and size: what the runtime keeps per shape stays bounded."""
    grown = subprocess.run([sys.executable, "-c", _GROWTH, str(MODEL_CACHE)], capture_output=True, text=True, check=True,
                           env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}).stdout
    assert int(grown) < 60, f"{grown.strip()} MB more after 40 batches"
