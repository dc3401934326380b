"""install-hooks / uninstall-hooks: merge into real settings files, keep the user's, undo exactly."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_memory.client import agent_settings as settings
from ai_memory.client import hook_files
from ai_memory.client.settings_backup import SettingsBackups, apply_changes
from conftest import REPO, Daemon, run_cli, settings_backups
from wiki_helpers import wait_until

SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "schemas" / "claude-code-settings.schema.json"
URL = "http://127.0.0.1:49374"

USER_CLAUDE: dict[str, Any] = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "~/bin/guard.sh", "timeout": 30}]}],
        "Stop": [{"hooks": [{"type": "http", "url": "https://hooks.example.com/stop", "timeout": 3}]}],
    },
    "statusLine": {"type": "command", "command": "echo hi"},
    "env": {"EDITOR": "vim"},
}
USER_GEMINI: dict[str, Any] = {
    "ui": {"theme": "GitHub"},
    "hooksConfig": {"disabled": ["noisy"]},
    "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [
        {"type": "command", "command": "./lint.sh", "name": "lint", "timeout": 2000}]}]},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def cli(data_dir: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(data_dir, *args, HOME=str(home))


def write_json(path: Path, doc: dict[str, Any], indent: int = 4) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent))
    return path.read_bytes()


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def handlers(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for group in doc["hooks"].get(event, []) for h in group["hooks"]]


def ours(doc: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for h in handlers(doc, event) if settings.is_ours(h, URL)]


def target(agent: str, home: Path, data_dir: Path, scope: str = "user",
           project: Path | None = None, url: str = URL) -> settings.Target:
    return settings.Target(agent, scope, home, project or home, url, data_dir)


def test_claude_install_keeps_every_user_setting(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    write_json(path, USER_CLAUDE)
    result = cli(data_dir, home, "install-hooks", "--agent", "claude")
    assert result.returncode == 0, result.stderr
    doc = load(path)
    for key in ("model", "permissions", "statusLine"):
        assert doc[key] == USER_CLAUDE[key]
    assert doc["hooks"]["PreToolUse"][0] == USER_CLAUDE["hooks"]["PreToolUse"][0]
    assert doc["hooks"]["Stop"][0] == USER_CLAUDE["hooks"]["Stop"][0]
    assert doc["env"] == {"EDITOR": "vim"}  # no token: the hook client reads the data dir's token file
    assert "8765" not in path.read_text() and ":49374" not in path.read_text()  # nor the port
    for event in settings.CLAUDE_EVENTS:
        [handler] = ours(doc, event)
        assert handler["type"] == "command" and handler["timeout"] <= 10
        assert handler["command"] == f"{data_dir}/bin/ai-memory-hook --data-dir {data_dir} claude {event}"
        # capture never makes Claude wait; the briefing, prompt recall and a run's last events do
        # (async ones die with it)
        foreground = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
        assert handler.get("async") is (None if event in foreground else True)
    assert ours(doc, "SessionStart")[0]["timeout"] == 10
    assert not (data_dir / "token").exists()  # installing hooks needs no token
    assert f"updated {path}" in result.stdout


def test_install_twice_is_byte_identical_and_backs_up_once(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    original = write_json(path, USER_CLAUDE)
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    first = path.read_bytes()
    [backup] = settings_backups(path, data_dir)
    assert backup.read_bytes() == original
    second = cli(data_dir, home, "install-hooks", "--agent", "claude")
    assert second.returncode == 0 and f"unchanged {path}" in second.stdout
    assert path.read_bytes() == first and first.startswith(b'{\n    "model": "opus",')  # its indent kept
    assert len(settings_backups(path, data_dir)) == 1


def test_uninstall_restores_the_users_settings(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    write_json(path, USER_CLAUDE)
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    result = cli(data_dir, home, "uninstall-hooks", "--agent", "claude")
    assert result.returncode == 0, result.stderr
    assert load(path) == USER_CLAUDE
    assert list(load(path)) == list(USER_CLAUDE)  # key order too


def test_install_into_a_missing_file_and_uninstall_leaves_nothing(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    assert settings_backups(path, data_dir) == []
    result = cli(data_dir, home, "uninstall-hooks", "--agent", "claude")
    assert result.returncode == 0 and f"removed {path}" in result.stdout, result.stdout
    assert not path.exists() and not (home / ".claude").exists()  # nor the folder install made
    [backup] = settings_backups(path, data_dir)
    assert "hooks" in load(backup) and stat.S_IMODE(backup.stat().st_mode) == 0o600  # every backup is private


def test_an_empty_object_that_was_there_stays_after_uninstall(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "claude").returncode == 0
    assert path.read_text() == "{}\n"


def test_dry_run_writes_nothing_and_prints_a_diff(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    original = write_json(path, USER_CLAUDE)
    result = cli(data_dir, home, "install-hooks", "--agent", "claude", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"--- {path}" in result.stdout and f"+++ {path}" in result.stdout
    stop = f'"command": "{data_dir}/bin/ai-memory-hook --data-dir {data_dir} claude Stop",'
    assert any(line.startswith("+ ") and line.strip("+ ") == stop for line in result.stdout.splitlines())
    assert path.read_bytes() == original and settings_backups(path, data_dir) == []
    assert not data_dir.exists()  # not even the hook client
    # after a real install, an uninstall dry run shows the removal and changes nothing
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    installed = path.read_bytes()
    undo = cli(data_dir, home, "uninstall-hooks", "--agent", "claude", "--dry-run")
    assert any(line.startswith("- ") and line.strip("- ") == stop for line in undo.stdout.splitlines())
    assert path.read_bytes() == installed


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_result_validates_against_the_schema(scope: str, home: Path, data_dir: Path,
                                                    tmp_path: Path) -> None:
    if not SCHEMA.exists():
        pytest.skip(f"Claude Code settings schema not found at {SCHEMA} (it lives in ../shared)")
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    project = tmp_path / "proj"
    base = home if scope == "user" else project
    write_json(base / ".claude" / "settings.json", USER_CLAUDE)
    result = cli(data_dir, home, "install-hooks", "--agent", "claude", "--scope", scope,
                 "--project-dir", str(project))
    assert result.returncode == 0, result.stderr
    for name in ("settings.json", "settings.local.json"):
        if (base / ".claude" / name).exists():
            errors = [e.message for e in validator.iter_errors(load(base / ".claude" / name))]
            assert errors == [], name


def test_project_scope_writes_no_secret_and_moves_an_old_token_out_of_reach(home: Path, data_dir: Path,
                                                                            tmp_path: Path) -> None:
    """An older install wrote the token into .claude/settings.local.json: the new one removes it,
    backs the file up in the data dir (not beside it) and lists it in .git/info/exclude."""
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    shared = project / ".claude" / "settings.json"
    write_json(shared, USER_CLAUDE)
    local = project / ".claude" / "settings.local.json"
    token = "old-install-token-0123456789abcdef"
    write_json(local, {"env": {"AI_MEMORY_TOKEN": token}, "enabledMcpjsonServers": ["other"]})
    args = ("--agent", "claude", "--scope", "project", "--project-dir", str(project))
    result = cli(data_dir, home, "install-hooks", *args)
    assert result.returncode == 0, result.stderr
    assert load(shared)["env"] == {"EDITOR": "vim"} and load(local) == {"enabledMcpjsonServers": ["other"]}
    [backup] = settings_backups(local, data_dir)  # in the data dir, beside the token file, never in the project
    assert backup.is_relative_to(data_dir) and backup.stat().st_mode & 0o777 == 0o600
    assert ".git/info/exclude" in result.stdout
    added = subprocess.run(["git", "-C", str(project), "add", "-A", "--dry-run"], capture_output=True,
                           text=True, check=True).stdout
    assert "settings.local.json" not in added and ".claude/settings.json" in added
    tracked_or_not_ignored = [p for p in project.rglob("*") if p.is_file() and ".git" not in p.parts
                              and token in p.read_text(errors="replace")]
    assert tracked_or_not_ignored == []
    assert not (home / ".claude").exists()
    assert cli(data_dir, home, "uninstall-hooks", *args).returncode == 0
    assert load(shared) == USER_CLAUDE
    assert sorted(p.name for p in (project / ".claude").iterdir()) == ["settings.json", "settings.local.json"]


def test_codex_gets_command_hooks_in_seconds_and_a_trust_note(home: Path, data_dir: Path) -> None:
    result = cli(data_dir, home, "install-hooks", "--agent", "codex")
    assert result.returncode == 0, result.stderr
    assert "/hooks" in result.stdout and "trust" in result.stdout
    doc = load(home / ".codex" / "hooks.json")
    assert list(doc["hooks"]) == list(settings.CODEX_EVENTS)
    assert "Notification" not in doc["hooks"]
    assert handlers(doc, "SessionEnd")[0]["timeout"] == 3  # codex exec fires it; Codex caps it at 3 s
    for event in settings.CODEX_EVENTS:
        [handler] = handlers(doc, event)
        assert handler["type"] == "command" and 1 <= handler["timeout"] <= 10  # seconds
        assert handler["command"].endswith(f"bin/ai-memory-hook --data-dir {data_dir} codex {event}")
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "codex").returncode == 0
    assert not (home / ".codex").exists()


def test_gemini_gets_its_own_events_in_milliseconds(home: Path, data_dir: Path) -> None:
    path = home / ".gemini" / "settings.json"
    write_json(path, USER_GEMINI, indent=2)
    result = cli(data_dir, home, "install-hooks", "--agent", "gemini")
    assert result.returncode == 0, result.stderr
    doc = load(path)
    assert doc["ui"] == USER_GEMINI["ui"]
    assert doc["hooksConfig"] == {"disabled": ["noisy"], "enabled": True}
    assert doc["hooks"]["BeforeTool"][0] == USER_GEMINI["hooks"]["BeforeTool"][0]
    assert set(doc["hooks"]) == set(settings.GEMINI_EVENTS) | {"BeforeTool"}
    assert "PreCompress" not in doc["hooks"]  # fired before every model turn, compressing or not
    for event in settings.GEMINI_EVENTS:
        [handler] = [h for h in handlers(doc, event) if h.get("name") == "ai-memory"]
        assert handler["type"] == "command" and handler["timeout"] >= 1000  # milliseconds
        assert handler["command"].endswith(f"bin/ai-memory-hook --data-dir {data_dir} gemini {event}")
    assert "tools" not in doc  # tools.enableHooks is gone from Gemini CLI and fails validation
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "gemini").returncode == 0
    # the user's hooks are back exactly; the enable flag stays while they still have hooks
    assert load(path) == {**USER_GEMINI, "hooksConfig": {"disabled": ["noisy"], "enabled": True}}


def test_gemini_uninstall_drops_the_flag_only_when_no_hooks_remain(home: Path, data_dir: Path) -> None:
    path = home / ".gemini" / "settings.json"
    write_json(path, {"ui": {"theme": "GitHub"}})
    assert cli(data_dir, home, "install-hooks", "--agent", "gemini").returncode == 0
    assert load(path)["hooksConfig"] == {"enabled": True}
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "gemini").returncode == 0
    assert load(path) == {"ui": {"theme": "GitHub"}}


def test_gemini_hooks_switched_off_are_switched_on_with_a_note(home: Path, data_dir: Path) -> None:
    path = home / ".gemini" / "settings.json"
    write_json(path, {"hooksConfig": {"enabled": False}})
    [change] = settings.plan_install(target("gemini", home, data_dir))
    assert json.loads(change.after or "")["hooksConfig"] == {"enabled": True}
    assert any("hooksConfig.enabled" in note for note in change.notes)


def test_reinstall_for_another_data_dir_replaces_ours_in_place(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    write_json(path, USER_CLAUDE)
    apply_changes(settings.plan_install(target("claude", home, data_dir)), SettingsBackups(data_dir, "s1"))
    moved = target("claude", home, data_dir / "elsewhere", url="http://127.0.0.1:50000")
    apply_changes(settings.plan_install(moved), SettingsBackups(data_dir, "s2"))
    doc = load(path)
    stop = doc["hooks"]["Stop"]
    assert stop[0] == USER_CLAUDE["hooks"]["Stop"][0] and len(stop) == 2
    assert "elsewhere" in stop[1]["hooks"][0]["command"]
    [start] = handlers(doc, "SessionStart")
    assert "elsewhere" in start["command"] and "AI_MEMORY_TOKEN" not in doc.get("env", {})
    apply_changes(settings.plan_uninstall(moved), SettingsBackups(data_dir, "s3"))
    assert load(path) == USER_CLAUDE


def test_users_handler_in_our_group_survives_uninstall(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    apply_changes(settings.plan_install(target("claude", home, data_dir)), SettingsBackups(data_dir, "s1"))
    doc = load(path)
    mine = {"type": "command", "command": "notify-send done"}
    doc["hooks"]["Stop"][0]["hooks"].append(mine)  # the user edits our group by hand
    write_json(path, doc)
    apply_changes(settings.plan_uninstall(target("claude", home, data_dir)), SettingsBackups(data_dir, "s2"))
    assert load(path) == {"hooks": {"Stop": [{"hooks": [mine]}]}}


def test_an_older_http_install_is_replaced_by_spooling_command_hooks(home: Path, data_dir: Path) -> None:
    """Older installs posted Claude's events over http (lost while the daemon was down) with the
    token in settings env and allow-list entries: install replaces all of it, keeping the user's."""
    path = home / ".claude" / "settings.json"
    user = {"allowedHttpHookUrls": ["https://hooks.example.com/*"], "httpHookAllowedEnvVars": ["X"],
            "env": {"EDITOR": "vim"}}
    http = {"type": "http", "url": "http://127.0.0.1:50000/hook?agent=claude&quiet=1",
            "headers": {"Authorization": "Bearer $AI_MEMORY_TOKEN"}, "allowedEnvVars": ["AI_MEMORY_TOKEN"]}
    old = {"allowedHttpHookUrls": [*user["allowedHttpHookUrls"], "http://127.0.0.1:50000/hook*"],
           "httpHookAllowedEnvVars": ["X", "AI_MEMORY_TOKEN"], "env": {"EDITOR": "vim", "AI_MEMORY_TOKEN": "secret-1"},
           "hooks": {"Stop": [{"hooks": [http]}], "PostToolUse": [{"hooks": [http]}]}}
    write_json(path, old)
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    doc = load(path)
    assert all(h["type"] == "command" for event in doc["hooks"] for h in handlers(doc, event))
    assert {k: doc[k] for k in user} == user and "secret-1" not in path.read_text()
    assert settings_backups(path, data_dir)[0].stat().st_mode & 0o777 == 0o600  # the old token stays in the data dir
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "claude").returncode == 0
    assert load(path) == user


def test_a_symlinked_settings_file_stays_a_symlink(home: Path, data_dir: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(real, {"model": "opus"})
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(real)
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "hooks" in load(real) and len(settings_backups(real, data_dir)) == 1


def test_unparseable_settings_fail_in_one_line_and_stay_untouched(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",,}')
    result = cli(data_dir, home, "install-hooks", "--agent", "claude")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "cannot parse" in result.stderr
    assert path.read_text() == '{"model": "opus",,}' and settings_backups(path, data_dir) == []


def test_hook_client_is_copied_when_present(tmp_path: Path) -> None:
    source = tmp_path / "src" / "ai-memory-hook"
    data_dir = tmp_path / "data"
    assert settings.install_hook_client(data_dir, source) is None
    assert not data_dir.exists()
    source.parent.mkdir()
    source.write_text("#!/bin/sh\necho '{}'\n")
    dest = settings.install_hook_client(data_dir, source)
    assert dest == data_dir / "bin" / "ai-memory-hook" and dest.read_bytes() == source.read_bytes()
    assert os.access(dest, os.X_OK)


def test_install_copies_the_packaged_hook_client(home: Path, data_dir: Path) -> None:
    assert settings.HOOK_SOURCE.is_file()  # package data, in a checkout and in a wheel alike
    assert cli(data_dir, home, "install-hooks", "--agent", "gemini").returncode == 0
    dest = data_dir / "bin" / "ai-memory-hook"
    assert dest.read_bytes() == settings.HOOK_SOURCE.read_bytes() and os.access(dest, os.X_OK)


# ---- a project's committed files are portable ---------------------------------------------------

def committed(project: Path) -> list[Path]:
    """The files `git add -A` would take from the project: what teammates get."""
    listed = subprocess.run(["git", "-C", str(project), "add", "-A", "--dry-run"], capture_output=True,
                            text=True, check=True).stdout
    return [project / line.split("'")[1] for line in listed.splitlines() if line.startswith("add '")]


def observations(daemon: Daemon, session: str) -> int:
    status, body, _ = daemon.request("GET", f"/v1/sessions/{session}/observations")
    return len(body.get("observations", [])) if status == 200 else 0


def test_a_project_install_runs_for_a_teammate_with_their_own_memory(tmp_path: Path, claude_fixtures) -> None:
    """One user installs hooks and MCP at project scope; a second user (another HOME, their own
    default data dir, their own daemon, their own ai-memory on PATH) runs the committed hook as
    Claude Code does: the event lands in the second user's memory, not the first's."""
    home_a, project = tmp_path / "ana", tmp_path / "proj"
    home_a.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    ana = Daemon(tmp_path / "ana-data").start()
    home_b = tmp_path / "bo"
    bo = Daemon(home_b / ".local" / "share" / "ai-memory")  # Bo's default data dir, derived from HOME
    bo.data_dir.mkdir(parents=True)
    bo.start()
    try:
        at_project = ("--scope", "project", "--project-dir", str(project))
        for agent in settings.AGENTS:
            for verb in ("install-hooks", "install-mcp"):
                if (agent, verb) == ("cline", "install-mcp"):  # Cline reads MCP servers from user settings only
                    assert cli(ana.data_dir, home_a, verb, "--agent", agent, *at_project).returncode == 2
                    continue
                done = cli(ana.data_dir, home_a, verb, "--agent", agent, *at_project)
                shared = (agent, verb) == ("copilot", "install-mcp")  # Claude's .mcp.json entry serves it as is
                assert done.returncode == 0 and ("unchanged" if shared else "each person's PATH") in done.stdout, done
        files = committed(project)
        cline_hooks = [f".clinerules/hooks/{event}" for event in sorted(hook_files.CLINE_EVENTS)]
        assert sorted(str(p.relative_to(project)) for p in files) == sorted([
            ".claude/settings.json", ".codex/config.toml", ".codex/hooks.json", ".gemini/settings.json", ".mcp.json",
            ".qwen/settings.json", ".cursor/hooks.json", ".cursor/mcp.json", ".github/hooks/ai-memory.json",
            ".opencode/plugins/ai-memory.js", "opencode.json", *cline_hooks])
        machine = (str(tmp_path), str(Path(sys.executable).parent), sys.prefix, os.environ.get("HOME", "/root"))
        for path in files:
            text = path.read_text()
            assert not [p for p in machine if p in text] and ana.token not in text, path
            if path.suffix in (".json", ".toml"):
                assert "/" not in text.replace(">/dev/null", ""), path  # no path of any machine at all

        command = load(project / ".claude" / "settings.json")["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        payload = {**claude_fixtures["PostToolUse"][0], "session_id": "teammate-1", "cwd": str(project)}
        env_b = {"HOME": str(home_b), "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
                 "PYTHONPATH": str(REPO)}  # this checkout's ai-memory, as the venv's script runs it
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), env=env_b, cwd=project,
                              capture_output=True, text=True, timeout=30)
        assert (done.returncode, done.stderr, done.stdout.strip()) == (0, "", "{}")
        wait_until(lambda: observations(bo, "teammate-1") == 1, timeout=30)
        assert observations(ana, "teammate-1") == 0 and not list((ana.data_dir / "spool").glob("*.json"))
    finally:
        bo.stop()
        ana.stop()


@pytest.mark.parametrize("shell", ["/bin/sh", "bash"])
def test_a_committed_hook_without_ai_memory_on_path_reads_its_input_and_does_nothing(shell: str, tmp_path: Path) -> None:
    """A teammate who has not installed ai-memory: every tool call runs the hook, which must not
    fail, print or leave the agent writing into a closed pipe (Codex reports that as a failure)."""
    path = "/usr/bin:/bin"
    if shutil.which("ai-memory", path=path) or not shutil.which(shell, path=path):
        pytest.skip(f"needs {shell} and no ai-memory on {path}")
    handler = settings.wanted_handlers(target("codex", tmp_path, tmp_path / "data", scope="project"))["Stop"]
    payload = json.dumps({"hook_event_name": "Stop", "last_assistant_message": "x" * 300_000}).encode()
    proc = subprocess.Popen([shell, "-c", handler["command"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={"HOME": str(tmp_path), "PATH": path}, cwd=tmp_path)
    assert proc.stdin is not None
    proc.stdin.write(payload)  # more than a pipe holds: a hook that did not read would break it
    proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    assert (proc.wait(timeout=30), out, err) == (0, b"", b"")


def test_uninstall_takes_both_the_absolute_and_the_portable_form(home: Path, data_dir: Path, tmp_path: Path) -> None:
    """An older project install wrote this machine's paths: the next install puts the portable
    command in their place, and uninstall recognises either form."""
    project = tmp_path / "proj"
    path = project / ".claude" / "settings.json"
    old = settings.Target("claude", "user", project, project, URL, data_dir)  # the absolute form, in the project's file
    original = write_json(path, USER_CLAUDE)
    apply_changes(settings.plan_install(old), SettingsBackups(data_dir, "s1"))
    assert f"{data_dir}/bin/ai-memory-hook" in path.read_text()
    args = ("--agent", "claude", "--scope", "project", "--project-dir", str(project))
    assert cli(data_dir, home, "install-hooks", *args).returncode == 0
    for event in settings.CLAUDE_EVENTS:
        [handler] = ours(load(path), event)
        assert handler["command"] == settings.PORTABLE_HOOK.format(agent="claude", event=event)
    assert str(data_dir) not in path.read_text()
    assert settings.is_ours({"command": f"{data_dir}/bin/ai-memory-hook --data-dir {data_dir} claude Stop"}, URL)
    assert cli(data_dir, home, "uninstall-hooks", *args).returncode == 0
    assert path.read_bytes() == original


# ---- settings with comments are edited, not refused -------------------------------------------

GEMINI_JSONC = """// Gemini CLI settings, kept by hand
{
    "ui": {
        "theme": "GitHub"   // dark at night
    },
  /* my own hooks,
     lint first */
  "hooks": {
      "BeforeTool": [
          {"matcher": "run_shell_command", "hooks": [
              {"type": "command", "command": "./lint.sh", "name": "lint", "timeout": 2000} // fast
          ]}
      ]
  },
    "hooksConfig": {"enabled": true, "disabled": ["noisy"]}, // on
    "general": {"vimMode": true}
}
"""


def test_gemini_settings_with_comments_are_edited_in_place_and_given_back_byte_for_byte(home: Path, data_dir: Path) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI_JSONC)
    done = cli(data_dir, home, "install-hooks", "--agent", "gemini")
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    for line in GEMINI_JSONC.splitlines()[:14]:  # everything up to the end of the user's hooks is as it was
        assert line in text.splitlines(), line
    assert '    "hooksConfig": {"enabled": true, "disabled": ["noisy"]}, // on\n    "general": {"vimMode": true}\n}\n' in text
    doc = settings.jsonc_edit.parse(text, path)
    assert list(doc) == ["ui", "hooks", "hooksConfig", "general"]  # key order kept
    assert list(doc["hooks"]) == ["BeforeTool", *settings.GEMINI_EVENTS]
    assert doc["hooks"]["BeforeTool"][0]["hooks"][0]["command"] == "./lint.sh"
    assert '\n          "SessionStart": [\n' not in text and '\n      "SessionStart": [\n' in text  # indented as its siblings
    assert cli(data_dir, home, "install-hooks", "--agent", "gemini").returncode == 0
    assert path.read_text() == text  # a second install is a no-op
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "gemini").returncode == 0
    assert path.read_text() == GEMINI_JSONC


def test_a_broken_settings_file_is_named_with_its_line_in_one_line(home: Path, data_dir: Path) -> None:
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    broken = GEMINI_JSONC.replace('"general": {"vimMode": true}', '"general": {"vimMode": yes}')
    path.write_text(broken)
    done = cli(data_dir, home, "install-hooks", "--agent", "gemini")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert f"cannot parse {path} at line 16" in line, line
    assert path.read_text() == broken and settings_backups(path, data_dir) == []


def test_claude_settings_with_comments_tabs_and_crlf_come_back_byte_for_byte(home: Path, data_dir: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    original = b'{\r\n\t// mine\r\n\t"model": "opus", /* fast */\r\n\t"env": {"EDITOR": "vim"} // editor\r\n}\r\n'
    path.write_bytes(original)
    assert cli(data_dir, home, "install-hooks", "--agent", "claude").returncode == 0
    installed = path.read_bytes()
    assert installed.count(b"\n") == installed.count(b"\r\n") and b'\n\t"hooks": {\r\n\t\t"SessionStart": [' in installed
    assert b'\t"env": {"EDITOR": "vim"}, // editor\r\n' in installed
    assert cli(data_dir, home, "uninstall-hooks", "--agent", "claude").returncode == 0
    assert path.read_bytes() == original


def test_trailing_commas_are_kept_where_a_file_has_them(tmp_path: Path) -> None:
    """JSON5's trailing commas (json-five reads them; whether an agent does is the agent's
    business): an item added after the last one keeps the comma style, and goes again."""
    text = '{\n  "a": [1, 2,],\n  "b": {\n    "c": true,\n  },\n}\n'
    old = settings.jsonc_edit.parse(text, tmp_path)
    new = {"a": [1, 2, 3], "b": {"c": True, "d": None}, "e": "x"}
    out = settings.jsonc_edit.edit(text, new, tmp_path)
    assert out == '{\n  "a": [1, 2, 3,],\n  "b": {\n    "c": true,\n    "d": null,\n  },\n  "e": "x",\n}\n'
    assert settings.jsonc_edit.edit(out, old, tmp_path) == text
