"""Secrets by the name they are given and the context they stand in, not by their own shape.

``NAME = value`` in code, .env, YAML, JSON or XML (what the name says the value must look like),
command-line flags (``--password``, ``curl -u``, ``mysql -p``, ``docker login -p``), prose ("the
postgres password is …"), the data of a Kubernetes Secret. ``CONTEXT_RULES`` is this module's
part of the scan (``secret_patterns``); the fixed formats live in ``secret_formats``. Layer 0:
pure, no I/O.
"""

from __future__ import annotations

import functools
import re

from ai_memory.core.secret_formats import VENDORS, key_block
from ai_memory.core.secret_shapes import (
    BASE64_40, CALL, DIGIT, HEX_32, NOT_SECRET, SECRET_WORDS, SPACE, SYMBOL, UUID, WORDY,
    Found, Rule, folded_rule, has_operator, is_code, is_placeholder, key_material, looks_random,
)

# ---------------------------------------------------------------- names and assignments

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENTS = re.compile(r"[^a-z0-9]+")
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "secret", "credential", "credentials", "authorization")
_PASSWORD_WORDS = {"pass", "pwd", "pw", "pswd", "cookie"}
# services whose password variable is glued to "pass": SSHPASS (read by sshpass -e), DBPASS, ROOTPASS
_PASS_OWNERS = frozenset("ssh db root admin mysql smtp ftp wifi redis ldap mail vnc sudo user".split())
# words that make a bare "key" a credential: "the wifi key is …", "hmac key: …", "api key 5f4d…"
_KEY_OWNERS = frozenset("wifi wi-fi wpa wpa2 wlan network router hmac signing encryption master api access "
                        "secret private license ssh gpg".split())
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
    if last in _PASSWORD_WORDS or last.endswith(_PASSWORD_ENDINGS) or last[-4:] == "pass" and last[:-4] in _PASS_OWNERS:
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
    if has_operator(value) or NOT_SECRET.match(value):
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
    if text[m.end("kw"):m.end("kw") + 1] in ("=", " ", "\t") and _FLAG_NAME.fullmatch(name.lower()):
        return None  # --token X, --api-key=X: the flag rule (_dash) reads the value, once
    strength = name_strength(name)
    if strength == WEAK and name.lower() == "key" and _word_before(text, start) in _KEY_OWNERS:
        strength = TOKEN  # "the wifi key is …", "hmac key: …"
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


_WORD_BEFORE = re.compile(r"([A-Za-z][\w-]{0,15})[ \t]\Z")


def _word_before(text: str, start: int) -> str:
    """The word that stands just before ``start``, separated by one space or tab, lower case."""
    found = _WORD_BEFORE.search(text, max(0, start - 17), start)
    return found.group(1).lower() if found else ""


# the long options whose value _dash reads (its ``flag`` group, for the same words)
_FLAG_NAME = re.compile(r"--[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key|secret-?key"
                        r"|auth-?key|credentials?)")
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
    """A PEM block, --password VALUE, curl -u user:pass, mysql -pPASS, sshpass -p 'PASS', curl's
    --cookie/-b, and the value echoed into ``--password-stdin``."""
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
    if kind in ("cookie", "cookie2"):  # curl --cookie 'a=b', curl -b 'a=b' (-b elsewhere is no cookie)
        return cookie_values(text, at, m.end(kind)) if kind == "cookie" or "curl" in line else None
    spaced = value.startswith(" ")  # mysql -p DBNAME prompts for the password; sshpass -p PASS does not
    logs_in = " login" in line and any(tool in line for tool in _LOGIN_TOOLS)  # docker login -u me -p PASS
    start, end = at + spaced, m.end(kind)
    if value[spaced:spaced + 1] in ("'", '"'):  # sshpass -p 'pa ss'
        start, end = start + 1, end - 1
    if ("sshpass" in line or logs_in or "mysql" in line and not spaced) and not is_placeholder(text[start:end]):
        return start, end, "secret_assignment"
    return None


_COOKIE_PAIR = re.compile(r"([^\s=;,]{1,100})=([^;\s]{1,4000})")


def cookie_values(text: str, start: int, end: int) -> Found:
    """The session values of a cookie list (``Cookie: a=1; sid=…``, ``curl -b 'sid=…'``): from the
    first value that looks like key material to the last (``lang=en`` and ``theme=dark`` stay)."""
    first = last = -1
    for pair in _COOKIE_PAIR.finditer(text, start, end):
        value = pair.group(2).strip("\"'")
        if len(value) >= 16 and not is_placeholder(value) and (
                key_material(value, 16) or DIGIT.search(value) is not None and len(set(value)) >= 10):
            first = pair.start(2) if first < 0 else first
            last = pair.end(2) - (len(pair.group(2)) - len(pair.group(2).rstrip("\"'")))
    return (first, last, "session_cookie") if first >= 0 else None


def _cookie_header(text: str, m: re.Match[str]) -> Found:
    return cookie_values(text, m.start("jar"), m.end("jar"))


_NOT_KEYS = ("sha", "hash", "digest", "checksum", "commit", "fingerprint", "md5", "etag", "id ", "id:", "id=",
             "uuid", "cache")


def _hex_key(text: str, m: re.Match[str]) -> Found:
    """Hex key material after a key word on its line: "the hmac key 3f9a…", "signing secret (hex)
    5f4d…"; not a digest ("key sha256 9f86…", "cache key 1b4e…")."""
    gap = text[m.start("kw"):m.start("hex")].lower()
    if any(word in gap for word in _NOT_KEYS) or any(word in _line_before(text, m.start()).lower()[-24:]
                                                     for word in _NOT_KEYS):
        return None
    return (m.start("hex"), m.end("hex"), "high_entropy_secret") if key_material(m.group("hex"), 32) else None


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
           r"|(?P<prose>(?<=[a-z])[ \t]+(?:(?:for|to|of|on|at)[ \t]+[\w.@/:-]{1,40}(?:[ \t]+[\w.@/:-]{1,40}){0,2}[ \t]+)?"
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
                                     r"|cookie[= ]['\"]?(?P<cookie>[^\r\n'\"]{3,4000})"
                                     r"|[a-z0-9-]{0,40}?(?:password|passwd|token|secret|api-?key|access-?key"
                                     r"|secret-?key|auth-?key|credentials?)(?:=|[ \t]+)(?P<flag>\\\"[^\"\\]{1,1000}\\\""
                                     r"|[^\s\\]{1,1000}))"
                                     r"|(?<= -)u[= ]['\"]?(?P<user2>[^\s'\":@/$]{1,128}:[^\s'\"@]{1,256})"
                                     r"|(?<= -)b[= ]?['\"]?(?P<cookie2>[^\s'\"=;]{1,100}=[^\r\n'\"]{1,4000})"
                                     r"|(?<= -)p(?P<mysql> ?(?:'[^'\r\n]{4,200}'|\"[^\"\r\n]{4,200}\""
                                     r"|[^\s'\"-][^\s'\"]{3,})))", _dash),
    _keyword(r"p(?:ass(?:word|wd|phrase)?|wd|w|swd)"),
    _keyword(r"secret"),
    _keyword(r"token"),
    _keyword(r"key"),
    folded_rule("secret_assignment", r"(?P<kw>auth)(?:" + _AUTH_HEADER + "|" + _ASSIGN + ")", _assignment),
    _keyword(r"credentials?"),
    # a vendor's credential named by what it is (ALGOLIA_APP_ID, TWILIO_ACCOUNT_SID, SENTRY_DSN): run
    # only near a run of key material, as tokens are (the name is within the 48 characters before);
    # an id may be shorter than such a run (LINKEDIN_CLIENT_ID, 14 characters): those run always
    _keyword(r"client[_.-]?id"), _keyword(r"app[_.-]?id", "app_id appid app-id"), _keyword(r"access[_.-]?id"),
    _keyword(r"api[_.-]?id", "api_id apiid api-id"), _keyword(r"account[_.-]?sid", "ccount_sid ccountsid"),
    _keyword(r"dsn", "_dsn .dsn -dsn"), _keyword(r"login", "_login .login -login"),
    _keyword(r"contribsys[_.-]{0,2}com", "contribsys", base64=True),  # its name is a long run
    folded_rule("kubernetes_secret", r"kind:[ \t]*[\"']?secret\b", _secret_manifest),
    # Cookie: and Set-Cookie: headers (a curl -H, a dict of headers, a log line)
    folded_rule("session_cookie", r"cookie(?:\\?[\"'])?[ \t]*:[ \t]*(?:\\?[\"'])?(?P<jar>[^\r\n\"'\\]{3,4000})",
                _cookie_header),
    # hex key material after a key word ("the hmac key 3f9a…"): run only near a run of key material
    folded_rule("high_entropy_secret", r"(?P<kw>key|secret|hmac|seed)(?![a-z])[^\n]{0,30}?(?<![0-9a-z])(?:0x)?"
                                       r"(?P<hex>[0-9a-f]{32,128})(?![0-9a-z])", _hex_key, "key secret hmac seed"),
)
