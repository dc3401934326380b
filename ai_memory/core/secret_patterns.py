"""Secrets by the name they are given, and the scan that runs every rule over a text.

`scan(text)` finds every secret-looking span and labels it with a kind; the sanitizer merges the
spans and replaces them. Layer 0: pure, standard library only, no I/O. Fixed formats (a vendor's
prefix, a key block) live in ``secret_formats``; this module adds what only the context says:
``NAME = value`` in code, .env, YAML, JSON or XML, command-line flags, prose ("the postgres
password is …"), a Kubernetes Secret's data, and the second look at text in base64.

Speed (the hook path sanitizes thousands of events a second, and `re` pays ~100 ns for every
position where a pattern might start): every pattern starts with a literal, so `re` jumps between
occurrences of it; case-insensitive patterns are written in lower case and run on `text.lower()`
(`re.IGNORECASE` defeats the literal jump). Vendor tokens are gated once more: a token is a run of
20+ token characters, so each token pattern runs only if its literal occurs near the head of one.
The text scanned is ``secret_views.fold``'s: NFKC with invisible characters removed (free for
ASCII text, which is nearly all of it), mapped back onto the original for redaction.
"""

from __future__ import annotations

import functools
import re
import string

from ai_memory.core.secret_formats import B, FORMAT_RULES, NAMED_KINDS, VENDORS, key_block
from ai_memory.core.secret_shapes import (
    BASE64_40, CALL, DIGIT, HEX_32, NOT_SECRET, OPERATOR, SECRET_WORDS, SPACE, SYMBOL, UUID, WORDY,
    Found, Rule, Span, folded_rule, is_code, is_placeholder, key_material, looks_random,
)
from ai_memory.core.secret_views import base64_runs, decoded_runs, fold

# ---------------------------------------------------------------- names and assignments

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENTS = re.compile(r"[^a-z0-9]+")
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "secret", "credential", "credentials", "authorization")
_PASSWORD_WORDS = {"pass", "pwd", "pw", "pswd", "cookie"}
_TOKEN_ENDINGS = ("token", "apikey", "secretkey", "privatekey", "accesskey")
_STRONG_PAIRS = {"api", "access", "secret", "private", "auth", "master", "signing", "encryption",
                 "account", "subscription", "client", "app", "consumer", "sas"}
_QUALIFIERS = ("base64", "base", "value", "b64", "hex", "raw", "str", "string", "enc", "encoded", "plain")
_VENDOR_ENDINGS = frozenset({"key", "id", "sid", "login", "dsn", "auth", "com"})
_NAME_CHARS = re.compile(r"[^\W]*(?:[.-][^\W]*)*")  # run on reversed text: letters, digits, _ . -


PASSWORD, TOKEN, WEAK = 3, 2, 1  # what a name says about its value


@functools.lru_cache(maxsize=4096)  # names repeat: password, api_key, token
def name_strength(name: str) -> int:
    """PASSWORD (DB_PASSWORD, client_secret: any non-placeholder value), TOKEN (api_key, GITHUB_TOKEN:
    key material, so a digit or randomness; "token" also means a word in NLP code), WEAK (key, auth:
    only random-looking values), else 0."""
    words = [w for w in _SEGMENTS.split(_CAMEL.sub("_", name).lower()) if w]
    while len(words) > 1 and words[-1] in _QUALIFIERS:  # SECRET_KEY_BASE, token_value
        words.pop()
    if not words:
        return 0
    last = words[-1]
    if last in _PASSWORD_WORDS or last.endswith(_PASSWORD_ENDINGS):
        return PASSWORD
    if last.endswith(_TOKEN_ENDINGS) or last == "key" and len(words) > 1 and words[-2] in _STRONG_PAIRS:
        return TOKEN
    if last in _VENDOR_ENDINGS and VENDORS.intersection(words):
        return TOKEN  # ALGOLIA_APP_ID, SONAR_LOGIN, SENTRY_DSN: a vendor's key by another name
    return WEAK if last in ("key", "auth") else 0


def judge_value(raw: str, strength: int, env_style: bool) -> tuple[int, int] | None:
    """Where the secret lies inside a raw assigned value (quotes kept), or None for code/placeholders."""
    body = raw.lstrip("rbufRBUF")  # Python string prefixes: b"...", f"..."
    quoted = len(body) >= 2 and body[0] in "\"'`" and body[-1] == body[0]
    if quoted and "r" in raw[:len(raw) - len(body)].lower():
        return None  # r"..." holds a regex or a path
    if raw.startswith('\\"') and raw.endswith('\\"') and len(raw) >= 4:  # a JSON string inside a JSON string
        quoted, start, value = True, 2, raw[2:-2]
    elif quoted:
        start, value = len(raw) - len(body) + 1, body[1:-1]
    else:
        start, value = 0, raw.rstrip(",;)]}>`'\"")
    if not value or is_placeholder(value):
        return None
    if WORDY.match(value) and SECRET_WORDS.search(value) and not looks_random(value):
        return None  # the value names a secret (CHALLENGE_PASSWORD = "challengePassword"), it is not one
    if OPERATOR.search(value) or NOT_SECRET.match(value):
        return None
    keyish = DIGIT.search(value) is not None or looks_random(value)  # what key material always is
    if strength == WEAK:
        ok = looks_random(value) and (quoted or not is_code(value))
    elif quoted:  # prose ("The pass statement") has spaces, and "ENDMARKER" is an enum name
        ok = (len(value) >= 6 and not SPACE.search(value) and "\\n" not in value and "<" not in value
              and not (value.isupper() and value.replace("_", "").isalpha()) and (strength == PASSWORD or keyish))
    elif env_style:  # NAME=value in .env or shell: a bare word is a literal string there
        ok = len(value) >= 6 and not CALL.match(value)
    else:  # YAML, INI, a kwarg: needs a digit or a symbol, else it is a word ("token: re-exchanged")
        shortest = 6 if strength == PASSWORD and keyish else 8  # password=hunter2
        ok = (len(value) >= shortest and not is_code(value)
              and (keyish or strength == PASSWORD and SYMBOL.search(value) is not None))
    return (start, start + len(value)) if ok else None


def _line_before(text: str, pos: int) -> str:
    """The line up to pos, at most 200 characters of it (a 5 MB line must not be sliced per match)."""
    start = max(0, pos - 200)
    newline = text.rfind("\n", start, pos)
    return text[newline + 1 if newline >= 0 else start:pos]


def _line_around(text: str, pos: int) -> str:
    """The line holding pos, at most 200 characters either side."""
    end = text.find("\n", pos, pos + 200)
    return _line_before(text, pos) + text[pos:end if end >= 0 else pos + 200]


def _named_kind(name: str, value: str, strength: int, line: str = "") -> str:
    """A vendor's kind when the name (or, for an AWS secret, its line) says whose the value is."""
    low, value = name.lower(), value.rstrip(".")  # the full stop of "… KEY=value."
    if low.endswith(("accountkey", "sharedaccesskey")):
        return "azure_connection_string"
    around = f"{low} {line.lower()}"  # "here is the aws secret key: …"
    if BASE64_40.match(value) and "secret" in around and ("access" in low or "aws" in around):
        return "aws_secret_key"
    if "heroku" in low and UUID.match(value):
        return "heroku_key"
    if "twilio" in low and HEX_32.match(value):
        return "twilio"
    return "high_entropy_secret" if strength == WEAK else "secret_assignment"


def _assignment(text: str, m: re.Match[str]) -> Found:
    """NAME = value in code, .env, YAML, JSON, XML; the regex matched from the keyword on."""
    if m.lastgroup == "hval":
        return _auth_value(text, m)
    start = m.start() - _NAME_CHARS.match(text[max(0, m.start() - 100):m.start()][::-1]).end()  # type: ignore
    name, sep = text[start:m.end("kw")], m.group("sep")
    strength = name_strength(name)
    if name.lower() == "key" and sep == "=":
        nuget = _NUGET.match(text, m.start("val"))  # <add key="ClearTextPassword" value="…"/>
        if nuget is not None and not is_placeholder(nuget.group(1)):
            return nuget.start(1), nuget.end(1), "secret_assignment"
    if strength == 0 or sep == ">" and (text[start - 1:start] != "<" or strength == WEAK):
        return None  # <key>CFBundleVersion</key> fills every plist
    if m.group("prose") is not None:
        return _prose(text, m, strength, name)
    if sep.isspace() and not _spaced_value(text, m, strength):
        return None
    env_style = (text[m.end("kw"):m.start("val")] == "=" and name.isupper()
                 and (start == 0 or text[start - 1] in " \t\n;\"'"))
    raw = text[m.start("val"):m.end("val")]
    found = judge_value(f'"{raw}"' if sep == ">" else raw, strength, env_style)  # <password>x</password>
    if found is None:
        return None
    s, e = m.start("val") + found[0] - (sep == ">"), m.start("val") + found[1] - (sep == ">")
    return s, e, _named_kind(name, text[s:e], strength, _line_around(text, start))


_NUGET = re.compile(r"\"(?:[Cc]lear[Tt]ext)?[Pp]assword\"\s*value=\"([^\"]{4,500})\"")


def _spaced_value(text: str, m: re.Match[str], strength: int) -> bool:
    """NAME VALUE with only spaces between: `aws configure set aws_secret_access_key X`, .netrc,
    "secret wJalrX…" (a bare 40-character AWS secret), "token 5f4dcc3b…" (key material only)."""
    value = m.group("val").strip("\"'`")
    if BASE64_40.match(value) or strength >= TOKEN and key_material(value, 20) and not is_code(value):
        return True
    return _line_before(text, m.start()).lstrip().startswith(("machine ", "default ", "login "))


_PROSE_END = ".,;:!?)]}'\"`"


def _prose(text: str, m: re.Match[str], strength: int, name: str) -> Found:
    """"the postgres password is hunter2": a word of key material after is/was, never a word
    ("is stored", "was rotated") nor code ("is None", "is not self.token")."""
    value = m.group("val")
    start = m.start("val") + (len(value) - len(value.lstrip("\"'`")))
    value = value.strip(_PROSE_END)
    if strength < TOKEN or not 4 <= len(value) <= 100 or is_placeholder(value) or is_code(value):
        return None
    if WORDY.match(value) or not (DIGIT.search(value) or SYMBOL.search(value) or looks_random(value)):
        return None
    return start, start + len(value), _named_kind(name, value, strength, _line_around(text, m.start()))


def _auth_value(text: str, m: re.Match[str]) -> Found:
    value = text[m.start("hval"):m.end("hval")].rstrip(" \t,;")
    if len(value) < 8 or is_placeholder(value) or value.startswith(("+", "%")) or is_code(value):
        return None
    return m.start("hval"), m.start("hval") + len(value), "auth_header"


_LOGIN_TOOLS = ("docker", "podman", "nerdctl", "helm", "oras", "buildah", "skopeo")


def _dash(text: str, m: re.Match[str]) -> Found:
    """A PEM block, --password VALUE, curl -u user:pass, mysql -pPASS, sshpass -p PASS, and the
    value echoed into ``--password-stdin``."""
    kind = m.lastgroup or ""
    if kind == "pem":
        return key_block(text, m)
    value, at = text[m.start(kind):m.end(kind)], m.start(kind)
    line = _line_before(text, m.start()).lower()
    if kind == "flag":
        if value.startswith("-") or ">" in value or "|" in value:
            return None  # another flag, or a shell redirect: --token 2>/dev/null
        found = judge_value(value, PASSWORD, "=" in m.group(0)[:at - m.start()])
        return None if found is None else (at + found[0], at + found[1], "secret_assignment")
    if kind == "stdin":  # echo PASS | docker login --password-stdin
        return _piped_login(text, m)
    if kind in ("user", "user2"):  # docker -u 1000:1000 is a uid:gid, not a credential
        password = value.partition(":")[2]
        ok = ("curl" in line or "http" in line) and len(password) >= 4 and not is_placeholder(value)
        return (at, m.end(kind), "auth_header") if ok else None
    spaced = value.startswith(" ")  # mysql -p DBNAME prompts for the password; sshpass -p PASS does not
    logs_in = " login" in line and any(tool in line for tool in _LOGIN_TOOLS)  # docker login -u me -p PASS
    if ("sshpass" in line or logs_in or "mysql" in line and not spaced) and not is_placeholder(value):
        return at + spaced, m.end(kind), "secret_assignment"
    return None


# ---------------------------------------------------------------- context rules

# a value: a quoted string (Python prefixes; \"…\" of JSON inside a JSON string) or a bare word, which
# ends at a space, a quote or ; , ) ] } (code: f(token=token, x=1)) - in a query string it takes the rest
_VALUE = (r"(?P<val>[rbuf]{0,2}\"(?:[^\"\\\r\n]|\\.){0,1000}\"|[rbuf]{0,2}'(?:[^'\\\r\n]|\\.){0,1000}'"
          r"|`[^`\r\n]{0,1000}`|\\\"(?:[^\"\\\r\n]|\\[^\"\r\n]){0,1000}\\\"|[^\s\"'`;<\\,)\]}]{1,1000})")
# after a name: maybe the closing quote of a key ("api_key":, os.environ['X']); then = := => : or
# `name: type =`; "is"/"was" in prose ("password for staging is …"); spaces after access_key,
# token, secret or a .netrc password; or the > of <password>…</password>
_ASSIGN = (r"(?![a-z0-9_])(?:\\?[\"'`]\]?)?[ \t]*(?P<sep>:=|=>|=(?!=)"
           r"|:(?![:/=])(?:[ \t]*[a-z_][a-z0-9_.\[\], |]{0,60}?[ \t]+=(?!=))?"
           r"|(?P<prose>(?<=[a-z])[ \t]+(?:for[ \t]+[\w.@/:-]{1,40}(?:[ \t]+[\w.@/:-]{1,40}){0,2}[ \t]+)?"
           r"(?:is|was)(?:[ \t]+(?:now|still))?[ \t]+)"
           r"|(?<=access.key)[ \t]+|(?<= password)[ \t]+|(?<=token)[ \t]+|(?<=secret)[ \t]+"
           r"|>(?=[^<\s]{1,512}</))[ \t]*" + _VALUE)
_AUTH_HEADER = (r"orization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?>(?:bearer|basic|token|digest|bot|apikey|sso-key"
                r"|negotiate|ntlm|aws4-hmac-sha256)[ \t]+)?(?P<hval>[^\s\"'\\][^\"'\r\n\\]{0,2000})")
_QUALIFIER = r"(?:[_.-]?(?:" + "|".join(_QUALIFIERS) + r")(?![a-z0-9]))?"


def _keyword(source: str, gates: str = "", base64: bool = False) -> Rule:
    return folded_rule("secret_assignment", f"(?P<kw>(?:{source}){_QUALIFIER})" + _ASSIGN, _assignment, gates, base64)




def _secret_manifest(text: str, m: re.Match[str]) -> Found:
    """``kind: Secret`` in a Kubernetes manifest: every value of its ``data``/``stringData``
    block (before or after the kind line, within the same YAML document; lines may also be
    split by the two characters ``\\n``, as in a manifest quoted inside JSON)."""
    doc_start = max(text.rfind("\n---", 0, m.start()), text.rfind("\\n---", 0, m.start())) + 1
    ends = [e for e in (text.find("\n---", m.end()), text.find("\\n---", m.end())) if e >= 0]
    doc_end = min(ends) if ends else len(text)
    block = _DATA_BLOCK.search(text, doc_start, doc_end)
    if block is None:
        return None
    indent = len(block.group(1))
    pos = end = block.end()
    for line in _LINE.finditer(text, pos, doc_end):
        body = line.group(1)
        if body.strip() and len(body) - len(body.lstrip()) <= indent:
            break  # the block ends where the indentation does
        end = line.end(1)
        if not line.group(2):
            break
    values = _DATA_VALUE.findall(text, pos, end)
    if not any(looks_random(v, 8) or DIGIT.search(v) for v in values):
        return None  # placeholders ({{ .Values.x }}) or nothing
    return pos, end, "kubernetes_secret"


_BREAK = r"(?:\r?\n|\\n)"
_DATA_BLOCK = re.compile(r"(?:^|(?<=\\n))([ \t]*)(?:data|stringdata):[ \t]*(?=\r?\n|\\n|$)" + _BREAK + "?", re.M | re.I)
_LINE = re.compile(r"((?:(?!\\n)[^\n])*)(" + _BREAK + ")?")
_DATA_VALUE = re.compile(r":[ \t]*[\"']?([^\s\"'#{}\\]{4,})")


def _piped_login(text: str, m: re.Match[str]) -> Found:
    """echo PASS | docker login --password-stdin: the value echoed into a login, on the same line."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    echo = _ECHO.search(text, line_start, m.start())
    if echo is None:
        return None
    value = echo.group(1)
    if is_placeholder(value) or value.startswith("$") or len(value) < 4:
        return None
    return echo.start(1), echo.end(1), "secret_assignment"


_ECHO = re.compile(r"echo[ \t]+['\"]?([^\s'\"|]{4,200})['\"]?[ \t]*\|")


CONTEXT_RULES: tuple[Rule, ...] = (
    # one scan for all that starts with "-": PEM blocks, --password x, curl -u a:b, mysql -pX
    folded_rule("secret_assignment", r"-(?:(?P<pem>----begin (?:[a-z0-9]+ ){0,3}private key(?: block)?-----)"
                                     r"|-(?P<stdin>password-stdin)"
                                     r"|-(?:user[= ]['\"]?(?P<user>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                     r"|[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key"
                                     r"|secret-?key|auth-?key|credentials?)(?:=|[ \t]+)(?P<flag>\\\"[^\"\\]{1,1000}\\\""
                                     r"|[^\s\\]{1,1000}))"
                                     r"|(?<= -)u[= ]['\"]?(?P<user2>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                     r"|(?<= -)p(?P<mysql> ?[^\s'\"-][^\s'\"]{3,}))", _dash),
    _keyword(r"p(?:ass(?:word|wd|phrase)?|wd|w|swd)"),
    _keyword(r"secret"),
    _keyword(r"token"),
    _keyword(r"key"),
    folded_rule("secret_assignment", r"(?P<kw>auth)(?:" + _AUTH_HEADER + "|" + _ASSIGN + ")", _assignment),
    _keyword(r"credentials?"),
    # a vendor's credential named by what it is (ALGOLIA_APP_ID, TWILIO_ACCOUNT_SID, SENTRY_DSN): run
    # only near a run of key material, as tokens are (the name is within the 48 characters before)
    _keyword(r"client[_.-]?id", "client"), _keyword(r"app[_.-]?id", "app_id appid app-id"),
    _keyword(r"account[_.-]?sid", "ccount"), _keyword(r"access[_.-]?id", "ccess_id ccessid"),
    _keyword(r"dsn", "dsn"), _keyword(r"login", "login"),
    _keyword(r"contribsys[_.-]{0,2}com", "contribsys", base64=True),  # its name is a long run
    folded_rule("kubernetes_secret", r"kind:[ \t]*[\"']?secret\b", _secret_manifest),
)
RULES: tuple[Rule, ...] = FORMAT_RULES + CONTEXT_RULES
_ALWAYS = tuple(rule for rule in RULES if not rule.gates)


def _gate_table(rules: list[Rule], floating: bool | None = None) -> dict[str, tuple[Rule, ...]]:
    """gate → rules; a folded rule's gates are looked for in lower case. ``floating`` keeps only
    the gates holding a character no token run holds (True), or only the others (False)."""
    table: dict[str, tuple[Rule, ...]] = {}
    for rule in rules:
        for gate in rule.gates:
            inside = _RUN_CHARS.issuperset(gate) and not rule.folded and rule.kind not in _NAMED_BEFORE
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
_TOKEN_RULES = [r for r in RULES if r.gates and not r.base64]
_TOKEN_GATES = (_gate_table([r for r in _TOKEN_RULES if not r.folded], floating=True),
                _gate_table([r for r in _TOKEN_RULES if r.folded], floating=True))
_RUN_GATES = (_gate_table([r for r in _TOKEN_RULES if not r.folded], floating=False), {})
_BASE64_GATES = (_gate_table([r for r in RULES if r.base64 and not r.folded]),
                 _gate_table([r for r in RULES if r.base64 and r.folded]))

REDACTION_KINDS: frozenset[str] = frozenset({rule.kind for rule in RULES} | NAMED_KINDS)
# When finds overlap, the most specific kind names the merged redaction.
_GENERIC = ("jwt", "kubernetes_secret", "azure_connection_string", "azure_sas_token", "url_credentials",
            "auth_header", "secret_assignment", "high_entropy_secret")
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


def _token_heads(text: str, skip: list[tuple[int, int]]) -> tuple[str, str]:
    """Where a token's literal could be, for the token runs not inside ``skip``: the windows around
    their heads (48 characters before, 40 after), and their first 40 characters alone ("" if none)."""
    raw = text.encode("ascii", "replace")  # one byte per character, whatever the text
    data = raw.translate(_RUN_TABLE)
    start = data.find(_SEED)
    if start < 0:
        return "", ""
    signal = raw.translate(_SIGNAL_TABLE)
    windows: list[list[int]] = []
    starts: list[str] = []
    while start >= 0:
        end = data.find(b" ", start + _RUN_MIN)
        end = len(data) if end < 0 else end
        inside = next((e for s, e in skip if s <= start < e), None)
        if inside is not None:
            start = data.find(_SEED, max(end, inside))
            continue
        if _keyish_run(text, signal, start, end):
            lo, hi = max(0, start - _BEFORE), min(end, start + _AFTER)
            starts.append(text[start:hi])
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = hi  # overlapping heads become one
            else:
                windows.append([lo, hi])
        start = data.find(_SEED, end)
    return " ".join(text[lo:hi] for lo, hi in windows), " ".join(starts)


def scan(text: str) -> list[Span]:
    """Every secret-looking span in text, unmerged: (start, end, kind, priority). The text is
    read folded (full-width letters, invisible characters) and runs of base64 are read decoded;
    the spans are positions in ``text`` itself."""
    view, index = fold(text)
    runs = base64_runs(view)
    spans = _scan(view, runs)
    # key blocks and JWTs are base64 by design: no second look inside them
    skip = [(s, e) for s, e, kind, _ in spans if kind in ("private_key", "jwt")]
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
    spans: list[Span] = []
    _apply(_ALWAYS, text, folded, spans)
    # The lines of a key block are token-like runs; they are found already, so gate on the rest.
    heads, starts = _token_heads(text, [(s, e) for s, e, kind, _ in spans if kind == "private_key"])
    gated: dict[int, Rule] = {}  # by id, in the order first gated: each rule runs once
    if heads:
        _gated(_TOKEN_GATES, heads, gated)
        _gated(_RUN_GATES, starts, gated)
    if runs:
        _gated(_BASE64_GATES, " ".join(text[max(0, s - _BEFORE):min(e, s + _AFTER)] for s, e in runs), gated)
    if gated:
        _apply(list(gated.values()), text, folded, spans)
    return spans


def _gated(tables: tuple[dict[str, tuple[Rule, ...]], dict[str, tuple[Rule, ...]]], heads: str,
           gated: dict[int, Rule]) -> None:
    for table, hay in zip(tables, (heads, heads.lower())):
        for gate, rules in table.items():  # plain loops: a generator per gate would cost more than the tests
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
