"""Item 7: symlinks in wiki/ are never followed. A linked page is not indexed, searched, served
or exported (to any user); a linked folder never receives a write; both show in status and lint."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Daemon, run_cli
from wiki_helpers import wait_until

SECRET_PAGE = "---\ntype: Note\ntitle: vault\n---\nThe break-glass phrase is zebra-canyon-417 for the root box.\n"


def _outside(tmp_path: Path) -> Path:
    victim = tmp_path / "victim"
    (victim / "decisions").mkdir(parents=True)
    (victim / "passwd.md").write_text(SECRET_PAGE)
    (victim / "decisions" / "mine.md").write_text("a file of the user's own, outside the wiki\n")
    return victim


def _everything_served(daemon: Daemon) -> str:
    served = []
    for body in ({"q": "zebra canyon break-glass phrase", "all": True}, {"q": "zebra-canyon-417", "all": True}):
        served.append(daemon.request("POST", "/v1/query", body)[1])
    served.append(daemon.request("GET", "/v1/pages?path=acme/notes/passwd.md")[1])
    served.append(daemon.request("GET", "/v1/export?limit=1000")[1])
    return json.dumps(served)


def test_a_linked_page_is_never_indexed_served_or_committed(data_dir: Path, tmp_path: Path) -> None:
    victim = _outside(tmp_path)
    (data_dir / "wiki" / "acme" / "notes").mkdir(parents=True)
    (data_dir / "wiki" / "acme" / "notes" / "passwd.md").symlink_to(victim / "passwd.md")
    (data_dir / "wiki" / "linked").symlink_to(victim, target_is_directory=True)
    daemon = Daemon(data_dir).start()
    try:
        assert "zebra" not in _everything_served(daemon)
        status = daemon.request("GET", "/status")[1]
        assert sorted(status["wiki"]["symlinks"]) == ["acme/notes/passwd.md", "linked"]
        lint = daemon.request("GET", "/v1/lint")[1]
        assert {f["path"] for f in lint["findings"] if f["rule"] == "symlink"} == {"acme/notes/passwd.md", "linked"}
        # a write somewhere else gets committed; the links never are
        assert daemon.request("POST", "/v1/pages", {"text": "Keep links out.", "kind": "rule",
                                                    "project": "acme"})[0] == 201
        files = subprocess.run(["git", "-C", str(data_dir / "wiki"), "ls-files"], capture_output=True,
                               text=True, check=True).stdout.split()
        assert "acme/notes/passwd.md" not in files and not any(f.startswith("linked") for f in files)
    finally:
        daemon.stop()


def test_a_page_replaced_by_a_link_leaves_the_index(daemon: Daemon, tmp_path: Path) -> None:
    victim = _outside(tmp_path)
    page = daemon.data_dir / "wiki" / "acme" / "notes" / "passwd.md"
    page.parent.mkdir(parents=True)
    page.write_text("---\ntype: Note\ntitle: plain\n---\nan ordinary page about deploy windows\n")
    wait_until(lambda: daemon.request("GET", "/v1/pages?path=acme/notes/passwd.md")[0] == 200, timeout=15)
    page.unlink()
    page.symlink_to(victim / "passwd.md")
    wait_until(lambda: daemon.request("GET", "/v1/pages?path=acme/notes/passwd.md")[0] == 404, timeout=15)
    assert "zebra" not in _everything_served(daemon)


def test_a_linked_folder_never_receives_a_write(daemon: Daemon, tmp_path: Path) -> None:
    victim = _outside(tmp_path)
    before = {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()}
    (daemon.data_dir / "wiki" / "acme").symlink_to(victim, target_is_directory=True)
    status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Deploys go out on Tuesdays.",
                                                            "kind": "decision", "project": "acme"})
    assert status == 409 and "symlink" in body["error"], body
    assert {p: p.read_bytes() for p in victim.rglob("*") if p.is_file()} == before
    assert not (victim / "index.md").exists()


def test_lint_without_a_daemon_reports_the_links(data_dir: Path, tmp_path: Path) -> None:
    victim = _outside(tmp_path)
    assert run_cli(data_dir, "reindex").returncode == 0  # lays out the data dir
    (data_dir / "wiki" / "passwd.md").symlink_to(victim / "passwd.md")
    done = run_cli(data_dir, "lint", "--json")
    found = json.loads(done.stdout)
    assert done.returncode == 1 and [f["path"] for f in found["findings"] if f["rule"] == "symlink"] == ["passwd.md"]
    assert run_cli(data_dir, "reindex").returncode == 0
    done = run_cli(data_dir, "reindex", "--check")
    assert done.returncode == 0, done.stdout


def test_a_wiki_folder_the_user_linked_elsewhere_still_works(data_dir: Path, tmp_path: Path) -> None:
    """Only links inside the wiki are refused: the wiki folder itself may be one (a synced drive)."""
    real = tmp_path / "drive" / "wiki"
    real.mkdir(parents=True)
    data_dir.mkdir(parents=True)
    (data_dir / "wiki").symlink_to(real, target_is_directory=True)
    daemon = Daemon(data_dir).start()
    try:
        status, body, _ = daemon.request("POST", "/v1/pages", {"text": "Backups run at 02:00.", "kind": "fact",
                                                                "project": "acme"})
        assert status == 201, body
        assert (real / body["path"]).is_file()
    finally:
        daemon.stop()


def test_a_fifo_in_the_wiki_hangs_nothing(daemon: Daemon) -> None:
    import os

    folder = daemon.data_dir / "wiki" / "acme" / "notes"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "pipe.md")
    (folder / "plain.md").write_text("---\ntype: Note\ntitle: plain\n---\nnext to a fifo\n")
    wait_until(lambda: daemon.request("GET", "/v1/pages?path=acme/notes/plain.md")[0] == 200, timeout=20)
    assert daemon.request("GET", "/v1/pages?path=acme/notes/pipe.md")[0] == 404
    assert daemon.request("POST", "/v1/pages", {"text": "Still writable.", "kind": "fact", "project": "acme"})[0] == 201
