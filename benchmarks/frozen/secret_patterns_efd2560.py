"""The shapes of secrets: compiled patterns, and the checks that tell a secret from source code.

`scan(text)` finds every secret-looking span and labels it with a kind; the sanitizer merges the
spans and replaces them. Layer 0: pure, standard library only, no I/O.

Speed (the hook path sanitizes thousands of events a second, and `re` pays ~100 ns for every
position where a pattern might start): every pattern starts with a literal, so `re` jumps between
occurrences of it; case-insensitive patterns are written in lower case and run on `text.lower()`
(`re.IGNORECASE` defeats the literal jump). Vendor tokens are gated once more: a token is a run of
20+ token characters, so each token pattern runs only if its literal occurs near the head of one.
A pattern whose body can hold its own literal starts with a look-behind word start, so that
"eyJeyJeyJ…" costs one pass, not one per occurrence.
"""

from __future__ import annotations

import functools
import math
import re
import string
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


def _token(kind: str, gates: str, source: str, check: Check | None = None, group: int = 0) -> Rule:
    return Rule(kind, re.compile(source), check, group, False, tuple(gates.split()))


def _lower(kind: str, source: str, check: Check | None = None, gates: str = "") -> Rule:
    return Rule(kind, re.compile(source), check, 0, True, tuple(gates.split()))


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
_CALL = re.compile(r"^[\w.]+[(\[]")
_DIGIT = re.compile(r"\d")
_HUMP = re.compile(r"[A-Z][a-z]{2,}")
_CASE_SWITCH = re.compile(r"[a-z](?=[A-Z])|[A-Z](?=[a-z])")
_TYPE_NAME = re.compile(r"^_*[A-Z]\w{0,28}[A-Z][a-z]{2,}$")  # short, ends in a Capitalised word
# a word of code: lower_case, UPPER_CASE, EndsInAWord, or Mixed_snake_case (not Zx9Qv_random noise)
_CODE_WORD = re.compile(r"^_*(?:[a-z0-9_]+|[A-Z0-9_]+|\w*[A-Z][a-z]{2,}"
                        r"|[A-Za-z0-9]{1,12}(?:_+[a-z0-9]{1,20})+_*)$")
_WORDY = re.compile(r"^[A-Za-z_-]+$")  # letters and - _ only: a word or a name, like challengePassword
_SECRET_WORDS = re.compile(r"pass|secret|token|key|auth|cred", re.IGNORECASE)
_SYMBOL = re.compile(r"[^\w.-]")
# code in a comment or in `backticks`: decided_mask==0, get_token() (not "…Ew==" padding nor "2A==2y")
_OPERATOR = re.compile(r"(?<![\w!=])[a-z_][a-z0-9_.]* ?[!=]= ?[\w\"'-]|\w\(\)|->")
_NOT_SECRET = re.compile(r"^#[0-9a-fA-F]{3,8}$|^__\w+__$")  # a colour, a __dunder__ sentinel
_SPACE = re.compile(r"\s")
_RANDOM_CHARS = re.compile(r"^[A-Za-z0-9+/=_.~-]+$")
_BASE64_40 = re.compile(r"^[A-Za-z0-9/+]{40}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX_32 = re.compile(r"^[0-9a-f]{32}$")
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
    if not _DIGIT.search(value) and (len(_CASE_SWITCH.findall(value)) * 5 < len(value)
                                     or sum(map(len, _HUMP.findall(value))) * 2 >= len(value)):
        return False  # CONSTANT_NAMES, token.ERRORTOKEN (few case changes), CamelCaseWords (mostly words)
    return entropy(value) >= min(3.5, math.log2(len(value)) * 0.8)


def is_placeholder(value: str) -> bool:
    """True for documentation values: `<token>`, `${VAR}`, `changeme`, `xxxx`, already redacted."""
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or len(low) > 1 and low == low[0] * len(low):  # "none", "********"
        return True
    hinted = low.startswith("my") or _TEMPLATE_CHARS.search(low) is not None
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
    return not _DIGIT.search(value)  # but hunter22 is a value


# ---------------------------------------------------------------- names and assignments

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENTS = re.compile(r"[^a-z0-9]+")
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "secret", "credential", "credentials", "authorization")
_PASSWORD_WORDS = {"pass", "pwd", "pw", "pswd", "cookie"}
_TOKEN_ENDINGS = ("token", "apikey", "secretkey", "privatekey", "accesskey")
_STRONG_PAIRS = {"api", "access", "secret", "private", "auth", "master", "signing", "encryption",
                 "account", "subscription", "client", "app", "consumer", "sas"}
_QUALIFIERS = ("base64", "base", "value", "b64", "hex", "raw", "str", "string", "enc", "encoded", "plain")
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
    if _WORDY.match(value) and _SECRET_WORDS.search(value):
        return None  # the value names a secret (CHALLENGE_PASSWORD = "challengePassword"), it is not one
    if _OPERATOR.search(value) or _NOT_SECRET.match(value):
        return None
    keyish = _DIGIT.search(value) is not None or looks_random(value)  # what key material always is
    if strength == WEAK:
        ok = looks_random(value) and (quoted or not is_code(value))
    elif quoted:  # prose ("The pass statement") has spaces, and "ENDMARKER" is an enum name
        ok = (len(value) >= 6 and not _SPACE.search(value) and "\\n" not in value and "<" not in value
              and not (value.isupper() and value.replace("_", "").isalpha()) and (strength == PASSWORD or keyish))
    elif env_style:  # NAME=value in .env or shell: a bare word is a literal string there
        ok = len(value) >= 6 and not _CALL.match(value)
    else:  # YAML, INI, a kwarg: needs a digit or a symbol, else it is a word ("token: re-exchanged")
        ok = (len(value) >= 8 and not is_code(value)
              and (keyish or strength == PASSWORD and _SYMBOL.search(value) is not None))
    return (start, start + len(value)) if ok else None


def _line_before(text: str, pos: int) -> str:
    """The line up to pos, at most 200 characters of it (a 5 MB line must not be sliced per match)."""
    start = max(0, pos - 200)
    newline = text.rfind("\n", start, pos)
    return text[newline + 1 if newline >= 0 else start:pos]


def _named_kind(name: str, value: str, strength: int) -> str:
    """A vendor's kind when the name says whose the value is (AWS_SECRET_ACCESS_KEY, HEROKU_API_KEY)."""
    low, value = name.lower(), value.rstrip(".")  # the full stop of "… KEY=value."
    if low.endswith(("accountkey", "sharedaccesskey")):
        return "azure_connection_string"
    if "secret" in low and ("access" in low or "aws" in low) and _BASE64_40.match(value):
        return "aws_secret_key"
    if "heroku" in low and _UUID.match(value):
        return "heroku_key"
    if "twilio" in low and _HEX_32.match(value):
        return "twilio"
    return "high_entropy_secret" if strength == WEAK else "secret_assignment"


def _assignment(text: str, m: re.Match[str]) -> Found:
    """NAME = value in code, .env, YAML, JSON, XML; the regex matched from the keyword on."""
    if m.lastgroup == "hval":
        return _auth_value(text, m)
    start = m.start() - _NAME_CHARS.match(text[max(0, m.start() - 100):m.start()][::-1]).end()  # type: ignore
    name, sep = text[start:m.end("kw")], m.group("sep")
    strength = name_strength(name)
    if strength == 0 or sep == ">" and (text[start - 1:start] != "<" or strength == WEAK):
        return None  # <key>CFBundleVersion</key> fills every plist
    if sep.isspace():  # only `aws configure set aws_secret_access_key X` and .netrc separate by spaces
        line = _line_before(text, m.start()).lstrip()
        if not _BASE64_40.match(m.group("val")) and not line.startswith(("machine ", "default ", "login ")):
            return None
    env_style = (text[m.end("kw"):m.start("val")] == "=" and name.isupper()
                 and (start == 0 or text[start - 1] in " \t\n;\"'"))
    raw = text[m.start("val"):m.end("val")]
    found = judge_value(f'"{raw}"' if sep == ">" else raw, strength, env_style)  # <password>x</password>
    if found is None:
        return None
    s, e = m.start("val") + found[0] - (sep == ">"), m.start("val") + found[1] - (sep == ">")
    return s, e, _named_kind(name, text[s:e], strength)


def _auth_value(text: str, m: re.Match[str]) -> Found:
    value = text[m.start("hval"):m.end("hval")].rstrip(" \t,;")
    if len(value) < 8 or is_placeholder(value) or value.startswith(("+", "%")) or is_code(value):
        return None
    return m.start("hval"), m.start("hval") + len(value), "auth_header"


def _dash(text: str, m: re.Match[str]) -> Found:
    """A PEM block, --password VALUE, curl -u user:pass, mysql -pPASS, sshpass -p PASS."""
    kind = m.lastgroup or ""
    if kind == "pem":
        return _key_block(text, m)
    value, at = text[m.start(kind):m.end(kind)], m.start(kind)
    line = _line_before(text, m.start()).lower()
    if kind == "flag":
        if value.startswith("-") or ">" in value or "|" in value:
            return None  # another flag, or a shell redirect: --token 2>/dev/null
        found = judge_value(value, PASSWORD, "=" in m.group(0)[:at - m.start()])
        return None if found is None else (at + found[0], at + found[1], "secret_assignment")
    if kind in ("user", "user2"):  # docker -u 1000:1000 is a uid:gid, not a credential
        password = value.partition(":")[2]
        ok = ("curl" in line or "http" in line) and len(password) >= 4 and not is_placeholder(value)
        return (at, m.end(kind), "auth_header") if ok else None
    spaced = value.startswith(" ")  # mysql -p DBNAME prompts for the password; sshpass -p PASS does not
    if ("sshpass" in line or "mysql" in line and not spaced) and not is_placeholder(value):
        return at + spaced, m.end(kind), "secret_assignment"
    return None


# ---------------------------------------------------------------- fixed formats

_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9a-fA-F]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")


def _key_block(text: str, m: re.Match[str]) -> Found:
    end_line = _PUTTY_END if m.group(0).startswith("PuTTY") else _PEM_END
    near = end_line.search(text, m.end(), m.end() + 600)
    if not _B64_RUN.search(text, m.end(), near.start() if near else m.end() + 600):
        return None  # a header quoted in code ("-----BEGIN RSA PRIVATE KEY-----"), no key material
    # An unterminated block runs to the end: a key cut by an upstream truncation is still a key.
    end = near or end_line.search(text, m.end())
    return m.start(), end.end() if end else len(text), "private_key"


def _random_body(kind: str, skip: int) -> Check:
    def check(text: str, m: re.Match[str]) -> Found:
        return (m.start(), m.end(), kind) if looks_random(m.group(0)[skip:], 12) else None
    return check


def _letters_body(text: str, m: re.Match[str]) -> Found:
    """hf_ + letters: random means mixed case all through, not CamelWords."""
    body = m.group(0)[3:]
    ok = 0.2 < sum(map(str.isupper, body)) / len(body) < 0.8 and entropy(body) >= 3.5
    return (m.start(), m.end(), "huggingface_token") if ok else None


def _telegram(text: str, m: re.Match[str]) -> Found:
    i = m.start()
    while i > 0 and m.start() - i < 10 and "0" <= text[i - 1] <= "9":
        i -= 1
    if m.start() - i < 8 or (i > 0 and text[i - 1].isdigit()):  # "bot123456789:AA…" in URLs is fine
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


def _bearer(text: str, m: re.Match[str]) -> Found:
    value = text[m.start(1):m.end(1)]
    ok = not is_placeholder(value) and (looks_random(value, 16) or value.count(".") == 2)
    return (m.start(1), m.end(1), "auth_header") if ok else None


# ---------------------------------------------------------------- the rules

_B = r"[A-Za-z0-9_-]"  # base64url
# a value: a quoted string (Python prefixes; \"…\" of JSON inside a JSON string) or a bare word, which
# ends at a space, a quote or ; , ) ] } (code: f(token=token, x=1)) - in a query string it takes the rest
_VALUE = (r"(?P<val>[rbuf]{0,2}\"(?:[^\"\\\r\n]|\\.){0,1000}\"|[rbuf]{0,2}'(?:[^'\\\r\n]|\\.){0,1000}'"
          r"|`[^`\r\n]{0,1000}`|\\\"(?:[^\"\\\r\n]|\\[^\"\r\n]){0,1000}\\\"|[^\s\"'`;<\\,)\]}]{1,1000})")
# after a name: maybe the closing quote of a key ("api_key":, os.environ['X']); then = := => : or
# `name: type =`, spaces after access_key or a .netrc password, or the > of <password>…</password>
_ASSIGN = (r"(?![a-z0-9_])(?:\\?[\"'`]\]?)?[ \t]*(?P<sep>:=|=>|=(?!=)"
           r"|:(?![:/=])(?:[ \t]*[a-z_][a-z0-9_.\[\], |]{0,60}?[ \t]+=(?!=))?"
           r"|(?<=access.key)[ \t]+|(?<= password)[ \t]+|>(?=[^<\s]{1,512}</))[ \t]*" + _VALUE)
_AUTH_HEADER = (r"orization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?>(?:bearer|basic|token|digest|bot|apikey|sso-key"
                r"|negotiate|ntlm|aws4-hmac-sha256)[ \t]+)?(?P<hval>[^\s\"'\\][^\"'\r\n\\]{0,2000})")
_QUALIFIER = r"(?:[_.-]?(?:" + "|".join(_QUALIFIERS) + r")(?![a-z0-9]))?"


def _keyword(source: str) -> Rule:
    return _lower("secret_assignment", f"(?P<kw>(?:{source}){_QUALIFIER})" + _ASSIGN, _assignment)


def _discord(first: str, seconds: str) -> Rule:
    # the first part is base64 of a numeric user id: "1…" encodes as MT…, "4…" as ND…, "9…" as OT…
    return _token("discord_token", " ".join(first + c for c in seconds),
                  f"{first}(?<![A-Za-z0-9_-]{first})[{seconds}]" + _B + r"{22,26}\." + _B + r"{6}\." + _B
                  + r"{27,40}(?!" + _B + ")", _random_body("discord_token", 0))


RULES: tuple[Rule, ...] = (
    # a literal, then a look-behind that does what \b would (a leading \b defeats the literal jump)
    _token("private_key", "PuTTY-User-Key-File-", r"PuTTY-User-Key-File-\d+: ", _key_block),
    _token("aws_access_key", "AKIA ASIA AGPA AIDA AROA AIPA ANPA ANVA APKA ABIA ACCA A3T",
           r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16,}"),
    _token("google_api_key", "AIza", r"AIza" + _B + r"{35}"),
    _token("bitbucket_token", "ATBB", r"ATBB(?<![A-Za-z0-9]ATBB)[A-Za-z0-9_=.-]{24,}"),
    _token("atlassian_token", "ATATT ATCTT", r"AT(?<![A-Za-z0-9]AT)[AC]TT[A-Za-z0-9_=.-]{40,}"),
    # gh[pousr]_ needs no word start: its body cannot hold "_", so "xghp_…" still costs one pass
    _token("github_token", "gh", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _token("github_token", "github_pat_", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,}"),
    _token("gitlab_token", "gl", r"gl(?<![A-Za-z0-9]gl)(?:pat|dt|rt|cbt|ptt|ft|imt|soat|oas|agent|ffct|wt)-"
           + _B + r"{20,}(?:\." + _B + r"+)*"),
    _token("gitlab_token", "GR1348941", r"GR1348941(?<![A-Za-z0-9]GR1348941)" + _B + r"{20,}"),
    _token("google_oauth_secret", "GOCSPX-", r"GOCSPX-(?<![A-Za-z0-9]GOCSPX-)" + _B + r"{24,}"),
    _token("google_oauth_token", "ya29.", r"ya29\.(?<![A-Za-z0-9]ya29\.)" + _B + r"{20,}"),
    _token("google_oauth_token", "1//0", r"1//0" + _B + r"{20,}"),
    _token("slack_token", "xox xapp-", r"x(?<![A-Za-z0-9]x)(?:ox[abposre](?:\.xox[bp])?|app)-[A-Za-z0-9-]{15,}"),
    _token("slack_webhook", "hooks.slack.com",
           r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{20,})", group=1),
    _token("anthropic_key", "sk-ant-", r"sk-ant-(?<![A-Za-z0-9]sk-ant-)" + _B + r"{20,}"),
    _token("openai_key", "sk-", r"sk-(?<![A-Za-z0-9]sk-)(?!ant-)" + _B + r"{20,}", _random_body("openai_key", 3)),
    _token("stripe_key", "sk_", r"sk_(?:live|test)_[A-Za-z0-9]{16,}"),
    _token("stripe_key", "rk_", r"rk_(?:live|test)_[A-Za-z0-9]{16,}"),
    _token("stripe_key", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _token("jwt", "eyJ", r"eyJ(?<![A-Za-z0-9_-]eyJ)" + _B + r"{8,}\.ey" + _B + r"{8,}\.[A-Za-z0-9_=-]*"),
    _token("npm_token", "npm_", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36,}"),
    _token("pypi_token", "pypi-AgE", r"pypi-AgE(?<![A-Za-z0-9]pypi-AgE)" + _B + r"{50,}"),
    _token("twilio", "SK", r"SK(?<![A-Za-z0-9]SK)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _token("twilio", "AC", r"AC(?<![A-Za-z0-9]AC)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _token("sendgrid_key", "SG.", r"SG\.(?<![A-Za-z0-9]SG\.)" + _B + r"{16,}\." + _B + r"{16,}"),
    _token("mailgun_key", "key-", r"key-(?<![A-Za-z0-9]key-)[0-9a-f]{32}(?![0-9A-Za-z])"),
    _token("heroku_key", "HRKU-", r"HRKU-(?<![A-Za-z0-9]HRKU-)" + _B + r"{20,}"),
    _token("huggingface_token", "hf_", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}", _letters_body),
    _discord("M", "Tjz"), _discord("N", "DTjz"), _discord("O", "DT"),
    _token("discord_webhook", "discord", r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/(" + _B + r"{30,})",
           group=1),
    _token("telegram_bot_token", ":AA", r":AA" + _B + r"{30,}", _telegram),
    _token("azure_sas_token", "sig=", r"sig=(?<=[?&]sig=)([A-Za-z0-9%+/=]{20,})", group=1),
    _lower("auth_header", r"bearer[ \t]+([a-z0-9._~+/=-]{16,})", _bearer, gates="earer EARER"),
    # from here on, no gates: these run on every text
    _lower("url_credentials", r"://(?P<user>[^\s/?#@:'\"<>()\[\]{}]{0,256})(?::(?P<pw>[^\s/@'\"<>]{0,256}))?@"
                              r"(?=[a-z0-9\[])", _url_credentials),
    # one scan for all that starts with "-": PEM blocks, --password x, curl -u a:b, mysql -pX
    _lower("secret_assignment", r"-(?:(?P<pem>----begin (?:[a-z0-9]+ ){0,3}private key(?: block)?-----)"
                                r"|-(?:user[= ]['\"]?(?P<user>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                r"|[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key|secret-?key"
                                r"|auth-?key|credentials?)(?:=|[ \t]+)(?P<flag>\\\"[^\"\\]{1,1000}\\\""
                                r"|[^\s\\]{1,1000}))"
                                r"|(?<= -)u[= ]['\"]?(?P<user2>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                r"|(?<= -)p(?P<mysql> ?[^\s'\"-][^\s'\"]{3,}))", _dash),
    _keyword(r"p(?:ass(?:word|wd|phrase)?|wd|w|swd)"),
    _keyword(r"secret"),
    _keyword(r"token"),
    _keyword(r"key"),
    _lower("secret_assignment", r"(?P<kw>auth)(?:" + _AUTH_HEADER + "|" + _ASSIGN + ")", _assignment),
    _keyword(r"credentials?"),
)
_ALWAYS = tuple(rule for rule in RULES if not rule.gates)
_GATED = tuple(rule for rule in RULES if rule.gates)

REDACTION_KINDS: frozenset[str] = frozenset({rule.kind for rule in RULES} | {
    "high_entropy_secret", "aws_secret_key", "heroku_key", "twilio", "auth_header", "azure_connection_string"})
# When finds overlap, the most specific kind names the merged redaction.
_GENERIC = ("jwt", "azure_connection_string", "azure_sas_token", "url_credentials", "auth_header",
            "secret_assignment", "high_entropy_secret")
PRIORITY: dict[str, int] = {kind: i for i, kind in enumerate(
    ["private_key"] + sorted(REDACTION_KINDS - set(_GENERIC) - {"private_key"}) + list(_GENERIC))}

# ---------------------------------------------------------------- scanning

# A token is a run of 20+ base64url (or %-escaped) characters holding an upper-case letter or a digit
# (its prefix, or 20 random characters, always do; snake_case_names never do). A token's literal
# lies in the 48 characters before such a run ("ya29.", "hooks.slack.com/services/T…/B…/") or in
# its first 40 (a token glued on by - or _).
_RUN_MIN, _BEFORE, _AFTER = 20, 48, 40
_RUN_TABLE = bytes(ord("a") if chr(b) in string.ascii_letters + string.digits + "_-%" else ord(" ")
                   for b in range(256))
_SIGNAL_TABLE = bytes(ord("X") if chr(b) in string.ascii_uppercase + string.digits else ord(" ")
                      for b in range(256))
_SEED = b"a" * _RUN_MIN


def _token_heads(text: str, skip: list[tuple[int, int]]) -> str:
    """Where a token's literal could be: the heads of token runs not inside `skip` ("" if none)."""
    raw = text.encode("ascii", "replace")  # one byte per character, whatever the text
    data = raw.translate(_RUN_TABLE)
    start = data.find(_SEED)
    if start < 0:
        return ""
    signal = raw.translate(_SIGNAL_TABLE)
    windows: list[list[int]] = []
    while start >= 0:
        end = data.find(b" ", start + _RUN_MIN)
        end = len(data) if end < 0 else end
        inside = next((e for s, e in skip if s <= start < e), None)
        if inside is not None:
            start = data.find(_SEED, max(end, inside))
            continue
        if signal.find(b"X", start, end) >= 0:
            lo, hi = max(0, start - _BEFORE), min(end, start + _AFTER)
            if windows and lo <= windows[-1][1]:
                windows[-1][1] = hi  # overlapping heads become one
            else:
                windows.append([lo, hi])
        start = data.find(_SEED, end)
    return " ".join(text[lo:hi] for lo, hi in windows)


def scan(text: str) -> list[Span]:
    """Every secret-looking span in text, unmerged: (start, end, kind, priority)."""
    low = text.lower()
    folded = low if len(low) == len(text) else None  # lower() lengthens a few characters (İ): use the twins
    spans: list[Span] = []
    _apply(_ALWAYS, text, folded, spans)
    # The lines of a key block are token-like runs; they are found already, so gate on the rest.
    heads = _token_heads(text, [(s, e) for s, e, kind, _ in spans if kind == "private_key"])
    if heads:
        gated = []
        for rule in _GATED:  # plain loops: a generator per rule would cost more than the tests
            for gate in rule.gates:
                if gate in heads:
                    gated.append(rule)
                    break
        _apply(gated, text, folded, spans)
    return spans


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
