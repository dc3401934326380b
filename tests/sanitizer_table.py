"""The secrets table of ``docs/secrets.md``: every format of the corpus, the gitleaks rules it
stands for, the kind it is redacted as, its shape, a context it is tested in, and how many of
its generated samples the sanitizer found.

The shape is read off the format's own factory (a literal prefix shared by every draw, then the
alphabet and length of the rest), so the table shows what a secret looks like, never one.
``python benchmarks/sanitizer.py --table docs/secrets.md`` writes the file; a test keeps it current.
"""

from __future__ import annotations

import os
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from sanitizer_checklist import GITLEAKS, NOT_TEXT
from sanitizer_corpus import _PEM_KINDS, FORMATS, KINDS, SecretSample, format_ids, format_of, leaked, secret_samples
from sanitizer_formats import Draw

_CLASSES = [(string.digits, "0-9"), ("abcdef", "a-f"), (string.ascii_lowercase, "a-z"), ("ABCDEF", "A-F"),
            (string.ascii_uppercase, "A-Z")]


@dataclass(frozen=True)
class Row:
    id: str
    gitleaks: tuple[str, ...]
    kind: str
    shape: str
    context: str
    samples: int
    found: int


def _factories() -> dict[str, tuple[Callable[[Draw], str], str]]:
    """format id -> (a factory of its secrets, a context it is tested in)."""
    out: dict[str, tuple[Callable[[Draw], str], str]] = {}
    for kind, (factories, templates) in KINDS.items():
        for i, make in enumerate(factories):
            out[f"{kind}/{i}"] = (make, templates[i % len(templates)].replace("{{", "{").replace("}}", "}"))
    for label in _PEM_KINDS + ["PGP PRIVATE KEY BLOCK"]:
        key = "private_key/pgp" if label.startswith("PGP") else f"private_key/{label}"
        out[key] = (lambda d, label=label: f"-----BEGIN {label}-----\n…\n-----END {label}-----", "$ cat ~/.ssh/id_rsa\n{s}")
    for fmt in FORMATS:
        out[fmt.id] = (fmt.make, fmt.contexts[0])
    return out


def _alphabet(chars: set[str]) -> str:
    parts, left = [], set(chars)
    for members, name in _CLASSES:
        if left & set(members):
            if name in ("a-f", "A-F") and not set(members).issuperset(left & set(string.ascii_letters)):
                continue  # more letters than hex: the wider class says it
            parts.append(name)
            left -= set(members)
    return "[" + "".join(parts) + "".join(sorted(left)).replace("]", "\\]") + "]"


def shape(make: Callable[[Draw], str]) -> str:
    """What the factory's secrets look like: ``ghp_`` + 36 × [0-9a-zA-Z]."""
    draws = [make(Draw(seed)) for seed in range(12)]
    if all(d.startswith("-----BEGIN ") for d in draws):
        return f"`{draws[0].splitlines()[0]}` + lines of base64 + `-----END …-----`"
    if all(" " in d for d in draws):
        counts = sorted(sum(w.isalpha() for w in d.split()) for d in draws)
        return f"{_span(counts[0], counts[-1])} words of the BIP39 list"
    prefix = os.path.commonprefix(draws)
    rests = [d[len(prefix):] for d in draws]
    suffix = os.path.commonprefix([r[::-1] for r in rests])[::-1] if all(rests) else ""
    middles = [r[:len(r) - len(suffix)] for r in rests]
    low, high = min(map(len, middles)), max(map(len, middles))
    body = f"{_span(low, high)} × {_alphabet(set(''.join(middles)))}" if high else ""
    return " + ".join(p for p in (f"`{prefix}`" if prefix else "", body, f"`{suffix}`" if suffix else "") if p)


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}–{high}"


def rows(samples: list[SecretSample] | None = None, sanitize: Callable[[str], object] | None = None) -> list[Row]:
    """One row per format of the corpus, with its samples found by ``sanitize`` (ours by default)."""
    if sanitize is None:
        from ai_memory.core.sanitizer import sanitize
    samples = secret_samples() if samples is None else samples
    total, found = Counter(), Counter()
    for sample in samples:
        out = sanitize(sample.text).text  # type: ignore[attr-defined]
        total[format_of(sample)] += 1
        found[format_of(sample)] += not leaked(sample.secret, out) and "[REDACTED:" in out
    by_format: dict[str, list[str]] = {}
    for rule, fid in GITLEAKS.items():
        by_format.setdefault(fid, []).append(rule)
    kinds = {format_of(s): s.kind for s in samples}
    made = _factories()
    return [Row(fid, tuple(by_format.get(fid, ())), kinds[fid], shape(made[fid][0]), made[fid][1], total[fid], found[fid])
            for fid in format_ids()]


def _cell(text: str, limit: int = 80) -> str:
    text = text.replace("\r", "").replace("\n", " ⏎ ")
    text = text if len(text) <= limit else text[:limit - 1] + "…"
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def render(table: list[Row]) -> str:
    samples, found = sum(r.samples for r in table), sum(r.found for r in table)
    mapped = sum(len(r.gitleaks) for r in table)
    lines = [
        "# Secret formats the sanitizer redacts",
        "",
        "<!-- Written by `python benchmarks/sanitizer.py --table docs/secrets.md`; tests/test_sanitizer_checklist.py",
        "     checks it is current. -->",
        "",
        f"{len(table)} formats, {samples} generated samples, {found} found ({found / samples:.2%}). The checklist is",
        f"gitleaks' default rule list: {mapped} of its {mapped + len(NOT_TEXT)} rule ids are tested here (a format",
        "may stand for several); the rest is about files, not text:",
        "",
    ]
    lines += [f"- `{rule}`: {why}" for rule, why in NOT_TEXT.items()]
    lines += [
        "",
        "Every sample is drawn by `tests/sanitizer_*.py` from the format's public description and set in",
        "several contexts (a shell export, a .env or YAML line, a client call, a curl, a log line, a prompt),",
        "each wrapped six ways (bare, fenced, in a prompt, a CRLF terminal, JSON-escaped, quoted). Found means",
        "no 12-character piece of the secret is left and a `[REDACTED:<kind>]` is there. A shape is",
        "`literal` + length × alphabet; a context shows where `{s}` (the secret) stood.",
        "",
        "| format | gitleaks rule | redacted as | shape | a context it is tested in | samples | found |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in table:
        rules = ", ".join(f"`{g}`" for g in r.gitleaks) or "—"
        lines.append(f"| `{r.id}` | {rules} | `{r.kind}` | {_cell(r.shape, 120)} | {_code(_cell(r.context))} | {r.samples} "
                     f"| {r.found} |")
    return "\n".join(lines) + "\n"
