"""The sanitizer finds real secrets, leaves real code alone, caps sizes, and never raises."""

from __future__ import annotations

import dataclasses
import json
import random
import string
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ai_memory.core.sanitizer import (
    REDACTION_KINDS, Sanitized, SanitizedJson, TextKind, cap, redact, sanitize, sanitize_json,
)
from sanitizer_corpus import clean_chunks, format_ids, leaked, secret_samples

SAMPLES = secret_samples()
GITHUB_TOKEN = "ghp_" + "Zq8Lm3Nw0Xc5Vb7Rt1Yu9Io2Pa4Sd6Fg8Hj0K"
_rng = random.Random(1)
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow"
       + "\n".join("".join(_rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
                          for _ in range(64)) for _ in range(330))
       + "\n-----END RSA PRIVATE KEY-----")


# ---------------------------------------------------------------- recall and precision

def test_recall_on_real_format_secrets() -> None:
    missed = [s for s in SAMPLES if leaked(s.secret, (out := sanitize(s.text).text)) or "[REDACTED:" not in out]
    recall = 1 - len(missed) / len(SAMPLES)
    print(f"\nsanitizer recall: {recall:.2%} of {len(SAMPLES)} secrets")
    detail = "\n".join(f"  {s.context}: {s.text[:120]!r}" for s in missed[:20])
    assert len(SAMPLES) >= 1000
    assert recall >= 0.99, f"recall {recall:.2%} ({len(missed)} missed of {len(SAMPLES)}):\n{detail}"


def test_false_positive_rate_on_stdlib_source() -> None:
    chunks = clean_chunks()
    flagged = [(where, redact(text)) for where, text in chunks]
    flagged = [(where, kinds) for where, (_, kinds) in flagged if kinds]
    rate = len(flagged) / len(chunks)
    print(f"\nsanitizer false positives: {rate:.3%} of {len(chunks)} chunks of 30 stdlib lines: {flagged[:10]}")
    assert len(chunks) >= 2000
    assert rate <= 0.01, f"false-positive rate {rate:.2%}: {flagged[:20]}"


def test_the_corpus_covers_every_kind() -> None:
    assert {s.kind for s in SAMPLES} == set(REDACTION_KINDS)
    assert len(set(format_ids())) >= 150  # gitleaks' rule list as the checklist of formats
    required = {"private_key", "aws_access_key", "aws_secret_key", "github_token", "gitlab_token", "bitbucket_token",
                "slack_token", "slack_webhook", "stripe_key", "openai_key", "anthropic_key", "google_api_key",
                "google_oauth_secret", "jwt", "auth_header", "url_credentials", "npm_token", "pypi_token", "twilio",
                "sendgrid_key", "mailgun_key", "azure_connection_string", "heroku_key", "discord_token",
                "telegram_bot_token", "secret_assignment", "high_entropy_secret"}
    assert required <= REDACTION_KINDS and isinstance(REDACTION_KINDS, frozenset)


def test_redact_reports_kinds_in_order_of_appearance() -> None:
    text = f"key AKIAZ7QX4MPLE2KEYS5X then {GITHUB_TOKEN} and DB_PASSWORD=Hunter22x and AKIAQ4MPLE2KEYS5XYZ7Q"
    out, kinds = redact(text)
    assert kinds == ["aws_access_key", "github_token", "secret_assignment", "aws_access_key"]
    assert out == ("key [REDACTED:aws_access_key] then [REDACTED:github_token] and "
                   "DB_PASSWORD=[REDACTED:secret_assignment] and [REDACTED:aws_access_key]")


@pytest.mark.parametrize("kind", sorted(REDACTION_KINDS))
def test_each_kind_round_trips_to_its_label(kind: str) -> None:
    for sample in (s for s in SAMPLES if s.kind == kind):
        result = sanitize(sample.text)
        assert not leaked(sample.secret, result.text), (sample.context, result.text)
        assert kind in result.redactions, (sample.context, result.redactions, result.text)
        assert f"[REDACTED:{kind}]" in result.text


def test_redaction_is_idempotent() -> None:
    for sample in SAMPLES:
        once = sanitize(sample.text)
        twice = sanitize(once.text)
        assert twice.text == once.text and twice.redactions == (), sample.context


@pytest.mark.parametrize("line", [
    "password = getpass.getpass()", "self.token = token", "token = tokens[0]", "if secret is None:",
    "api_key: str | None = None", 'password=""', 'password = "<your password>"', "TOKEN_TYPES = {'a': 1}",
    "def get_token(self):", 'token_type = "Bearer"', 'key = os.environ["X"]', "token: ${{ secrets.NPM_TOKEN }}",
    "secret_name: str", 'password = "changeme"', "api_key = None", 'password: "${DB_PASSWORD}"',
    'secret = "{{ vault_secret }}"', "passwd = passwd + 'anonymous@'", "self.password = password",
    'headers["Authorization"] = "Bearer " + token', "Authorization: Bearer ${TOKEN}", "key = sort_key(item)",
    "hash = sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 1b4e28ba2fa1e3e5c2d8a3f0b3c4d5e6f7a8b9c0", "id = 123e4567-e89b-12d3-a456-426614174000",
    "http://user:password@example.com/", "docker run -u 1000:1000 image", "password_hash = bcrypt.hashpw(pw, salt)",
    "TOKEN = '<token>'", "max_tokens = 4096", "token_count = len(tokens)", "key = 'name'", "for key, value in items:",
    "sk-learn-compatible-estimators-and-transformers", "![img](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAE)",
    'env: {"OPENAI_API_KEY": "${OPENAI_API_KEY}"}', "password: !vault |", "export TOKEN=$(cat token.txt)",
    # false positives found on site-packages and fixed
    "def sign(private_key: Ed25519PrivateKey, data: bytes):", "key: PKCS12PrivateKeyTypes | None,",
    "l1_key = accessor_info.l1_key", "RegEnumKey = win32api.RegEnumKey", "entity_mask2_token=entity_mask2_token,",
    'bos_token="__start__",', 'prefix_token="▁<PRE>",', 'IMAGE_TOKEN = "<|image|>"', 'self.image_token = "|SPEAKER|"',
    '"n_token": "vocab_size",', "token = r\"[-!#$%&'*+.^_`|~0-9a-zA-Z]+\"", 'Token: "#f8f8f2",',
    "# First pass: decided_mask==0, every element", "# cached token: `get_token()` may refresh a token",
    'api_key="hf_...",', "<key>CFBundleShortVersionString</key>", 'CHALLENGE_PASSWORD: "challengePassword",',
    "sha = self.repo_info(repo_id, token=token).sha", 'token = "ENDMARKER"', "ERRORTOKEN = token.ERRORTOKEN",
    "# Cache for the exchanged token: re-exchanging on every call would be wasteful",
    "(commandline --current-token 2>/dev/null)",
    "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
])
def test_real_code_is_not_redacted(line: str) -> None:
    assert redact(line) == (line, []), redact(line)


# ---------------------------------------------------------------- sanitize first, then cap

def test_a_key_longer_than_the_cap_is_still_redacted() -> None:
    assert len(PEM.encode()) > 20_000
    result = sanitize(f"before\n{PEM}\nafter", TextKind.TOOL_IO)
    assert "MIIEow" not in result.text and PEM[-100:-80] not in result.text
    assert result.text.startswith("before\n[REDACTED:private_key]")
    assert result.redactions == ("private_key",) and not result.truncated


def test_a_secret_straddling_the_cut_is_redacted() -> None:
    filler = "x" * 1500 + "\n"
    for kind in (TextKind.TOOL_IO, TextKind.NOTIFICATION):
        text = filler + f"export GITHUB_TOKEN={GITHUB_TOKEN}\n" + filler
        cut_at = len(text.encode()) // 2
        assert text.index(GITHUB_TOKEN) < cut_at < text.index(GITHUB_TOKEN) + len(GITHUB_TOKEN) + 1500
        result = sanitize(text, kind)
        assert GITHUB_TOKEN[:12] not in result.text and GITHUB_TOKEN[-12:] not in result.text
        assert result.truncated and len(result.text.encode()) <= kind.limit


def test_an_unterminated_key_is_redacted_to_the_end() -> None:
    result = sanitize(PEM[:5000])
    assert result.text == "[REDACTED:private_key]"


def test_a_huge_text_is_redacted_at_both_ends_and_counted_exactly() -> None:
    middle = "log line without secrets\n" * 200_000
    text = f"export GITHUB_TOKEN={GITHUB_TOKEN}\n" + middle + PEM[:3000] + middle + f"\n{PEM}\nend"
    started = time.perf_counter()
    result = sanitize(text, TextKind.TOOL_IO)
    assert time.perf_counter() - started < 2.0
    assert GITHUB_TOKEN not in result.text and PEM[-100:-80] not in result.text and "MIIEow" not in result.text
    assert result.text.startswith("export GITHUB_TOKEN=[REDACTED:github_token]")
    assert result.text.endswith("[REDACTED:private_key]\nend") and result.truncated
    removed = int(result.text.split("…[truncated ")[1].split(" bytes]")[0])
    marker = f"\n…[truncated {removed} bytes]…\n"
    # the middle was dropped before redaction, so the count is of the text as it came, ends redacted
    whole = f"export GITHUB_TOKEN=[REDACTED:github_token]\n{middle}{PEM[:3000]}{middle}\n[REDACTED:private_key]\nend"
    assert len(result.text.encode()) - len(marker.encode()) + removed == len(whole.encode())


@pytest.mark.parametrize("piece", ["eyJ", "ATBB", 'password="', "://a:", " -u a:", "--password ",
                                   "-----BEGIN RSA PRIVATE KEY-----\n", "github_pat_", "glpat-", "key: "])
def test_adversarial_repetition_stays_linear(piece: str) -> None:
    text = (piece * (300_000 // len(piece)))[:300_000]
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 1.5, piece


def test_text_whose_lowercase_is_longer_uses_the_case_insensitive_twins() -> None:
    text = f"İstanbul office\nDB_PASSWORD=Hunter22x\nAuthorization: Bearer Zx81kd92mzQ0pL4vNs7Tq1Rw\n{GITHUB_TOKEN}"
    assert len(text.lower()) != len(text)
    result = sanitize(text)
    assert "Hunter22x" not in result.text and "Zx81kd92" not in result.text and GITHUB_TOKEN not in result.text
    assert result.text.startswith("İstanbul office\nDB_PASSWORD=[REDACTED:secret_assignment]")


# ---------------------------------------------------------------- cap

def test_cap_keeps_head_and_tail_within_the_limit() -> None:
    text = "HEAD" + "m" * 10_000 + "TAIL"
    out, cut = cap(text, 1000)
    assert cut and out.startswith("HEAD") and out.endswith("TAIL")
    assert len(out.encode()) <= 1000
    assert "…[truncated " in out
    removed = int(out.split("…[truncated ")[1].split(" bytes]")[0])
    marker = f"\n…[truncated {removed} bytes]…\n"
    assert len(out.encode()) - len(marker.encode()) + removed == len(text.encode())


def test_cap_leaves_short_text_alone() -> None:
    assert cap("short", 16) == ("short", False)
    assert cap("", 0) == ("", False)


@pytest.mark.parametrize("limit", [0, 1, 5, 40, 47, 60, 61, 62, 63, 100, 999])
def test_cap_never_splits_a_utf8_character(limit: int) -> None:
    text = "é€😀" * 500
    out, cut = cap(text, limit)
    assert cut and len(out.encode("utf-8")) <= limit
    out.encode("utf-8")  # no lone surrogate, no half character
    kept = out.replace("\n", "").split("…[truncated")[0]
    assert text.startswith(kept)


def test_cap_does_not_cut_a_redaction_marker() -> None:
    text = f"{'a' * 480} token {GITHUB_TOKEN} {'b' * 500}"
    result = sanitize(text, TextKind.BODY)
    out, _ = cap(result.text, 500)
    assert "[REDACTED:github_token]" in out or "[REDACTED" not in out


# ---------------------------------------------------------------- titles and kinds

def test_title_is_one_line_of_at_most_80_characters() -> None:
    result = sanitize("Fix the build\n\nthen deploy\twith   " + "very " * 40, TextKind.TITLE)
    assert "\n" not in result.text and "\t" not in result.text
    assert result.text.startswith("Fix the build then deploy with very")
    assert len(result.text) == 80 and result.truncated


def test_title_redacts_before_cutting() -> None:
    result = sanitize(f"{'x' * 70} {GITHUB_TOKEN} trailing words", TextKind.TITLE)
    assert "ghp_" not in result.text and len(result.text) <= 80


def test_kind_caps() -> None:
    assert [k.limit for k in TextKind] == [16384, 16384, 2048, 2048, 16384, 80]
    for kind in TextKind:
        result = sanitize("é" * 20_000, kind)
        assert result.truncated
        if kind is TextKind.TITLE:
            assert len(result.text) == 80
        else:
            assert len(result.text.encode()) <= kind.limit


# ---------------------------------------------------------------- the sanitized types

def test_only_the_sanitizer_builds_sanitized_values() -> None:
    with pytest.raises(TypeError):
        Sanitized(text="x", redactions=(), truncated=False)
    with pytest.raises(TypeError):
        SanitizedJson(value={}, redactions=(), truncated=False)
    with pytest.raises(TypeError):
        Sanitized("x", (), False, _key=object())
    made = sanitize("hello")
    with pytest.raises(TypeError):
        dataclasses.replace(made, text=f"token {GITHUB_TOKEN}")
    assert made == sanitize("hello") and made.text == "hello"


def test_sanitize_rejects_non_text() -> None:
    with pytest.raises(TypeError):
        sanitize(b"bytes")  # type: ignore[arg-type]


def test_lone_surrogates_and_nul_become_replacement_characters() -> None:
    result = sanitize("a\ud800b\x00c")
    assert result.text == "a\ufffdb\ufffdc"
    result.text.encode("utf-8")


# ---------------------------------------------------------------- JSON payloads

FIELD_CAPS = {"prompt": TextKind.PROMPT, "compact_summary": TextKind.SUMMARY,
              "last_assistant_message": TextKind.TOOL_IO, "message": TextKind.NOTIFICATION, "title": TextKind.TITLE}


def test_sanitize_json_redacts_values_keys_and_secret_named_fields() -> None:
    payload = {
        "tool_input": {"command": f"curl -H 'Authorization: Bearer {GITHUB_TOKEN}' https://api.github.com"},
        "env": {"password": "hunter2", "api_key": "x", "token_type": "bearer", "password_hint": "pet name",
                "secret": ""},
        GITHUB_TOKEN: "a token as a key",
        "list": [1, 2.5, True, None, {"client_secret": "abc"}],
    }
    result = sanitize_json(payload, field_caps=FIELD_CAPS)
    dumped = json.dumps(result.value)
    assert GITHUB_TOKEN[4:] not in dumped and "hunter2" not in dumped
    env = result.value["env"]
    assert env == {"password": "[REDACTED:secret_assignment]", "api_key": "[REDACTED:secret_assignment]",
                   "token_type": "bearer", "password_hint": "pet name", "secret": ""}
    assert result.value["list"][:4] == [1, 2.5, True, None]
    assert result.value["list"][4] == {"client_secret": "[REDACTED:secret_assignment]"}
    assert "[REDACTED:github_token]" in result.value
    assert result.redactions.count("secret_assignment") == 3 and "github_token" in result.redactions


def test_sanitize_json_caps_each_string_by_its_nearest_field() -> None:
    big = "word " * 10_000
    result = sanitize_json({"prompt": big, "tool_response": {"stdout": big}, "message": big,
                            "nested": {"prompt": [big]}}, field_caps=FIELD_CAPS, total_limit_bytes=10**9)
    v = result.value
    assert len(v["prompt"].encode()) == 16384 and len(v["nested"]["prompt"][0].encode()) == 16384
    assert len(v["tool_response"]["stdout"].encode()) <= 2048 and len(v["message"].encode()) <= 2048
    assert result.truncated


def test_sanitize_json_survives_deep_nesting() -> None:
    deep: object = "bottom"
    for _ in range(10_000):
        deep = {"a": [deep]}
    result = sanitize_json(deep)
    assert "[DEPTH-LIMIT]" in json.dumps(result.value) and result.truncated


def test_a_five_megabyte_payload_fits_the_total_limit() -> None:
    rng = random.Random(7)
    payload = {"tool_response": {"stdout": "".join(rng.choice("abc \n") for _ in range(3_000_000))},
               "files": [f"/src/module_{i}.py" for i in range(60_000)],
               "map": {f"key_{i}": "v" * 20 for i in range(20_000)}}
    assert len(json.dumps(payload)) > 5_000_000
    for limit in (16384, 4096, 600):
        result = sanitize_json(payload, total_limit_bytes=limit)
        assert len(json.dumps(result.value)) <= limit, limit
        assert result.truncated
    result = sanitize_json(payload)
    assert '"_truncated": true' in json.dumps(result.value) and len(json.dumps(result.value)) > 8000


def test_many_small_keys_are_dropped_with_a_marker() -> None:
    payload = {f"k{i}": i for i in range(10_000)}
    result = sanitize_json(payload, total_limit_bytes=2000)
    assert result.value["_truncated"] is True and len(json.dumps(result.value)) <= 2000


def test_sanitize_json_accepts_odd_values() -> None:
    odd = {"nan": float("nan"), "inf": float("-inf"), "big": 10 ** 5000, 3: "int key", None: "none key",
           "tuple": (1, 2), "bytes": b"x", "surrogate": "\udc80", "set": {1}}
    result = sanitize_json(odd)
    text = json.dumps(result.value, allow_nan=False)
    assert json.loads(text)["3"] == "int key" and json.loads(text)["null"] == "none key"
    assert result.value["tuple"] == [1, 2] and result.value["nan"] is None


def test_sanitize_json_titles_are_one_line() -> None:
    result = sanitize_json({"title": "a\nb" * 100, "body": "x"}, field_caps={"title": TextKind.TITLE})
    assert "\n" not in result.value["title"] and len(result.value["title"]) == 80


def test_sanitize_json_of_a_bare_string_or_scalar() -> None:
    assert sanitize_json(f"token {GITHUB_TOKEN}").value == "token [REDACTED:github_token]"
    assert sanitize_json(42).value == 42 and sanitize_json(None).value is None


# ---------------------------------------------------------------- properties

@settings(max_examples=400, deadline=None)
@given(before=st.text(max_size=3000), after=st.text(max_size=3000), kind=st.sampled_from(list(TextKind)),
       body=st.text(alphabet=string.ascii_letters + string.digits, min_size=36, max_size=40),
       prefix=st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]))
def test_sanitize_never_raises_caps_and_removes_an_inserted_token(
        before: str, after: str, kind: TextKind, body: str, prefix: str) -> None:
    token = prefix + body
    assume(body[-16:] not in before + after)
    result = sanitize(before + token + after, kind)
    assert token not in result.text and body[-16:] not in result.text
    if kind is TextKind.TITLE:
        assert len(result.text) <= 80 and "\n" not in result.text
    else:
        assert len(result.text.encode("utf-8")) <= kind.limit


@settings(max_examples=300, deadline=None)
@given(head=st.sampled_from(["AKIA", "ASIA", "AROA"]), body=st.text(alphabet=string.ascii_uppercase, min_size=16,
                                                                  max_size=16),
       token_body=st.text(alphabet=string.ascii_letters, min_size=36, max_size=36),
       github=st.sampled_from(["ghp_", "gho_", "ghs_"]))
def test_a_key_whose_body_has_no_digit_is_still_found(head: str, body: str, token_body: str, github: str) -> None:
    """An AWS key id's 16 base32 characters hold no digit in one key of 28, and a GitHub token's
    body may be letters only that read like CamelCaseWords: neither is passed by."""
    text = f"the id {head}{body} and then {github}{token_body} in a log line"
    redacted = sanitize(text, TextKind.TOOL_IO).text
    assert body not in redacted and token_body not in redacted


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=500), st.sampled_from(list(TextKind)))
def test_any_code_point_comes_out_as_valid_utf8(text: str, kind: TextKind) -> None:
    sanitize(text, kind).text.encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=300),
                    lambda inner: st.lists(inner, max_size=8)
                    | st.dictionaries(st.text(max_size=20), inner, max_size=8),
                    max_leaves=60),
       st.integers(min_value=64, max_value=4096))
def test_sanitize_json_never_raises_and_fits(value: object, limit: int) -> None:
    result = sanitize_json(value, total_limit_bytes=limit)
    assert len(json.dumps(result.value)) <= limit


@pytest.mark.parametrize("cut", [6, 14, 30])
def test_a_token_split_across_two_neighbouring_values_is_redacted_whole(cut: int) -> None:
    """Cut anywhere: a half too short to match, or one that matches alone (ghp_ + 26 characters)
    and would leave the other half as text."""
    for container in ({"a": GITHUB_TOKEN[:cut], "b": GITHUB_TOKEN[cut:], "c": "plain"},
                      [GITHUB_TOKEN[:cut], GITHUB_TOKEN[cut:]]):
        dumped = json.dumps(sanitize_json({"tool_input": container}).value)
        assert GITHUB_TOKEN[:cut] not in dumped and GITHUB_TOKEN[cut:] not in dumped, dumped
        assert "[REDACTED:github_token]" in dumped


def test_neighbouring_values_that_are_no_secret_stay_as_they_are() -> None:
    payload = {"session_id": "s-2024-05-01", "hook_event_name": "PostToolUse", "cwd": "/home/dev/acme-api",
               "tool_name": "Read", "path": ["src", "auth", "session_manager_factory.py"]}
    assert sanitize_json(payload).value == payload


def test_ordinary_non_ascii_text_keeps_its_own_spelling() -> None:
    """The scan reads text folded (NFKC, invisible characters removed); what is stored is the text
    itself, redactions aside."""
    for text in ("部署已完成，请检查日志。下一步：更新文档。", "Café crème, naïve résumé — ﬁne ①②③ ＡＢＣ",
                 "zero\u200bwidth join\u2060ers and a soft\u00adhyphen", "Cafe\u0301 in NFD, 한국어 텍스트, Ελληνικά"):
        assert redact(text) == (text, []), text


def test_a_folded_secret_is_redacted_and_the_text_around_it_kept() -> None:
    wide = "".join(chr(ord(c) + 0xFEE0) for c in "AKIAQ7XM4PL2KEYS9ZTR")
    out, kinds = redact(f"密钥：{wide}，别外传。")
    assert out == "密钥：[REDACTED:aws_access_key]，别外传。" and kinds == ["aws_access_key"]
    hidden = GITHUB_TOKEN[:8] + "\u200b" + GITHUB_TOKEN[8:20] + "\ufeff" + GITHUB_TOKEN[20:]
    out, kinds = redact(f"Café: {hidden} ✓")
    assert out == "Café: [REDACTED:github_token] ✓" and kinds == ["github_token"]


def test_letter_only_tokens_are_found_however_wordy_their_letters_read() -> None:
    """Hugging Face tokens are hf_ + 34 letters: one in 14 random ones reads as CamelCaseWords
    ("…Imqkzhafhuhll…"), which a gate at a token run's head took for an identifier."""
    rng = random.Random(18)
    tokens = ["hf_" + "".join(rng.choice(string.ascii_letters) for _ in range(34)) for _ in range(300)]
    tokens += ["api_org_" + "".join(rng.choice(string.ascii_letters) for _ in range(34)) for _ in range(100)]
    leaked = [t for t in tokens if t in sanitize(f"the old one was {t} if you need it").text]
    assert len(leaked) <= 1, leaked[:5]  # _letters_body refuses the rare token whose case is nearly all one
