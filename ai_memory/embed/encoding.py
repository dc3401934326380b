"""What every encoder of the model shares, whatever runs it: how many word pieces it reads, how
texts are batched, what one text encodes to, and unit length. No runtime is imported here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_PIECES = 256  # sentence_bert_config.json: the model reads at most this many pieces
BATCH = 32
BATCH_PIECES = 2048


@dataclass(frozen=True)
class Encoded:
    """One text as the model read it: its pieces with [CLS] and [SEP] (when asked for), their
    contextual vectors (the last layer), and the mean-pooled vector (not yet unit length)."""

    pieces: list[str]
    token_vectors: np.ndarray
    pooled: np.ndarray


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32), as the Normalize module did."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
