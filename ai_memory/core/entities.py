"""Entities: the names a piece of text is about, found by rules (no model, no I/O).

``extract_entities`` finds, in order of first appearance: file paths, symbols in backticks,
issue and PR references, packages named by install/import commands, code identifiers
(snake_case, CamelCase, dotted.names) and capitalised proper names. One compiled alternation
scans the text once; at each position the first alternative that matches wins, so a path is
never also split into the dotted name inside it. A lone capitalised word that opens a sentence
("Raise the TTL") counts only when the text also uses it mid-sentence. ``normalize_entity`` is
the key for matching and deduplication.
"""

from __future__ import annotations

import re

__all__ = ["extract_entities", "normalize_entity"]

MAX_SCAN_CHARS = 200_000  # longer texts are scanned up to here: entities come early or repeat
MAX_ENTITY_CHARS = 256  # a longer "path" or "name" is data, not an entity
_EXTS = (
    "py|pyi|ipynb|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|mdx|rst|txt|toml|ya?ml|ini|cfg|conf|env|lock|"
    "sql|rs|go|java|kt|kts|scala|rb|php|c|h|cc|cpp|hpp|cs|swift|m|mm|sh|bash|zsh|fish|ps1|bat|"
    "html?|css|scss|sass|less|vue|svelte|xml|csv|tsv|proto|graphql|tf|gradle|dart|lua|pl|r|ex|exs|"
    "erl|hs|ml|clj|zig|nim|jl|log|patch|diff|pdf|png|jpe?g|gif|svg"
)
_SEG = r"\.?[\w@+-][\w@+.-]{0,127}"  # one path segment; bounded, so a failed try stays cheap
_TRIGGERS = r"(?:from|import|pip3?|uv|poetry|pipx|conda|npm|pnpm|yarn|bun|cargo|gem|go|brew)"
_GAP = r" \t,;\"'(){}\[\]<>=*&|!?"  # characters that never start or end an entity
_UNIT = rf"(?:\b(?!{_TRIGGERS}\b)[a-z0-9]++(?:[{_GAP}]|\.(?![\w/]))++)"  # a plain word and the gap after it
# One scan, fast because most text is plain lower-case words: the first alternative consumes a
# run of them whole (stopping before an install/import keyword and at line ends), and at a word
# start a plain word fails the code-like branch at once. Then backticks, absolute paths, issues
# and import lines, which start with a symbol or at a line start. Every repetition is possessive
# or bounded and no path starts inside another, so no input makes the scan quadratic.
_MASTER = re.compile(
    rf"(?P<skip>(?:[:{_GAP}]++|{_UNIT}){_UNIT}*+)"
    r"|\b(?:"
    r"(?P<name>[A-Z][a-z]++(?:[ ][A-Z][a-z]++){0,5}+)(?![\w/@#-]|\.\w)"
    r"|(?P<install>(?:pip3?|uv(?: pip)?|poetry|pipx|conda|npm|pnpm|yarn|bun|cargo|gem|go|brew)"
    r" (?:install|add|get|i)\b(?P<args>(?:[ \t]++(?:-{1,2}[\w-]{1,40}+(?:=[^\s;&|`]{1,200}+)?"
    r"|@?\w[\w@./:=<>!~^*+\[\]-]{0,200}(?<![.:]))){0,12}))"
    r"|(?![a-z0-9]++(?![\w/:#@+-]|\.\w))(?:"
    r"(?P<url>[a-z][a-z0-9+.-]{0,30}://[^\s<>()\"'`]*+)"
    r"|(?P<repo_ref>[\w.-]{1,100}/[\w.-]{1,100}#\d{1,7})\b"
    rf"|(?P<rel>(?<![/.@+-])(?:{_SEG}/)++(?:[\w@+.-]{{0,127}}\.(?:{_EXTS})\b|(?=\s|$)))"
    rf"|(?P<file>(?=[\w-]{{0,100}}[A-Za-z_])[\w-]{{1,100}}\.(?:{_EXTS})\b(?!\w|/|\.\w))"
    r"|(?P<jira>[A-Z][A-Z0-9]{1,9}-\d{1,6})\b"
    r"|(?P<code>(?:(?<!\.)[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++|[A-Za-z][A-Za-z0-9]*+_\w++|_++[A-Za-z0-9]\w*+"
    r"|[a-z]++[A-Z]\w*+|[A-Z][a-z0-9]++[A-Z]\w*+|[A-Z]{2,}+[a-z]{2,}+\w*+))\b"
    r"))"
    r"|`(?P<tick>[^\s`]{1,80})`"
    rf"|(?P<abs>(?<![\w.~/])(?:(?:~|\.\.?)/{_SEG}|/{_SEG}(?:/{_SEG})+|\.[\w-]{{1,64}}/{_SEG})(?:/{_SEG})*+/?)"
    r"|(?P<issue>(?<![\w&#/])#\d{1,7})\b"
    r"|^[ \t>]*+(?:from[ \t]++(?P<from>[A-Za-z_][\w.]*+)[ \t]++import\b|import[ \t]++(?P<imp>[A-Za-z_][\w.]*+))",
    re.M,
)
_NOT_JIRA = frozenset("UTF SHA ISO AES RSA MD TLS SSL HTTP IPV X Y Z P CP GPT".split())
_STOPWORDS = frozenset("""
a an the i we you he she it they this that these those there here let run if when then and but
or so also now yes no ok okay please thanks thank hi hello hey what why how where which who whom
can could would should will shall may might must do does did done is are was were be been being
make use add fix check see note next todo fixme remaining after before for in on at to from with
by of my our your its their all some any each every one first last both either neither not only
just maybe perhaps still yet great good sure well right update create remove delete change read
write test tests try start stop keep set get give take show tell find look please summary prompts
none unknown error errors warning true false null cannot
""".split())
# Chat openers that end up before a name ("Wow Jon", "Bye Joanna"); dropped only there, so
# "pip install yay" keeps its package. Not "oh" or "um": surnames too.
_BEFORE_NAME = _STOPWORDS | frozenset("yeah yep yup nope wow woah whoa aww hmm bye goodbye congrats congratulations "
                                      "omg lol haha yay".split())
_SENTENCE_END = ".!?:\n"
_TAIL = ".,;:!?)]}'\""
_SPECIAL = frozenset(("name", "install", "tick"))
_OPENERS = " \t([*_>-#`"
_QUOTES = "\"'\u201c\u2018"  # an opening quote starts a sentence of its own
_VALUE_OPTS = frozenset("-r -c -e -i -t --requirement --constraint --editable --index-url "
                        "--extra-index-url --target --prefix --registry".split())
_SYMBOL = re.compile(r"[\w.$@~/]*[A-Za-z_]")  # has a letter and does not start like an option
_PACKAGE = re.compile(r"@?[A-Za-z][\w.-]*(?:/[\w.-]+)*")
_VERSION = re.compile(r"(?:[<>=!~^]=?|@(?=[\dv^~<>=*]|latest\b)).*$")


def normalize_entity(e: str) -> str:
    """The matching key of an entity: stripped and lower-cased."""
    return e.strip().lower()


def _strip_tail(text: str) -> str:
    return text.rstrip(_TAIL)


def _at_sentence_start(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in _OPENERS:
        i -= 1
    return i < 0 or text[i] in _SENTENCE_END or text[i] in _QUOTES


def _packages(args: str) -> list[str]:
    """Package names in the arguments of an install command (options and versions dropped)."""
    found: list[str] = []
    skip_next = False
    for token in args.split():
        if skip_next or token in ("install", "add", "get", "i", "-m", "pip"):
            skip_next = False
            continue
        if token.lower() in _STOPWORDS:
            break  # prose after the command
        if token.startswith("-"):
            skip_next = token in _VALUE_OPTS
            continue
        bare = _VERSION.sub("", token[1:]) if token.startswith("@") else _VERSION.sub("", token)
        bare = _strip_tail(("@" if token.startswith("@") else "") + bare.split("[", 1)[0])
        if _PACKAGE.fullmatch(bare) and len(found) < 10:
            found.append(bare)
    return found


def _names(text: str, m: re.Match[str]) -> tuple[list[str], bool]:
    """Proper-name words of a match with stopwords dropped; True when it is a lone sentence opener."""
    name = m.group("name")
    words = name.split(" ") if " " in name else [name]
    initial = _at_sentence_start(text, m.start())
    while words and words[0].lower() in _BEFORE_NAME:
        words.pop(0)
        initial = False
    while words and words[-1].lower() in _STOPWORDS:
        words.pop()
    if not words:
        return [], False
    possessive = text.startswith(("'s", "\u2019s"), m.end())
    return [" ".join(words)], initial and len(words) == 1 and not possessive


def _special(text: str, m: re.Match[str]) -> tuple[list[str], bool]:
    """Entities of a name, install or backtick match, and whether they are a tentative opener."""
    kind = m.lastgroup
    if kind == "name":
        return _names(text, m)
    if kind == "install":
        return _packages(m.group("args")), False
    symbol = _strip_tail(m.group("tick").removesuffix("()"))
    return ([symbol] if len(symbol) > 1 and _SYMBOL.match(symbol) else []), False


def _plain(kind: str, value: str) -> str | None:
    """A path, reference or identifier as written, or None when it only looks like one."""
    if value[-1] in _TAIL:
        value = _strip_tail(value)
    if kind == "jira" and value.split("-", 1)[0] in _NOT_JIRA:
        return None
    if kind in ("from", "imp") and value.startswith("__"):
        return None  # __future__
    if kind == "code" and "." in value and "_" not in value and max(map(len, value.split("."))) < 2:
        return None  # e.g
    return value if 0 < len(value) <= MAX_ENTITY_CHARS else None


def extract_entities(text: str, limit: int = 50) -> list[str]:
    """Entities in order of first appearance, deduplicated by ``normalize_entity``."""
    if not isinstance(text, str) or limit <= 0:
        return []
    text = text[:MAX_SCAN_CHARS]
    found: list[tuple[str, str, bool]] = []  # (key, as written, tentative)
    for m in _MASTER.finditer(text):
        kind = m.lastgroup
        if kind == "skip" or kind == "url" or kind is None:  # plain words; links are not entities
            continue
        if kind in _SPECIAL:
            values, tentative = _special(text, m)
            found += [(normalize_entity(v), v, tentative) for v in values]
        elif (value := _plain(kind, m.group(kind))) is not None:
            found.append((value.lower(), value, False))
    confirmed = {key for key, _, tentative in found if not tentative}
    out: list[str] = []
    seen: set[str] = set()
    for key, value, tentative in found:
        if key in seen or (tentative and key not in confirmed):
            continue
        seen.add(key)
        out.append(value)
        if len(out) >= limit:
            break
    return out
