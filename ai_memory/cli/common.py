"""What every verb shares: resolving the config from flags, and a client for the daemon."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ai_memory.config import Config, load_config

if TYPE_CHECKING:
    from ai_memory.client.http import DaemonClient
    from ai_memory.client.resilient import ClientSettings


def port_number(text: str) -> int:
    """A ``--port`` argument: a TCP port from 1 to 65535 (argparse refuses anything else with
    one line and exit 2; ``server.port = 0`` in the config asks the system for a free port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def config_from(args: argparse.Namespace, **overrides: Any) -> Config:
    """The config for this run: --data-dir and --url on top of file and environment."""
    extra = dict(overrides)
    if getattr(args, "url", None):
        extra["client.url"] = args.url
    return load_config(getattr(args, "data_dir", None), extra)


def client_from(config: Config) -> "DaemonClient":
    from ai_memory.client.http import DaemonClient  # http.client is slow to import: not on the hook path

    token = None
    if config.token_path.exists():
        token = config.token_path.read_text().strip()
    return DaemonClient(config.url, token, config.client.timeout_s)


def settings_from(config: Config) -> "ClientSettings":
    """What the client layer needs from the config: URL, token, timeouts, breaker, state dir."""
    from ai_memory.client.resilient import ClientSettings

    token = config.token_path.read_text().strip() if config.token_path.exists() else None
    return ClientSettings.from_section(config.client, config.url, token, config.data_dir)


def print_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``; ``many`` where the plural is not the word plus s."""
    return f"{count} {word if count == 1 else many or word + 's'}"
