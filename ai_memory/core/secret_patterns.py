"""The shapes of secrets: compiled patterns, and the checks that tell a secret from source code.

`scan(text)` finds every secret-looking span and labels it with a kind; the sanitizer merges the
spans and replaces them. Layer 0: pure, standard library only, no I/O.

Speed (the hook path sanitizes thousands of events a second, and `re` pays ~100 ns for every
position where a pattern could start): every pattern starts with a literal, so `re` jumps between
occurrences of it; case-insensitive patterns are written in lower case and run on `text.lower()`
(`re.IGNORECASE` defeats the literal jump). Token formats are gated once more: a token is a run of
20+ token characters, so each token pattern runs only if its literal occurs inside such a run.
"""

from __future__ import annotations

import binascii
import math
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

Span = tuple[int, int, str, int]  # start, end, kind, priority (the lowest priority names a merged span)
Found = tuple[int, int, str] | None
Check = Callable[[str, "re.Match[str]"], Found]


@dataclass(frozen=True, slots=True)
class Rule:
    """One family of secrets: a pattern, the kind it reports, how to refine a match, when to run."""

    kind: str
    pattern: re.Pattern[str]
    check: Check | None = None  # refines the span or rejects the match
    group: int = 0  # the group that holds the secret when there is no check
    folded: re.Pattern[str] | None = None  # set: pattern is lower case, runs on text.lower()
    gates: tuple[str, ...] = ()  # set: run only if one occurs inside a run of token characters


def _token(kind: str, gates: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group, None, tuple(gates.split()))


def _text(kind: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group)


def _lower(kind: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group, re.compile(source, re.IGNORECASE))


# ---------------------------------------------------------------- judging values

_PLACEHOLDER = re.compile(
    r"""^(?:none|null|nil|true|false|undefined|empty|required|optional|string|str|bytes|int|
          secret|password|passwd|pass|token|\*+|x+|\.+|-+|_+|\#+|…+|(.)\1+)$
      | change[_-]?me | your[_-]? | example | dummy | placeholder | redacted | sample | fake
      | replace[_-]?me | (?:^|[^a-z])(?:test|todo|fixme|xxx)(?:[^a-z]|$) | \*\*\* | ^<.*>$ | ^\[.*\]$
      | \$\{ | \$\( | ^\$[a-z_{(] | \{\{ | \{% | %\(\w+\)s | %s | ^\{.*\}$ | \{[a-z_][\w.]*\}
      | ^\#\{ | ^my[_-]?(?:secret|password|token|key|api)""",
    re.IGNORECASE | re.VERBOSE,
)
# an identifier, attribute path, call, subscript, bracketed expression or number
_CODE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?P<tail>[(\[].*)?|[(\[{].*|-?\d+(?:\.\d+)?)$")
_CALL = re.compile(r"^[\w.]+[(\[]")
_RANDOM_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$")
_BASE64_40 = re.compile(r"^[A-Za-z0-9/+]{40}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX_32 = re.compile(r"^[0-9a-f]{32}$")


def entropy(value: str) -> float:
    """Shannon entropy of value, in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, min_len: int = 16) -> bool:
    """True for key material: long, no spaces, mixed character classes, high entropy."""
    if len(value) < min_len or not _RANDOM_CHARS.match(value):
        return False
    digits = sum(ch.isdigit() for ch in value)
    upper = sum(ch.isupper() for ch in value)
    if digits == 0 and (upper * 4 < len(value) or value.isupper()):
        return False  # CamelCaseWords and CONSTANT_NAMES, not base62 noise
    return entropy(value) >= min(3.5, math.log2(len(value)) * 0.8)


def is_placeholder(value: str) -> bool:
    """True for documentation values: `<token>`, `${VAR}`, `changeme`, `xxxx`, already redacted."""
    return "[REDACTED" in value or bool(_PLACEHOLDER.search(value))


def _bare_is_code(value: str) -> bool:
    """An identifier, attribute path, call, subscript or number: code, not a credential."""
    m = _CODE.match(value)
    if m is None:
        return False
    if m.group("tail") or value[0] in "([{-" or value[0].isdigit() or "." in value:
        return True  # self.token, tokens[0], getpass.getpass(), 3600
    return not (any(ch.isdigit() for ch in value) or looks_random(value, 12))  # hunter22 is a value


# ---------------------------------------------------------------- names that hold secrets

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENTS = re.compile(r"[^a-z0-9]+")
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
                   "apikey", "secretkey", "privatekey", "accesskey")
_STRONG_WORDS = {"pass", "pwd", "pw", "pswd"}
_STRONG_PAIRS = {"api", "access", "secret", "private", "auth", "master", "signing", "encryption",
                 "account", "subscription", "client", "app", "consumer", "sas"}


def name_strength(name: str) -> int:
    """2 for a name that always holds a secret (DB_PASSWORD, apiKey), 1 for key/auth, else 0."""
    words = [w for w in _SEGMENTS.split(_CAMEL.sub("_", name).lower()) if w]
    if not words:
        return 0
    last = words[-1]
    if last in _STRONG_WORDS or last.endswith(_STRONG_ENDINGS):
        return 2
    if last == "key" and len(words) > 1 and words[-2] in _STRONG_PAIRS:
        return 2
    return 1 if last in ("key", "auth") else 0


def judge_value(raw: str, strength: int, env_style: bool) -> tuple[int, int] | None:
    """Where the secret lies inside a raw assigned value (quotes kept), or None for code/placeholders."""
    body = raw.lstrip("rbufRBUF")  # Python string prefixes: b"...", f"..."
    quoted = len(body) >= 2 and body[0] in "\"'`" and body[-1] == body[0]
    if quoted:
        start, value = len(raw) - len(body) + 1, body[1:-1]
    else:
        start, value = 0, raw.rstrip(",;)]}>")
    if not value or is_placeholder(value):
        return None
    if strength == 1:
        ok = looks_random(value) and (quoted or not _bare_is_code(value))
    elif quoted:  # prose ("The pass statement") has spaces; passwords almost never do
        ok = len(value) >= 6 and not any(ch.isspace() for ch in value) and "\\n" not in value
    elif env_style:  # NAME=value in .env or shell: a bare word is a literal string there
        ok = len(value) >= 6 and not _CALL.match(value)
    else:
        ok = len(value) >= 8 and not _bare_is_code(value)
    return (start, start + len(value)) if ok else None


def _name_start(text: str, pos: int) -> int:
    """Start of the identifier (letters, digits, _ . -) that ends at pos."""
    i = pos
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
        i -= 1
    return i


def _named_kind(name: str, value: str, strength: int) -> str:
    """A vendor kind when the name says which vendor the value belongs to."""
    low = name.lower()
    if "secret" in low and ("access" in low or "aws" in low) and _BASE64_40.match(value):
        return "aws_secret_key"
    if "heroku" in low and _UUID.match(value):
        return "heroku_key"
    if "twilio" in low and _HEX_32.match(value):
        return "twilio"
    return "secret_assignment" if strength == 2 else "high_entropy_secret"


def _assignment(text: str, m: re.Match[str]) -> Found:
    if m.lastgroup == "hval":
        return _auth_value(text, m)
    start = _name_start(text, m.start())
    name = text[start:m.end("kw")]
    strength = name_strength(name)
    sep = m.group("sep")
    if strength == 0 or sep.isspace() and not _BASE64_40.match(text[m.start("val"):m.end("val")]):
        return None  # "aws_secret_access_key VALUE" is the only bare-space assignment we accept
    env_style = sep == "=" and name.isupper() and (start == 0 or text[start - 1] in " \t\n;")
    found = judge_value(text[m.start("val"):m.end("val")], strength, env_style)
    if found is None:
        return None
    s, e = m.start("val") + found[0], m.start("val") + found[1]
    return s, e, _named_kind(name, text[s:e], strength)


def _auth_value(text: str, m: re.Match[str]) -> Found:
    value = text[m.start("hval"):m.end("hval")].rstrip(" \t,;")
    if len(value) < 8 or is_placeholder(value) or value.startswith(("+", "%")) or _bare_is_code(value):
        return None
    return m.start("hval"), m.start("hval") + len(value), "auth_header"


def _dash(text: str, m: re.Match[str]) -> Found:
    """--password VALUE, curl -u user:pass, mysql -pPASS."""
    kind = m.lastgroup
    value = text[m.start(kind):m.end(kind)]
    line = text[text.rfind("\n", 0, m.start()) + 1:m.start()].lower()
    if kind == "flag":
        found = judge_value(value, 2, "=" in m.group(0)[:m.start(kind) - m.start()])
        return None if found is None else (m.start(kind) + found[0], m.start(kind) + found[1], "secret_assignment")
    if kind in ("user", "user2"):  # docker -u 1000:1000 is a uid:gid, not a credential
        password = value.partition(":")[2]
        if ("curl" in line or "http" in line) and len(password) >= 4 and not is_placeholder(password):
            return m.start(kind), m.end(kind), "auth_header"
        return None
    if "mysql" in line and not is_placeholder(value):
        return m.start(kind), m.end(kind), "secret_assignment"
    return None


def _xml(text: str, m: re.Match[str]) -> Found:
    value = text[m.start(1):m.end(1)]
    if len(value) < 6 or is_placeholder(value) or _bare_is_code(value):
        return None
    return m.start(1), m.end(1), "secret_assignment"


# ---------------------------------------------------------------- checks for fixed formats

_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9a-fA-F]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")


def _key_block(text: str, m: re.Match[str]) -> Found:
    # An unterminated block runs to the end: a key cut by an upstream truncation is still a key.
    end = (_PUTTY_END if m.group(0).startswith("PuTTY") else _PEM_END).search(text, m.end())
    stop = end.end() if end else len(text)
    if not _B64_RUN.search(text, m.end(), min(stop, m.end() + 600)):
        return None  # a header quoted in code ("-----BEGIN RSA PRIVATE KEY-----"), no key material
    return m.start(), stop, "private_key"


def _random_body(kind: str, skip: int) -> Check:
    def check(text: str, m: re.Match[str]) -> Found:
        return (m.start(), m.end(), kind) if looks_random(m.group(0)[skip:], 12) else None
    return check


def _telegram(text: str, m: re.Match[str]) -> Found:
    i = m.start()
    while i > 0 and m.start() - i < 10 and "0" <= text[i - 1] <= "9":
        i -= 1
    if m.start() - i < 8 or (i > 0 and text[i - 1].isalnum()):
        return None
    return i, m.end(), "telegram_bot_token"


def _url_credentials(text: str, m: re.Match[str]) -> Found:
    user = text[m.start("user"):m.end("user")]
    if m.group("pw") is None:  # scheme://TOKEN@host: only a token-like user is a credential
        return (m.start("user"), m.end("user"), "url_credentials") if looks_random(user, 16) else None
    password = text[m.start("pw"):m.end("pw")]
    if not password or is_placeholder(password) or is_placeholder(user) or password.startswith("$"):
        return None
    return m.start("user"), m.end("pw"), "url_credentials"


def _bearer_or_basic(text: str, m: re.Match[str]) -> Found:
    group = 1 if m.group(1) is not None else 2
    value = text[m.start(group):m.end(group)]
    if group == 1:  # bearer
        ok = not is_placeholder(value) and (looks_random(value, 16) or value.count(".") == 2)
        return (m.start(1), m.end(1), "auth_header") if ok else None
    try:  # a bare "Basic xxx" is a credential only if xxx decodes to user:password
        decoded = binascii.a2b_base64(value + "=" * (-len(value) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    ok = ":" in decoded and decoded.isprintable()
    return (m.start(2), m.end(2), "auth_header") if ok else None


# ---------------------------------------------------------------- the rules, most specific first

_B = r"[A-Za-z0-9_-]"  # base64url
_VALUE = (r"(?P<val>[rbuf]{0,2}\"(?:[^\"\\\r\n]|\\.){0,1000}\"|[rbuf]{0,2}'(?:[^'\\\r\n]|\\.){0,1000}'"
          r"|`[^`\r\n]{0,1000}`|[^\s\"'`&]{1,1000})")
# after a name: an optional closing quote (JSON key, os.environ['X']), then = := => : or "key: type ="
_ASSIGN = (r"(?![a-z0-9_])(?:[\"'`]\]?)?[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/=])(?:[ \t]*[a-z_][a-z0-9_.\[\], |]{0,60}?"
           r"[ \t]*=(?!=))?|(?<=access.key)[ \t]+)[ \t]*" + _VALUE)
_AUTH_HEADER = (r"orization[\"']?[ \t]*[:=][ \t]*[\"']?(?>(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate"
                r"|ntlm|aws4-hmac-sha256)[ \t]+)?(?P<hval>[^\s\"'][^\"'\r\n]{0,2000})")


def _keyword(source: str) -> Rule:
    return _lower("secret_assignment", f"(?P<kw>{source})" + _ASSIGN, _assignment)


RULES: tuple[Rule, ...] = (
    _text("private_key", r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----", _key_block),
    _token("private_key", "PuTTY-User-Key-File-", r"PuTTY-User-Key-File-\d+: ", _key_block),
    # a literal, then a look-behind that does what \b would (a leading \b defeats the literal jump)
    _token("aws_access_key", "AKIA ASIA AGPA AIDA AROA AIPA ANPA ANVA APKA ABIA ACCA A3T",
           r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16,}"),
    _token("google_api_key", "AIza", r"AIza" + _B + r"{35}"),
    _token("bitbucket_token", "ATBB", r"ATBB[A-Za-z0-9_=.-]{24,}"),
    _token("atlassian_token", "ATATT ATCTT", r"AT[AC]TT[A-Za-z0-9_=.-]{40,}"),
    _token("github_token", "gh github_pat_", r"g(?:h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{22,})"),
    _token("gitlab_token", "gl", r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|soat|oas|agent|ffct|wt)-" + _B + r"{20,}(?:\." + _B + r"+)*"),
    _token("gitlab_token", "GR1348941", r"GR1348941" + _B + r"{20,}"),
    _token("google_oauth_secret", "GOCSPX-", r"GOCSPX-" + _B + r"{24,}"),
    _token("slack_token", "xox xapp-", r"x(?:ox[abposre](?:\.xox[bp])?|app)-[A-Za-z0-9-]{15,}"),
    _token("anthropic_key", "sk-ant-", r"sk-ant-" + _B + r"{20,}"),
    _token("openai_key", "sk-", r"sk-(?<![A-Za-z0-9]sk-)(?!ant-)" + _B + r"{20,}", _random_body("openai_key", 3)),
    _token("stripe_key", "sk_ rk_ whsec_", r"(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})"),
    _token("jwt", "eyJ", r"eyJ" + _B + r"{8,}\.ey" + _B + r"{8,}\.[A-Za-z0-9_=-]*"),
    _token("npm_token", "npm_", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36,}"),
    _token("pypi_token", "pypi-AgE", r"pypi-AgE" + _B + r"{50,}"),
    _token("twilio", "SK AC", r"(?:SK|AC)(?<![A-Za-z0-9]SK)(?<![A-Za-z0-9]AC)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _token("sendgrid_key", "SG.", r"SG\.(?<![A-Za-z0-9]SG\.)" + _B + r"{16,}\." + _B + r"{16,}"),
    _token("mailgun_key", "key-", r"key-(?<![A-Za-z0-9]key-)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _token("heroku_key", "HRKU-", r"HRKU-" + _B + r"{20,}"),
    _token("huggingface_token", "hf_", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}", _random_body("huggingface_token", 3)),
    _token("google_oauth_token", "ya29. 1//0", r"(?:ya29\.(?<![A-Za-z0-9]ya29\.)|1//0)" + _B + r"{20,}"),
    # the first part is base64 of a numeric user id, so it starts with one of these pairs
    _token("discord_token", "MT Mj Mz ND NT Nj Nz OD OT",
           r"[MNO](?<![A-Za-z0-9_-][MNO])[TjzDT]" + _B + r"{22,26}\." + _B + r"{6}\." + _B + r"{27,40}(?!" + _B + ")",
           _random_body("discord_token", 0)),
    _token("telegram_bot_token", ":AA", r":AA" + _B + r"{30,}", _telegram),
    _token("slack_webhook", "hooks.slack.com", r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{20,})",
           group=1),
    _token("discord_webhook", "discord", r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/(" + _B + r"{30,})", group=1),
    _token("azure_connection_string", "AccountKey= SharedAccess",
           r"(?:AccountKey|SharedAccess(?:Key|Signature))=([^;\"'\s]{8,})", group=1),
    _token("azure_sas_token", "sig=", r"sig=(?<=[?&]sig=)([A-Za-z0-9%+/=]{20,})", group=1),
    _lower("url_credentials", r"://(?P<user>[^\s/?#@:'\"<>()\[\]{}]{0,256})(?::(?P<pw>[^\s/?#@'\"<>]{0,256}))?@"
                              r"(?=[a-z0-9\[])", _url_credentials),
    _lower("auth_header", r"b(?:earer[ \t]+([a-z0-9._~+/=-]{16,})|asic[ \t]+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=]))",
           _bearer_or_basic),
    _lower("secret_assignment", r"-(?:-(?:user[= ]['\"]?(?P<user>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                r"|[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key|secret-?key"
                                r"|auth-?key|credentials?)(?:=|[ \t]+)(?P<flag>[^\s]{1,1000}))"
                                r"|(?<= -)u[= ]['\"]?(?P<user2>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                r"|(?<= -)p(?P<mysql>[^\s'\"-][^\s'\"]{3,}))", _dash),
    _lower("secret_assignment", r"<[a-z0-9_:.-]{0,40}?(?:password|passwd|secret|token|api_?key|credentials?)>"
                                r"([^<\s]{1,512})</", _xml),
    _keyword(r"p(?:ass(?:word|wd|phrase)?|wd|w|swd)"),
    _keyword(r"secret"),
    _keyword(r"token"),
    _keyword(r"key"),
    _lower("secret_assignment", r"(?P<kw>auth)(?:" + _AUTH_HEADER + "|" + _ASSIGN + ")", _assignment),
    _keyword(r"credentials?"),
)

REDACTION_KINDS: frozenset[str] = frozenset(
    {rule.kind for rule in RULES} | {"high_entropy_secret", "aws_secret_key", "heroku_key", "twilio", "auth_header"})

# Token runs: the characters any token format is made of. A run shorter than 20 holds no token.
_RUN_TABLE = bytes(ord("a") if chr(b) in string.ascii_letters + string.digits + "_.:+/=%-" else ord(" ")
                   for b in range(256))
_RUN = re.compile(b"a" * 20 + b"*")  # spelled out, so re finds it by literal search


def _token_runs(text: str) -> str:
    """Every run of 20+ token characters in text, joined by spaces ("" when there is none)."""
    data = text.encode("ascii", "replace").translate(_RUN_TABLE)  # one byte per character
    if b"a" * 20 not in data:
        return ""
    return " ".join(text[m.start():m.end()] for m in _RUN.finditer(data))


def scan(text: str) -> list[Span]:
    """Every secret-looking span in text, unmerged: (start, end, kind, priority)."""
    low = text.lower()
    aligned = len(low) == len(text)  # lower() lengthens a few characters (İ); then use the twin
    runs = _token_runs(text)
    spans: list[Span] = []
    for priority, rule in enumerate(RULES):
        if rule.gates:
            if not runs or not any(gate in runs for gate in rule.gates):
                continue
            hay, pattern = text, rule.pattern
        elif rule.folded is None:
            hay, pattern = text, rule.pattern
        else:
            hay, pattern = (low, rule.pattern) if aligned else (text, rule.folded)
        for m in pattern.finditer(hay):
            found = rule.check(text, m) if rule.check is not None else (*m.span(rule.group), rule.kind)
            if found is not None and found[1] > found[0]:
                spans.append((found[0], found[1], found[2], priority))
    return spans
