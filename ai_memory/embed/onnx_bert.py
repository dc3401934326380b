"""The encoder's graph (``embed.onnx_graph``) run by a runtime's public Python API: ONNX Runtime
(float32) or OpenVINO (bfloat16 where the CPU multiplies bfloat16 in hardware, float32 elsewhere),
word pieces from the `tokenizers` library, batches as ``embed.bert`` makes them.

Neither needs torch, and both release the GIL while they run a graph. The vectors match
sentence-transformers (the test oracle): within float32 rounding, or, in bfloat16, a cosine above
0.9999 (``tests/test_embed_onnx.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from ai_memory.embed.encoding import BATCH, BATCH_PIECES, MAX_PIECES, Encoded
from ai_memory.embed.onnx_graph import INPUTS, OUTPUTS, cached_graph, model_bytes

RUNTIMES = ("onnxruntime", "openvino")


class GraphBert:
    """The encoder on one runtime, its compiled graph shared by every caller; each caller passes
    a tokenizer of its own (``tokenizer``)."""

    def __init__(self, model_dir: Path, runtime: str = "onnxruntime", threads: int = 1,
                 cache_dir: Path | None = None) -> None:
        """``cache_dir``: where the graph is kept as a file between starts (else it is built in
        memory each time)."""
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}: one of {', '.join(RUNTIMES)}")
        self._dir = model_dir
        graph = str(cached_graph(model_dir, cache_dir)) if cache_dir is not None else model_bytes(model_dir)
        self._run = (_onnxruntime if runtime == "onnxruntime" else _openvino)(graph, max(1, threads))

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
            hidden, pooled = self._run(ids, mask)
            for n, row in enumerate(rows):
                length = len(encodings[row].ids)
                found[row] = Encoded(list(encodings[row].tokens) if pieces else [],
                                     np.array(hidden[n, :length], np.float32) if pieces else np.empty((0, hidden.shape[2])),
                                     np.array(pooled[n], np.float32))
        return found


Run = Any  # (ids, mask) -> (token vectors, pooled vectors)


def _onnxruntime(graph: bytes | str, threads: int) -> Run:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    return lambda ids, mask: session.run(list(OUTPUTS), dict(zip(INPUTS, (ids, mask))))


def _openvino(graph: bytes | str, threads: int) -> Run:
    import openvino

    compiled = openvino.Core().compile_model(openvino.Core().read_model(graph), "CPU", {
        "INFERENCE_NUM_THREADS": str(threads), "PERFORMANCE_HINT": "LATENCY"})
    outputs = [compiled.output(name) for name in OUTPUTS]

    def run(ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = compiled.create_infer_request().infer(dict(zip(INPUTS, (ids, mask))))  # a request per call: thread-safe
        return found[outputs[0]], found[outputs[1]]

    return run
