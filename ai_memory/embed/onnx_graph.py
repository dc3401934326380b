"""The BERT encoder of all-MiniLM-L6-v2 as an ONNX graph, built from the pinned safetensors with
``onnx``'s public helper API: no torch, no export, no file from the network.

The graph takes word-piece ids and their attention mask and gives, from one pass, the last
layer's vector of every piece and the mask-weighted mean of them (the pooled vector, not yet unit
length): what late interaction and the page vectors each read. It is made of standard operators
only (opset 17: Gather, MatMul, Add, LayerNormalization, Softmax, Erf, ...), so ONNX Runtime
runs it on any CPU, with its own graph fusions. The same weights in the same order give the same
bytes: ``model_bytes`` is reproducible, and its digest is pinned (``embed.encoding.GRAPH_SHA256``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

from ai_memory.embed.encoding import INPUTS, OUTPUTS

OPSET = 17
IR_VERSION = 8  # what ONNX Runtime 1.1x and later all read


class _Graph:
    """Nodes and initializers as they are added, each name made once."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[TensorProto] = []
        self._count = 0

    def name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, hint: str, value: np.ndarray) -> str:
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], hint: str | None = None, **attrs: Any) -> str:
        out = self.name(hint or kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], name=out, **attrs))
        return out


def _linear(g: _Graph, x: str, weight: np.ndarray, bias: np.ndarray, hint: str) -> str:
    """``x @ weight.T + bias``: the weight stored transposed once, as MatMul takes it."""
    product = g.op("MatMul", [x, g.const(f"{hint}_w", weight.T.astype(np.float32))])
    return g.op("Add", [product, g.const(f"{hint}_b", bias.astype(np.float32))], hint)


def _norm(g: _Graph, x: str, w: dict[str, np.ndarray], prefix: str, eps: float) -> str:
    return g.op("LayerNormalization", [x, g.const("ln_w", w[f"{prefix}.weight"]), g.const("ln_b", w[f"{prefix}.bias"])],
                axis=-1, epsilon=eps)


def _gelu(g: _Graph, x: str) -> str:
    """The exact GELU BERT was trained with: x · (1 + erf(x / √2)) / 2."""
    erf = g.op("Erf", [g.op("Mul", [x, g.const("inv_sqrt2", np.array(1 / math.sqrt(2), np.float32))])])
    one_plus = g.op("Add", [erf, g.const("one", np.array(1.0, np.float32))])
    return g.op("Mul", [g.op("Mul", [x, one_plus]), g.const("half", np.array(0.5, np.float32))])


def _layer(g: _Graph, x: str, additive_mask: str, w: dict[str, np.ndarray], i: int, heads: int, eps: float) -> str:
    """One encoder layer: self-attention, then the feed-forward block, each with its residual.
    Shapes are given with 0 for "the input's own" (batch, length): no Shape operator needed."""
    p = f"encoder.layer.{i}."
    hidden = w[f"{p}attention.self.query.weight"].shape[0]
    size = hidden // heads
    split = g.const("split", np.array([0, 0, heads, size], np.int64))

    def heads_of(name: str) -> str:  # [B, L, H] -> [B, heads, L, size]
        projected = _linear(g, x, w[f"{p}attention.self.{name}.weight"], w[f"{p}attention.self.{name}.bias"], name)
        return g.op("Transpose", [g.op("Reshape", [projected, split])], perm=[0, 2, 1, 3])

    query, key, value = heads_of("query"), heads_of("key"), heads_of("value")
    scores = g.op("MatMul", [query, g.op("Transpose", [key], perm=[0, 1, 3, 2])])
    scores = g.op("Add", [g.op("Mul", [scores, g.const("scale", np.array(1 / math.sqrt(size), np.float32))]),
                          additive_mask])
    context = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), value])
    merged = g.const("merged", np.array([0, 0, hidden], np.int64))
    context = g.op("Reshape", [g.op("Transpose", [context], perm=[0, 2, 1, 3]), merged])
    attended = _linear(g, context, w[f"{p}attention.output.dense.weight"], w[f"{p}attention.output.dense.bias"], "attn_out")
    x = _norm(g, g.op("Add", [attended, x]), w, f"{p}attention.output.LayerNorm", eps)
    inner = _gelu(g, _linear(g, x, w[f"{p}intermediate.dense.weight"], w[f"{p}intermediate.dense.bias"], "inner"))
    out = _linear(g, inner, w[f"{p}output.dense.weight"], w[f"{p}output.dense.bias"], "out")
    return _norm(g, g.op("Add", [out, x]), w, f"{p}output.LayerNorm", eps)


def build(model_dir: Path) -> Any:
    """The encoder's ModelProto, from ``model_dir``'s ``config.json`` and ``model.safetensors``."""
    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu" \
            or config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"not a BERT encoder this graph runs: {model_dir / 'config.json'}")
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(str(model_dir / "model.safetensors")).items()}
    eps, heads = float(config["layer_norm_eps"]), int(config["num_attention_heads"])
    g = _Graph()
    ids, mask = INPUTS
    # Each piece's position, 0 to length - 1 in every row: a running count of ones.
    ones = g.op("Add", [g.op("Mul", [ids, g.const("zero_i", np.array(0, np.int64))]), g.const("one_i", np.array(1, np.int64))])
    positions = g.op("Sub", [g.op("CumSum", [ones, g.const("axis_i", np.array(1, np.int64))]),
                             g.const("one_j", np.array(1, np.int64))])
    x = g.op("Add", [g.op("Gather", [g.const("words", w["embeddings.word_embeddings.weight"]), ids]),
                     g.op("Gather", [g.const("positions", w["embeddings.position_embeddings.weight"]), positions])])
    x = g.op("Add", [x, g.const("type0", w["embeddings.token_type_embeddings.weight"][0])])  # every piece is type 0
    x = _norm(g, x, w, "embeddings.LayerNorm", eps)
    weight = g.op("Cast", [mask], to=TensorProto.FLOAT)  # [B, L]
    lowest = np.array(np.finfo(np.float32).min, np.float32)
    blocked = g.op("Mul", [g.op("Sub", [g.const("one_f", np.array(1.0, np.float32)), weight]), g.const("lowest", lowest)])
    additive = g.op("Unsqueeze", [blocked, g.const("axes", np.array([1, 2], np.int64))])  # [B, 1, 1, L]
    for i in range(int(config["num_hidden_layers"])):
        x = _layer(g, x, additive, w, i, heads, eps)
    tokens, pooled = OUTPUTS
    g.nodes.append(helper.make_node("Identity", [x], [tokens], name=tokens))
    weights = g.op("Unsqueeze", [weight, g.const("last", np.array([2], np.int64))])  # [B, L, 1]
    total = g.op("ReduceSum", [g.op("Mul", [x, weights]), g.const("axis1", np.array([1], np.int64))], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [weights, g.const("axis1b", np.array([1], np.int64))], keepdims=0),
                         g.const("tiny", np.array(1e-9, np.float32))])
    g.nodes.append(helper.make_node("Div", [total, count], [pooled], name=pooled))
    hidden = int(config["hidden_size"])
    graph = helper.make_graph(
        g.nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "length"]) for name in INPUTS],
        [helper.make_tensor_value_info(tokens, TensorProto.FLOAT, ["batch", "length", hidden]),
         helper.make_tensor_value_info(pooled, TensorProto.FLOAT, ["batch", hidden])],
        g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ai-memory",
                              ir_version=IR_VERSION)
    return model


def model_bytes(model_dir: Path) -> bytes:
    """The serialized graph (deterministic: the same weights give the same bytes)."""
    return build(model_dir).SerializeToString(deterministic=True)
