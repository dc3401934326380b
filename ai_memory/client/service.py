"""The daemon at login: install, remove and inspect its systemd user unit or launchd agent.

``install`` writes the file (only when its text changes, atomically) and asks the service
manager to enable and start it; ``uninstall`` stops, disables and removes it, leaving nothing
behind; ``status`` says what is installed, enabled and running. Where the manager cannot be
reached (no user session bus in a container, say) the file is still put in place and the
report says what to run; nothing here raises for that.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ai_memory.core.errors import ConfigError, StorageError
from ai_memory.core.service_unit import LAUNCHD_LABEL, SYSTEMD_UNIT, launchd_plist, systemd_unit

MANAGER_TIMEOUT_S = 15.0


@dataclass
class ServiceReport:
    manager: str  # "systemd" or "launchd"
    path: str
    installed: bool
    changed: bool = False
    enabled: bool | None = None  # None: the manager could not be asked
    active: bool | None = None
    linger: bool | None = None  # systemd: does the user manager run without a login session?
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class ServiceTarget:
    platform: str  # sys.platform
    home: Path
    config_home: Path  # $XDG_CONFIG_HOME or ~/.config
    launcher: list[str]  # how to run the ai-memory command
    data_dir: Path

    @property
    def manager(self) -> str:
        if self.platform.startswith("linux"):
            return "systemd"
        if self.platform == "darwin":
            return "launchd"
        raise ConfigError(f"no service manager for {self.platform}", detail="systemd (Linux) and launchd (macOS) only")

    @property
    def path(self) -> Path:
        if self.manager == "systemd":
            return self.config_home / "systemd" / "user" / SYSTEMD_UNIT
        return self.home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"

    def text(self) -> str:
        render = systemd_unit if self.manager == "systemd" else launchd_plist
        return render(self.launcher, str(self.data_dir))


def _run(*argv: str) -> subprocess.CompletedProcess[str] | None:
    """A service manager command; None when it is not installed or does not answer."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=MANAGER_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _systemctl(*args: str) -> subprocess.CompletedProcess[str] | None:
    done = _run("systemctl", "--user", *args)
    if done is None or "Failed to connect to bus" in done.stderr or "No medium found" in done.stderr:
        return None
    return done


def _answer(done: subprocess.CompletedProcess[str] | None) -> str | None:
    """systemctl's one-word answer (enabled, disabled, active, ...), None when it gave none."""
    word = done.stdout.strip() if done is not None else ""
    return word or None


def _launchctl(*args: str) -> subprocess.CompletedProcess[str] | None:
    return _run("launchctl", *args)


def _write(path: Path, text: str) -> bool:
    """Write ``text`` atomically unless the file holds it already; True when it changed."""
    try:
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}", detail=str(exc)) from exc
    return True


def _user() -> str:
    return pwd.getpwuid(os.getuid()).pw_name


def _linger() -> bool | None:
    done = _run("loginctl", "show-user", _user(), "--property=Linger", "--value")
    if done is None or done.returncode != 0:
        return None
    return done.stdout.strip() == "yes"


def _remove_empty_parents(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and its parents below ``stop`` while they are empty (what install made)."""
    while directory != stop and stop in directory.parents:
        try:
            directory.rmdir()
        except OSError:  # not empty, or not ours to remove
            return
        directory = directory.parent


def status(target: ServiceTarget) -> ServiceReport:
    report = ServiceReport(target.manager, str(target.path), target.path.is_file())
    if target.manager == "systemd":
        enabled, active = _answer(_systemctl("is-enabled", SYSTEMD_UNIT)), _answer(_systemctl("is-active", SYSTEMD_UNIT))
        report.enabled = (enabled == "enabled") if enabled else (False if not report.installed else None)
        report.active = (active == "active") if active else (False if not report.installed else None)
        report.linger = _linger()
        if active is None and report.installed:
            report.notes.append("systemctl --user cannot reach a user manager here (no session bus)")
    else:
        loaded = _launchctl("print", f"gui/{os.getuid()}/{LAUNCHD_LABEL}")
        report.enabled = report.active = None if loaded is None else loaded.returncode == 0
    return report


def install(target: ServiceTarget) -> ServiceReport:
    changed = _write(target.path, target.text())
    reached = True
    if target.manager == "systemd":
        reached = _systemctl("daemon-reload") is not None
        if reached:
            _systemctl("enable", "--now", SYSTEMD_UNIT)
        if changed and reached:
            _systemctl("restart", SYSTEMD_UNIT)  # a running daemon picks up the new unit
    else:
        domain = f"gui/{os.getuid()}"
        _launchctl("bootout", f"{domain}/{LAUNCHD_LABEL}")  # reload: bootstrap refuses a loaded label
        _launchctl("bootstrap", domain, str(target.path))
    report = status(target)
    report.changed = changed
    if target.manager == "systemd" and not reached:
        report.notes.append(f"in a login session, run: systemctl --user enable --now {SYSTEMD_UNIT}")
    if report.linger is False:
        report.notes.append(f"the daemon stops when you log out; to keep it running, run: loginctl enable-linger {_user()}")
    return report


def uninstall(target: ServiceTarget) -> ServiceReport:
    if target.manager == "systemd":
        _systemctl("disable", "--now", SYSTEMD_UNIT)
    else:
        _launchctl("bootout", f"gui/{os.getuid()}/{LAUNCHD_LABEL}")
    existed = target.path.is_file()
    try:
        target.path.unlink(missing_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot remove {target.path}", detail=str(exc)) from exc
    _remove_empty_parents(target.path.parent, stop=target.home if target.manager == "launchd" else target.config_home)
    if target.manager == "systemd":
        _systemctl("daemon-reload")
    report = status(target)
    report.changed = existed
    return report
