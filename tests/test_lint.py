"""``ai-memory lint`` and MCP ``memory_lint``: every planted defect found with its page and a fix,
nothing found in a clean wiki (even after real sessions and stored memories)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio

from conftest import Daemon, run_cli
from test_mcp import connect, server_env
from wiki_helpers import wait_until

P = "lintproj"
# Planted: (rule, page) exactly; nothing else may be reported.
PLANTED = {
    ("contradiction", f"{P}/decisions/a.md"),
    ("broken-link", f"{P}/notes/c.md"),
    ("orphan", f"{P}/notes/lonely.md"),
    ("duplicate-title", f"{P}/concepts/d1.md"),
    ("duplicate-title", f"{P}/concepts/d2.md"),
    ("expired", f"{P}/facts/old.md"),
    ("broken-frontmatter", f"{P}/notes/broken.md"),
    ("oversized", f"{P}/notes/big.md"),
    ("index-drift", f"{P}/notes/late.md"),
    ("conflict-copy", f"{P}/notes/hub.conflict-20260101-120000.md"),
    ("project-folder", "renamed/"),
}
# No watcher and no periodic reconcile: the page written after start stays unindexed (drift).
QUIET = {"AI_MEMORY_WIKI_WATCH": "0", "AI_MEMORY_WIKI_RECONCILE_INTERVAL_S": "3600"}


def page(title: str, body: str, type_: str = "Note", project: str = P, extra: str = "") -> str:
    return f"---\ntype: {type_}\ntitle: {title}\nproject: {project}\n{extra}---\n# {title}\n\n{body}\n"


def write(wiki: Path, rel: str, text: str) -> None:
    path = wiki / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def plant_defects(wiki: Path) -> None:
    hub = page("Hub", "See [[a]], [[b]], [[c]], [[d1]], [[old]], [[broken]] and [[big]].")
    write(wiki, f"{P}/notes/hub.md", hub)
    write(wiki, f"{P}/notes/hub.conflict-20260101-120000.md", hub)
    write(wiki, f"{P}/decisions/a.md", page("Tokens live 15 minutes", "Short-lived tokens.", "Decision",
                                            extra=f"relations:\n  contradicts: [{P}/decisions/b.md]\n"))
    write(wiki, f"{P}/decisions/b.md", page("Tokens live one hour", "Long-lived tokens.", "Decision"))
    write(wiki, f"{P}/notes/c.md", page("Retry notes", "Details in [[does-not-exist]]."))
    write(wiki, f"{P}/notes/lonely.md", page("Lonely", "Nobody links here and I link nowhere."))
    write(wiki, f"{P}/concepts/d1.md", page("Rate limits", "Per user. See [[d2]].", "Concept"))
    write(wiki, f"{P}/concepts/d2.md", page("Rate limits", "Per IP. See [[d1]].", "Concept"))
    write(wiki, f"{P}/facts/old.md", page("Old fact", "Valid until 2020. Back to [[hub]].", "Fact",
                                          extra="expires_at: 2020-01-01\n"))
    write(wiki, f"{P}/notes/broken.md", f"---\ntitle: [unclosed\n---\n# Broken\n\nBack to [[hub]].\n")
    write(wiki, f"{P}/notes/big.md", page("Big", "Back to [[hub]].\n\n" + "lorem ipsum dolor sit amet " * 4500))
    # a project's folder renamed in Obsidian: its pages still say the old project
    write(wiki, "renamed/notes/moved.md", page("Moved", "Back to [[hub]].", project="oldname"))


def plant_clean(wiki: Path, project: str = "cleanproj") -> None:
    write(wiki, f"{project}/notes/hub.md", page("Clean hub", "See [[deploy]] and [Tokens](../decisions/tokens.md).",
                                                 project=project))
    write(wiki, f"{project}/procedures/deploy.md", page("Deploy", "Steps; back to [[hub]].", "Procedure",
                                                         project=project))
    write(wiki, f"{project}/decisions/tokens.md", page("Token TTL", "15 minutes.", "Decision", project=project,
                                                        extra="relations:\n  fixes: [cleanproj/procedures/deploy.md]\n"))


def lint_json(daemon: Daemon) -> tuple[int, dict]:
    done = run_cli(daemon.data_dir, "lint", "--json", "--url", daemon.url)
    return done.returncode, json.loads(done.stdout)


def test_every_planted_defect_is_found_with_its_page_and_a_fix(data_dir: Path) -> None:
    plant_defects(data_dir / "wiki")
    daemon = Daemon(data_dir, env=QUIET).start()
    try:
        write(data_dir / "wiki", f"{P}/notes/late.md", page("Late", "Written behind the daemon's back; [[hub]]."))
        code, report = lint_json(daemon)
        assert code == 1
        found = {(f["rule"], f["path"]) for f in report["findings"]}
        assert found == PLANTED, (found - PLANTED, PLANTED - found)
        assert all(f["fix"] and f["detail"] for f in report["findings"])
        by_rule = {f["rule"]: f for f in report["findings"]}
        assert f"{P}/decisions/b.md" in by_rule["contradiction"]["detail"]
        assert "does-not-exist" in by_rule["broken-link"]["fix"]
        assert by_rule["index-drift"]["detail"] == "page not indexed"
        assert "hub.md" in by_rule["conflict-copy"]["fix"]
        assert "ai-memory project merge oldname renamed" in by_rule["project-folder"]["fix"]
        status = json.loads(run_cli(data_dir, "status", "--json", "--url", daemon.url).stdout)
        assert status["wiki"]["folder_mismatches"] == [{"folder": "renamed", "project": "oldname", "pages": 1}]
        text = run_cli(data_dir, "lint", "--url", daemon.url)
        assert text.returncode == 1 and text.stdout.count("   fix: ") == len(PLANTED)
        assert_mcp_lint(daemon)
    finally:
        daemon.stop()
    # No daemon: the verb lints the data dir itself, with the same findings.
    offline = run_cli(data_dir, "lint", "--json")
    assert offline.returncode == 1 and "not running" in offline.stderr
    assert {(f["rule"], f["path"]) for f in json.loads(offline.stdout)["findings"]} == PLANTED


def assert_mcp_lint(daemon: Daemon) -> None:
    async def main() -> None:
        async with connect(server_env(daemon.data_dir, daemon.port), daemon.data_dir.parent) as session:
            result = await session.call_tool("memory_lint", {"limit": 3})
            assert not result.is_error, result.content
            data = result.structured_content
            assert data["total"] == len(PLANTED) and len(data["findings"]) == 3 and data["truncated"]
            assert "fix:" in result.content[0].text

    anyio.run(main)


def test_a_clean_wiki_has_no_findings_even_after_real_use(data_dir: Path) -> None:
    plant_clean(data_dir / "wiki")
    daemon = Daemon(data_dir).start()
    try:
        for event in ({"hook_event_name": "SessionStart", "source": "startup"},
                      {"hook_event_name": "UserPromptSubmit", "prompt": "Fix the [[deploy]] script, see [x](y.md)"},
                      {"hook_event_name": "Stop", "last_assistant_message": "Done."},
                      {"hook_event_name": "SessionEnd", "reason": "exit"}):
            status, body = daemon.post_hook({**event, "session_id": "clean-1", "cwd": "/home/dev/cleanproj"})
            assert status == 202, body
        assert run_cli(data_dir, "finalize-session", "--session", "clean-1", "--url", daemon.url).returncode == 0
        stored = run_cli(data_dir, "write", "--kind", "fact", "--project", "cleanproj", "Deploys run at noon.",
                         "--url", daemon.url)
        assert stored.returncode == 0, stored.stderr
        code, report = lint_json(daemon)
        assert (code, report["findings"]) == (0, []), report
        assert report["clean"] and report["pages"] >= 5
        text = run_cli(data_dir, "lint", "--url", daemon.url)
        assert text.returncode == 0 and "no findings" in text.stdout
    finally:
        daemon.stop()


def cpu_seconds(daemon: Daemon) -> float:
    """The daemon process's CPU time so far (user and system, every thread)."""
    assert daemon.proc is not None
    fields = (Path("/proc") / str(daemon.proc.pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_loop_of_lint_costs_one_lint_until_the_wiki_changes(data_dir: Path) -> None:
    wiki = data_dir / "wiki"
    plant_clean(wiki)
    for i in range(400):  # a ring of notes, each linking the next: clean, and enough to make a lint cost
        write(wiki, f"ring/notes/n{i}.md", page(f"Ring note {i}", f"Next: [[n{(i + 1) % 400}]]. " + "words " * 200,
                                                project="ring"))
    daemon = Daemon(data_dir, env={"AI_MEMORY_EMBED_ENABLED": "0"}).start()
    try:
        before = cpu_seconds(daemon)
        status, first, _ = daemon.request("GET", "/v1/lint", timeout=120)
        one_lint = cpu_seconds(daemon) - before
        assert status == 200 and first["clean"] and first["pages"] >= 403, first
        before = cpu_seconds(daemon)
        for _ in range(20):  # one lint read every file and the whole history; these read its report
            assert daemon.request("GET", "/v1/lint")[1] == first
        assert cpu_seconds(daemon) - before < max(one_lint, 0.05) * 3, one_lint  # not 20 lints
        assert first["linted_at"]  # the report says when it was made
        stored = run_cli(data_dir, "write", "--kind", "fact", "--project", "cleanproj", "Deploys run at noon.",
                         "--url", daemon.url)
        assert stored.returncode == 0, stored.stderr
        after = daemon.request("GET", "/v1/lint")[1]  # a page indexed since: the wiki's state changed
        assert after["linted_at"] > first["linted_at"] and after["pages"] == first["pages"] + 1
        (wiki / "cleanproj" / "notes" / "hub.md").write_text(
            page("Clean hub", "Now see [[nowhere]] too.", project="cleanproj"))  # an edit the watcher indexes
        wait_until(lambda: daemon.request("GET", "/v1/lint")[1]["counts"].get("broken-link") == 1, timeout=20)
        found = daemon.request("GET", "/v1/lint")[1]["findings"]
        assert [(f["rule"], f["path"]) for f in found] == [("broken-link", "cleanproj/notes/hub.md")]
    finally:
        daemon.stop()
