"""Our BERT encoder reads all-MiniLM-L6-v2 exactly as sentence-transformers does."""

from __future__ import annotations

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
    assert np.abs(MiniLM().encode(TEXTS) - expected).max() < 1e-5


def test_pieces_and_their_vectors_match_sentence_transformers(reference) -> None:
    model = MiniLM()
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
