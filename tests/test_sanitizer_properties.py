"""Properties of the sanitizer itself: for any text, any size and any cap it never raises, its
output fits the cap, and no secret of the corpus survives it.

The texts are built to reach the paths that broke before: a key block without its END line
(redaction runs to the end of the text), beside filler large enough that the cut before
redaction drops the middle (so the marker counts bytes that are no longer there).
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ai_memory.core.sanitizer import TextKind, cap, sanitize, sanitize_json
from sanitizer_corpus import leaked, secret_samples

SAMPLES = secret_samples()
LOG_LINE = "2024-05-01 12:00:01 INFO worker processed job 4711 in 12 ms\n"
UNTERMINATED_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAzQ8d1vN3kq0bJm7x2Lr9Yt5Wc4Hs6Pa8Ue1Fg0Ri\n"
# around the sizes that matter: a cap (2 KB, 16 KB), the cut before redaction (2 x (cap + 64 KB))
FILLER_LINES = st.sampled_from([0, 1, 30, 300, 1200, 2300, 2700, 5000])
PIECES = st.one_of(
    st.text(max_size=200),
    st.sampled_from(SAMPLES).map(lambda s: s.text),
    st.just(UNTERMINATED_KEY),
    FILLER_LINES.map(lambda n: LOG_LINE * n),
)


def _secrets_in(parts: list[str]) -> list[str]:
    texts = {s.text: s.secret for s in SAMPLES}
    return [texts[p] for p in parts if p in texts]


def _fits(text: str, kind: TextKind) -> bool:
    if kind is TextKind.TITLE:
        return len(text) <= 80 and "\n" not in text
    return len(text.encode("utf-8")) <= kind.limit


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(PIECES, min_size=1, max_size=6), kind=st.sampled_from(list(TextKind)))
def test_sanitize_never_raises_fits_its_cap_and_leaks_no_secret(parts: list[str], kind: TextKind) -> None:
    result = sanitize("\n".join(parts), kind)
    assert _fits(result.text, kind)
    result.text.encode("utf-8")
    for secret in _secrets_in(parts):
        assert not leaked(secret, result.text), (secret, result.text[:300])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(PIECES, min_size=1, max_size=4), limit=st.integers(min_value=0, max_value=70_000))
def test_cap_fits_any_limit(parts: list[str], limit: int) -> None:
    out, _ = cap("\n".join(parts), limit)
    assert len(out.encode("utf-8")) <= limit


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(parts=st.lists(PIECES, min_size=1, max_size=4), limit=st.integers(min_value=64, max_value=40_000))
def test_sanitize_json_never_raises_fits_and_leaks_no_secret(parts: list[str], limit: int) -> None:
    payload = {"hook_event_name": "PostToolUse", "tool_response": {"stdout": "\n".join(parts)},
               "tool_input": {"command": parts[0]}}
    result = sanitize_json(payload, total_limit_bytes=limit)
    dumped = json.dumps(result.value)
    assert len(dumped) <= limit
    for secret in _secrets_in(parts):
        assert not leaked(secret, dumped) and not leaked(json.dumps(secret)[1:-1], dumped)
