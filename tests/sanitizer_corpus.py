"""Corpora for the sanitizer tests: real-format secrets in realistic context, and clean stdlib code.

Both are deterministic. `secret_samples()` draws every secret from a seeded `random.Random` in the
vendor's real format and records the exact secret substring; `clean_chunks()` cuts the running
interpreter's standard library into 30-line chunks (sorted paths, every chunk) - real source code that
holds no secrets. Test suites are skipped: they hold deliberate fake keys.
"""

from __future__ import annotations

import base64
import json
import string
import sysconfig
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sanitizer_checklist import CHECKLIST, ISSUE_39
from sanitizer_formats import (
    ALNUM, B64, B64URL, EVASIONS, HEX, NAMED, PREFIXED, UPPER_NUM, Draw, Format,
)

SKIPPED_DIRS = {"test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages"}
CHUNK_LINES = 30


@dataclass(frozen=True)
class SecretSample:
    """One secret in context: what the sanitizer must find and call `kind`."""

    kind: str
    secret: str  # the exact substring that must not survive
    text: str
    context: str  # which template, for failure messages


def _b64url_json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


# Each kind: a secret factory and templates; {s} is the secret.
_Factory = Callable[[Draw], str]
KINDS: dict[str, tuple[list[_Factory], list[str]]] = {
    "aws_access_key": (
        [lambda d: d.rng.choice(["AKIA", "ASIA", "AKIA", "AGPA", "AIDA", "AROA"]) + d.s(UPPER_NUM, 16)],
        ["aws_access_key_id = {s}", "export AWS_ACCESS_KEY_ID={s}",
         '{{"AccessKeyId": "{s}", "Expiration": "2025-01-01"}}',
         "2024-05-01 12:00:01 INFO botocore.credentials using key {s} from env", '"UserId": "{s}",',
         "aws sts get-caller-identity  # key {s}"]),
    "aws_secret_key": (
        [lambda d: d.s(B64, 40)],
        ["aws_secret_access_key = {s}", "export AWS_SECRET_ACCESS_KEY={s}", '  "SecretAccessKey": "{s}",',
         "aws configure set aws_secret_access_key {s}", "  aws_secret_access_key: {s}",
         "AWS_SECRET_ACCESS_KEY: '{s}'"]),
    "github_token": (
        [lambda d: d.rng.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + d.s(ALNUM, 36),
         lambda d: "github_pat_" + d.s(ALNUM, 22) + "_" + d.s(ALNUM, 59)],
        ["git clone https://x-access-token:{s}@github.com/acme/api.git", "export GITHUB_TOKEN={s}",
         'curl -H "Authorization: token {s}" https://api.github.com/user', "echo {s} | gh auth login --with-token",
         "    token: {s}", 'g = Github("{s}")', "remote: https://{s}@github.com/acme/web.git"]),
    "gitlab_token": (
        [lambda d: d.rng.choice(["glpat-", "glpat-", "gldt-", "glrt-", "glptt-"]) + d.s(B64URL, 20),
         lambda d: "GR1348941" + d.s(B64URL, 20)],
        ["git remote set-url origin https://oauth2:{s}@gitlab.com/acme/infra.git",
         'curl --header "PRIVATE-TOKEN: {s}" https://gitlab.example.com/api/v4/projects',
         "export GITLAB_TOKEN={s}", "gitlab-runner register --url https://gitlab.com --token {s}",
         '  "token": "{s}"']),
    "bitbucket_token": (
        [lambda d: "ATBB" + d.s(ALNUM, 24) + d.s("0123456789ABCDEF", 8)],
        ["BITBUCKET_APP_PASSWORD={s}", "git clone https://jdoe:{s}@bitbucket.org/acme/site.git",
         "curl -u jdoe:{s} https://api.bitbucket.org/2.0/repositories/acme", "bitbucket:\n  app_password: {s}"]),
    "atlassian_token": (
        [lambda d: "ATATT3xFfGF0" + d.s(B64URL, 170) + "=" + d.s("0123456789ABCDEF", 8)],
        ["JIRA_API_TOKEN={s}", "curl -u jdoe@example.com:{s} https://acme.atlassian.net/rest/api/3/myself",
         'jira = JIRA(server, basic_auth=("jdoe@example.com", "{s}"))']),
    "slack_token": (
        [lambda d: f"xoxb-{d.digits(12)}-{d.digits(13)}-{d.s(ALNUM, 24)}",
         lambda d: f"xoxp-{d.digits(12)}-{d.digits(12)}-{d.digits(13)}-{d.s(HEX, 32)}",
         lambda d: f"xapp-1-A{d.s(UPPER_NUM, 10)}-{d.digits(13)}-{d.s(HEX, 64)}",
         lambda d: f"xoxe.xoxp-1-{d.s(ALNUM, 140)}"],
        ["SLACK_BOT_TOKEN={s}", 'client = WebClient(token="{s}")',
         'curl -H "Authorization: Bearer {s}" https://slack.com/api/auth.test', "slack:\n  token: '{s}'"]),
    "slack_webhook": (
        [lambda d: f"T{d.s(UPPER_NUM, 8)}/B{d.s(UPPER_NUM, 10)}/{d.s(ALNUM, 24)}"],
        ["SLACK_WEBHOOK_URL=https://hooks.slack.com/services/{s}",
         "curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deployed\"}}' "
         "https://hooks.slack.com/services/{s}",
         '{{"webhook_url": "https://hooks.slack.com/services/{s}"}}']),
    "stripe_key": (
        [lambda d: d.rng.choice(["sk_live_", "sk_test_", "rk_live_"]) + d.s(ALNUM, d.rng.choice([24, 99])),
         lambda d: "whsec_" + d.s(ALNUM, 32)],
        ["STRIPE_SECRET_KEY={s}", 'stripe.api_key = "{s}"', "curl https://api.stripe.com/v1/charges -u {s}:",
         "const stripe = require('stripe')('{s}');", "stripe listen --forward-to localhost:4242 # secret {s}"]),
    "openai_key": (
        [lambda d: "sk-" + d.s(ALNUM, 20) + "T3BlbkFJ" + d.s(ALNUM, 20),
         lambda d: "sk-proj-" + d.s(B64URL, 74) + "T3BlbkFJ" + d.s(B64URL, 74),
         lambda d: "sk-svcacct-" + d.s(B64URL, 74) + "T3BlbkFJ" + d.s(B64URL, 74)],
        ["OPENAI_API_KEY={s}", 'openai.api_key = "{s}"', 'client = OpenAI(api_key="{s}")',
         "curl https://api.openai.com/v1/models -H 'Authorization: Bearer {s}'", '{{"openai": {{"key": "{s}"}}}}']),
    "anthropic_key": (
        [lambda d: "sk-ant-api03-" + d.s(B64URL, 93) + "AA", lambda d: "sk-ant-admin01-" + d.s(B64URL, 93) + "AA"],
        ["ANTHROPIC_API_KEY={s}", "curl https://api.anthropic.com/v1/messages -H 'x-api-key: {s}'",
         'client = anthropic.Anthropic(api_key="{s}")', "export ANTHROPIC_API_KEY='{s}'"]),
    "google_api_key": (
        [lambda d: "AIza" + d.s(B64URL, 35)],
        ["https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key={s}", "GOOGLE_API_KEY={s}",
         '"apiKey": "{s}",', 'genai.configure(api_key="{s}")', "const firebaseConfig = {{ apiKey: '{s}' }};"]),
    "google_oauth_secret": (
        [lambda d: "GOCSPX-" + d.s(B64URL, 28)],
        ['{{"installed":{{"client_id":"1234-abc.apps.googleusercontent.com","client_secret":"{s}"}}}}',
         "GOOGLE_CLIENT_SECRET={s}", "flow = Flow.from_client_config(cfg)  # secret {s}"]),
    "google_oauth_token": (
        [lambda d: "ya29.a0" + d.s(B64URL, 150), lambda d: "1//0" + d.s(B64URL, 100)],
        ['{{"token": "{s}", "scopes": ["drive"]}}', "Authorization: Bearer {s}", "refresh_token={s}"]),
    "jwt": (
        [lambda d: _b64url_json({"alg": d.rng.choice(["HS256", "RS256"]), "typ": "JWT"}) + "."
         + _b64url_json({"sub": d.uuid(), "name": "Jane Doe", "iat": d.rng.randint(1_600_000_000, 1_800_000_000)})
         + "." + d.s(B64URL, 43)],
        ["Authorization: Bearer {s}", "Set-Cookie: session={s}; Path=/; HttpOnly",
         "GET /callback?id_token={s} HTTP/1.1",
         '{{"id_token": "{s}", "expires_in": 3600}}', "WARN auth: expired token {s} for user 42"]),
    "auth_header": (
        [lambda d: d.s(ALNUM, d.rng.randint(32, 64)), lambda d: d.s(ALNUM, 8) + "." + d.s(ALNUM + "-_", 40)],
        ['curl -H "Authorization: Bearer {s}" https://api.example.com/v1/items',
         "GET /v2/orders HTTP/1.1\nHost: api.example.com\nAuthorization: Bearer {s}\nAccept: */*",
         'headers = {{"Authorization": "Bearer {s}", "Accept": "application/json"}}',
         "sending request with Bearer {s} to upstream", "Authorization: Token {s}"]),
    "url_credentials": (
        [lambda d: d.password()],
        ["DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
         "mongodb+srv://admin:{s}@cluster0.ab1cd.mongodb.net/prod", "REDIS_URL=redis://:{s}@cache:6379/0",
         "amqp://guest:{s}@rabbitmq:5672/", "https://deploy:{s}@git.example.com/acme/ops.git",
         'engine = create_engine("postgresql+psycopg2://report:{s}@10.0.0.5/metrics")',
         "mysql://root:{s}@localhost/shop"]),
    "npm_token": (
        [lambda d: "npm_" + d.s(ALNUM, 36)],
        ["//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}", "npm config set //registry.npmjs.org/:_authToken {s}",
         "echo '//registry.npmjs.org/:_authToken={s}' > ~/.npmrc"]),
    "pypi_token": (
        [lambda d: "pypi-AgEIcHlwaS5vcmc" + d.s(B64URL, d.rng.randint(70, 150))],
        ["[pypi]\nusername = __token__\npassword = {s}", "TWINE_PASSWORD={s}", "uv publish --token {s}",
         "poetry config pypi-token.pypi {s}"]),
    "twilio": (
        [lambda d: "SK" + d.s(HEX, 32), lambda d: "AC" + d.s(HEX, 32)],
        ["TWILIO_API_KEY={s}", 'client = Client("{s}", os.environ["TWILIO_AUTH"])', '"sid": "{s}",',
         "twilio api:core:messages:list --account-sid {s}"]),
    "sendgrid_key": (
        [lambda d: "SG." + d.s(B64URL, 22) + "." + d.s(B64URL, 43)],
        ["SENDGRID_API_KEY={s}", 'sg = SendGridAPIClient("{s}")',
         "curl https://api.sendgrid.com/v3/mail/send -H 'Authorization: Bearer {s}'"]),
    "mailgun_key": (
        [lambda d: "key-" + d.s(HEX, 32)],
        ["MAILGUN_API_KEY={s}", "curl -s --user 'api:{s}' https://api.mailgun.net/v3/mg.example.com/messages",
         'requests.post(url, auth=("api", "{s}"))']),
    "azure_connection_string": (
        [lambda d: d.b64bytes(64), lambda d: d.b64bytes(32)],
        ["DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={s};EndpointSuffix=core.windows.net",
         '"AzureWebJobsStorage": "DefaultEndpointsProtocol=https;AccountName=fn;AccountKey={s}",',
         "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={s}",
         "AZURE_STORAGE_CONNECTION_STRING='DefaultEndpointsProtocol=https;AccountName=x;AccountKey={s}'"]),
    "azure_sas_token": (
        [lambda d: urllib.parse.quote(d.b64bytes(32), safe="")],
        ["https://acme.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=co&sp=rl"
         "&se=2025-01-01T00:00:00Z&spr=https&sig={s}",
         "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sp=r&sig={s}",
         "azcopy copy 'https://acme.blob.core.windows.net/c/f.txt?sp=r&st=2024-01-01&sv=2022-11-02&sr=b&sig={s}' ."]),
    "heroku_key": (
        [lambda d: d.uuid(), lambda d: "HRKU-AA" + d.s(B64URL, 58)],
        ["HEROKU_API_KEY={s}", 'heroku_api_key: "{s}"', "export HEROKU_API_KEY={s}", '{{"HEROKU_API_KEY": "{s}"}}']),
    "discord_token": (
        [lambda d: base64.b64encode(d.digits(18).encode()).decode().rstrip("=") + "." + d.s(B64URL, 6) + "."
         + d.s(B64URL, 38)],
        ["DISCORD_TOKEN={s}", 'client.run("{s}")', "bot.run('{s}')", "discord:\n  bot_token: {s}"]),
    "discord_webhook": (
        [lambda d: d.s(B64URL, 68)],
        ["DISCORD_WEBHOOK=https://discord.com/api/webhooks/{id}/{s}",
         'requests.post("https://discordapp.com/api/webhooks/{id}/{s}", json={{"content": "hi"}})']),
    "telegram_bot_token": (
        [lambda d: d.digits(d.rng.choice([8, 9, 10])) + ":AA" + d.s(B64URL, 33)],
        ["TELEGRAM_BOT_TOKEN={s}", "curl https://api.telegram.org/bot{s}/getMe", 'bot = telebot.TeleBot("{s}")',
         "updater = Updater('{s}')"]),
    "huggingface_token": (
        [lambda d: "hf_" + d.s(string.ascii_letters, 34)],
        ["HF_TOKEN={s}", "huggingface-cli login --token {s}", 'login(token="{s}")']),
    "secret_assignment": (
        [lambda d: d.password()],
        ['DB_PASSWORD = "{s}"', 'conn = psycopg2.connect(host="db", user="app", password="{s}")',
         "self.api_secret = '{s}'", 'const apiKey = "{s}";', "  clientSecret: '{s}',", 'password := "{s}"',
         ':password => "{s}",', "'password' => '{s}',", "DB_PASSWORD={s}", "export API_TOKEN={s}", "  password: {s}",
         '  secret_key: "{s}"', '{{"client_secret": "{s}", "grant_type": "client_credentials"}}', 'auth_token = "{s}"',
         "password = {s}", "spring.datasource.password={s}", "docker run -e POSTGRES_PASSWORD={s} postgres:16",
         "psql --password {s} -h db", "mycli --api-key={s}", "<password>{s}</password>", "mysql -u root -p{s} shop",
         "PGPASSWORD={s} psql -h db -U app", '    "access_key": "{s}",', "  MYSQL_ROOT_PASSWORD: {s}",
         '$env:API_KEY = "{s}"', "os.environ['SMTP_PASSWORD'] = '{s}'", 'set "DB_PASS={s}"']),
    "high_entropy_secret": (
        [lambda d: d.s(HEX, 64), lambda d: d.b64bytes(32), lambda d: d.s(ALNUM, 40)],
        ['KEY = "{s}"', '{{"key": "{s}"}}', "hmac_key = '{s}'", "  webhook_key: {s}", 'auth = "{s}"',
         "SESSION_KEY={s}"]),
}

# Where a secret turns up: a prompt, a fenced block, a CRLF terminal, a hook payload dumped as JSON text.
WRAPPERS: list[tuple[str, Callable[[str], str]]] = [
    ("bare", lambda t: t),
    ("fence", lambda t: f"```bash\n{t}\n```"),
    ("prompt", lambda t: f"Here is the config I used:\n{t}\nWhy does it fail?"),
    ("crlf", lambda t: f"$ {t}\r\nok\r\n"),
    ("json", lambda t: json.dumps({"tool_response": {"stdout": t, "exit_code": 0}}, ensure_ascii=False)),
    ("quote", lambda t: f"> {t}."),
]

_PEM_KINDS = ["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
              "DSA PRIVATE KEY"]


def _pem_samples(d: Draw) -> Iterator[SecretSample]:
    for i, label in enumerate(_PEM_KINDS * 2):
        body = "\n".join(d.s(B64, 64) for _ in range(d.rng.randint(4, 25))) + "\n" + d.s(B64, 20) + "=="
        block = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
        style, where = i % 5, f"private_key/{label}#{i % 5}"
        if style == 0:
            yield SecretSample("private_key", body, f"$ cat ~/.ssh/id_rsa\n{block}\n$ ", where)
        elif style == 1:  # a service-account JSON: the newlines are escaped
            escaped = json.dumps(block + "\n")[1:-1]
            yield SecretSample("private_key", json.dumps(body)[1:-1],
                               f'{{"type": "service_account", "private_key": "{escaped}", "client_email": "x@y"}}',
                               where)
        elif style == 2:
            yield SecretSample("private_key", body, f'KEY = """{block}"""\n', where)
        elif style == 3:  # cut by an upstream truncation: no END line
            yield SecretSample("private_key", body, f"tls:\n  key: |\n    {block.split('-----END')[0]}", where)
        else:
            yield SecretSample("private_key", body, f"ssh_key={block}\nnext=1", where)
    armor = "\n".join(d.s(B64, 64) for _ in range(12))
    yield SecretSample("private_key", armor,
                       f"-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n{armor}\n=Ab1c\n"
                       "-----END PGP PRIVATE KEY BLOCK-----", "private_key/pgp#0")


FORMATS: list[Format] = PREFIXED + NAMED + EVASIONS + CHECKLIST + ISSUE_39


def format_ids() -> list[str]:
    """Every credential format of the corpus: each factory of KINDS, each key block, each Format."""
    first = [f"{kind}/{i}" for kind, (factories, _) in KINDS.items() for i in range(len(factories))]
    blocks = [f"private_key/{label}" for label in _PEM_KINDS] + ["private_key/pgp"]
    return first + blocks + [f.id for f in FORMATS]


def secret_samples(seed: int = 20251130, per_template: int = 2) -> list[SecretSample]:
    """Every kind, several formats each, each template filled with fresh secrets and set in a context
    (``format#template/wrapper``)."""
    d = Draw(seed)
    raw = list(_pem_samples(d))
    for kind, (factories, templates) in KINDS.items():
        for t, template in enumerate(templates):
            for n in range(per_template):
                which = (t + n) % len(factories)
                secret = factories[which](d)
                raw.append(SecretSample(kind, secret, template.format(s=secret, id=d.digits(18)), f"{kind}/{which}#{t}"))
    for fmt in FORMATS:
        for t, template in enumerate(fmt.contexts):
            secret = fmt.make(d)
            raw.append(SecretSample(fmt.kind, secret, template.replace("{s}", secret), f"{fmt.id}#{t}"))
    samples = []
    for i, sample in enumerate(raw):
        name, wrap = WRAPPERS[i % len(WRAPPERS)]
        secret = json.dumps(sample.secret)[1:-1] if name == "json" else sample.secret
        samples.append(SecretSample(sample.kind, secret, wrap(sample.text), f"{sample.context}/{name}"))
    return samples


def format_of(sample: SecretSample) -> str:
    """The id (of ``format_ids``) of the format a sample was drawn in."""
    return sample.context.split("#")[0]


def leaked(secret: str, output: str) -> bool:
    """True if the secret, or a 12-character piece of its start, middle or end, survives in output."""
    if secret in output:
        return True
    n = min(12, len(secret))
    mid = (len(secret) - n) // 2
    return any(piece in output for piece in (secret[:n], secret[mid:mid + n], secret[-n:]))


def stdlib_files() -> list[Path]:
    """The standard library's own .py files, sorted, without test suites and third-party packages."""
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if not SKIPPED_DIRS & set(p.relative_to(root).parts[:-1]))


def clean_chunks(stride: int = 1) -> list[tuple[str, str]]:
    """(where, text) for every `stride`-th chunk of 30 lines of the standard library."""
    root = Path(sysconfig.get_paths()["stdlib"])
    chunks: list[tuple[str, str]] = []
    index = 0
    for path in stdlib_files():
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        for start in range(0, len(lines), CHUNK_LINES):
            if index % stride == 0:
                chunks.append((f"{path.relative_to(root)}:{start + 1}", "".join(lines[start:start + CHUNK_LINES])))
            index += 1
    return chunks


def flagged_lines(scan: Callable[[str], list], lines: list[str], chunk: int = 100) -> list[tuple[int, str]]:
    """(line index, kind) of each line a find touches, the lines scanned ``chunk`` at a time (as a
    tool's output comes)."""
    out = []
    for start in range(0, len(lines), chunk):
        part = lines[start:start + chunk]
        offsets, pos = [], 0
        for line in part:
            offsets.append(pos)
            pos += len(line)
        for s, e, kind, _ in scan("".join(part)):
            first = next(i for i in range(len(part) - 1, -1, -1) if offsets[i] <= s)
            last = next(i for i in range(len(part) - 1, -1, -1) if offsets[i] < max(e, s + 1))
            out += [(start + i, kind) for i in range(first, last + 1)]
    return sorted(set(out))
