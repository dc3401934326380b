"""Items 10 and 39: the secrets the reviews found stored, against a real daemon: a password in prose, a
bare AWS secret beside the word secret, docker login -p, token <32 hex>, password=hunter2 in a
written memory (title, body and file name), and the evasions (zero-width space, full-width
letters, base64 wrapping, a token split across two JSON fields); then issue 39's sshpass -p,
SSHPASS, a Cookie header, a hex key, an htpasswd hash, a seed phrase and prose passwords, looked
for in raw/ and in the wiki's git history after the session's page is written."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

from conftest import Daemon
from wiki_helpers import git, wait_until

GITHUB = "ghp_" + "R7kQ2mXv9LpT4sWz8NcB1yHd6FgJ3aUe5oKi"
AWS_SECRET = "q7Hn2Vx9Kp4Lm8Rt3Wz6Yb1Cd5Fg0Jh2Ks7Nu4P"
HEX = "5f4dcc3b5aa765d61d8327deb882cf99"
PROMPTS = {
    "prose password": ("the postgres password is Tr0ub4dor&3, use it for the migration", "Tr0ub4dor&3"),
    "aws secret": (f"aws secret {AWS_SECRET} is the one for the ci user", AWS_SECRET),
    "docker login": ("run: docker login -u ci -p S3cr3t-Pa55word registry.acme.internal", "S3cr3t-Pa55word"),
    "token hex": (f"curl with token {HEX} fails with a 403", HEX),
    "zero width": (f"export GITHUB_TOKEN={GITHUB[:10]}\u200b{GITHUB[10:]}", GITHUB[12:]),
    "full width": ("the key is " + "".join(chr(ord(c) + 0xFEE0) for c in "AKIAQ7XM4PL2KEYS9ZTR"),
                   "".join(chr(ord(c) + 0xFEE0) for c in "Q7XM4PL2KEYS9ZTR")),
    "base64": (f"echo {base64.b64encode(GITHUB.encode()).decode()} | base64 -d > ~/.token",
               base64.b64encode(GITHUB.encode()).decode()[8:30]),
}


def _stored(daemon: Daemon, session: str) -> str:
    status, body, _ = daemon.request("GET", f"/v1/sessions/{session}/observations")
    assert status == 200, body
    return json.dumps(body, ensure_ascii=False)


def test_prompts_with_secrets_the_review_found_are_stored_redacted(daemon: Daemon) -> None:
    for n, (name, (prompt, secret)) in enumerate(PROMPTS.items()):
        session = f"recall-{n}"
        assert daemon.post_hook({"session_id": session, "hook_event_name": "UserPromptSubmit",
                                 "prompt": prompt})[0] == 202
        stored = _stored(daemon, session)
        assert secret not in stored and "[REDACTED:" in stored, (name, stored[:400])


def test_a_token_split_across_two_json_fields_is_redacted(daemon: Daemon) -> None:
    payload = {"session_id": "split-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "deploy", "token_head": GITHUB[:14], "token_tail": GITHUB[14:]}}
    assert daemon.post_hook(payload)[0] == 202
    stored = _stored(daemon, "split-1")
    assert GITHUB[:14] not in stored and GITHUB[14:] not in stored and "[REDACTED:github_token]" in stored


def test_password_in_a_written_memory_reaches_no_title_body_or_file_name(daemon: Daemon) -> None:
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": "The staging box: password=hunter2 for now.",
                                                            "kind": "note", "project": "acme",
                                                            "title": "password=hunter2"})
    assert status == 201, body
    assert "hunter2" not in body["path"]
    page = daemon.request("GET", f"/v1/pages?id={body['id']}")[1]
    assert "hunter2" not in json.dumps(page)
    assert "hunter2" not in (daemon.data_dir / "wiki" / body["path"]).read_text()
    files = subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "log", "--all", "-p", "--name-only"],
                           capture_output=True, text=True, check=True).stdout
    assert "hunter2" not in files


# Issue 39: formats still missed; the first three reached raw/ and git history end to end.
ISSUE_39 = {
    "sshpass -p": ("PreToolUse", "sshpass -p 'Qz7#rT2!vLp9' ssh root@10.0.0.5 uptime", "Qz7#rT2!vLp9"),
    "SSHPASS": ("PostToolUse", "export SSHPASS=Mv4kL9pQw2xZ; sshpass -e rsync -a dist/ web1:/srv/app", "Mv4kL9pQw2xZ"),
    "cookie": ("PostToolUse", "curl -s -H 'Cookie: session=8f3kd92mzQ0pL4vNs7Tq1Rw' https://app.acme.io/api/me",
               "8f3kd92mzQ0pL4vNs7Tq1Rw"),
    "hex key": ("UserPromptSubmit", "the hmac key 3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8 "
                "signs the webhooks", "3f9a1c2b4d5e6f708192a3b4c5d6e7f8"),
    "htpasswd": ("PostToolUse", "cat /etc/nginx/.htpasswd\nadmin:$apr1$Kx9sP2mQ$HqJZimcKQFAMYayBlzkrA/",
                 "HqJZimcKQFAMYayBlzkrA/"),
    "seed phrase": ("UserPromptSubmit", "restore the wallet from: legal winner thank year wave sausage worth useful "
                    "legal winner thank yellow", "wave sausage worth"),
    "prose": ("UserPromptSubmit", "the root pass to db1 is Tr0ub4dor&3 and the wifi key is Cafe-Guest-2024",
              "Tr0ub4dor&3"),
}


def _event(session: str, cwd: str, event: str, text: str) -> dict:
    base = {"session_id": session, "cwd": cwd, "hook_event_name": event}
    if event == "UserPromptSubmit":
        return {**base, "prompt": text}
    command = {"tool_name": "Bash", "tool_input": {"command": text}}
    return {**base, **command, "tool_response": {"stdout": text, "exit_code": 0}} if event == "PostToolUse" else \
        {**base, **command}


def test_the_formats_issue_39_found_reach_neither_raw_nor_git(daemon: Daemon, tmp_path: Path) -> None:
    repo = tmp_path / "ops"
    repo.mkdir()
    session = "issue-39"
    for event, text, _ in ISSUE_39.values():
        assert daemon.post_hook(_event(session, str(repo), event, text))[0] == 202
    assert daemon.post_hook({"session_id": session, "cwd": str(repo), "hook_event_name": "SessionEnd",
                             "reason": "exit"})[0] == 202
    wiki = daemon.data_dir / "wiki"
    wait_until(lambda: "[REDACTED:" in git(wiki, "log", "--all", "-p"), timeout=30)  # the session's page, committed
    raw = "".join(p.read_text() for p in sorted((daemon.data_dir / "raw").rglob("*")) if p.is_file())
    history = git(wiki, "log", "--all", "-p")
    assert "[REDACTED:" in raw and session in raw
    for name, (_, _, secret) in ISSUE_39.items():
        assert secret not in raw, (name, "raw/")
        assert secret not in history, (name, "git history")
        assert secret not in _stored(daemon, session), (name, "observations")
