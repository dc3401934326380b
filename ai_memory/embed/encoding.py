"""What every encoder of the model shares, whatever runs it: how many word pieces it reads, how
texts are batched, what one text encodes to, and unit length. No runtime is imported here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_PIECES = 256  # sentence_bert_config.json: the model reads at most this many pieces
BATCH = 32
# At most this many pieces in one pass: a search that needs the model while a batch holds it waits
# for one short pass only (tens of ms), and passes this small are as fast per text as long ones.
BATCH_PIECES = 256
# A batch is padded to a multiple of this many pieces: a runtime prepares its kernels for each
# shape it meets, so a few shapes (a query is 8, 16 or 24 pieces) keep every pass on prepared ones.
PIECE_STEP = 16


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

# The SHA-256 of the encoder's ONNX graph as ``embed.onnx_graph`` builds it from the pinned weights
# (with the onnx it is built with): a graph that differs is never used.
GRAPH_SHA256 = "bd05b74a6f95dc2cb766ef054a0e96067322c0e5f77bd25ab26a26bdac85e948"

# The graph's inputs and outputs, by name (``embed.onnx_graph`` makes them, ``embed.encoder`` feeds them).
INPUTS = ("input_ids", "attention_mask")
OUTPUTS = ("token_vectors", "pooled")
