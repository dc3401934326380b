"""The BERT encoder of all-MiniLM-L6-v2 in plain torch: weights from safetensors, word pieces
from the `tokenizers` library, mean pooling over the attention mask.

Weights are held in float32, or in bfloat16 where the CPU multiplies bfloat16 matrices in
hardware (``embed.model.precision_for``): half the memory, and a query encoded in half the time
or less, its vector within a cosine of 0.9995 of float32's (``tests/test_embed.py``), so
vectors stored at either precision compare with queries encoded at the other.

sentence-transformers and transformers computed the same thing, but importing them costs
about 200 MB of resident memory per process (transformers alone pulls in scipy and sympy),
more than torch and the model together. The architecture is fixed by the model's
``config.json`` and checked at load; ``tests/test_embed.py`` compares the vectors with
sentence-transformers' on the same texts.
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path
from typing import Any, List, Optional, Tuple, Union

import numpy as np
import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from ai_memory.embed.encoding import BATCH, BATCH_PIECES, MAX_PIECES, Encoded, unit

__all__ = ["BATCH", "BATCH_PIECES", "MAX_PIECES", "Bert", "Encoded", "unit"]
log = logging.getLogger(__name__)
# In bfloat16 the matrix products go through oneDNN, which compiles kernels for each shape it
# meets and keeps them: texts of every length in batches of every size grew a process by
# 3-5 MB a batch without end (670 MB over 120 batches). So a bfloat16 batch runs in one of a
# few shapes: its length padded to a multiple of LENGTH_STEP, its rows to a power of two (the
# padding masked out, as a batch's shorter texts are). float32 runs on kernels made for any
# shape, and as it is: padding would only cost time.
LENGTH_STEP = 32


class _Product(torch.nn.Module):
    """One linear layer's matrix product. In bfloat16 its weight is packed once into oneDNN's
    own layout: the plain product re-packs the weight on every call, which was most of a short
    text's time (a query's product 60 µs instead of 115; one of 2,048 rows 1.3 ms instead of
    2.0), for the same numbers bit for bit. The packed product is checked at load, and the plain
    one kept wherever packing is not offered or gives other numbers (another torch, a CPU
    without oneDNN)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        super().__init__()
        packed = _packed(weight, bias) if weight.dtype == torch.bfloat16 else None
        self.packed = packed is not None
        self.register_buffer("weight", packed if packed is not None else weight)  # one copy: the one used
        self.register_buffer("bias", bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed:
            no_scalars: List[Optional[Union[int, float, complex]]] = []
            return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", no_scalars, "")
        return torch.nn.functional.linear(x, self.weight, self.bias)


@torch.inference_mode()
def _packed(weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor | None:
    try:
        packed = torch.ops.mkldnn._reorder_linear_weight(weight, LENGTH_STEP)
        # In the shape a query runs in (another shape would cost kernels of its own), against
        # float32, whose product keeps no kernels: the plain bfloat16 one would keep its own.
        probe = torch.linspace(-1.0, 1.0, LENGTH_STEP * weight.shape[1]).reshape(1, LENGTH_STEP, -1)
        found = torch.ops.mkldnn._linear_pointwise(probe.to(weight.dtype), packed, bias, "none", [], "")
        expected = torch.nn.functional.linear(probe, weight.float(), bias.float())
        same = torch.allclose(found.float(), expected, rtol=0.02, atol=0.02 * float(expected.abs().max()))
    except (AttributeError, RuntimeError):
        return None
    return packed if same else None


class _Layer(torch.nn.Module):
    """One encoder layer. The query, key and value projections are one matrix product (their
    weights stacked at load): the same vectors in fewer operations."""

    def __init__(self, w: dict[str, torch.Tensor], prefix: str, heads: int, eps: float) -> None:
        super().__init__()
        own = {k.removeprefix(prefix): v for k, v in w.items() if k.startswith(prefix)}
        projections = [f"attention.self.{name}" for name in ("query", "key", "value")]
        for key in own:  # each plain weight is let go as its layer takes it: never all twice at once
            del w[prefix + key]
        self.qkv = _Product(torch.cat([own.pop(f"{p}.weight") for p in projections]),
                            torch.cat([own.pop(f"{p}.bias") for p in projections]))
        self.attended, self.inner, self.out = (_Product(own.pop(f"{name}.weight"), own.pop(f"{name}.bias"))
                                               for name in ("attention.output.dense", "intermediate.dense",
                                                            "output.dense"))
        for name, norm in (("attended_norm", "attention.output.LayerNorm"), ("out_norm", "output.LayerNorm")):
            self.register_buffer(f"{name}_weight", own[f"{norm}.weight"])
            self.register_buffer(f"{name}_bias", own[f"{norm}.bias"])
        self.heads, self.eps = heads, eps

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        batch, length, hidden = x.shape[0], x.shape[1], x.shape[2]
        qkv = self.qkv(x).view(batch, length, 3, self.heads, hidden // self.heads).permute(2, 0, 3, 1, 4)
        context = torch.nn.functional.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=mask)
        context = context.transpose(1, 2).reshape(batch, length, hidden)
        x = torch.nn.functional.layer_norm(self.attended(context) + x, [hidden], self.attended_norm_weight,
                                           self.attended_norm_bias, self.eps)
        out = self.out(torch.nn.functional.gelu(self.inner(x)))
        return torch.nn.functional.layer_norm(out + x, [hidden], self.out_norm_weight, self.out_norm_bias, self.eps)


class _Encoder(torch.nn.Module):
    """The whole pass, from word pieces to vectors: the embeddings, the layers, and mean pooling
    over the attention mask. Returns the last layer's vectors and the pooled ones, in float32
    whatever the weights are held in."""

    def __init__(self, weights: dict[str, torch.Tensor], config: dict[str, Any]) -> None:
        super().__init__()
        eps = float(config["layer_norm_eps"])
        for name in ("word_embeddings.weight", "token_type_embeddings.weight", "position_embeddings.weight",
                     "LayerNorm.weight", "LayerNorm.bias"):
            self.register_buffer(name.replace(".", "_"), weights.pop(f"embeddings.{name}"))
        heads = int(config["num_attention_heads"])
        self.layers = torch.nn.ModuleList([_Layer(weights, f"encoder.layer.{i}.", heads, eps)
                                           for i in range(int(config["num_hidden_layers"]))])
        self.eps, self.lowest = eps, float(torch.finfo(self.LayerNorm_weight.dtype).min)
        unpacked = [p for p in self.modules() if isinstance(p, _Product) and p.weight.dtype == torch.bfloat16
                    and not p.packed]
        if unpacked:  # the same numbers, at twice a query's time
            log.warning("%d bfloat16 products run unpacked: this torch does not pack them for oneDNN", len(unpacked))

    def forward(self, ids: torch.Tensor, types: torch.Tensor, mask: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.word_embeddings_weight[ids] + self.token_type_embeddings_weight[types] \
            + self.position_embeddings_weight[positions]
        x = torch.nn.functional.layer_norm(x, [x.shape[2]], self.LayerNorm_weight, self.LayerNorm_bias, self.eps)
        # No padding (texts of one length, or a query in float32): attention needs no mask at all.
        additive: Optional[torch.Tensor] = None
        if not bool(mask.all()):
            additive = (1.0 - mask[:, None, None, :].to(x.dtype)) * self.lowest
        for layer in self.layers:
            x = layer(x, additive)
        hidden = x.float()
        weight = mask.unsqueeze(-1).to(hidden.dtype)
        return hidden, (hidden * weight).sum(1) / torch.clamp(weight.sum(1), min=1e-9)


def _without_the_lock(encoder: _Encoder) -> torch.nn.Module:
    """The pass compiled to TorchScript, whose interpreter runs it without holding the GIL. Run
    from Python, each of its hundred-odd operations takes the GIL back as it ends, and waits
    for it behind any thread running Python (up to the 5 ms switch interval each time): beside
    a thread that ran Python without pause, a query took 0.3-0.5 s instead of 3.6 ms (compiled:
    18 ms), and a search's reading and the query's encoding, meant to overlap, ran one after the
    other. The interpreter runs unoptimised (``Bert._forward``): the same operations in the
    same order, so the same numbers. Where TorchScript is not offered, the pass runs from Python."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit is kept in maintenance
            return torch.jit.script(encoder)
    except Exception as exc:  # noqa: BLE001 - any failure to compile leaves the pass as it is
        log.warning("the encoder runs from Python, holding the GIL (TorchScript: %s)", exc)
        return encoder


class Bert:
    """The encoder, its weights held once; ``encode`` is safe to call from several threads
    (each caller passes its own tokenizer, see ``tokenizer``)."""

    def __init__(self, model_dir: Path, dtype: torch.dtype = torch.float32) -> None:
        config = json.loads((model_dir / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("position_embedding_type", "absolute") != "absolute" \
                or config.get("hidden_act") != "gelu":
            raise ValueError(f"not a BERT encoder this module runs: {model_dir / 'config.json'}")
        weights = {k.removeprefix("bert."): v.to(dtype)
                   for k, v in load_file(str(model_dir / "model.safetensors")).items()}
        self._dir = model_dir
        self._dtype = dtype
        self._hidden = int(config["hidden_size"])
        self._encoder = _without_the_lock(_Encoder(weights, config))

    def tokenizer(self) -> Tokenizer:
        """A tokenizer of one's own: the Rust tokenizer is not shared across threads."""
        tok = Tokenizer.from_file(str(self._dir / "tokenizer.json"))
        tok.enable_truncation(MAX_PIECES)
        tok.no_padding()  # encode pads each batch to its longest text
        return tok

    @torch.inference_mode()
    def _forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The last layer's vectors and the pooled ones (float32)."""
        with torch.jit.optimized_execution(False):
            return self._encoder(ids, torch.zeros_like(ids), mask)

    def _width(self, longest: int) -> int:
        """The length a batch whose longest text has ``longest`` pieces runs in (``LENGTH_STEP``)."""
        return longest if self._dtype != torch.bfloat16 else min(MAX_PIECES, -(-longest // LENGTH_STEP) * LENGTH_STEP)

    def _height(self, count: int, full: int) -> int:
        """The rows a batch of ``count`` texts runs in, ``full`` the most its length allows: a
        full batch as it is, a smaller one (a backlog's last, a query) in bfloat16 padded to a
        power of two."""
        return count if self._dtype != torch.bfloat16 or count == full else min(full, 1 << (count - 1).bit_length())

    def encode(self, tokenizer: Tokenizer, texts: list[str], pieces: bool = False) -> list[Encoded]:
        """Longest texts first (less padding), in batches of at most BATCH texts and
        BATCH_PIECES pieces: a batch's attention scores grow with texts × length², and memory
        the allocator took for one large batch stays resident in the process."""
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        found: list[Any] = [None] * len(texts)
        start = 0
        while start < len(order):
            width = self._width(max(1, len(encodings[order[start]].ids)))
            full = max(1, min(BATCH, BATCH_PIECES // width))
            rows = order[start:start + full]
            start += len(rows)
            height = self._height(len(rows), full)
            ids = torch.zeros((height, width), dtype=torch.long)
            mask = torch.zeros((height, width), dtype=torch.long)
            for n, row in enumerate(rows):
                e = encodings[row]
                ids[n, :len(e.ids)] = torch.tensor(e.ids)
                mask[n, :len(e.ids)] = 1
            hidden, pooled = self._forward(ids, mask)
            for n, row in enumerate(rows):
                length = len(encodings[row].ids)
                found[row] = Encoded(list(encodings[row].tokens) if pieces else [],
                                     hidden[n, :length].numpy().copy() if pieces else np.empty((0, self._hidden)),
                                     pooled[n].numpy().copy())
        return found
