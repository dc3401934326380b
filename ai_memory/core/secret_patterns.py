"""The shapes of secrets: compiled patterns, and the checks that tell a secret from source code.

`scan(text)` finds every secret-looking span and labels it with a kind; the sanitizer merges the
spans and replaces them. Layer 0: pure, standard library only, no I/O.

Speed rule (the hook path sanitizes thousands of events a second): every pattern starts with a
literal, so `re` jumps between occurrences of that literal instead of trying every position.
Case-insensitive patterns are written in lower case and run on `text.lower()` for the same reason;
`re.IGNORECASE` would defeat the literal search (about 30x slower on a 2 KB text).
"""

from __future__ import annotations

import binascii
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

# start, end, kind, priority (a lower priority number names a merged span)
Span = tuple[int, int, str, int]
Check = Callable[[str, "re.Match[str]"], "tuple[int, int, str] | None"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One family of secrets: a pattern, the kind it reports, and an optional check."""

    kind: str  # "" takes the kind from the name of the group that matched
    pattern: re.Pattern[str]
    check: Check | None = None  # refines the span or rejects the match
    group: int = 0  # the group that holds the secret when there is no check
    folded: re.Pattern[str] | None = None  # case-insensitive twin; set means "run on text.lower()"


def _exact(kind: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group)


def _lower(kind: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group, re.compile(source, re.IGNORECASE))


# ---------------------------------------------------------------- value judgements

_PLACEHOLDER = re.compile(
    r"""^(?:none|null|nil|true|false|undefined|empty|required|optional|string|str|bytes|int|
          secret|password|passwd|pass|token|\*+|x+|\.+|-+|_+|\#+|…+|(.)\1+)$
      | change[_-]?me | your[_-]? | example | dummy | placeholder | redacted | sample | fake
      | replace[_-]?me | (?:^|[^a-z])(?:test|todo|fixme|xxx)(?:[^a-z]|$) | \*\*\* | ^<.*>$ | ^\[.*\]$
      | \$\{ | \$\( | ^\$[a-z_{(] | \{\{ | \{%  | %\(\w+\)s | %s | ^\{.*\}$ | \{[a-z_][\w.]*\}
      | ^\#\{ | ^my[_-]?(?:secret|password|token|key|api)""",
    re.IGNORECASE | re.VERBOSE,
)
# an identifier, attribute path, call or subscript: code, not a credential
_CODE = re.compile(r"^(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?P<tail>[(\[].*)?|[(\[{].*|-?\d+(?:\.\d+)?)$")
_CALL = re.compile(r"^[\w.]+[(\[]")
_RANDOM_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$")


def entropy(value: str) -> float:
    """Shannon entropy of value in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, min_len: int = 16) -> bool:
    """True for key-like material: long, no spaces, mixed character classes, high entropy."""
    if len(value) < min_len or not _RANDOM_CHARS.match(value):
        return False
    digits = sum(ch.isdigit() for ch in value)
    upper = sum(ch.isupper() for ch in value)
    lower = sum(ch.islower() for ch in value)
    if digits == 0 and (upper < 2 or lower < 2):
        return False
    if digits == 0 and upper * 4 < len(value):  # CamelCaseWords, not base62 noise
        return False
    return entropy(value) >= min(3.5, math.log2(len(value)) * 0.8)


def is_placeholder(value: str) -> bool:
    """True for documentation values: `<token>`, `${VAR}`, `changeme`, `xxxx`, already redacted."""
    return bool(_PLACEHOLDER.search(value)) or "[REDACTED" in value


# ---------------------------------------------------------------- names that hold secrets

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENTS = re.compile(r"[^a-z0-9]+")
_STRONG_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
                   "apikey", "secretkey", "privatekey", "accesskey")
_STRONG_WORDS = {"pass", "pwd", "pw", "pswd"}
_STRONG_PAIRS = {"api", "access", "secret", "private", "auth", "master", "signing", "encryption",
                 "account", "subscription", "client", "app", "consumer", "sas"}
_WEAK_WORDS = {"key", "auth", "salt", "cookie", "hmac"}


def name_strength(name: str) -> int:
    """2 for a name that always holds a secret (DB_PASSWORD, apiKey), 1 for key/auth/salt, else 0."""
    words = [w for w in _SEGMENTS.split(_CAMEL.sub("_", name).lower()) if w]
    if not words:
        return 0
    last = words[-1]
    if last in _STRONG_WORDS or last.endswith(_STRONG_ENDINGS):
        return 2
    if last == "key" and len(words) > 1 and words[-2] in _STRONG_PAIRS:
        return 2
    return 1 if last in _WEAK_WORDS else 0


def _bare_is_code(value: str) -> bool:
    """An identifier, attribute path, call, subscript or number: code, not a credential."""
    m = _CODE.match(value)
    if m is None:
        return False
    if m.group("tail") or value[0] in "([{-" or value[0].isdigit() or "." in value:
        return True  # self.token, tokens[0], getpass.getpass(), 3600
    return not (any(ch.isdigit() for ch in value) or looks_random(value, 12))  # hunter22 is a value


def judge_value(raw: str, strength: int, env_style: bool) -> tuple[int, int, str] | None:
    """Where the secret lies inside a raw assigned value (quotes kept), or None for code/placeholders."""
    body = raw.lstrip("rbufRBUF")  # Python string prefixes: b"...", f"..."
    quoted = len(body) >= 2 and body[0] in "\"'`" and body[-1] == body[0]
    if quoted:
        start = len(raw) - len(body) + 1
        value = body[1:-1]
    else:
        start, value = 0, raw.rstrip(",;)]}>")
    if not value or is_placeholder(value):
        return None
    if strength == 1:
        ok = looks_random(value)
    elif quoted:
        ok = len(value) >= 6 and value.count(" ") < 3
    elif env_style:  # NAME=value in .env or shell: a bare word is a literal string there
        ok = len(value) >= 6 and not _CALL.match(value)
    else:
        ok = len(value) >= 8 and not _bare_is_code(value)
    if not ok:
        return None
    return start, start + len(value), "secret_assignment" if strength == 2 else "high_entropy_secret"


def _name_before(text: str, pos: int) -> int:
    """Start of the identifier (letters, digits, _ . -) that ends at pos."""
    i = pos
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
        i -= 1
    return i


def _assignment(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    start = _name_before(text, m.start())
    name = text[start:m.end("name")]
    strength = name_strength(name)
    if strength == 0:
        return None
    sep = text[m.end("name"):m.start("val")]
    env_style = sep == "=" and name.isupper() and (start == 0 or text[start - 1] in " \t\n;")
    found = judge_value(text[m.start("val"):m.end("val")], strength, env_style)
    if found is None:
        return None
    return m.start("val") + found[0], m.start("val") + found[1], found[2]


def _flag(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    found = judge_value(text[m.start("val"):m.end("val")], 2, True)
    return None if found is None else (m.start("val") + found[0], m.start("val") + found[1], found[2])


def _xml(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    value = text[m.start(1):m.end(1)]
    if len(value) < 6 or is_placeholder(value) or _bare_is_code(value):
        return None
    return m.start(1), m.end(1), "secret_assignment"


# ---------------------------------------------------------------- checks for fixed formats

_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9a-fA-F]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")


def _pem(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    # An unterminated block runs to the end: a key cut by an upstream truncation is still a key.
    end = (_PUTTY_END if m.group(0).startswith("PuTTY") else _PEM_END).search(text, m.end())
    stop = end.end() if end else len(text)
    if not _B64_RUN.search(text, m.end(), min(stop, m.end() + 600)):
        return None  # a header quoted in code ("-----BEGIN RSA PRIVATE KEY-----"), no key material
    return m.start(), stop, "private_key"


def _random_tail(kind: str, skip: int) -> Check:
    def check(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
        return (m.start(), m.end(), kind) if looks_random(m.group(0)[skip:], 12) else None
    return check


def _sk(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    kind = m.lastgroup or "openai_key"
    if kind == "openai_key" and not looks_random(m.group(0)[3:], 16):
        return None  # "sk-learn-compatible-estimators" is prose, not a key
    return m.start(), m.end(), kind


def _telegram(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    i = m.start()
    while i > 0 and m.start() - i < 10 and "0" <= text[i - 1] <= "9":
        i -= 1
    if m.start() - i < 8 or (i > 0 and text[i - 1].isalnum()):
        return None
    return i, m.end(), "telegram_bot_token"


def _url_credentials(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    user = text[m.start("user"):m.end("user")]
    if m.group("pw") is None:  # scheme://TOKEN@host: only a token-like user is a credential
        return (m.start("user"), m.end("user"), "url_credentials") if looks_random(user, 16) else None
    password = text[m.start("pw"):m.end("pw")]
    if not password or is_placeholder(password) or is_placeholder(user) or password.startswith("$"):
        return None
    return m.start("user"), m.end("pw"), "url_credentials"


def _auth_value(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    value = text[m.start("val"):m.end("val")].rstrip(" \t,;")
    if len(value) < 8 or is_placeholder(value) or value.startswith(("+", "%")) or _bare_is_code(value):
        return None
    return m.start("val"), m.start("val") + len(value), "auth_header"


def _bearer(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    value = text[m.start(1):m.end(1)]
    if is_placeholder(value) or not (looks_random(value, 16) or value.count(".") == 2):
        return None
    return m.start(1), m.end(1), "auth_header"


def _basic(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    value = text[m.start(1):m.end(1)]
    try:  # bare "Basic xxx" is a credential only if xxx decodes to user:password
        decoded = binascii.a2b_base64(value + "=" * (-len(value) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if ":" not in decoded or not decoded.isprintable():
        return None
    return m.start(1), m.end(1), "auth_header"


def _curl_user(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    line_start = text.rfind("\n", 0, m.start()) + 1
    line = text[line_start:m.start()].lower()
    user, _, password = m.group(1).partition(":")
    if "curl" not in line and "http" not in line or is_placeholder(password) or len(password) < 4:
        return None  # docker -u 1000:1000 is a uid:gid, not a credential
    return m.start(1), m.end(1), "auth_header"


def _mysql_password(text: str, m: re.Match[str]) -> tuple[int, int, str] | None:
    line_start = text.rfind("\n", 0, m.start()) + 1
    if "mysql" not in text[line_start:m.start()].lower() or is_placeholder(m.group(1)):
        return None
    return m.start(1), m.end(1), "secret_assignment"


# ---------------------------------------------------------------- the rules, most specific first

_B64URL = r"[A-Za-z0-9_-]"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_ASSIGN_VALUE = r"""(?P<val>[rbuf]{0,2}"(?:[^"\\\r\n]|\\.){0,1000}"|[rbuf]{0,2}'(?:[^'\\\r\n]|\\.){0,1000}'|`[^`\r\n]{0,1000}`|[^\s"'`&]{1,1000})"""

RULES: tuple[Rule, ...] = (
    _exact("private_key", r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----", _pem),
    _exact("private_key", r"PuTTY-User-Key-File-\d+: ", _pem),
    # the literal before the look-behind keeps re's fast literal search; the look-behind is \b
    _exact("", r"A(?<![A-Za-z0-9]A)(?:(?P<aws_access_key>(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|BIA|CCA|3T[A-Z0-9])"
               r"[A-Z0-9]{16,})|(?P<google_api_key>Iza" + _B64URL + r"{35})"
               r"|(?P<bitbucket_token>TBB[A-Za-z0-9_=.-]{24,})|(?P<atlassian_token>T[AC]TT[A-Za-z0-9_=.-]{40,})"
               r"|(?P<twilio>C[0-9a-f]{32}(?![0-9A-Za-z])))"),
    _exact("", r"g(?:(?P<github_token>h[pousr]_[A-Za-z0-9]{30,}|ithub_pat_[A-Za-z0-9_]{22,})"
               r"|(?P<gitlab_token>l(?:pat|dt|rt|cbt|ptt|ft|imt|soat|oas|agent|ffct|wt)-" + _B64URL + r"{20,}"
               r"(?:\." + _B64URL + r"+)*))"),
    _exact("", r"G(?:(?P<google_oauth_secret>OCSPX-" + _B64URL + r"{24,})|(?P<gitlab_token>R1348941" + _B64URL + r"{20,}))"),
    _exact("slack_token", r"x(?:ox[abposre](?:\.xox[bp])?|app)-[A-Za-z0-9-]{10,}"),
    _exact("", r"sk(?<![A-Za-z0-9]sk)(?:(?P<stripe_key>_(?:live|test)_[A-Za-z0-9]{10,})"
               r"|(?P<anthropic_key>-ant-" + _B64URL + r"{20,})|(?P<openai_key>-" + _B64URL + r"{20,}))", _sk),
    _exact("stripe_key", r"rk_(?<![A-Za-z0-9]rk_)(?:live|test)_[A-Za-z0-9]{10,}"),
    _exact("stripe_key", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _exact("jwt", r"eyJ" + _B64URL + r"{8,}\.ey" + _B64URL + r"{8,}\.[A-Za-z0-9_=-]*"),
    _exact("npm_token", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36,}"),
    _exact("pypi_token", r"pypi-AgE" + _B64URL + r"{50,}"),
    _exact("", r"S(?<![A-Za-z0-9]S)(?:(?P<twilio>K[0-9a-f]{32}(?![0-9A-Za-z]))"
               r"|(?P<sendgrid_key>G\." + _B64URL + r"{16,}\." + _B64URL + r"{16,}))"),
    _exact("mailgun_key", r"key-(?<![A-Za-z0-9]key-)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _exact("heroku_key", r"HRKU-" + _B64URL + r"{20,}"),
    _exact("huggingface_token", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}", _random_tail("huggingface_token", 3)),
    _exact("google_oauth_token", r"ya29\.(?<![A-Za-z0-9]ya29\.)" + _B64URL + r"{20,}"),
    _exact("google_oauth_token", r"1//0(?<![A-Za-z0-9/]1//0)" + _B64URL + r"{30,}"),
    _exact("discord_token", r"[MNO](?<![A-Za-z0-9_-][MNO])" + _B64URL + r"{23,27}\." + _B64URL + r"{6}\."
           + _B64URL + r"{27,40}(?!" + _B64URL + r")", _random_tail("discord_token", 0)),
    _exact("telegram_bot_token", r":AA" + _B64URL + r"{30,}", _telegram),
    _lower("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/([a-z0-9_/+-]{20,})", group=1),
    _lower("discord_webhook", r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/(" + _B64URL.lower() + r"{30,})",
           group=1),
    _lower("azure_connection_string", r"accountkey\s*=\s*([a-z0-9+/]{20,}={0,2})", group=1),
    _lower("azure_connection_string", r"sharedaccess(?:key|signature)\s*=\s*([^;\"'\s]{8,})", group=1),
    _lower("azure_sas_token", r"sig=(?<=[?&]sig=)([a-z0-9%+/=]{20,})", group=1),
    _lower("heroku_key", r"heroku[a-z0-9_.-]*[\"']?\s*[:=]\s*[\"']?(" + _UUID + ")", group=1),
    _lower("twilio", r"twilio[a-z0-9_]*?_?(?:auth_?)?token[\"']?\s*[:=]\s*[\"']?([0-9a-f]{32})(?![0-9a-z])", group=1),
    _lower("aws_secret_key", r"secret[_.-]?(?:access[_.-]?)?key(?:[_.-]?id)?[\"'\]]*\s*(?:[:=]|=>)?\s*[\"']?"
                             r"([a-z0-9/+]{40})(?![a-z0-9/+=])", group=1),
    _lower("url_credentials", r"://(?P<user>[^\s/?#@:'\"<>()\[\]{}]{0,256})(?::(?P<pw>[^\s/?#@'\"<>]{0,256}))?@"
                              r"(?=[a-z0-9\[])", _url_credentials),
    _lower("auth_header", r"authorization[\"']?\s*[:=]\s*[\"']?(?>(?:bearer|basic|token|digest|bot|apikey|sso-key|"
                          r"negotiate|ntlm|aws4-hmac-sha256)\s+)?(?P<val>[^\s\"'][^\"'\r\n]{0,2000})", _auth_value),
    _lower("auth_header", r"bearer\s+([a-z0-9._~+/=-]{16,})", _bearer),
    _lower("auth_header", r"basic\s+([a-z0-9+/]{8,}={0,2})(?![a-z0-9+/=])", _basic),
    _exact("auth_header", r"-(?:u|-user)[= ]['\"]?([^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})(?=['\"]?(?:\s|$))", _curl_user),
    _exact("secret_assignment", r" -p([^\s'\"-][^\s'\"]{3,})", _mysql_password),
    _lower("secret_assignment", r"--[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key|secret-?key|"
                                r"auth-?key|credentials?)(?:=|[ \t]+)" + _ASSIGN_VALUE, _flag),
    _lower("secret_assignment", r"<[a-z0-9_:.-]{0,40}?(?:password|passwd|secret|token|api_?key|credentials?)>"
                                r"([^<\s]{1,512})</", _xml),
    _lower("", r"(?P<name>(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|credentials?|key|auth|salt|cookie)(?![a-z0-9_]))"
               r"(?:[\"'`]\]?)?[ \t]*(?::=|=>|=(?!=)|:(?![:/=])(?:[ \t]*[a-z_][a-z0-9_.\[\], |]{0,60}?[ \t]*=(?!=))?)"
               r"[ \t]*" + _ASSIGN_VALUE, _assignment),
)

REDACTION_KINDS: frozenset[str] = frozenset(
    {r.kind for r in RULES if r.kind} | {g for r in RULES for g in r.pattern.groupindex if g not in ("name", "val", "user", "pw")}
    | {"high_entropy_secret"}
)


def scan(text: str) -> list[Span]:
    """Every secret-looking span in text, unmerged: (start, end, kind, priority)."""
    low = text.lower()
    aligned = len(low) == len(text)  # lower() can lengthen a few characters (İ); then use the twin
    spans: list[Span] = []
    for priority, rule in enumerate(RULES):
        if rule.folded is None:
            hay, pattern = text, rule.pattern
        else:
            hay, pattern = (low, rule.pattern) if aligned else (text, rule.folded)
        for m in pattern.finditer(hay):
            if rule.check is not None:
                found = rule.check(text, m)
                if found is None:
                    continue
                start, end, kind = found
            else:
                start, end = m.span(rule.group)
                kind = rule.kind or m.lastgroup or "secret"
            if end > start:
                spans.append((start, end, kind, priority))
    return spans
