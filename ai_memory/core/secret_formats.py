"""Secrets by their fixed format: key blocks, and vendors' tokens that carry their own prefix or
shape (``ghp_…``, ``AKIA…``, ``dop_v1_…``, ``hvs.…``), found wherever they stand.

The list of formats follows the breadth of gitleaks' public rule list as a checklist (about 200
rule ids); the patterns and their bounds are ours. A format that is only a random string
(an Algolia key, a Datadog API key) has no shape of its own: ``secret_patterns`` finds those by
the name they are assigned to. Layer 0: pure, no I/O.

Every pattern starts with its literal (``re`` jumps between occurrences of it) and runs only
when that literal is near the head of a run of token characters (the gates, see
``secret_patterns.scan``); a literal that its body could contain again starts with a look-behind
word start, so that a run of repeats costs one pass.
"""

from __future__ import annotations

import re

from ai_memory.core.secret_shapes import (
    Check, Found, Rule, entropy, folded_rule, is_placeholder, key_material, looks_random, token_rule,
)

B = r"[A-Za-z0-9_-]"  # base64url
_END = r"(?![A-Za-z0-9])"
_PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_PUTTY_END = re.compile(r"Private-MAC: *[0-9a-fA-F]+")
_B64_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")


def key_block(text: str, m: re.Match[str]) -> Found:
    end_line = _PUTTY_END if m.group(0).startswith("PuTTY") else _PEM_END
    near = end_line.search(text, m.end(), m.end() + 600)
    if not _B64_RUN.search(text, m.end(), near.start() if near else m.end() + 600):
        return None  # a header quoted in code ("-----BEGIN RSA PRIVATE KEY-----"), no key material
    # An unterminated block runs to the end: a key cut by an upstream truncation is still a key.
    end = near or end_line.search(text, m.end())
    return m.start(), end.end() if end else len(text), "private_key"


def random_body(kind: str, skip: int) -> Check:
    """The match is the secret if what follows its first ``skip`` characters looks random."""
    def check(text: str, m: re.Match[str]) -> Found:
        return (m.start(), m.end(), kind) if looks_random(m.group(0)[skip:], 12) else None
    return check


def distinct_body(kind: str, skip: int) -> Check:
    """For a format whose prefix is its evidence (``dop_v1_``, ``shpat_``): the rest is the secret
    unless it is filler (``xxxx…``, ``<your key>``). Randomness tests would refuse hex bodies
    (16 symbols cannot reach their entropy bar) and random letters that happen to look wordy."""
    def check(text: str, m: re.Match[str]) -> Found:
        body = m.group(0)[skip:]
        distinct = len(set(body))  # a long random body may hold "xxxx" or "test" by chance
        ok = distinct >= min(8, max(3, len(body) // 3)) and (distinct >= 20 or not is_placeholder(body))
        return (m.start(), m.end(), kind) if ok else None
    return check


_ALNUM = re.compile(r"[A-Za-z0-9]")


def led_by(kind: str, before: str, width: int, word_start: bool = False) -> Check:
    """For a literal that stands inside a secret (``….atlasv1.…``, ``…-us12``, ``…_mmk``): the
    pattern starts at the literal, so ``re`` jumps between its occurrences (a leading look-behind
    or class would be tried at every position of the text), and the ``width`` characters before it
    are checked here: they must be ``before``, at a word start if asked, and the whole must look
    random."""
    shape = re.compile(before)

    def check(text: str, m: re.Match[str]) -> Found:
        start = m.start() - width
        if start < 0 or shape.fullmatch(text, start, m.start()) is None:
            return None
        if word_start and start and _ALNUM.match(text, start - 1):
            return None
        return (start, m.end(), kind) if looks_random(text[start:m.end()], 12) else None
    return check


def _letters_body(text: str, m: re.Match[str]) -> Found:
    """hf_ + letters: random means mixed case all through, not CamelWords."""
    body = m.group(0).split("_")[-1]
    ok = 0.2 < sum(map(str.isupper, body)) / len(body) < 0.8 and entropy(body) >= 3.5
    return (m.start(), m.end(), "huggingface_token") if ok else None


# Heads of tokens whose bodies may be letters only, or of one case: a run of random letters reads
# as CamelCaseWords often enough (one Hugging Face token in 14), and an AWS key id's 16 base32
# characters hold no digit in one key of 28, so the scan, which looks for gates only at the heads
# of runs that look like key material, would pass them by; a run starting with one of these is
# looked at whatever its letters read like (the format's own pattern still decides).
LETTER_HEADS = ("hf_", "api_org_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "npm_",
                "xox", "sk_live_", "rk_live_", "sk-proj-", "AIza", "ATBB",
                "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA", "ABIA", "ACCA")


def _telegram(text: str, m: re.Match[str]) -> Found:
    i = m.start()
    while i > 0 and m.start() - i < 10 and "0" <= text[i - 1] <= "9":
        i -= 1
    if m.start() - i < 8 or (i > 0 and text[i - 1].isdigit()):  # "bot123456789:AA…" in URLs is fine
        return None
    return i, m.end(), "telegram_bot_token"


def _url_credentials(text: str, m: re.Match[str]) -> Found:
    user = text[m.start("user"):m.end("user")]
    if m.group("pw") is None:  # scheme://TOKEN@host: only a token-like user is a credential (a Sentry DSN)
        return (m.start("user"), m.end("user"), "url_credentials") if key_material(user, 16) else None
    password = text[m.start("pw"):m.end("pw")]
    if not password or is_placeholder(password) or is_placeholder(user) or password.startswith("$"):
        return None
    return m.start("user"), m.end("pw"), "url_credentials"


def _bearer(text: str, m: re.Match[str]) -> Found:
    value = text[m.start(1):m.end(1)]
    ok = not is_placeholder(value) and (looks_random(value, 16) or value.count(".") == 2)
    return (m.start(1), m.end(1), "auth_header") if ok else None


def _discord(first: str, seconds: str) -> Rule:
    # the first part is base64 of a numeric user id: "1…" encodes as MT…, "4…" as ND…, "9…" as OT…
    return token_rule("discord_token", " ".join(first + c for c in seconds),
                      f"{first}(?<![A-Za-z0-9_-]{first})[{seconds}]" + B + r"{22,26}\." + B + r"{6}\." + B
                      + r"{27,40}(?!" + B + ")", random_body("discord_token", 0))


def prefixed(kind: str, literal: str, body: str, check: Check | None = None, base64: bool = False) -> Rule:
    """A vendor token: ``literal`` at a word start, then ``body`` (not filler unless ``check`` says).
    ``base64`` for a body that holds + / = (runs of token characters break there, so the literal is
    looked for at the heads of base64 runs instead)."""
    lit = re.escape(literal)
    source = f"{lit}(?<![A-Za-z0-9_]{lit}){body}"
    return token_rule(kind, literal, source, check or distinct_body(kind, len(literal)), base64=base64)


_AZURE_HEAD = re.compile(r"[A-Za-z0-9_~.]{3}\d")


def _azure_secret(text: str, m: re.Match[str]) -> Found:
    """Azure AD client secrets: 3 characters and a digit before ``Q~`` (found from the literal)."""
    start = m.start() - 4
    if start < 0 or not _AZURE_HEAD.fullmatch(text, start, m.start()) or not looks_random(text[start:m.end()], 12):
        return None
    return start, m.end(), "azure_ad_client_secret"


def _percent_body(text: str, m: re.Match[str]) -> Found:
    """Twitter's bearer tokens: 22 A's, then URL-escaped key material."""
    return (m.start(), m.end(), "twitter_token") if looks_random(m.group(0)[22:].replace("%", ""), 12) else None


def _hash_body(text: str, m: re.Match[str]) -> Found:
    """A password hash, unless its hash part is filler (``$1$salt$xxxxxxxx…`` in documentation)."""
    body = re.split(r"[$}]", m.group(0))[-1]
    return (m.start(), m.end(), "password_hash") if len(set(body)) >= 10 else None


# The kinds found by shape alone; the order is the scan's, not a priority (see PRIORITY).
FORMAT_RULES: tuple[Rule, ...] = (
    token_rule("private_key", "PuTTY-User-Key-File-", r"PuTTY-User-Key-File-\d+: ", key_block),
    token_rule("aws_access_key", "AKIA ASIA AGPA AIDA AROA AIPA ANPA ANVA APKA ABIA ACCA A3T",
               r"A(?<![A-Za-z0-9]A)(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16,}"),
    token_rule("google_api_key", "AIza", r"AIza" + B + r"{35}"),
    token_rule("bitbucket_token", "ATBB", r"ATBB(?<![A-Za-z0-9]ATBB)[A-Za-z0-9_=.-]{24,}"),
    token_rule("atlassian_token", "ATATT ATCTT", r"AT(?<![A-Za-z0-9]AT)[AC]TT[A-Za-z0-9_=.-]{40,}"),
    # gh[pousr]_ needs no word start: its body cannot hold "_", so "xghp_…" still costs one pass
    token_rule("github_token", "gh", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    token_rule("github_token", "github_pat_", r"github_pat_(?<![A-Za-z0-9]github_pat_)[A-Za-z0-9_]{22,}"),
    token_rule("gitlab_token", "gl", r"gl(?<![A-Za-z0-9]gl)(?:pat|dt|rt|cbt|ptt|ft|imt|soat|oas|agent|ffct|wt)-"
               + B + r"{20,}(?:\." + B + r"+)*"),
    token_rule("gitlab_token", "GR1348941", r"GR1348941(?<![A-Za-z0-9]GR1348941)" + B + r"{20,}"),
    token_rule("gitlab_token", "_gitlab_session=", r"_gitlab_session=([0-9a-z]{32})", group=1),
    token_rule("google_oauth_secret", "GOCSPX-", r"GOCSPX-(?<![A-Za-z0-9]GOCSPX-)" + B + r"{24,}"),
    token_rule("google_oauth_token", "ya29.", r"ya29\.(?<![A-Za-z0-9]ya29\.)" + B + r"{20,}"),
    token_rule("google_oauth_token", "1//0", r"1//0" + B + r"{20,}"),
    token_rule("slack_token", "xox xapp-", r"x(?<![A-Za-z0-9]x)(?:ox[abposre](?:\.xox[bp])?|app)-[A-Za-z0-9-]{15,}"),
    token_rule("slack_webhook", "hooks.slack.com",
               r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{20,})", group=1),
    token_rule("teams_webhook", "webhook.office.com",
               r"webhook\.office\.com/webhookb2/([A-Za-z0-9@-]{40,}/IncomingWebhook/[A-Za-z0-9]{32}/[A-Za-z0-9-]{36})",
               group=1),
    token_rule("anthropic_key", "sk-ant-", r"sk-ant-(?<![A-Za-z0-9]sk-ant-)" + B + r"{20,}"),
    token_rule("openai_key", "sk-", r"sk-(?<![A-Za-z0-9]sk-)(?!ant-)" + B + r"{20,}", random_body("openai_key", 3)),
    token_rule("stripe_key", "sk_ rk_", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,}"),
    token_rule("stripe_key", "whsec_", r"whsec_[A-Za-z0-9+/=]{24,}"),
    token_rule("jwt", "eyJ", r"eyJ(?<![A-Za-z0-9_-]eyJ)" + B + r"{8,}\.ey" + B + r"{8,}\.[A-Za-z0-9_=-]*"),
    token_rule("npm_token", "npm_", r"npm_(?<![A-Za-z0-9]npm_)[A-Za-z0-9]{36,}"),
    token_rule("pypi_token", "pypi-AgE", r"pypi-AgE(?<![A-Za-z0-9]pypi-AgE)" + B + r"{50,}"),
    token_rule("twilio", "SK", r"SK(?<![A-Za-z0-9]SK)[0-9a-f]{32}(?![0-9A-Za-z])"),
    token_rule("twilio", "AC", r"AC(?<![A-Za-z0-9]AC)[0-9a-f]{32}(?![0-9A-Za-z])"),
    token_rule("sendgrid_key", "SG.", r"SG\.(?<![A-Za-z0-9]SG\.)" + B + r"{16,}\." + B + r"{16,}"),
    token_rule("mailgun_key", "key-", r"key-(?<![A-Za-z0-9]key-)[0-9a-f]{32}(?![0-9A-Za-z])"),
    token_rule("mailgun_key", "pubkey-", r"pubkey-(?<![A-Za-z0-9]pubkey-)[0-9a-f]{32}(?![0-9A-Za-z])"),
    token_rule("heroku_key", "HRKU-", r"HRKU-(?<![A-Za-z0-9]HRKU-)" + B + r"{20,}"),
    token_rule("huggingface_token", "hf_", r"hf_(?<![A-Za-z0-9]hf_)[A-Za-z0-9]{30,}", _letters_body),
    token_rule("huggingface_token", "api_org_", r"api_org_(?<![A-Za-z0-9]api_org_)[A-Za-z]{34}", _letters_body),
    _discord("M", "Tjz"), _discord("N", "DTjz"), _discord("O", "DT"),
    token_rule("discord_webhook", "discord", r"discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/(" + B + r"{30,})",
               group=1),
    token_rule("telegram_bot_token", ":AA", r":AA" + B + r"{30,}", _telegram),
    token_rule("azure_sas_token", "sig=", r"sig=(?<=[?&]sig=)([A-Za-z0-9%+/=]{20,})", group=1),
    # from gitleaks' checklist: each a vendor's own prefix or shape
    prefixed("onepassword_token", "ops_eyJ", r"[A-Za-z0-9+/]{200,}={0,3}", base64=True),
    prefixed("onepassword_secret_key", "A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}"
             r"-[A-Z0-9]{5}-[A-Z0-9]{5}" + _END),
    prefixed("adobe_client_secret", "p8e-", r"[A-Za-z0-9]{32}" + _END),
    prefixed("age_secret_key", "AGE-SECRET-KEY-1", r"[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    prefixed("alibaba_access_key", "LTAI", r"[A-Za-z0-9]{20,24}" + _END),
    prefixed("artifactory_token", "AKCp", r"[A-Za-z0-9]{60,80}" + _END),
    prefixed("artifactory_token", "cmVmd", r"[A-Za-z0-9]{59}" + _END),
    token_rule("azure_ad_client_secret", "", r"Q~[A-Za-z0-9_~.-]{31,34}", _azure_secret),
    prefixed("clickhouse_key", "4b1d", r"[A-Za-z0-9]{38}" + _END),
    prefixed("clojars_token", "CLOJARS_", r"[a-z0-9]{60}" + _END),
    prefixed("cloudflare_origin_key", "v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}"),
    prefixed("databricks_token", "dapi", r"[a-f0-9]{32}(?:-\d)?" + _END),
    token_rule("digitalocean_token", "_v1_", r"do(?<![A-Za-z0-9]do)[opr]_v1_[a-f0-9]{64}",
               distinct_body("digitalocean_token", 7)),
    prefixed("doppler_token", "dp.pt.", r"[A-Za-z0-9]{40,44}" + _END),
    token_rule("duffel_token", "duffel_", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{40,45}", distinct_body("duffel_token", 12)),
    prefixed("dynatrace_token", "dt0c01.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    token_rule("easypost_key", "EZAK EZTK", r"EZ(?<![A-Za-z0-9]EZ)[AT]K[A-Za-z0-9]{54}", distinct_body("easypost_key", 4)),
    token_rule("facebook_token", "EAA", r"EAA(?<![A-Za-z0-9]EAA)[MC][A-Za-z0-9]{100,}", distinct_body("facebook_token", 4)),
    token_rule("flutterwave_key", "FLW",
               r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{12,32}(?:-X)?", distinct_body("flutterwave_key", 12)),
    prefixed("flyio_token", "fo1_", r"[\w-]{43}"),
    prefixed("flyio_token", "fm1a_", r"[A-Za-z0-9+/]{100,}={0,3}", base64=True),
    prefixed("flyio_token", "fm1r_", r"[A-Za-z0-9+/]{100,}={0,3}", base64=True),
    prefixed("flyio_token", "fm2_", r"[A-Za-z0-9+/]{100,}={0,3}", base64=True),
    prefixed("frameio_token", "fio-u-", B + r"{64}"),
    prefixed("grafana_token", "eyJrIjoi", r"[A-Za-z0-9]{70,400}={0,3}"),
    prefixed("grafana_token", "glc_", r"[A-Za-z0-9+/]{32,400}={0,3}", base64=True),
    prefixed("grafana_token", "glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),
    token_rule("harness_token", "pat. sat.", r"[ps]at\.(?<![A-Za-z0-9][ps]at\.)[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}"
               r"\.[A-Za-z0-9]{20}", distinct_body("harness_token", 4)),
    token_rule("terraform_token", ".atlasv1.", r"\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
               led_by("terraform_token", r"[A-Za-z0-9]{14}", 14)),
    prefixed("infracost_token", "ico-", r"[A-Za-z0-9]{32}" + _END),
    token_rule("intra42_secret", "s-s4t2", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", distinct_body("intra42_secret", 9)),
    prefixed("linear_key", "lin_api_", r"[A-Za-z0-9]{40}" + _END),
    token_rule("maxmind_key", "_mmk", r"_mmk", led_by("maxmind_key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}", 36, True)),
    token_rule("newrelic_key", "NR", r"NR(?<![A-Za-z0-9]NR)(?:AK-[A-Z0-9]{27}|II-[A-Za-z0-9-]{32}"
               r"|JS-[a-f0-9]{19})", distinct_body("newrelic_key", 5)),
    prefixed("notion_token", "ntn_", r"[0-9]{11}[A-Za-z0-9]{35}" + _END),
    prefixed("notion_token", "secret_", r"[A-Za-z0-9]{43}" + _END, random_body("notion_token", 7)),
    prefixed("supabase_token", "sbp_", r"[a-f0-9]{40}" + _END),
    prefixed("contentful_token", "CFPAT-", B + r"{43}" + _END),
    prefixed("render_key", "rnd_", r"[A-Za-z0-9]{24,40}" + _END, random_body("render_key", 4)),
    prefixed("octopus_key", "API-", r"[A-Z0-9]{26}" + _END),
    prefixed("openshift_token", "sha256~", r"[\w-]{43}"),
    prefixed("perplexity_key", "pplx-", r"[A-Za-z0-9]{48}"),
    token_rule("planetscale_token", "pscale_", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}",
               distinct_body("planetscale_token", 11)),
    prefixed("postman_key", "PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}"),
    prefixed("prefect_key", "pnu_", r"[A-Za-z0-9]{36}"),
    prefixed("pulumi_token", "pul-", r"[a-f0-9]{40}" + _END),
    prefixed("readme_key", "rdme_", r"[a-z0-9]{70}"),
    prefixed("rubygems_key", "rubygems_", r"[a-f0-9]{48}"),
    prefixed("scalingo_token", "tk-us-", r"[\w-]{48}"),
    prefixed("sendinblue_key", "xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    token_rule("sentry_token", "sntryu_ sntrys_", r"sntry(?:u_[a-f0-9]{64}|s_eyJ[A-Za-z0-9+/=_]{60,})",
               distinct_body("sentry_token", 7), base64=True),
    token_rule("settlemint_token", "sm_", r"sm_(?<![A-Za-z0-9_]sm_)[aps]at_[A-Za-z0-9]{16}" + _END,
               distinct_body("settlemint_token", 7)),
    token_rule("shippo_key", "shippo_", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", distinct_body("shippo_key", 12)),
    token_rule("shopify_token", "shp", r"shp(?<![A-Za-z0-9]shp)(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
               distinct_body("shopify_token", 6)),
    token_rule("sourcegraph_token", "sgp_", r"sgp_(?<![A-Za-z0-9]sgp_)(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
               distinct_body("sourcegraph_token", 4)),
    token_rule("square_token", "sq0", r"sq0(?<![A-Za-z0-9]sq0)(?:atp|csp)-[\w-]{22,60}",
               distinct_body("square_token", 7)),
    prefixed("square_token", "EAAA", r"[\w-]{22,60}"),
    prefixed("typeform_token", "tfp_", r"[A-Za-z0-9_.=-]{59}"),
    token_rule("vault_token", "hvs. hvb.", r"hv(?<![A-Za-z0-9]hv)[sb]\.[\w-]{90,300}", distinct_body("vault_token", 4)),
    token_rule("mailchimp_key", "-us", r"-us\d{1,2}" + _END, led_by("mailchimp_key", r"[a-f0-9]{32}", 32)),
    token_rule("mapbox_token", "k.eyJ", r"[ps]k\.eyJ(?<![A-Za-z0-9][ps]k\.eyJ)[\w-]{50,}\.[\w-]{20,}",
               distinct_body("mapbox_token", 3)),
    prefixed("dropbox_token", "sl.", r"[A-Za-z0-9_=-]{130,}"),
    token_rule("dropbox_token", "AAAAAAAAAA", r"AAAAAAAAAA[\w=-]{43}", led_by("dropbox_token", r"[a-z0-9]{11}", 11, True)),
    token_rule("twitter_token", "AAAAAAAAAA", "A" * 22 + r"(?<![A-Za-z0-9]A{22})[A-Za-z0-9%]{80,100}", _percent_body),
    prefixed("defined_networking_token", "dnkey-", r"[\w=-]{26}-[\w=-]{52}"),
    prefixed("yandex_token", "AQVN", r"[\w-]{35,38}" + _END),
    token_rule("authress_key", "sc_ ext_ scauth_ authress_", r"(?<![A-Za-z0-9])(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}"
               r"\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}", distinct_body("authress_key", 0)),
    token_rule("lob_key", "live_ test_", r"(?:live|test)_(?<![A-Za-z0-9_](?:live|test)_)(?:pub_)?[a-f0-9]{31,35}" + _END,
               distinct_body("lob_key", 5)),
    token_rule("gocardless_token", "live_", r"live_(?<![A-Za-z0-9_]live_)[A-Za-z0-9_=-]{40}" + _END,
               random_body("gocardless_token", 5)),
    folded_rule("auth_header", r"bearer[ \t]+([a-z0-9._~+/=-]{16,})", _bearer, gates="earer EARER"),
    # password hashes (htpasswd, /etc/shadow, a users table): crackable offline, so secrets too
    token_rule("password_hash", "", r"\$(?:(?:apr1|1|5|6)\$(?:rounds=\d{1,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{22,86}"
               r"|2[abxy]?\$\d\d\$[./0-9A-Za-z]{53}|y\$[./0-9A-Za-z]{1,40}\$[./0-9A-Za-z]{1,64}\$[./0-9A-Za-z]{43}"
               r"|argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,})(?![./0-9A-Za-z])",
               _hash_body),
    token_rule("password_hash", "", r"\{S?SHA(?:256|512)?\}[A-Za-z0-9+/]{27,}={0,2}", _hash_body),
    # from here on, no gates: these run on every text
    folded_rule("url_credentials", r"://(?P<user>[^\s/?#@:'\"<>()\[\]{}]{0,256})(?::(?P<pw>[^\s/@'\"<>]{0,256}))?@"
                                   r"(?=[a-z0-9\[])", _url_credentials),
)

# The kinds ``secret_patterns`` names by a value's name (AWS_SECRET_ACCESS_KEY=…) or context.
NAMED_KINDS = frozenset({"high_entropy_secret", "aws_secret_key", "heroku_key", "twilio", "auth_header",
                         "azure_connection_string", "kubernetes_secret"})
# Vendors whose keys are random strings of no shape of their own: a name holding one of these and
# ending in id, key, login or dsn names a credential (ALGOLIA_APP_ID, SONAR_LOGIN).
VENDORS = frozenset(
    "adafruit adobe airtable algolia alibaba asana atlassian jira confluence beamer bitbucket bittrex meraki "
    "cloudflare codecov cohere coinbase confluent contentful datadog discord droneci dropbox etsy facebook fastly "
    "finicity finnhub flickr freshbooks gitter gocardless heroku hubspot intercom jfrog artifactory bintray kraken "
    "kucoin launchdarkly linear linkedin lob mailchimp mailgun mapbox mattermost messagebird netlify newrelic "
    "nytimes okta plaid privateai rapidapi sendbird sentry snyk sonar squarespace sumo sumologic telegram travis "
    "twitch twitter typeform yandex zendesk contribsys pusher pagerduty segment mixpanel amplitude auth0 "
    "circleci buildkite".split())
