"""The scan that runs every rule over a text: which rules run, on which view of the text.

`scan(text)` finds every secret-looking span and labels it with a kind; the sanitizer merges the
spans and replaces them. Layer 0: pure, standard library only, no I/O. The rules are the fixed
formats of ``secret_formats`` (a vendor's prefix, a key block), the names and contexts of
``secret_context`` (``NAME = value``, flags, prose, cookies) and the seed phrases of
``secret_phrases``; here is the second look at text in base64.

Speed (the hook path sanitizes thousands of events a second, and `re` pays ~100 ns for every
position where a pattern might start): every pattern starts with a literal, so `re` jumps between
occurrences of it; case-insensitive patterns are written in lower case and run on `text.lower()`
(`re.IGNORECASE` defeats the literal jump). Vendor tokens are gated once more: a token is a run of
20+ token characters, so each token pattern runs only if its literal occurs near the head of one.
The text scanned is ``secret_views.fold``'s: NFKC with invisible characters removed (free for
ASCII text, which is nearly all of it), mapped back onto the original for redaction.
"""

from __future__ import annotations

import re
import string

from ai_memory.core.secret_context import CONTEXT_RULES, TOKEN, name_strength
from ai_memory.core.secret_formats import FORMAT_RULES, LETTER_HEADS, NAMED_KINDS
from ai_memory.core.secret_phrases import PHRASE_KIND, seed_phrases
from ai_memory.core.secret_shapes import Rule, Span
from ai_memory.core.secret_views import base64_runs, decoded_runs, fold

__all__ = ["PRIORITY", "REDACTION_KINDS", "RULES", "TOKEN", "name_strength", "scan"]

RULES: tuple[Rule, ...] = FORMAT_RULES + CONTEXT_RULES
_ALWAYS = tuple(rule for rule in RULES if not rule.gates)


class _PrefixGates:
    """Gates made of token characters, found where a token can start inside a run: at its head,
    at a separator (``_``, ``-``, ``%``) and just after one. A dict lookup per place and length
    class instead of a substring search per gate: the runs of a text with secrets hold dozens."""

    def __init__(self, table: dict[str, tuple[Rule, ...]]) -> None:
        self._by_prefix: dict[str, list[tuple[str, tuple[Rule, ...]]]] = {}  # by the first two characters
        for gate, rules in table.items():
            self._by_prefix.setdefault(gate[:2], []).append((gate, rules))

    def find(self, starts: list[str], gated: dict[int, Rule]) -> None:
        by_prefix = self._by_prefix
        for head in starts:
            places = [0]
            for sep in _SEPARATOR.finditer(head):
                places += (sep.start(), sep.end())
            for at in places:
                for gate, rules in by_prefix.get(head[at:at + 2], ()):
                    if head.startswith(gate, at):
                        for rule in rules:
                            gated[id(rule)] = rule


_SEPARATOR = re.compile(r"[-_%]")


Gates = tuple[tuple[str, tuple[tuple[str, tuple[Rule, ...]], ...]], ...]  # (mark, ((gate, rules), ...)), ...
_MARKS = ".:=~/"


def _grouped(table: dict[str, tuple[Rule, ...]]) -> Gates:
    """The gates grouped by the punctuation they hold ("" for none): one test skips a group."""
    groups: dict[str, list[tuple[str, tuple[Rule, ...]]]] = {}
    for gate, rules in table.items():
        groups.setdefault(next((c for c in _MARKS if c in gate), ""), []).append((gate, rules))
    return tuple((mark, tuple(group)) for mark, group in groups.items())


def _gate_table(rules: list[Rule], floating: bool | None = None) -> dict[str, tuple[Rule, ...]]:
    """gate → rules; a folded rule's gates are looked for in lower case. ``floating`` keeps only
    the gates holding a character no token run holds (True), or only the others (False)."""
    table: dict[str, tuple[Rule, ...]] = {}
    for rule in rules:
        for gate in rule.gates:
            inside = (_RUN_CHARS.issuperset(gate) and not rule.folded and rule.kind not in _NAMED_BEFORE
                      and gate not in _MID_RUN)
            if floating is not None and floating == inside:
                continue
            key = gate.lower() if rule.folded else gate
            table[key] = (*table.get(key, ()), rule)
    return table


# (gates looked for as written, gates looked for in lower case) at the heads of token runs, and
# the same at the heads of base64 runs. A gate made of token characters only lies inside its run,
# in its first 40 characters: those are looked for there alone (a fraction of the windows' text).
_RUN_CHARS = frozenset(string.ascii_letters + string.digits + "_-%")
# gates that may stand before the run of key material rather than in it: names (folded rules:
# "Bearer …", CLIENT_ID=…), a URL's host, a prefix the token's own dots cut off
_NAMED_BEFORE = frozenset({"discord_webhook", "authress_key"})
# gates of patterns that need no word start (a token glued to what precedes it: "0ghp_…"), and
# a Dropbox token's, after 11 characters of its own: looked for anywhere in the windows
_MID_RUN = frozenset({"gh", "AIza", "sk_", "rk_", "whsec_", "AAAAAAAAAA"})
_TOKEN_RULES = [r for r in RULES if r.gates and not r.base64]
_TOKEN_GATES = (_grouped(_gate_table([r for r in _TOKEN_RULES if not r.folded], floating=True)),
                _grouped(_gate_table([r for r in _TOKEN_RULES if r.folded], floating=True)))
_RUN_GATES = _PrefixGates(_gate_table([r for r in _TOKEN_RULES if not r.folded], floating=False))
_BASE64_GATES = (_grouped(_gate_table([r for r in RULES if r.base64 and not r.folded])),
                 _grouped(_gate_table([r for r in RULES if r.base64 and r.folded])))

REDACTION_KINDS: frozenset[str] = frozenset({rule.kind for rule in RULES} | NAMED_KINDS | {PHRASE_KIND})
# When finds overlap, the most specific kind names the merged redaction.
_GENERIC = ("jwt", "kubernetes_secret", "azure_connection_string", "azure_sas_token", "url_credentials",
            "auth_header", "secret_assignment", "high_entropy_secret", "session_cookie")
PRIORITY: dict[str, int] = {kind: i for i, kind in enumerate(
    ["private_key"] + sorted(REDACTION_KINDS - set(_GENERIC) - {"private_key"}) + list(_GENERIC))}

# ---------------------------------------------------------------- scanning

# A token is a run of 20+ base64url (or %-escaped) characters holding a digit, or upper and lower
# case that is not CamelCase words (its prefix, or 20 random characters, nearly always do;
# snake_case_names, CONSTANT_NAMES and NoBoundaryInMultipartDefect never do). A token's literal
# lies in the 48 characters before such a run ("ya29.", "hooks.slack.com/services/T…/B…/") or in
# its first 40 (a token glued on by - or _).
_RUN_MIN, _BEFORE, _AFTER = 20, 48, 40
_RUN_TABLE = bytes(ord("a") if chr(b) in string.ascii_letters + string.digits + "_-%" else ord(" ")
                   for b in range(256))
_SIGNAL_TABLE = bytes(ord("D") if chr(b) in string.digits else ord("U") if chr(b) in string.ascii_uppercase
                      else ord("l") if chr(b) in string.ascii_lowercase else ord(" ") for b in range(256))
_SEED = b"a" * _RUN_MIN
_WORD = re.compile(r"[A-Z][a-z]*[aeiouy][a-z]*")  # a Capitalised word of an identifier


def _keyish_run(text: str, signal: bytes, start: int, end: int) -> bool:
    if signal.find(b"D", start, end) >= 0:
        return True
    if signal.find(b"U", start, end) < 0 or signal.find(b"l", start, end) < 0:
        return False  # all one case: a word, a name, a CONSTANT
    return sum(map(len, _WORD.findall(text, start, end))) * 2 < end - start  # not CamelCaseWords


def _token_heads(text: str, skip: list[tuple[int, int]]) -> tuple[str, list[str]]:
    """Where a token's literal could be, for the token runs not inside ``skip``: the windows around
    their heads (48 characters before, 40 after), and their first 40 characters alone (after an
    escape's letter too: "\\nghp_…" in JSON-escaped text starts the run at "n")."""
    raw = text.encode("ascii", "replace")  # one byte per character, whatever the text
    data = raw.translate(_RUN_TABLE)
    start = data.find(_SEED)
    if start < 0:
        return "", []
    signal = raw.translate(_SIGNAL_TABLE)
    windows: list[list[int]] = []
    starts: list[str] = []
    while start >= 0:
        end = data.find(b" ", start + _RUN_MIN)
        end = len(data) if end < 0 else end
        inside = next((e for s, e in skip if s <= start < e), None) if skip else None
        if inside is not None:
            start = data.find(_SEED, max(end, inside))
            continue
        head = start + 1 if start and text[start - 1] == "\\" else start
        if _keyish_run(text, signal, start, end) or text.startswith(LETTER_HEADS, head):
            lo, hi = max(0, start - _BEFORE), min(end, start + _AFTER)
            starts.append(text[head:hi])
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = hi  # overlapping heads become one
            else:
                windows.append([lo, hi])
        start = data.find(_SEED, end)
    return " ".join(text[lo:hi] for lo, hi in windows), starts


def scan(text: str) -> list[Span]:
    """Every secret-looking span in text, unmerged: (start, end, kind, priority). The text is
    read folded (full-width letters, invisible characters) and runs of base64 are read decoded;
    the spans are positions in ``text`` itself."""
    view, index = fold(text)
    runs = base64_runs(view)
    spans = _scan(view, runs)
    # what is redacted already needs no second look (key blocks and JWTs are base64 by design)
    skip = [(s, e) for s, e, _, _ in spans]
    for start, end, decoded in decoded_runs(view, runs, skip):
        inner = _scan(decoded, base64_runs(decoded))  # a wrapped secret: the whole run goes, under the inner kind
        if inner:
            kind = min(inner, key=lambda span: span[3])[2]
            spans.append((start, end, kind, PRIORITY[kind]))
    if index is None:
        return spans
    return [(index[s], index[e - 1] + 1, kind, priority) for s, e, kind, priority in spans]


def _scan(text: str, runs: list[tuple[int, int]]) -> list[Span]:
    low = text.lower()
    folded = low if len(low) == len(text) else None  # lower() lengthens a few characters (İ): use the twins
    spans: list[Span] = [(s, e, kind, PRIORITY[kind]) for s, e, kind in seed_phrases(text)]  # type: ignore[misc]
    _apply(_ALWAYS, text, folded, spans)
    # The lines of a key block are token-like runs; they are found already, so gate on the rest.
    heads, starts = _token_heads(text, [(s, e) for s, e, kind, _ in spans if kind == "private_key"])
    gated: dict[int, Rule] = {}  # by id, in the order first gated: each rule runs once
    if heads:
        _gated(_TOKEN_GATES, heads, gated)
        _RUN_GATES.find(starts, gated)
    if runs:
        _gated(_BASE64_GATES, " ".join(text[max(0, s - _BEFORE):min(e, s + _AFTER)] for s, e in runs), gated)
    if gated:
        _apply(list(gated.values()), text, folded, spans)
    return spans


def _gated(tables: tuple[Gates, Gates], heads: str, gated: dict[int, Rule]) -> None:
    for groups, hay in zip(tables, (heads, heads.lower())):
        for mark, group in groups:  # a group whose mark ("." ":" "=" "~" "/") is absent is skipped whole
            if mark and mark not in hay:
                continue
            for gate, rules in group:  # plain loops: a generator per gate would cost more than the tests
                if gate in hay:
                    for rule in rules:
                        gated[id(rule)] = rule


def _apply(rules: list[Rule] | tuple[Rule, ...], text: str, folded: str | None, spans: list[Span]) -> None:
    for rule in rules:
        if not rule.folded:
            hay, pattern = text, rule.pattern
        elif folded is not None:
            hay, pattern = folded, rule.pattern
        else:  # rare (the text has an İ), slow (no literal jump), so compiled on first use and cached by re
            hay, pattern = text, re.compile(rule.pattern.pattern, re.IGNORECASE)
        pos = 0
        while (m := pattern.search(hay, pos)) is not None:
            found = rule.check(text, m) if rule.check is not None else (*m.span(rule.group), rule.kind)
            pos = max(m.end(), m.start() + 1)
            if found is not None and found[1] > found[0]:
                spans.append((found[0], found[1], found[2], PRIORITY[found[2]]))
                pos = max(pos, found[1])  # resume after the find: a key block's lines are not read twice
