"""The files that start the daemon at login: a systemd user unit (Linux), a launchd agent (macOS).

Pure text: the ``service`` verb writes them and asks systemctl or launchctl to load them.
Both run ``<venv>/bin/ai-memory serve --data-dir DIR`` in the foreground and restart it when it
fails (not when it was stopped on purpose), so hooks find a daemon after a crash or a reboot.
"""

from __future__ import annotations

import plistlib

SYSTEMD_UNIT = "ai-memory.service"
LAUNCHD_LABEL = "dev.ai-memory.daemon"


def _systemd_word(value: str) -> str:
    """One ExecStart word: quoted when it holds a space or a quote, with % and $ escaped."""
    escaped = value.replace("%", "%%").replace("$", "$$")
    if any(c in escaped for c in " \t\"'\\"):
        return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return escaped


def serve_argv(launcher: list[str], data_dir: str) -> list[str]:
    return [*launcher, "serve", "--data-dir", data_dir]


def systemd_unit(launcher: list[str], data_dir: str) -> str:
    """``launcher``: how to run the ``ai-memory`` command (its script, or python -m)."""
    command = " ".join(_systemd_word(word) for word in serve_argv(launcher, data_dir))
    return (
        "[Unit]\n"
        f"Description=ai-memory daemon for {data_dir.replace('%', '%%')}\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={command}\n"
        "Restart=on-failure\n"
        "RestartSec=2\n"
        "Environment=HF_HUB_OFFLINE=1\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(launcher: list[str], data_dir: str) -> str:
    logs = data_dir.rstrip("/") + "/logs"
    doc = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": serve_argv(launcher, data_dir),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},  # restart after a failure, not after a clean stop
        "EnvironmentVariables": {"HF_HUB_OFFLINE": "1"},
        "StandardOutPath": f"{logs}/launchd.out.log",
        "StandardErrorPath": f"{logs}/launchd.err.log",
    }
    return plistlib.dumps(doc).decode()
