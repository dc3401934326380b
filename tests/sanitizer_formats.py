"""Credential formats for the sanitizer's corpus, beyond the first ones in ``sanitizer_corpus``.

The list follows gitleaks' public rule list (config/gitleaks.toml) as a checklist of formats:
every value here is drawn by our own factories from the format's public description (prefix,
alphabet, length), never copied, and set in contexts where such a secret turns up: a shell
export, a .env or YAML line, a client constructor, a curl call, a log line, a prompt.

Three families:
- ``PREFIXED``: the vendor's format carries its own prefix or shape, so it is found anywhere;
- ``NAMED``: a random string with no shape of its own, found by the name it is assigned to;
- ``EVASIONS``: spellings that hide a secret from a plain match (zero-width characters,
  full-width letters, base64), and secrets in prose or on a command line.
"""

from __future__ import annotations

import base64
import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
LOWER_NUM = string.ascii_lowercase + string.digits
PASSWORD_SYMBOLS = "!%^*-_+=.~#&"


class Draw:
    """Random strings in vendor alphabets, from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def digits(self, n: int) -> str:
        return str(self.rng.randint(1, 9)) + self.s(string.digits, n - 1)

    def password(self) -> str:
        if self.rng.random() < 0.3:  # the human kind: Summer2024!
            word = self.rng.choice(["Summer", "Winter", "Dragon", "Monkey", "Falcon", "Orchid", "Granite"])
            return word + self.digits(4) + self.rng.choice("!%*#.")
        chars = self.s(ALNUM + PASSWORD_SYMBOLS, self.rng.randint(11, 19))
        return chars + self.rng.choice(string.digits)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def b64bytes(self, n: int) -> str:
        return base64.b64encode(self.rng.randbytes(n)).decode()


Factory = Callable[[Draw], str]


@dataclass(frozen=True)
class Format:
    """One credential format: the kind the sanitizer must report, a factory, its contexts."""

    id: str
    kind: str
    make: Factory
    contexts: tuple[str, ...]


def _shaped(env: str, host: str, cli: str) -> tuple[str, ...]:
    """Where a token with a shape of its own turns up; {s} is the token."""
    return (f"export {env}={{s}}", f'{env.lower()}: "{{s}}"', 'client = Client(api_key="{s}", timeout=30)',
            f'curl -s -H "Authorization: Bearer {{s}}" https://{host}/v1/me',
            f"2025-03-02 10:14:07,812 DEBUG {cli}.http: POST https://{host}/v2/jobs using credential {{s}}",
            f'{{"{env.lower()}": "{{s}}", "region": "eu-west-1"}}',
            "I rotated it already, the old one was {s} if you need it for the logs",
            f"{cli} auth login --token {{s}}")


def _named(env: str) -> tuple[str, ...]:
    """Where a shapeless key turns up: only its name says whose it is; {s} is the key."""
    parts = env.lower().split("_")
    camel = parts[0] + "".join(p.title() for p in parts[1:])
    return (f"{env}={{s}}", f'export {env}="{{s}}"', f"  {env.lower()}: {{s}}", f'const {camel} = "{{s}}";',
            f'    "{env}": "{{s}}",', f"docker run --rm -e {env}={{s}} ghcr.io/acme/worker:1.4")


def _p(fid: str, kind: str, make: Factory, env: str, host: str, cli: str) -> Format:
    return Format(fid, kind, make, _shaped(env, host, cli))


def _n(fid: str, make: Factory, env: str) -> Format:
    return Format(fid, "secret_assignment", make, _named(env))


PREFIXED: list[Format] = [
    _p("1password-service-account", "onepassword_token", lambda d: "ops_eyJ" + d.s(B64, 300), "OP_SERVICE_ACCOUNT_TOKEN",
       "my.1password.com", "op"),
    _p("1password-secret-key", "onepassword_secret_key", lambda d: f"A3-{d.s(UPPER_NUM, 6)}-{d.s(UPPER_NUM, 11)}-"
       f"{d.s(UPPER_NUM, 5)}-{d.s(UPPER_NUM, 5)}-{d.s(UPPER_NUM, 5)}", "OP_SECRET_KEY", "my.1password.com", "op"),
    _p("adobe-client-secret", "adobe_client_secret", lambda d: "p8e-" + d.s(ALNUM, 32), "ADOBE_CLIENT_SECRET",
       "ims-na1.adobelogin.com", "aio"),
    _p("age-secret-key", "age_secret_key", lambda d: "AGE-SECRET-KEY-1" + d.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
       "SOPS_AGE_KEY", "age.example.internal", "sops"),
    _p("alibaba-access-key-id", "alibaba_access_key", lambda d: "LTAI" + d.s(ALNUM, 20), "ALIBABA_CLOUD_ACCESS_KEY_ID",
       "ecs.aliyuncs.com", "aliyun"),
    _p("artifactory-api-key", "artifactory_token", lambda d: "AKCp" + d.s(ALNUM, 69), "ARTIFACTORY_API_KEY",
       "acme.jfrog.io", "jf"),
    _p("artifactory-reference-token", "artifactory_token", lambda d: "cmVmd" + d.s(ALNUM, 59), "ARTIFACTORY_TOKEN",
       "acme.jfrog.io", "jf"),
    _p("azure-ad-client-secret", "azure_ad_client_secret", lambda d: d.s(ALNUM, 3) + d.s(string.digits, 1) + "Q~"
       + d.s(ALNUM + "_~.-", 34), "AZURE_CLIENT_SECRET", "login.microsoftonline.com", "az"),
    _p("clickhouse-cloud-secret", "clickhouse_key", lambda d: "4b1d" + d.s(ALNUM, 38), "CLICKHOUSE_KEY_SECRET",
       "api.clickhouse.cloud", "clickhouse"),
    _p("clojars-token", "clojars_token", lambda d: "CLOJARS_" + d.s(LOWER_NUM, 60), "CLOJARS_PASSWORD",
       "clojars.org", "lein"),
    _p("cloudflare-origin-ca-key", "cloudflare_origin_key", lambda d: "v1.0-" + d.s(HEX, 24) + "-" + d.s(HEX, 146),
       "CF_ORIGIN_CA_KEY", "api.cloudflare.com", "wrangler"),
    _p("databricks-token", "databricks_token", lambda d: "dapi" + d.s(HEX, 32), "DATABRICKS_TOKEN",
       "adb-123.azuredatabricks.net", "databricks"),
    _p("digitalocean-pat", "digitalocean_token", lambda d: "dop_v1_" + d.s(HEX, 64), "DIGITALOCEAN_TOKEN",
       "api.digitalocean.com", "doctl"),
    _p("digitalocean-oauth", "digitalocean_token", lambda d: "doo_v1_" + d.s(HEX, 64), "DO_OAUTH_TOKEN",
       "api.digitalocean.com", "doctl"),
    _p("digitalocean-refresh", "digitalocean_token", lambda d: "dor_v1_" + d.s(HEX, 64), "DO_REFRESH_TOKEN",
       "cloud.digitalocean.com", "doctl"),
    _p("doppler-token", "doppler_token", lambda d: "dp.pt." + d.s(ALNUM, 43), "DOPPLER_TOKEN", "api.doppler.com",
       "doppler"),
    _p("duffel-token", "duffel_token", lambda d: "duffel_" + d.rng.choice(["test", "live"]) + "_" + d.s(B64URL, 43),
       "DUFFEL_ACCESS_TOKEN", "api.duffel.com", "duffel"),
    _p("dynatrace-token", "dynatrace_token", lambda d: "dt0c01." + d.s(UPPER_NUM, 24) + "." + d.s(UPPER_NUM, 64),
       "DT_API_TOKEN", "abc123.live.dynatrace.com", "dtctl"),
    _p("easypost-key", "easypost_key", lambda d: d.rng.choice(["EZAK", "EZTK"]) + d.s(ALNUM, 54), "EASYPOST_API_KEY",
       "api.easypost.com", "easypost"),
    _p("facebook-page-token", "facebook_token", lambda d: "EAAC" + d.s(ALNUM, 160), "FB_PAGE_ACCESS_TOKEN",
       "graph.facebook.com", "fb"),
    _p("flutterwave-secret", "flutterwave_key", lambda d: "FLWSECK_TEST-" + d.s("abcdefgh0123456789", 32) + "-X",
       "FLW_SECRET_KEY", "api.flutterwave.com", "flw"),
    _p("flyio-token", "flyio_token", lambda d: "fm2_" + d.s(B64, 180), "FLY_API_TOKEN", "api.fly.io", "flyctl"),
    _p("frameio-token", "frameio_token", lambda d: "fio-u-" + d.s(B64URL, 64), "FRAMEIO_TOKEN", "api.frame.io",
       "frameio"),
    _p("grafana-api-key", "grafana_token", lambda d: "eyJrIjoi" + d.s(ALNUM, 90), "GRAFANA_API_KEY",
       "grafana.acme.internal", "grafanactl"),
    _p("grafana-cloud-token", "grafana_token", lambda d: "glc_" + d.s(ALNUM, 120), "GRAFANA_CLOUD_TOKEN",
       "grafana.com", "grafanactl"),
    _p("grafana-service-account", "grafana_token", lambda d: "glsa_" + d.s(ALNUM, 32) + "_" + d.s(HEX, 8),
       "GRAFANA_SA_TOKEN", "grafana.acme.internal", "grafanactl"),
    _p("harness-pat", "harness_token", lambda d: "pat." + d.s(B64URL, 22) + "." + d.s(ALNUM, 24) + "." + d.s(ALNUM, 20),
       "HARNESS_API_KEY", "app.harness.io", "harness"),
    _p("terraform-cloud-token", "terraform_token", lambda d: d.s(ALNUM, 14) + ".atlasv1." + d.s(B64URL, 67),
       "TFE_TOKEN", "app.terraform.io", "terraform"),
    _p("huggingface-org-token", "huggingface_token", lambda d: "api_org_" + d.s(string.ascii_letters, 34),
       "HF_ORG_TOKEN", "huggingface.co", "huggingface-cli"),
    _p("infracost-token", "infracost_token", lambda d: "ico-" + d.s(ALNUM, 32), "INFRACOST_API_KEY",
       "pricing.api.infracost.io", "infracost"),
    _p("intra42-secret", "intra42_secret", lambda d: "s-s4t2ud-" + d.s(HEX, 64), "INTRA42_CLIENT_SECRET",
       "api.intra.42.fr", "intra"),
    _p("linear-api-key", "linear_key", lambda d: "lin_api_" + d.s(ALNUM, 40), "LINEAR_API_KEY", "api.linear.app",
       "linear"),
    _p("maxmind-license", "maxmind_key", lambda d: d.s(ALNUM, 6) + "_" + d.s(ALNUM, 29) + "_mmk", "MAXMIND_LICENSE_KEY",
       "download.maxmind.com", "geoipupdate"),
    Format("teams-webhook", "teams_webhook", lambda d: f"{d.uuid()}@{d.uuid()}/IncomingWebhook/{d.s(HEX, 32)}/{d.uuid()}",
           ("TEAMS_WEBHOOK=https://acme.webhook.office.com/webhookb2/{s}",
            "curl -H 'Content-Type: application/json' -d '{\"text\": \"deploy done\"}' "
            "https://acme.webhook.office.com/webhookb2/{s}",
            '  webhook_url: "https://acme.webhook.office.com/webhookb2/{s}"')),
    _p("newrelic-user-key", "newrelic_key", lambda d: "NRAK-" + d.s(UPPER_NUM, 27), "NEW_RELIC_API_KEY",
       "api.newrelic.com", "newrelic"),
    _p("newrelic-insert-key", "newrelic_key", lambda d: "NRII-" + d.s(ALNUM + "-", 32), "NEW_RELIC_INSERT_KEY",
       "insights-collector.newrelic.com", "newrelic"),
    _p("newrelic-browser-key", "newrelic_key", lambda d: "NRJS-" + d.s(HEX, 19), "NEW_RELIC_BROWSER_KEY",
       "bam.nr-data.net", "newrelic"),
    _p("notion-token", "notion_token", lambda d: "ntn_" + d.s(string.digits, 11) + d.s(ALNUM, 35), "NOTION_TOKEN",
       "api.notion.com", "notion"),
    _p("notion-integration-secret", "notion_token", lambda d: "secret_" + d.s(ALNUM, 43), "NOTION_API_KEY",
       "api.notion.com", "notion"),
    _p("supabase-access-token", "supabase_token", lambda d: "sbp_" + d.s(HEX, 40), "SUPABASE_ACCESS_TOKEN",
       "api.supabase.com", "supabase"),
    _p("contentful-pat", "contentful_token", lambda d: "CFPAT-" + d.s(B64URL, 43), "CONTENTFUL_MANAGEMENT_TOKEN",
       "api.contentful.com", "contentful"),
    _p("render-api-key", "render_key", lambda d: "rnd_" + d.s(ALNUM, 32), "RENDER_API_KEY", "api.render.com",
       "render"),
    _p("octopus-api-key", "octopus_key", lambda d: "API-" + d.s(UPPER_NUM, 26), "OCTOPUS_API_KEY",
       "acme.octopus.app", "octopus"),
    _p("openshift-token", "openshift_token", lambda d: "sha256~" + d.s(B64URL, 43), "OPENSHIFT_TOKEN",
       "api.cluster.acme.internal:6443", "oc"),
    _p("perplexity-key", "perplexity_key", lambda d: "pplx-" + d.s(ALNUM, 48), "PERPLEXITY_API_KEY",
       "api.perplexity.ai", "pplx"),
    _p("planetscale-token", "planetscale_token", lambda d: "pscale_tkn_" + d.s(ALNUM + "_", 43), "PLANETSCALE_TOKEN",
       "api.planetscale.com", "pscale"),
    _p("planetscale-password", "planetscale_token", lambda d: "pscale_pw_" + d.s(ALNUM + "_", 43),
       "PLANETSCALE_DB_PASSWORD", "aws.connect.psdb.cloud", "pscale"),
    _p("postman-api-key", "postman_key", lambda d: "PMAK-" + d.s(HEX, 24) + "-" + d.s(HEX, 34), "POSTMAN_API_KEY",
       "api.getpostman.com", "postman"),
    _p("prefect-api-key", "prefect_key", lambda d: "pnu_" + d.s(ALNUM, 36), "PREFECT_API_KEY", "api.prefect.cloud",
       "prefect"),
    _p("pulumi-token", "pulumi_token", lambda d: "pul-" + d.s(HEX, 40), "PULUMI_ACCESS_TOKEN", "api.pulumi.com",
       "pulumi"),
    _p("readme-api-key", "readme_key", lambda d: "rdme_" + d.s(LOWER_NUM, 70), "README_API_KEY", "dash.readme.com",
       "rdme"),
    _p("rubygems-key", "rubygems_key", lambda d: "rubygems_" + d.s(HEX, 48), "GEM_HOST_API_KEY", "rubygems.org", "gem"),
    _p("scalingo-token", "scalingo_token", lambda d: "tk-us-" + d.s(B64URL, 48), "SCALINGO_API_TOKEN",
       "api.osc-fr1.scalingo.com", "scalingo"),
    _p("sendinblue-key", "sendinblue_key", lambda d: "xkeysib-" + d.s(HEX, 64) + "-" + d.s(ALNUM, 16),
       "BREVO_API_KEY", "api.brevo.com", "brevo"),
    _p("sentry-user-token", "sentry_token", lambda d: "sntryu_" + d.s(HEX, 64), "SENTRY_AUTH_TOKEN", "sentry.io",
       "sentry-cli"),
    _p("settlemint-pat", "settlemint_token", lambda d: "sm_pat_" + d.s(ALNUM, 16), "SETTLEMINT_ACCESS_TOKEN",
       "console.settlemint.com", "settlemint"),
    _p("shippo-key", "shippo_key", lambda d: "shippo_live_" + d.s(HEX, 40), "SHIPPO_API_KEY", "api.goshippo.com",
       "shippo"),
    _p("shopify-access-token", "shopify_token", lambda d: "shpat_" + d.s(HEX, 32), "SHOPIFY_ACCESS_TOKEN",
       "acme.myshopify.com", "shopify"),
    _p("shopify-shared-secret", "shopify_token", lambda d: "shpss_" + d.s(HEX, 32), "SHOPIFY_API_SECRET",
       "acme.myshopify.com", "shopify"),
    _p("sourcegraph-token", "sourcegraph_token", lambda d: "sgp_" + d.s(HEX, 16) + "_" + d.s(HEX, 40),
       "SRC_ACCESS_TOKEN", "sourcegraph.acme.internal", "src"),
    _p("square-access-token", "square_token", lambda d: "EAAA" + d.s(B64URL, 60), "SQUARE_ACCESS_TOKEN",
       "connect.squareup.com", "square"),
    _p("square-oauth-secret", "square_token", lambda d: "sq0csp-" + d.s(B64URL, 43), "SQUARE_APP_SECRET",
       "connect.squareup.com", "square"),
    _p("typeform-token", "typeform_token", lambda d: "tfp_" + d.s(ALNUM + "_", 59), "TYPEFORM_TOKEN",
       "api.typeform.com", "typeform"),
    _p("vault-service-token", "vault_token", lambda d: "hvs." + d.s(B64URL, 100), "VAULT_TOKEN",
       "vault.acme.internal:8200", "vault"),
    _p("vault-batch-token", "vault_token", lambda d: "hvb." + d.s(B64URL, 150), "VAULT_BATCH_TOKEN",
       "vault.acme.internal:8200", "vault"),
    _p("mailchimp-key", "mailchimp_key", lambda d: d.s(HEX, 32) + "-us" + str(d.rng.randint(1, 21)),
       "MAILCHIMP_API_KEY", "us6.api.mailchimp.com", "mailchimp"),
    _p("mailgun-public-key", "mailgun_key", lambda d: "pubkey-" + d.s(HEX, 32), "MAILGUN_PUBLIC_KEY",
       "api.mailgun.net", "mailgun"),
    _p("mapbox-secret-token", "mapbox_token", lambda d: "sk.eyJ1Ijoi" + d.s(B64URL, 60) + "." + d.s(B64URL, 22),
       "MAPBOX_SECRET_TOKEN", "api.mapbox.com", "mapbox"),
    _p("dropbox-short-lived", "dropbox_token", lambda d: "sl." + d.s(B64URL, 138), "DROPBOX_ACCESS_TOKEN",
       "api.dropboxapi.com", "dbxcli"),
    _p("dropbox-long-lived", "dropbox_token", lambda d: d.s(LOWER_NUM, 11) + "AAAAAAAAAA" + d.s(B64URL, 43),
       "DROPBOX_REFRESH_TOKEN", "api.dropboxapi.com", "dbxcli"),
    _p("twitter-bearer", "twitter_token", lambda d: "A" * 22 + d.s(ALNUM + "%", 90), "TWITTER_BEARER_TOKEN",
       "api.twitter.com", "twurl"),
    _p("defined-networking-token", "defined_networking_token", lambda d: "dnkey-" + d.s(B64URL, 26) + "-"
       + d.s(B64URL, 52), "DN_API_KEY", "api.defined.net", "dnctl"),
    _p("yandex-api-key", "yandex_token", lambda d: "AQVN" + d.s(B64URL, 36), "YC_API_KEY", "iam.api.cloud.yandex.net",
       "yc"),
    _p("authress-key", "authress_key", lambda d: f"sc_{d.s(LOWER_NUM, 10)}.{d.s(LOWER_NUM, 5)}.acc_{d.s(LOWER_NUM, 20)}"
       f".{d.s(B64, 60)}", "AUTHRESS_KEY", "acme.api.authress.io", "authress"),
    _p("lob-api-key", "lob_key", lambda d: "live_" + d.s(HEX, 35), "LOB_API_KEY", "api.lob.com", "lob"),
    _p("gocardless-token", "gocardless_token", lambda d: "live_" + d.s(B64URL, 40), "GOCARDLESS_ACCESS_TOKEN",
       "api.gocardless.com", "gocardless"),
    Format("gitlab-session-cookie", "gitlab_token", lambda d: d.s(LOWER_NUM, 32),
           ("Cookie: _gitlab_session={s}; preferred_language=en",
            "curl -b '_gitlab_session={s}' https://gitlab.acme.internal/api/v4/user",
            "Set-Cookie: _gitlab_session={s}; path=/; secure; HttpOnly")),
    _p("gitlab-cicd-job-token", "gitlab_token", lambda d: "glcbt-" + d.s(ALNUM, 2) + "_" + d.s(B64URL, 20),
       "CI_JOB_TOKEN", "gitlab.com", "glab"),
    _p("gitlab-oauth-secret", "gitlab_token", lambda d: "gloas-" + d.s(B64URL, 64), "GITLAB_OAUTH_SECRET",
       "gitlab.com", "glab"),
    _p("gitlab-agent-token", "gitlab_token", lambda d: "glagent-" + d.s(B64URL, 50), "GITLAB_AGENT_TOKEN",
       "kas.gitlab.com", "glab"),
    _p("stripe-prod-key", "stripe_key", lambda d: "sk_prod_" + d.s(ALNUM, 40), "STRIPE_SECRET_KEY", "api.stripe.com",
       "stripe"),
    _p("openai-admin-key", "openai_key", lambda d: "sk-admin-" + d.s(B64URL, 58) + "T3BlbkFJ" + d.s(B64URL, 58),
       "OPENAI_ADMIN_KEY", "api.openai.com", "openai"),
]
NAMED: list[Format] = [
    _n("adafruit-api-key", lambda d: d.s(LOWER_NUM + "_-", 32), "ADAFRUIT_IO_KEY"),
    _n("adobe-client-id", lambda d: d.s(HEX, 32), "ADOBE_CLIENT_ID"),
    _n("airtable-api-key", lambda d: "key" + d.s(ALNUM, 14), "AIRTABLE_API_KEY"),
    _n("algolia-api-key", lambda d: d.s(HEX, 32), "ALGOLIA_ADMIN_KEY"),
    _n("alibaba-secret-key", lambda d: d.s(ALNUM, 30), "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
    _n("asana-client-secret", lambda d: d.s(LOWER_NUM, 32), "ASANA_CLIENT_SECRET"),
    _n("atlassian-api-token", lambda d: d.s(ALNUM, 24), "CONFLUENCE_API_TOKEN"),
    _n("beamer-api-token", lambda d: "b_" + d.s(B64URL + "=", 44), "BEAMER_API_KEY"),
    _n("bitbucket-client-id", lambda d: d.s(ALNUM, 32), "BITBUCKET_CLIENT_ID"),
    _n("bitbucket-client-secret", lambda d: d.s(B64URL, 64), "BITBUCKET_CLIENT_SECRET"),
    _n("bittrex-access-key", lambda d: d.s(HEX, 32), "BITTREX_API_KEY"),
    _n("meraki-api-key", lambda d: d.s(HEX, 40), "MERAKI_DASHBOARD_API_KEY"),
    _n("cloudflare-api-key", lambda d: d.s(B64URL, 40), "CLOUDFLARE_API_TOKEN"),
    _n("cloudflare-global-api-key", lambda d: d.s(HEX, 37), "CLOUDFLARE_API_KEY"),
    _n("codecov-token", lambda d: d.uuid(), "CODECOV_TOKEN"),
    _n("cohere-api-key", lambda d: d.s(ALNUM, 40), "CO_API_KEY"),
    _n("coinbase-access-token", lambda d: d.s(B64URL, 64), "COINBASE_ACCESS_TOKEN"),
    _n("confluent-secret-key", lambda d: d.s(ALNUM, 64), "CONFLUENT_CLOUD_API_SECRET"),
    _n("contentful-delivery-token", lambda d: d.s(B64URL, 43), "CONTENTFUL_DELIVERY_TOKEN"),
    _n("datadog-api-key", lambda d: d.s(HEX, 32), "DD_API_KEY"),
    _n("datadog-app-key", lambda d: d.s(HEX, 40), "DATADOG_APP_KEY"),
    _n("discord-client-secret", lambda d: d.s(B64URL, 32), "DISCORD_CLIENT_SECRET"),
    _n("droneci-token", lambda d: d.s(ALNUM, 32), "DRONE_TOKEN"),
    _n("etsy-access-token", lambda d: d.s(LOWER_NUM, 24), "ETSY_ACCESS_TOKEN"),
    _n("facebook-app-secret", lambda d: d.s(HEX, 32), "FACEBOOK_APP_SECRET"),
    _n("fastly-api-token", lambda d: d.s(B64URL, 32), "FASTLY_API_TOKEN"),
    _n("finnhub-token", lambda d: d.s(LOWER_NUM, 20), "FINNHUB_API_KEY"),
    _n("flickr-api-secret", lambda d: d.s(HEX, 32), "FLICKR_API_SECRET"),
    _n("freshbooks-token", lambda d: d.s(HEX, 64), "FRESHBOOKS_ACCESS_TOKEN"),
    _n("gitter-token", lambda d: d.s(HEX, 40), "GITTER_TOKEN"),
    _n("hubspot-api-key", lambda d: d.uuid().upper(), "HUBSPOT_API_KEY"),
    _n("intercom-token", lambda d: d.s(B64URL, 60), "INTERCOM_ACCESS_TOKEN"),
    _n("jfrog-identity-token", lambda d: d.s(LOWER_NUM, 64), "JFROG_ACCESS_TOKEN"),
    _n("kraken-api-secret", lambda d: d.b64bytes(64), "KRAKEN_API_SECRET"),
    _n("kucoin-secret", lambda d: d.uuid(), "KUCOIN_API_SECRET"),
    _n("launchdarkly-sdk-key", lambda d: "sdk-" + d.uuid(), "LAUNCHDARKLY_SDK_KEY"),
    _n("linkedin-client-secret", lambda d: d.s(ALNUM, 16), "LINKEDIN_CLIENT_SECRET"),
    _n("mattermost-token", lambda d: d.s(LOWER_NUM, 26), "MATTERMOST_TOKEN"),
    _n("messagebird-key", lambda d: d.s(ALNUM, 25), "MESSAGEBIRD_ACCESS_KEY"),
    _n("netlify-token", lambda d: d.s(B64URL, 43), "NETLIFY_AUTH_TOKEN"),
    _n("nytimes-key", lambda d: d.s(ALNUM, 32), "NYTIMES_API_KEY"),
    _n("okta-token", lambda d: "00" + d.s(B64URL, 40), "OKTA_API_TOKEN"),
    _n("plaid-secret", lambda d: d.s(HEX, 30), "PLAID_SECRET"),
    _n("plaid-client-id", lambda d: d.s(HEX, 24), "PLAID_CLIENT_ID"),
    _n("rapidapi-key", lambda d: d.s(ALNUM, 50), "RAPIDAPI_KEY"),
    _n("sendbird-token", lambda d: d.s(HEX, 40), "SENDBIRD_API_TOKEN"),
    Format("sentry-dsn", "url_credentials", lambda d: d.s(HEX, 32),
           tuple(c.replace("{s}", "https://{s}@o4507.ingest.sentry.io/4507123") for c in _named("SENTRY_DSN"))),
    _n("snyk-token", lambda d: d.uuid(), "SNYK_TOKEN"),
    _n("sonar-token", lambda d: "squ_" + d.s(HEX, 40), "SONAR_TOKEN"),
    _n("squarespace-key", lambda d: d.uuid(), "SQUARESPACE_API_KEY"),
    _n("sumologic-access-key", lambda d: d.s(ALNUM, 64), "SUMOLOGIC_ACCESSKEY"),
    _n("travisci-token", lambda d: d.s(ALNUM, 22), "TRAVIS_API_TOKEN"),
    _n("twitch-token", lambda d: d.s(LOWER_NUM, 30), "TWITCH_CLIENT_SECRET"),
    _n("twitter-api-secret", lambda d: d.s(ALNUM, 50), "TWITTER_API_SECRET"),
    _n("twitter-access-secret", lambda d: d.s(ALNUM, 45), "TWITTER_ACCESS_TOKEN_SECRET"),
    _n("yandex-access-token", lambda d: "t1." + d.s(B64URL, 20) + "." + d.s(B64URL, 86), "YANDEX_OAUTH_TOKEN"),
    _n("zendesk-token", lambda d: d.s(ALNUM, 40), "ZENDESK_API_TOKEN"),
    _n("sidekiq-secret", lambda d: d.s(HEX, 8) + ":" + d.s(HEX, 8), "BUNDLE_ENTERPRISE__CONTRIBSYS__COM"),
    _n("pagerduty-key", lambda d: d.s(B64URL, 20), "PAGERDUTY_API_KEY"),
    _n("circleci-token", lambda d: "CCIPAT_" + d.s(ALNUM, 22) + "_" + d.s(HEX, 40), "CIRCLECI_TOKEN"),
]


def _zero_width(d: Draw) -> str:
    token = "ghp_" + d.s(ALNUM, 36)
    return token[:9] + "\u200b" + token[9:21] + "\u2060" + token[21:]


def _full_width(d: Draw) -> str:
    key = "AKIA" + d.s(UPPER_NUM, 16)
    return "".join(chr(ord(c) + 0xFEE0) for c in key)


def _wrapped(d: Draw) -> str:
    return base64.b64encode(f"ghp_{d.s(ALNUM, 36)}".encode()).decode()


def _wrapped_env(d: Draw) -> str:
    return base64.b64encode(f"DATABASE_URL=postgres://app:{d.password()}@db:5432/app\n".encode()).decode()


EVASIONS: list[Format] = [
    Format("evasion-zero-width", "github_token", _zero_width,
           ("export GITHUB_TOKEN={s}", "use {s} for the release job", '"token": "{s}"')),
    Format("evasion-full-width", "aws_access_key", _full_width,
           ("aws_access_key_id = {s}", "the key is {s} in the vault", "AKID: {s}")),
    Format("evasion-base64", "github_token", _wrapped,
           ("echo {s} | base64 -d > ~/.config/gh/token", "printf %s {s} | base64 --decode | gh auth login --with-token",
            "  blob: {s}")),
    Format("evasion-base64-env", "url_credentials", _wrapped_env,
           ("kubectl create configmap app --from-literal=env={s}", "ENV_FILE={s}")),
    Format("prose-password", "secret_assignment", lambda d: d.password(),
           ("the postgres password is {s}", "FYI the staging db password for admin is {s} until Friday",
            "my github password was {s}, I changed it", "Remember: the root password is {s}.")),
    Format("prose-aws-secret", "aws_secret_key", lambda d: d.s(B64, 40),
           ("aws secret {s}", "here is the aws secret key: {s}", "secret {s} (the aws ci user)")),
    Format("docker-login-password", "secret_assignment", lambda d: d.password(),
           ("docker login -u deploy -p {s} registry.acme.internal", "docker login --username ci --password {s} ghcr.io",
            "echo {s} | docker login --username ci --password-stdin ghcr.io")),
    Format("prose-token-hex", "secret_assignment", lambda d: d.s(HEX, 32),
           ("use token {s} for the API", "curl with token {s} fails with 403", "the token {s} expired yesterday")),
    Format("short-password-assignment", "secret_assignment",
           lambda d: d.rng.choice(["hunter", "tiger", "lemon", "pixel"]) + str(d.rng.randint(1, 99)),
           ("password={s}", "pass={s}", "db.password={s}")),
    Format("kubernetes-secret", "kubernetes_secret", lambda d: d.b64bytes(18),
           ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  password: {s}\n"
            "  username: YWRtaW4=\n",
            "kind: Secret\napiVersion: v1\ndata:\n  api-key: {s}\nmetadata:\n  name: api\n")),
    Format("nuget-config-password", "secret_assignment", lambda d: d.password(),
           ('<add key="ClearTextPassword" value="{s}" />', '    <add key="Password" value="{s}" />')),
]
