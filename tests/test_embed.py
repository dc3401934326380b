"""Our BERT encoder reads all-MiniLM-L6-v2 exactly as sentence-transformers does (in float32),
and in bfloat16 near enough that vectors of either precision compare with the other's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ai_memory.embed.model import MiniLM, packaged_model_dir

TEXTS = ["hello", "Why did the Redis session cache time out in billing?", "def __eq__(self): return kw_only",
         "The LRU cache evicts after 300 s. " * 60, "naïve café — ünïcode ✓", ""]


@pytest.fixture(scope="module")
def reference():
    st = pytest.importorskip("sentence_transformers")
    return st.SentenceTransformer(str(packaged_model_dir()), device="cpu", local_files_only=True)


def test_pooled_vectors_match_sentence_transformers(reference) -> None:
    expected = reference.encode(TEXTS, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    assert np.abs(MiniLM(precision="float32").encode(TEXTS) - expected).max() < 1e-5


def test_pieces_and_their_vectors_match_sentence_transformers(reference) -> None:
    model = MiniLM(precision="float32")
    outputs = reference.encode(TEXTS, output_value=None, convert_to_numpy=True)
    for text, out, ours in zip(TEXTS, outputs, model.encode_tokens(TEXTS)):
        ids = [int(i) for i, m in zip(out["input_ids"], out["attention_mask"]) if int(m)]
        pieces = reference.tokenizer.convert_ids_to_tokens(ids)
        keep = [i for i, p in enumerate(pieces) if p not in reference.tokenizer.all_special_tokens]
        assert ours.pieces == tuple(pieces[i] for i in keep), text
        vectors = np.asarray(out["token_embeddings"][: len(ids)])[keep]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        assert ours.vectors.shape == vectors.shape and np.allclose(ours.vectors, vectors, atol=1e-5), text
        assert abs(float(ours.pooled @ reference.encode([text], normalize_embeddings=True)[0]) - 1) < 1e-5


def test_a_sibling_shares_the_weights_and_answers_alike() -> None:
    model = MiniLM()
    sibling = model.sibling()
    assert np.array_equal(model.encode(TEXTS[:3]), sibling.encode(TEXTS[:3]))
    assert sibling._weights is model._weights


def test_bfloat16_weights_give_the_float32_vectors_within_a_cosine_of_0_9995() -> None:
    exact, half = MiniLM(precision="float32"), MiniLM(precision="bfloat16")
    cosines = np.sum(exact.encode(TEXTS) * half.encode(TEXTS), axis=1)
    assert cosines.min() > 0.9995, cosines
    for a, b in zip(exact.encode_tokens(TEXTS), half.encode_tokens(TEXTS)):
        assert a.pieces == b.pieces and b.vectors.dtype == np.float32
        assert not a.pieces or np.sum(a.vectors * b.vectors, axis=1).min() > 0.999


def test_auto_precision_is_one_the_weights_can_be_held_in_and_a_wrong_one_is_refused() -> None:
    from ai_memory.embed.model import ModelError, precision_for

    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():  # Linux: auto is bfloat16 exactly where the CPU has bfloat16 matrix instructions
        flags = {f for line in cpuinfo.read_text().splitlines() if line.startswith("flags") for f in line.split()}
        assert precision_for("auto") == ("bfloat16" if flags & {"amx_tile", "avx512_bf16"} else "float32")
    assert precision_for("auto") in ("float32", "bfloat16")
    assert precision_for("float32") == "float32"
    with pytest.raises(ModelError, match="unknown embedding precision"):
        precision_for("int4")


def test_the_config_allows_the_precisions_the_model_knows() -> None:
    from ai_memory.config import KEYS
    from ai_memory.embed.model import PRECISIONS

    [key] = [k for k in KEYS if k.dotted == "embed.precision"]
    assert key.choices == PRECISIONS and key.default in PRECISIONS
    assert MiniLM(precision="float32").precision is None  # not known before the weights load


_GROWTH = """
import random, sys
from ai_memory.embed.model import MiniLM
from ai_memory.heap import bound_heap, trim_heap
def rss():
    return next(int(l.split()[1]) // 1024 for l in open("/proc/self/status") if l.startswith("VmRSS"))
bound_heap()
model, rng = MiniLM(precision="bfloat16"), random.Random(1)
model.encode(["warm up"])
words = "the port of a url is checked before the query string is parsed again".split()
for i in range(45):
    model.encode([" ".join(rng.choices(words, k=rng.randint(3, 250))) for _ in range(rng.randint(1, 12))])
    trim_heap()
    if i == 4:
        first = rss()
print(rss() - first)
"""


def test_texts_of_every_length_do_not_grow_a_bfloat16_model_without_end() -> None:
    """oneDNN keeps the kernels it compiled for each shape of bfloat16 product: batches of every
    length and size grew a process by hundreds of MB. They run in a few shapes instead."""
    from ai_memory.embed.model import precision_for

    if precision_for("auto") != "bfloat16":
        pytest.skip("this CPU has no bfloat16 matrix instructions: the model runs in float32 here")
    import subprocess
    import sys

    grown = subprocess.run([sys.executable, "-c", _GROWTH], capture_output=True, text=True, check=True,
                           env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}).stdout
    assert int(grown) < 60, f"{grown.strip()} MB more after 40 batches"


def test_a_packed_bfloat16_product_gives_the_plain_products_numbers_in_every_shape() -> None:
    """The packed weight is checked at load on one shape; a query and a batch run in others."""
    import torch

    from ai_memory.embed.bert import _Product
    from ai_memory.embed.model import precision_for

    if precision_for("auto") != "bfloat16":
        pytest.skip("this CPU has no bfloat16 matrix instructions: the model runs in float32 here")
    generator = torch.Generator().manual_seed(3)
    weight = torch.randn(96, 64, generator=generator).to(torch.bfloat16)
    bias = torch.randn(96, generator=generator).to(torch.bfloat16)
    product = _Product(weight, bias)
    assert product.packed, "the weight was not packed"
    for shape in ((1, 32, 64), (1, 8, 64), (8, 64, 64), (32, 256, 64)):
        x = torch.randn(*shape, generator=generator).to(torch.bfloat16)
        with torch.inference_mode():
            assert torch.equal(product(x), torch.nn.functional.linear(x, weight, bias)), shape


def _tiny_encoder_weights(generator, hidden: int = 32, vocab: int = 50) -> dict:
    import torch

    names = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")
    w = {f"encoder.layer.0.{n}.weight": torch.randn(hidden, hidden, generator=generator) for n in names}
    w["encoder.layer.0.intermediate.dense.weight"] = torch.randn(4 * hidden, hidden, generator=generator)
    w["encoder.layer.0.output.dense.weight"] = torch.randn(hidden, 4 * hidden, generator=generator)
    w |= {k.replace("weight", "bias"): torch.randn(v.shape[0], generator=generator) for k, v in w.items()}
    norms = ("encoder.layer.0.attention.output.LayerNorm", "encoder.layer.0.output.LayerNorm", "embeddings.LayerNorm")
    for norm in norms:
        w[f"{norm}.weight"], w[f"{norm}.bias"] = torch.ones(hidden), torch.zeros(hidden)
    for name, rows in (("word", vocab), ("token_type", 2), ("position", 64)):
        w[f"embeddings.{name}_embeddings.weight"] = torch.randn(rows, hidden, generator=generator)
    return w


def test_the_compiled_pass_gives_the_numbers_the_pass_gives_from_python() -> None:
    """TorchScript runs the pass without the GIL, unoptimised: the same operations in the same
    order, so the same vectors bit for bit, for a query's shape and a batch's, padded or not."""
    import torch

    from ai_memory.embed.bert import _Encoder, _without_the_lock

    config = {"layer_norm_eps": 1e-12, "num_attention_heads": 4, "num_hidden_layers": 1}
    for dtype in (torch.float32, torch.bfloat16):
        weights = {k: v.to(dtype) for k, v in _tiny_encoder_weights(torch.Generator().manual_seed(5)).items()}
        encoder = _Encoder(weights, config)
        compiled = _without_the_lock(encoder)
        assert compiled is not encoder, "TorchScript compiled nothing"
        generator = torch.Generator().manual_seed(7)
        for rows, length in ((1, 32), (4, 64)):
            ids = torch.randint(0, 50, (rows, length), generator=generator)
            for mask in (torch.ones_like(ids), (torch.arange(length) < length // 2).long().expand(rows, length)):
                with torch.inference_mode(), torch.jit.optimized_execution(False):
                    (hidden, pooled), (hidden2, pooled2) = (e(ids, torch.zeros_like(ids), mask)
                                                            for e in (compiled, encoder))
                assert torch.equal(hidden, hidden2) and torch.equal(pooled, pooled2), (dtype, rows, length)
