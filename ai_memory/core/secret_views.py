"""The text the secret scan reads, beside the text it redacts: evasions undone before matching.

Two evasions change how a secret is spelled without changing what it grants: compatibility
forms and invisible characters (``ＡＫＩＡ…`` in full-width letters, a zero-width space inside
``ghp_…``), and a base64 wrapping (``echo Z2hwX…== | base64 -d``). ``fold`` gives the NFKC form
with invisible characters removed, and where each of its characters came from, so a find maps
back onto the original (which is what gets redacted: ordinary text keeps its own spelling).
``base64_runs`` gives the runs that decode to text, for a second look. Layer 0: pure, no I/O.
"""

from __future__ import annotations

import binascii
import functools
import re
import string
import unicodedata

# Format characters and fillers that render as nothing: zero-width spaces and joiners, the BOM,
# bidi controls, soft hyphen, variation selectors, Hangul fillers, tags.
INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                       "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]")
_RUNS = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]+")
B64_MIN = 24
_B64_TABLE = bytes(ord("a") if chr(b) in string.ascii_letters + string.digits + "+/=_-" else ord(" ")
                   for b in range(256))
_B64_SEED = b"a" * B64_MIN
_TEXT_BYTES = bytes(range(0x20, 0x7f)) + b"\t\n\r"


def plain(text: str) -> str:
    """``text`` as the scan reads it (NFKC, invisible characters removed), without the map."""
    return text if text.isascii() else unicodedata.normalize("NFKC", INVISIBLE.sub("", text))


@functools.lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    """A character as the scan reads it: nothing if invisible, else its NFKC form (unless that is
    longer than 3 characters: no secret is spelled with "﷽", and a text of them must not grow 18-fold)."""
    if INVISIBLE.match(ch):
        return ""
    folded = unicodedata.normalize("NFKC", ch)
    return folded if len(folded) <= 3 else ch


def _one_for_one() -> dict[int, str]:
    """The compatibility forms NFKC folds to one character (full-width and half-width forms,
    mathematical and enclosed letters and digits, super- and subscripts, odd spaces): folded by
    ``str.translate`` they keep every position, so the text needs no map back."""
    table = {}
    for low, high in ((0xA0, 0x100), (0x2000, 0x2160), (0x2460, 0x2500), (0x3000, 0x3001), (0xFF00, 0xFFF0),
                      (0x1D400, 0x1D800), (0x1F100, 0x1F200)):
        for cp in range(low, high):
            folded = unicodedata.normalize("NFKC", chr(cp))
            if len(folded) == 1 and folded != chr(cp):
                table[cp] = folded
    return table


_ONE_FOR_ONE = _one_for_one()


def fold(text: str) -> tuple[str, list[int] | None]:
    """(the text to scan, the index in ``text`` of each of its characters); the map is None when
    the scan reads the text position for position (ASCII, NFKC already, or only one-for-one forms
    like full-width letters: nearly always, and cheap)."""
    if text.isascii():
        return text, None
    view = text.translate(_ONE_FOR_ONE)
    if unicodedata.is_normalized("NFKC", view) and not INVISIBLE.search(view):
        return view, None
    parts: list[str] = []
    index: list[int] = []
    for run in _RUNS.finditer(view):
        start, chunk = run.start(), run.group(0)
        if chunk[0] < "\x80":
            parts.append(chunk)
            index.extend(range(start, run.end()))
            continue
        for offset, ch in enumerate(chunk):
            folded = _fold_char(ch)
            parts.append(folded)
            index.extend([start + offset] * len(folded))
    return "".join(parts), index


def base64_runs(text: str) -> list[tuple[int, int]]:
    """(start, end) of every run of 24+ base64 characters (with '=', '-' and '_')."""
    data = text.encode("ascii", "replace").translate(_B64_TABLE)
    runs = []
    start = data.find(_B64_SEED)
    while start >= 0:
        end = data.find(b" ", start + B64_MIN)
        end = len(data) if end < 0 else end
        runs.append((start, end))
        start = data.find(_B64_SEED, end)
    return runs


def decoded_runs(text: str, runs: list[tuple[int, int]], skip: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(start, end, decoded text) of each part of ``runs`` outside ``skip`` that decodes to
    printable text: what a wrapped secret would look like."""
    found = []
    for start, end in runs:
        run = text[start:end]
        # base64 of text holds upper and lower case and digits; paths and identifiers rarely all three
        if run.islower() or run.isupper() or _DIGIT.search(run) is None or any(s <= start < e for s, e in skip):
            continue
        found += _decoded_parts(text, start, end)
    return found


def _decoded_parts(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """A run may hold several values glued by '=' (``TOKEN_B64=Z2hw…==``): '=' ends base64 only
    as its padding, so each part between them is a candidate of its own, its padding kept."""
    found = []
    for part in _PART.finditer(text, start, end):
        if part.end() - part.start() >= B64_MIN and (decoded := _decode(part.group(0))) is not None:
            found.append((part.start(), part.end(), decoded))
    return found


_PART = re.compile(r"[^=]+=*")
_DIGIT = re.compile(r"[0-9]")


def _decode(run: str) -> str | None:
    body = run.rstrip("=")
    if len(body) % 4 == 1 or body.islower() or body.isupper() or body.isdigit():
        return None  # not base64 of text: hex digests, CONSTANT_NAMES, numbers
    if "-" in body or "_" in body:
        body = body.replace("-", "+").replace("_", "/")
    try:
        raw = binascii.a2b_base64(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 16 or raw.translate(None, _TEXT_BYTES):
        return None  # binary: an identifier or a digest that merely looks like base64
    return raw.decode("ascii")
