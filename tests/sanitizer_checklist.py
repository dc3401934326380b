"""The checklist of the sanitizer's corpus: every rule id of gitleaks' default rule list
(config/gitleaks.toml) mapped to the corpus format that tests it, the formats that list asked
for beyond ``sanitizer_formats``, and the formats issue 39 found missed.

Only the ids are gitleaks'; every value is drawn by our own factories from the format's public
description (prefix, alphabet, length) and set in contexts where such a secret turns up.
"""

from __future__ import annotations

import base64
import json
import string

from mnemonic import Mnemonic

from sanitizer_formats import (
    ALNUM, B64, B64URL, HEX, LOWER_NUM, UPPER_NUM, Draw, Format, _n, _named, _p,
)

CRYPT = string.ascii_letters + string.digits + "./"  # the alphabet of crypt(3) hashes and salts
_BIP39 = Mnemonic("english")


def _only(env: str, *keep: int) -> tuple[str, ...]:
    """The named contexts of ``env`` whose value a reader could not take for a number or a word."""
    contexts = _named(env)
    return tuple(contexts[i] for i in keep)


def _phrase(d: Draw) -> str:
    return _BIP39.to_mnemonic(d.rng.randbytes(d.rng.choice([16, 20, 24, 28, 32])))


def _numbered(d: Draw) -> str:
    words = _BIP39.to_mnemonic(d.rng.randbytes(16)).split()
    return "\n".join(f"{i}. {w}" for i, w in enumerate(words, 1))


def _sha1_b64(d: Draw) -> str:
    return "{SHA}" + base64.b64encode(d.rng.randbytes(20)).decode()


def _sentry_org(d: Draw) -> str:
    claims = {"iat": d.rng.randint(1_700_000_000, 1_800_000_000), "url": "https://sentry.io",
              "region_url": "https://us.sentry.io", "org": "acme"}
    return "sntrys_" + base64.b64encode(json.dumps(claims).encode()).decode() + "_" + d.s(B64, 43)


def _jwt_b64(d: Draw) -> str:
    def part(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")
    jwt = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": d.uuid(), "iat": 1_700_000_000}) + "." + d.s(B64URL, 43)
    return base64.b64encode(jwt.encode()).decode()


HTPASSWD = ("admin:{s}", "$ cat /etc/nginx/.htpasswd\ndeploy:{s}\nops:$apr1$", "echo 'ci:{s}' >> .htpasswd",
            "INSERT INTO users (email, password_hash) VALUES ('ann@acme.io', '{s}');")
PROSE_COOKIE = "r = requests.get(url, headers={\"Cookie\": \"sid={s}\"})"

# The six formats issue 39 found stored (the first three reached raw/ and git end to end).
ISSUE_39: list[Format] = [
    Format("sshpass-password", "secret_assignment", lambda d: d.password(),
           ("sshpass -p '{s}' ssh root@10.0.0.5", 'sshpass -p "{s}" scp db.sql backup@nas.lan:/srv',
            "sshpass -p {s} ssh -o StrictHostKeyChecking=no deploy@web1 uptime")),
    Format("sshpass-env", "secret_assignment", lambda d: d.password(),
           ("export SSHPASS='{s}'", "export SSHPASS={s}; sshpass -e ssh root@10.0.0.5",
            'SSHPASS="{s}" sshpass -e rsync -a dist/ web1:/srv/app')),
    Format("cookie-session", "session_cookie", lambda d: d.rng.choice([d.s(B64URL, 32), d.s(HEX, 32).upper(),
                                                                        "s%3A" + d.s(B64URL, 32) + "." + d.s(B64URL, 43)]),
           ("curl -H 'Cookie: session={s}' https://app.acme.io/api/me",
            'curl -s -H "Cookie: lang=en; sessionid={s}" https://intranet.acme.internal/admin/',
            "curl -b 'JSESSIONID={s}' https://jenkins.acme.internal/job/deploy/",
            'curl --cookie "connect.sid={s}" http://localhost:3000/api/orders',
            "GET /dashboard HTTP/1.1\nHost: acme.io\nCookie: _session_id={s}; theme=dark",
            PROSE_COOKIE, "Set-Cookie: PHPSESSID={s}; path=/; HttpOnly")),
    Format("hex-signing-key", "high_entropy_secret", lambda d: d.s(HEX, 64),
           ("the hmac key {s} for prod", "webhook signing key {s} (rotate monthly)", "HMAC key (hex): {s}",
            "use key {s} to sign the callbacks", "signing key 0x{s}")),
    Format("htpasswd-apr1", "password_hash", lambda d: f"$apr1${d.s(CRYPT, 8)}${d.s(CRYPT, 22)}", HTPASSWD),
    Format("htpasswd-bcrypt", "password_hash", lambda d: f"$2y$10${d.s(CRYPT, 53)}", HTPASSWD),
    Format("htpasswd-sha1", "password_hash", _sha1_b64, HTPASSWD),
    Format("shadow-sha512", "password_hash", lambda d: f"$6${d.s(CRYPT, 16)}${d.s(CRYPT, 86)}",
           ("root:{s}:19700:0:99999:7:::", "$ sudo cat /etc/shadow | grep deploy\ndeploy:{s}:19812:0:99999:7:::")),
    Format("argon2id-hash", "password_hash",
           lambda d: f"$argon2id$v=19$m=65536,t=3,p=4${d.s(B64, 22)}${d.s(B64, 43)}",
           ("  password_hash: \"{s}\"", "UPDATE users SET pw = '{s}' WHERE id = 7;")),
    Format("bip39-mnemonic", "seed_phrase", _phrase,
           ("my seed phrase is: {s}", "{s}", "wallet recovery words:\n{s}\n(keep offline)", 'MNEMONIC="{s}" npm run deploy',
            '{"mnemonic": "{s}", "path": "m/44\'/60\'/0\'/0/0"}')),
    Format("bip39-numbered", "seed_phrase", _numbered, ("Wallet backup words:\n{s}\nDone.", "{s}")),
    Format("prose-root-pass", "secret_assignment", lambda d: d.password(),
           ("the root pass to db1 is {s}", "root pass to the NAS is {s}", "admin pass on the router is {s}")),
    Format("prose-wifi-key", "secret_assignment", lambda d: d.password(),
           ("wifi key is {s}", "the guest wifi key: {s}", "The office WPA key is {s} (changes in May)")),
]

# Formats of gitleaks' list that ``sanitizer_formats`` did not hold yet.
CHECKLIST: list[Format] = [
    Format("asana-client-id", "secret_assignment", lambda d: d.digits(16), _only("ASANA_CLIENT_ID", 0, 1, 3, 4, 5)),
    _n("bittrex-secret-key", lambda d: d.s(ALNUM, 32), "BITTREX_API_SECRET"),
    _n("confluent-access-token", lambda d: d.s(ALNUM, 16), "CONFLUENT_CLOUD_API_KEY"),
    _n("discord-api-token", lambda d: d.s(HEX, 64), "DISCORD_API_TOKEN"),
    Format("discord-client-id", "secret_assignment", lambda d: d.digits(18), _only("DISCORD_CLIENT_ID", 0, 1, 3, 4, 5)),
    _n("dropbox-api-token", lambda d: d.s(LOWER_NUM, 15), "DROPBOX_API_TOKEN"),
    _n("facebook-access-token", lambda d: d.digits(16) + "|" + d.s(B64URL, 32), "FACEBOOK_ACCESS_TOKEN"),
    _n("finicity-api-token", lambda d: d.s(HEX, 32), "FINICITY_APP_KEY"),
    _n("finicity-client-secret", lambda d: d.s(ALNUM, 20), "FINICITY_PARTNER_SECRET"),
    _n("jfrog-api-key", lambda d: d.s(LOWER_NUM, 73), "JFROG_API_KEY"),
    _n("kucoin-access-token", lambda d: d.s(HEX, 24), "KUCOIN_API_KEY"),
    _n("launchdarkly-access-token", lambda d: "api-" + d.uuid(), "LAUNCHDARKLY_ACCESS_TOKEN"),
    _n("linear-client-secret", lambda d: d.s(HEX, 32), "LINEAR_CLIENT_SECRET"),
    _n("linkedin-client-id", lambda d: d.s(LOWER_NUM, 14), "LINKEDIN_CLIENT_ID"),
    _n("mailgun-signing-key", lambda d: f"{d.s(HEX, 32)}-{d.s(HEX, 8)}-{d.s(HEX, 8)}", "MAILGUN_WEBHOOK_SIGNING_KEY"),
    _n("messagebird-client-id", lambda d: d.uuid(), "MESSAGEBIRD_CLIENT_ID"),
    _n("new-relic-user-api-id", lambda d: d.s(LOWER_NUM, 64), "NEWRELIC_USER_API_ID"),
    _n("plaid-api-token", lambda d: "access-sandbox-" + d.uuid(), "PLAID_ACCESS_TOKEN"),
    _n("privateai-api-token", lambda d: d.s(LOWER_NUM, 32), "PRIVATEAI_API_KEY"),
    _n("sendbird-access-id", lambda d: d.uuid(), "SENDBIRD_APP_ID"),
    _n("sentry-access-token", lambda d: d.s(HEX, 64), "SENTRY_AUTH_TOKEN"),
    _n("sumologic-access-id", lambda d: "su" + d.s(ALNUM, 12), "SUMO_ACCESS_ID"),
    _n("twitter-access-token", lambda d: d.digits(19) + "-" + d.s(ALNUM, 40), "TWITTER_ACCESS_TOKEN"),
    _n("twitter-api-key", lambda d: d.s(ALNUM, 25), "TWITTER_API_KEY"),
    _n("yandex-aws-access-token", lambda d: "YC" + d.s(B64URL, 38), "YANDEX_ACCESS_KEY"),
    _p("easypost-test-api-token", "easypost_key", lambda d: "EZTK" + d.s(ALNUM, 54), "EASYPOST_TEST_API_KEY",
       "api.easypost.com", "easypost"),
    _p("flutterwave-encryption-key", "flutterwave_key", lambda d: "FLWSECK_TEST-" + d.s("abcdefgh0123456789", 12),
       "FLW_ENCRYPTION_KEY", "api.flutterwave.com", "flw"),
    _p("flutterwave-public-key", "flutterwave_key", lambda d: "FLWPUBK_TEST-" + d.s("abcdefgh0123456789", 32) + "-X",
       "FLW_PUBLIC_KEY", "api.flutterwave.com", "flw"),
    _p("gitlab-deploy-token", "gitlab_token", lambda d: "gldt-" + d.s(B64URL, 20), "CI_DEPLOY_PASSWORD", "gitlab.com",
       "glab"),
    _p("gitlab-feature-flag-client-token", "gitlab_token", lambda d: "glffct-" + d.s(B64URL, 20), "UNLEASH_API_TOKEN",
       "gitlab.com", "glab"),
    _p("gitlab-feed-token", "gitlab_token", lambda d: "glft-" + d.s(B64URL, 20), "GITLAB_FEED_TOKEN", "gitlab.com", "glab"),
    _p("gitlab-incoming-mail-token", "gitlab_token", lambda d: "glimt-" + d.s(B64URL, 25), "GITLAB_INCOMING_EMAIL_TOKEN",
       "gitlab.com", "glab"),
    _p("gitlab-scim-token", "gitlab_token", lambda d: "glsoat-" + d.s(B64URL, 20), "GITLAB_SCIM_TOKEN", "gitlab.com",
       "glab"),
    _p("gitlab-pat-routable", "gitlab_token", lambda d: "glpat-" + d.s(B64URL, 40) + "." + d.s(LOWER_NUM, 9),
       "GITLAB_TOKEN", "gitlab.com", "glab"),
    _p("gitlab-runner-authentication-token", "gitlab_token", lambda d: "glrt-" + d.s(B64URL, 20), "RUNNER_TOKEN",
       "gitlab.com", "gitlab-runner"),
    _p("gitlab-runner-authentication-token-routable", "gitlab_token",
       lambda d: f"glrt-t{d.rng.randint(1, 3)}_" + d.s(B64URL, 30) + "." + d.s(LOWER_NUM, 9), "RUNNER_TOKEN",
       "gitlab.com", "gitlab-runner"),
    _p("gitlab-ptt", "gitlab_token", lambda d: "glptt-" + d.s(HEX, 40), "TRIGGER_TOKEN", "gitlab.com", "glab"),
    _p("lob-pub-api-key", "lob_key", lambda d: "live_pub_" + d.s(HEX, 31), "LOB_PUBLISHABLE_KEY", "api.lob.com", "lob"),
    _p("mapbox-api-token", "mapbox_token", lambda d: "pk.eyJ1Ijoi" + d.s(B64URL, 60) + "." + d.s(B64URL, 22),
       "MAPBOX_ACCESS_TOKEN", "api.mapbox.com", "mapbox"),
    _p("planetscale-oauth-token", "planetscale_token", lambda d: "pscale_oauth_" + d.s(ALNUM + "_", 43),
       "PLANETSCALE_OAUTH_TOKEN", "api.planetscale.com", "pscale"),
    _p("sentry-org-token", "sentry_token", _sentry_org, "SENTRY_ORG_TOKEN", "sentry.io", "sentry-cli"),
    _p("settlemint-application-access-token", "settlemint_token", lambda d: "sm_aat_" + d.s(ALNUM, 16),
       "SETTLEMINT_APP_TOKEN", "console.settlemint.com", "settlemint"),
    _p("settlemint-service-access-token", "settlemint_token", lambda d: "sm_sat_" + d.s(ALNUM, 16),
       "SETTLEMINT_SERVICE_TOKEN", "console.settlemint.com", "settlemint"),
    _p("shopify-custom-access-token", "shopify_token", lambda d: "shpca_" + d.s(HEX, 32), "SHOPIFY_CUSTOM_TOKEN",
       "acme.myshopify.com", "shopify"),
    _p("shopify-private-app-access-token", "shopify_token", lambda d: "shppa_" + d.s(HEX, 32), "SHOPIFY_APP_PASSWORD",
       "acme.myshopify.com", "shopify"),
    _p("slack-config-refresh-token", "slack_token", lambda d: "xoxe-1-" + d.s(UPPER_NUM, 146), "SLACK_REFRESH_TOKEN",
       "slack.com", "slack"),
    _p("slack-legacy-bot-token", "slack_token", lambda d: f"xoxb-{d.digits(11)}-{d.s(ALNUM, 24)}", "SLACK_BOT_TOKEN",
       "slack.com", "slack"),
    _p("slack-legacy-token", "slack_token", lambda d: f"xox{d.rng.choice('os')}-{d.digits(10)}-{d.digits(10)}-"
       f"{d.digits(12)}-{d.s(HEX, 32)}", "SLACK_LEGACY_TOKEN", "slack.com", "slack"),
    _p("slack-legacy-workspace-token", "slack_token", lambda d: f"xox{d.rng.choice('ar')}-1-{d.s(ALNUM, 40)}",
       "SLACK_WORKSPACE_TOKEN", "slack.com", "slack"),
    Format("curl-auth-user", "auth_header", lambda d: d.password(),
           ("curl -u admin:{s} https://jenkins.acme.internal/api/json", 'curl --user "deploy:{s}" -X POST https://x.io/',
            "curl -s -u ops:{s} http://10.0.0.7:9200/_cat/indices")),
    Format("freemius-secret-key", "secret_assignment", lambda d: "sk_" + d.s(B64URL, 29),
           ("'secret_key' => '{s}',", '    "secret_key" => "{s}",')),
    Format("hashicorp-tf-password", "secret_assignment", lambda d: d.password(),
           ('  administrator_login_password = "{s}"', '  password = "{s}"')),
    Format("jwt-base64", "jwt", _jwt_b64, ("ID_TOKEN_B64={s}", "  blob: {s}", "echo {s} | base64 -d")),
    Format("sidekiq-sensitive-url", "url_credentials", lambda d: d.s(HEX, 8) + ":" + d.s(HEX, 8),
           ("source \"https://{s}@gems.contribsys.com/\"", "bundle config gems.contribsys.com https://{s}@enterprise.contribsys.com/")),
]

# Rules of gitleaks' default list that are not about text: the sanitizer never sees a file name.
NOT_TEXT = {"pkcs12-file": "matches a file's name (*.p12, *.pfx); the sanitizer reads text, not paths"}

# gitleaks rule id -> the corpus format that tests it (format ids of ``sanitizer_corpus.format_ids``).
GITLEAKS: dict[str, str] = {
    "1password-secret-key": "1password-secret-key", "1password-service-account-token": "1password-service-account",
    "adafruit-api-key": "adafruit-api-key", "adobe-client-id": "adobe-client-id",
    "adobe-client-secret": "adobe-client-secret", "age-secret-key": "age-secret-key",
    "airtable-api-key": "airtable-api-key", "algolia-api-key": "algolia-api-key",
    "alibaba-access-key-id": "alibaba-access-key-id", "alibaba-secret-key": "alibaba-secret-key",
    "anthropic-admin-api-key": "anthropic_key/1", "anthropic-api-key": "anthropic_key/0",
    "artifactory-api-key": "artifactory-api-key", "artifactory-reference-token": "artifactory-reference-token",
    "asana-client-id": "asana-client-id", "asana-client-secret": "asana-client-secret",
    "atlassian-api-token": "atlassian-api-token", "authress-service-client-access-key": "authress-key",
    "aws-access-token": "aws_access_key/0", "azure-ad-client-secret": "azure-ad-client-secret",
    "beamer-api-token": "beamer-api-token", "bitbucket-client-id": "bitbucket-client-id",
    "bitbucket-client-secret": "bitbucket-client-secret", "bittrex-access-key": "bittrex-access-key",
    "bittrex-secret-key": "bittrex-secret-key", "cisco-meraki-api-key": "meraki-api-key",
    "clickhouse-cloud-api-secret-key": "clickhouse-cloud-secret", "clojars-api-token": "clojars-token",
    "cloudflare-api-key": "cloudflare-api-key", "cloudflare-global-api-key": "cloudflare-global-api-key",
    "cloudflare-origin-ca-key": "cloudflare-origin-ca-key", "codecov-access-token": "codecov-token",
    "cohere-api-token": "cohere-api-key", "coinbase-access-token": "coinbase-access-token",
    "confluent-access-token": "confluent-access-token", "confluent-secret-key": "confluent-secret-key",
    "contentful-delivery-api-token": "contentful-delivery-token", "curl-auth-header": "auth_header/0",
    "curl-auth-user": "curl-auth-user", "database-password": "secret_assignment/0",
    "databricks-api-token": "databricks-token", "datadog-access-token": "datadog-app-key",
    "defined-networking-api-token": "defined-networking-token", "digitalocean-access-token": "digitalocean-oauth",
    "digitalocean-pat": "digitalocean-pat", "digitalocean-refresh-token": "digitalocean-refresh",
    "discord-api-token": "discord-api-token", "discord-client-id": "discord-client-id",
    "discord-client-secret": "discord-client-secret", "doppler-api-token": "doppler-token",
    "droneci-access-token": "droneci-token", "dropbox-api-token": "dropbox-api-token",
    "dropbox-long-lived-api-token": "dropbox-long-lived", "dropbox-short-lived-api-token": "dropbox-short-lived",
    "duffel-api-token": "duffel-token", "dynatrace-api-token": "dynatrace-token", "easypost-api-token": "easypost-key",
    "easypost-test-api-token": "easypost-test-api-token", "etsy-access-token": "etsy-access-token",
    "facebook-access-token": "facebook-access-token", "facebook-page-access-token": "facebook-page-token",
    "facebook-secret": "facebook-app-secret", "fastly-api-token": "fastly-api-token",
    "finicity-api-token": "finicity-api-token", "finicity-client-secret": "finicity-client-secret",
    "finnhub-access-token": "finnhub-token", "flickr-access-token": "flickr-api-secret",
    "flutterwave-encryption-key": "flutterwave-encryption-key", "flutterwave-public-key": "flutterwave-public-key",
    "flutterwave-secret-key": "flutterwave-secret", "flyio-access-token": "flyio-token",
    "frameio-api-token": "frameio-token", "freemius-secret-key": "freemius-secret-key",
    "freshbooks-access-token": "freshbooks-token", "gcp-api-key": "google_api_key/0",
    "generic-api-key": "high_entropy_secret/0", "github-app-token": "github_token/0",
    "github-fine-grained-pat": "github_token/1", "github-oauth": "github_token/0", "github-pat": "github_token/0",
    "github-refresh-token": "github_token/0", "gitlab-cicd-job-token": "gitlab-cicd-job-token",
    "gitlab-deploy-token": "gitlab-deploy-token", "gitlab-feature-flag-client-token": "gitlab-feature-flag-client-token",
    "gitlab-feed-token": "gitlab-feed-token", "gitlab-incoming-mail-token": "gitlab-incoming-mail-token",
    "gitlab-kubernetes-agent-token": "gitlab-agent-token", "gitlab-oauth-app-secret": "gitlab-oauth-secret",
    "gitlab-pat": "gitlab_token/0", "gitlab-pat-routable": "gitlab-pat-routable", "gitlab-ptt": "gitlab-ptt",
    "gitlab-rrt": "gitlab_token/1", "gitlab-runner-authentication-token": "gitlab-runner-authentication-token",
    "gitlab-runner-authentication-token-routable": "gitlab-runner-authentication-token-routable",
    "gitlab-scim-token": "gitlab-scim-token", "gitlab-session-cookie": "gitlab-session-cookie",
    "gitter-access-token": "gitter-token", "gocardless-api-token": "gocardless-token",
    "grafana-api-key": "grafana-api-key", "grafana-cloud-api-token": "grafana-cloud-token",
    "grafana-service-account-token": "grafana-service-account", "harness-api-key": "harness-pat",
    "hashicorp-tf-api-token": "terraform-cloud-token", "hashicorp-tf-password": "hashicorp-tf-password",
    "heroku-api-key": "heroku_key/0", "heroku-api-key-v2": "heroku_key/1", "hubspot-api-key": "hubspot-api-key",
    "huggingface-access-token": "huggingface_token/0", "huggingface-organization-api-token": "huggingface-org-token",
    "infracost-api-token": "infracost-token", "intercom-api-key": "intercom-token",
    "intra42-client-secret": "intra42-secret", "jfrog-api-key": "jfrog-api-key",
    "jfrog-identity-token": "jfrog-identity-token", "jwt": "jwt/0", "jwt-base64": "jwt-base64",
    "kraken-access-token": "kraken-api-secret", "kubernetes-secret-yaml": "kubernetes-secret",
    "kucoin-access-token": "kucoin-access-token", "kucoin-secret-key": "kucoin-secret",
    "launchdarkly-access-token": "launchdarkly-access-token", "linear-api-key": "linear-api-key",
    "linear-client-secret": "linear-client-secret", "linkedin-client-id": "linkedin-client-id",
    "linkedin-client-secret": "linkedin-client-secret", "lob-api-key": "lob-api-key",
    "lob-pub-api-key": "lob-pub-api-key", "mailchimp-api-key": "mailchimp-key",
    "mailgun-private-api-token": "mailgun_key/0", "mailgun-pub-key": "mailgun-public-key",
    "mailgun-signing-key": "mailgun-signing-key", "mapbox-api-token": "mapbox-api-token",
    "mattermost-access-token": "mattermost-token", "maxmind-license-key": "maxmind-license",
    "messagebird-api-token": "messagebird-key", "messagebird-client-id": "messagebird-client-id",
    "microsoft-teams-webhook": "teams-webhook", "netlify-access-token": "netlify-token",
    "new-relic-browser-api-token": "newrelic-browser-key", "new-relic-insert-key": "newrelic-insert-key",
    "new-relic-user-api-id": "new-relic-user-api-id", "new-relic-user-api-key": "newrelic-user-key",
    "notion-api-token": "notion-token", "npm-access-token": "npm_token/0",
    "nuget-config-password": "nuget-config-password", "nytimes-access-token": "nytimes-key",
    "octopus-deploy-api-key": "octopus-api-key", "okta-access-token": "okta-token", "openai-api-key": "openai_key/0",
    "openshift-user-token": "openshift-token", "perplexity-api-key": "perplexity-key",
    "plaid-api-token": "plaid-api-token", "plaid-client-id": "plaid-client-id", "plaid-secret-key": "plaid-secret",
    "planetscale-api-token": "planetscale-token", "planetscale-oauth-token": "planetscale-oauth-token",
    "planetscale-password": "planetscale-password", "postman-api-token": "postman-api-key",
    "prefect-api-token": "prefect-api-key", "private-key": "private_key/RSA PRIVATE KEY",
    "privateai-api-token": "privateai-api-token", "pulumi-api-token": "pulumi-token",
    "pypi-upload-token": "pypi_token/0", "rapidapi-access-token": "rapidapi-key", "readme-api-token": "readme-api-key",
    "rubygems-api-token": "rubygems-key", "scalingo-api-token": "scalingo-token",
    "sendbird-access-id": "sendbird-access-id", "sendbird-access-token": "sendbird-token",
    "sendgrid-api-token": "sendgrid_key/0", "sendinblue-api-token": "sendinblue-key",
    "sentry-access-token": "sentry-access-token", "sentry-org-token": "sentry-org-token",
    "sentry-user-token": "sentry-user-token", "settlemint-application-access-token": "settlemint-application-access-token",
    "settlemint-personal-access-token": "settlemint-pat",
    "settlemint-service-access-token": "settlemint-service-access-token", "shippo-api-token": "shippo-key",
    "shopify-access-token": "shopify-access-token", "shopify-custom-access-token": "shopify-custom-access-token",
    "shopify-private-app-access-token": "shopify-private-app-access-token",
    "shopify-shared-secret": "shopify-shared-secret", "sidekiq-secret": "sidekiq-secret",
    "sidekiq-sensitive-url": "sidekiq-sensitive-url", "slack-app-token": "slack_token/2",
    "slack-bot-token": "slack_token/0", "slack-config-access-token": "slack_token/3",
    "slack-config-refresh-token": "slack-config-refresh-token", "slack-legacy-bot-token": "slack-legacy-bot-token",
    "slack-legacy-token": "slack-legacy-token", "slack-legacy-workspace-token": "slack-legacy-workspace-token",
    "slack-user-token": "slack_token/1", "slack-webhook-url": "slack_webhook/0", "snyk-api-token": "snyk-token",
    "sonar-api-token": "sonar-token", "sourcegraph-access-token": "sourcegraph-token",
    "square-access-token": "square-access-token", "squarespace-access-token": "squarespace-key",
    "stripe-access-token": "stripe_key/0", "sumologic-access-id": "sumologic-access-id",
    "sumologic-access-token": "sumologic-access-key", "telegram-bot-api-token": "telegram_bot_token/0",
    "travisci-access-token": "travisci-token", "twilio-api-key": "twilio/0", "twitch-api-token": "twitch-token",
    "twitter-access-secret": "twitter-access-secret", "twitter-access-token": "twitter-access-token",
    "twitter-api-key": "twitter-api-key", "twitter-api-secret": "twitter-api-secret",
    "twitter-bearer-token": "twitter-bearer", "typeform-api-token": "typeform-token",
    "vault-batch-token": "vault-batch-token", "vault-service-token": "vault-service-token",
    "yandex-access-token": "yandex-access-token", "yandex-api-key": "yandex-api-key",
    "yandex-aws-access-token": "yandex-aws-access-token", "zendesk-secret-key": "zendesk-token",
}
