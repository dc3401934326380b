"""What a secret looks like, apart from any one format: the Rule a pattern becomes, and the
value tests (randomness, placeholders, code) that tell key material from documentation and code.

Layer 0: pure, standard library only, no I/O. Used by ``secret_formats`` (fixed formats of
vendors' tokens) and ``secret_patterns`` (names and assignments, and the scan).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

Span = tuple[int, int, str, int]  # start, end, kind, priority (the lowest number names a merged span)
Found = tuple[int, int, str] | None
Check = Callable[[str, "re.Match[str]"], Found]


@dataclass(frozen=True, slots=True)
class Rule:
    """One family of secrets: a pattern, the kind it reports, how to refine a match, when to run."""

    kind: str
    pattern: re.Pattern[str]
    check: Check | None = None  # refines the span or rejects the match
    group: int = 0  # the group that holds the secret when there is no check
    folded: bool = False  # the pattern is lower case and runs on text.lower()
    gates: tuple[str, ...] = ()  # set: runs only if one occurs at the head of a run of token characters
    base64: bool = False  # the gates are looked for at the heads of base64 runs (bodies with + / =)


def token_rule(kind: str, gates: str, source: str, check: Check | None = None, group: int = 0,
               base64: bool = False) -> Rule:
    """A rule run on the text as it is, only when one of its gates is near the head of a token run
    (of a base64 run with ``base64``)."""
    return Rule(kind, re.compile(source), check, group, False, tuple(gates.split()), base64)


def folded_rule(kind: str, source: str, check: Check | None = None, gates: str = "", base64: bool = False) -> Rule:
    """A rule written in lower case, run on ``text.lower()`` (with no gates: on every text)."""
    return Rule(kind, re.compile(source), check, 0, True, tuple(gates.split()), base64)


# ---------------------------------------------------------------- values

# What documentation writes where a secret would go. This runs for every candidate, on values of
# up to 1000 characters, so cheap substring tests decide whether the full pattern runs at all.
_PLACEHOLDER_WORDS = frozenset("none null nil true false undefined empty required optional string str bytes int "
                               "secret password passwd pass token".split())
_PLACEHOLDER_HINTS = ("example", "dummy", "placeholder", "sample", "fake", "change", "your", "replace", "xxx",
                      "test", "todo", "fixme")
_TEMPLATE_CHARS = re.compile(r"[${<\[%*#…]|\.\.\.")
_PLACEHOLDER = re.compile(
    r"change[_-]?me|your[_-]|yourpass|yoursecret|yourtoken|example|dummy|placeholder|sample|fake|replace[_-]?me"
    r"|xxxx|\*\*\*|\.\.\.|…|\[redacted|(?<![a-z])(?:test|todo|fixme|xxx)(?![a-z])"
    r"|\$\{|\$\(|\{\{|\{%|(?<![a-z0-9])%s(?![a-z0-9])|%\(|\#\{|\{[a-z_][\w.]*\}|^\$[a-z_]"
    r"|^<.*>$|^\[.*\]$|^\{.*\}$|^my[_-]?(?:secret|password|token|key|api)")
# an identifier or attribute path, maybe called or subscripted; a bracketed expression; a number
_CODE = re.compile(r"^(?:-?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?P<tail>[(\[].*)?|[(\[{].*|-?\d+(?:\.\d+)?)$")
_SNAKE = re.compile(r"^_*(?:[a-z]+[0-9]*_+)+[a-z]+[0-9]*_*$|^_*(?:[A-Z]+[0-9]*_+)+[A-Z]+[0-9]*_*$")
CALL = re.compile(r"^[\w.]+[(\[]")
DIGIT = re.compile(r"\d")
_HUMP = re.compile(r"[A-Z](?=[a-z]*[aeiouy])[a-z]{2,}")  # a Capitalised word (random letters rarely have vowels there)
_CASE_SWITCH = re.compile(r"[a-z](?=[A-Z])|[A-Z](?=[a-z])")
_TYPE_NAME = re.compile(r"^_*[A-Z]\w{0,28}[A-Z][a-z]{2,}$")  # short, ends in a Capitalised word
# a word of code: lower_case, UPPER_CASE, EndsInAWord, or Mixed_snake_case (not Zx9Qv_random noise)
_CODE_WORD = re.compile(r"^_*(?:[a-z0-9_]+|[A-Z0-9_]+|\w*[A-Z][a-z]{2,}"
                        r"|[A-Za-z0-9]{1,12}(?:_+[a-z0-9]{1,20})+_*)$")
WORDY = re.compile(r"^[A-Za-z_-]+$")  # letters and - _ only: a word or a name, like challengePassword
SECRET_WORDS = re.compile(r"pass|secret|token|key|auth|cred", re.IGNORECASE)
SYMBOL = re.compile(r"[^\w.-]")
# code in a comment or in `backticks`: decided_mask==0, get_token() (not "…Ew==" padding nor "2A==2y")
_OPERATOR = re.compile(r"(?<![\w!=])[a-z_][a-z0-9_.]* ?[!=]= ?[\w\"'-]|\w\(\)|->")


def has_operator(value: str) -> bool:
    """Code in a comment or in backticks. The substring tests first: the pattern alone backtracks
    over every identifier-like run of a long value (a 90-character token cost 16 µs)."""
    return ("=" in value or "()" in value or "->" in value) and _OPERATOR.search(value) is not None
NOT_SECRET = re.compile(r"^#[0-9a-fA-F]{3,8}$|^__\w+__$")  # a colour, a __dunder__ sentinel
SPACE = re.compile(r"\s")
_RANDOM_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$")
BASE64_40 = re.compile(r"^[A-Za-z0-9/+]{40}$")
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
HEX_32 = re.compile(r"^[0-9a-f]{32}$")
HEX_ANY = re.compile(r"[0-9a-fA-F]+")
_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, 256)]


def entropy(value: str) -> float:
    """Shannon entropy of value, in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    # H = log2(n) - sum(c * log2(c)) / n, with c * log2(c) looked up for the usual small counts
    total = sum(_C_LOG_C[c] if c < 256 else c * math.log2(c) for c in Counter(value).values())
    return math.log2(n) - total / n


def looks_random(value: str, min_len: int = 16) -> bool:
    """True for key material: long, no spaces, mixed character classes, high entropy."""
    if len(value) < min_len or not _RANDOM_CHARS.match(value):
        return False
    if not DIGIT.search(value) and (len(_CASE_SWITCH.findall(value)) * 5 < len(value)
                                     or sum(map(len, _HUMP.findall(value))) * 2 >= len(value)):
        return False  # CONSTANT_NAMES, token.ERRORTOKEN (few case changes), CamelCaseWords (mostly words)
    return entropy(value) >= min(3.5, math.log2(len(value)) * 0.8)


def key_material(value: str, min_len: int = 16) -> bool:
    """looks_random, or a hex digest's shape (16 symbols cannot reach that entropy bar): 32+ hex
    characters with letters and digits and at least 10 different ones."""
    if looks_random(value, min_len):
        return True
    return (len(value) >= max(32, min_len) and HEX_ANY.fullmatch(value) is not None and DIGIT.search(value) is not None
            and not value.isdigit() and len(set(value.lower())) >= 10)


def is_placeholder(value: str) -> bool:
    """True for documentation values: `<token>`, `${VAR}`, `changeme`, `xxxx`, already redacted."""
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or len(low) > 1 and low == low[0] * len(low):  # "none", "********"
        return True
    hinted = low.startswith("my") or _TEMPLATE_CHARS.search(low) is not None
    if not hinted and len(value) >= 24 and len(set(value)) >= 16:
        return False  # long key material holds "fake" or "test" by chance: only template marks count
    for hint in _PLACEHOLDER_HINTS:
        hinted = hinted or hint in low
    return hinted and _PLACEHOLDER.search(low) is not None


def is_code(value: str) -> bool:
    """An identifier, attribute path, call, subscript or number: code, not a credential."""
    m = _CODE.match(value)
    if m is None:
        return False
    if m.group("tail") or value[0] in "([{":
        return True  # tokens[0], getpass.getpass()
    if _TYPE_NAME.match(value) and sum(map(len, _HUMP.findall(value))) * 2 >= len(value):
        return True  # Ed25519PrivateKey, PKCS12PrivateKeyTypes
    if _SNAKE.match(value):
        return True  # entity_mask2_token, MAX_RETRIES
    if "." in value and all(map(_CODE_WORD.match, value.lstrip("-").split("."))):
        return True  # self.token, win32api.RegEnumKey, self.G2_node_order.__getitem__
    if looks_random(value):
        return False
    if value[0] == "-" or value[0].isdigit() or "." in value:
        return True  # -x, 3600
    return not DIGIT.search(value)  # but hunter22 is a value


