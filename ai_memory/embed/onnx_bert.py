"""The encoder on ONNX Runtime: the graph of ``embed.onnx_graph`` run by its public Python API,
word pieces from the `tokenizers` library, batches as ``embed.bert`` makes them.

ONNX Runtime releases the GIL while it runs a graph, keeps no kernels per shape, and needs no
torch: the same vectors as sentence-transformers (the test oracle) within float32 rounding.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

from ai_memory.embed.bert import BATCH, BATCH_PIECES, MAX_PIECES, Encoded
from ai_memory.embed.onnx_graph import INPUTS, model_bytes


class OnnxBert:
    """The encoder, one session shared by every caller (``run`` is thread-safe); each caller
    passes a tokenizer of its own (``tokenizer``)."""

    def __init__(self, model_dir: Path, threads: int = 1) -> None:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, threads)
        options.inter_op_num_threads = 1
        self._dir = model_dir
        self._session = onnxruntime.InferenceSession(model_bytes(model_dir), options,
                                                     providers=["CPUExecutionProvider"])

    def tokenizer(self) -> Tokenizer:
        tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
        tok.enable_truncation(MAX_PIECES)
        tok.no_padding()  # encode pads each batch to its longest text
        return tok

    def encode(self, tokenizer: Tokenizer, texts: list[str], pieces: bool = False) -> list[Encoded]:
        """Longest texts first (less padding), in batches of at most BATCH texts and BATCH_PIECES
        pieces, as ``embed.bert.Bert.encode``."""
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        found: list[Any] = [None] * len(texts)
        start = 0
        while start < len(order):
            width = max(1, len(encodings[order[start]].ids))
            rows = order[start:start + max(1, min(BATCH, BATCH_PIECES // width))]
            start += len(rows)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.int64)
            for n, row in enumerate(rows):
                length = len(encodings[row].ids)
                ids[n, :length] = encodings[row].ids
                mask[n, :length] = 1
            hidden, pooled = self._session.run(None, dict(zip(INPUTS, (ids, mask))))
            for n, row in enumerate(rows):
                length = len(encodings[row].ids)
                found[row] = Encoded(list(encodings[row].tokens) if pieces else [],
                                     hidden[n, :length].copy() if pieces else np.empty((0, hidden.shape[2])),
                                     pooled[n].copy())
        return found
