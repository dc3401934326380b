"""The encoder run by a runtime's public Python API: OpenVINO (the daemon's: bfloat16 where the
CPU multiplies bfloat16 in hardware, float32 elsewhere, over the float16-stored weights of
``embed.compiled``) or ONNX Runtime (float32, over ``embed.onnx_graph``'s graph: the second
opinion the tests and ``benchmarks/encoders.py`` compare with). Word pieces come from the
`tokenizers` library; batches are made longest texts first.

Neither runtime needs torch, and both release the GIL while they run a graph. The vectors match
sentence-transformers (the test oracle) within a cosine of 0.9999 (``tests/test_embed.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
from tokenizers import Tokenizer

from ai_memory.embed.encoding import BATCH, BATCH_PIECES, INPUTS, MAX_PIECES, OUTPUTS, PIECE_STEP, Encoded
STREAMS = 2  # passes that run at once: a query's beside a batch's
PRECISIONS = ("auto", "float32", "bfloat16")  # config's embed.precision allows these
_OPENVINO_HINTS = {"float32": "f32", "bfloat16": "bf16"}
_OPENVINO_NAMES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}

Run = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]  # (ids, mask) -> (pieces', pooled)


class GraphEncoder:
    """The encoder's graph on one runtime, shared by every caller; each caller passes a
    tokenizer of its own (``tokenizer``: the fast tokenizer is not safe to share across threads)."""

    def __init__(self, model_dir: Path, run: Run, precision: str) -> None:
        self._dir = model_dir
        self._run = run
        self.precision = precision

    def tokenizer(self) -> Tokenizer:
        tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
        tok.enable_truncation(MAX_PIECES)
        tok.no_padding()  # encode pads each batch to its longest text
        return tok

    def encode(self, tokenizer: Tokenizer, texts: list[str], pieces: bool = False) -> list[Encoded]:
        """Longest texts first (less padding), in batches of at most BATCH texts and BATCH_PIECES
        pieces, each padded to a multiple of PIECE_STEP pieces."""
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        found: list[Any] = [None] * len(texts)
        start = 0
        while start < len(order):
            width = min(MAX_PIECES, -(-max(1, len(encodings[order[start]].ids)) // PIECE_STEP) * PIECE_STEP)
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


def on_openvino(model_dir: Path, cache_dir: Path, threads: int = 1, precision: str = "auto") -> GraphEncoder:
    """The daemon's encoder: two streams over one copy of the weights, each ``threads`` threads,
    so a query's pass runs beside an embedding batch's instead of waiting for it (a pass of 256
    pieces takes tens of ms; a query's takes 3). The passes run on OpenVINO's threads, which
    have the priority of the thread that loaded the model. The compiled form is kept in
    ``cache_dir`` by OpenVINO, so a later start skips compiling."""
    import openvino

    from ai_memory.embed.compiled import COMPILED, MODEL_FILES, model_folder

    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: one of {', '.join(PRECISIONS)}")
    folder = model_folder(model_dir, cache_dir)
    core = openvino.Core()
    core.set_property({"CACHE_DIR": str(folder / COMPILED)})
    settings = {"NUM_STREAMS": str(STREAMS), "INFERENCE_NUM_THREADS": str(STREAMS * max(1, threads))}
    if precision != "auto":
        settings["INFERENCE_PRECISION_HINT"] = _OPENVINO_HINTS[precision]
    compiled = core.compile_model(str(folder / MODEL_FILES[0]), "CPU", settings)
    outputs = [compiled.output(name) for name in OUTPUTS]
    chosen = str(compiled.get_property("INFERENCE_PRECISION_HINT").to_string())

    def run(ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        found = compiled.create_infer_request().infer(dict(zip(INPUTS, (ids, mask))))  # a request per call: thread-safe
        return found[outputs[0]], found[outputs[1]]

    return GraphEncoder(model_dir, run, _OPENVINO_NAMES.get(chosen, chosen))


def on_onnxruntime(model_dir: Path, graph: bytes | str, threads: int = 1) -> GraphEncoder:
    """The float32 graph on ONNX Runtime (a test and benchmark dependency, not the daemon's)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(1, threads)
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])

    def run(ids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hidden, pooled = session.run(list(OUTPUTS), dict(zip(INPUTS, (ids, mask))))
        return hidden, pooled

    return GraphEncoder(model_dir, run, "float32")
