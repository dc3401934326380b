"""Item 10: the secrets the review found stored, against a real daemon: a password in prose, a
bare AWS secret beside the word secret, docker login -p, token <32 hex>, password=hunter2 in a
written memory (title, body and file name), and the evasions (zero-width space, full-width
letters, base64 wrapping, a token split across two JSON fields)."""

from __future__ import annotations

import base64
import json
import subprocess

from conftest import Daemon

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
