"""The index is derived: reindex rebuilds it from files and journal, --check finds drift."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import signal
import sqlite3
import subprocess
from pathlib import Path

from conftest import Daemon, run_cli
from wiki_helpers import git, page_text, search_paths, wait_until


def counts(db: Path) -> tuple[int, int, int]:
    conn = sqlite3.connect(db)
    return tuple(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # type: ignore[return-value]
                 for t in ("pages", "sessions", "observations"))


def seed(daemon: Daemon, n_pages: int = 20) -> None:
    wiki = daemon.data_dir / "wiki"
    for i in range(n_pages):
        path = wiki / "acme-api" / "notes" / f"note-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page_text(f"Note {i}", f"Body of note {i} mentions zircon{i}."))
    for s in range(3):
        for i in range(5):
            daemon.post_hook({"session_id": f"s{s}", "hook_event_name": "UserPromptSubmit",
                              "prompt": f"prompt {i} of session {s}", "cwd": "/home/dev/acme-api"})
    wait_until(lambda: counts(daemon.data_dir / "db" / "memory.sqlite")[0] == n_pages, timeout=10)


def test_deleted_database_is_rebuilt_from_files_and_journal(daemon: Daemon) -> None:
    seed(daemon)
    db = daemon.data_dir / "db" / "memory.sqlite"
    before = counts(db)
    daemon.stop()
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    done = run_cli(daemon.data_dir, "reindex", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pages"] == before[0]
    assert counts(db) == before
    assert run_cli(daemon.data_dir, "reindex", "--check").returncode == 0


def test_corrupted_database_is_rebuilt(daemon: Daemon) -> None:
    seed(daemon, 5)
    db = daemon.data_dir / "db" / "memory.sqlite"
    before = counts(db)
    daemon.stop()
    db.write_bytes(b"this is not a database" * 100)
    assert run_cli(daemon.data_dir, "reindex", "--check").returncode == 1
    assert run_cli(daemon.data_dir, "reindex").returncode == 0
    assert counts(db) == before
    restarted = Daemon(daemon.data_dir).start()
    try:
        assert "acme-api/notes/note-3.md" in search_paths(restarted, "zircon3")
    finally:
        restarted.stop()


def test_reindex_while_the_daemon_runs(daemon: Daemon) -> None:
    seed(daemon, 5)
    before = counts(daemon.data_dir / "db" / "memory.sqlite")
    done = run_cli(daemon.data_dir, "reindex", "--json", "--url", daemon.url)
    assert done.returncode == 0, done.stderr
    assert counts(daemon.data_dir / "db" / "memory.sqlite") == before
    status, _ = daemon.post_hook({"session_id": "after", "hook_event_name": "Stop", "cwd": "/tmp"})
    assert status == 202
    assert "acme-api/notes/note-2.md" in search_paths(daemon, "zircon2")


def test_kill_9_between_rename_and_index_commit_reconciles_on_start(daemon: Daemon) -> None:
    seed(daemon, 3)
    daemon.stop(signal.SIGKILL)
    # the file landed (rename done) but its index rows never committed
    path = daemon.data_dir / "wiki" / "acme-api" / "notes" / "late.md"
    path.write_text(page_text("Late", "written just before the crash: obsidianfox"))
    restarted = Daemon(daemon.data_dir).start()
    try:
        assert "acme-api/notes/late.md" in search_paths(restarted, "obsidianfox")
        wait_until(lambda: git(daemon.data_dir / "wiki", "status", "--porcelain").strip() == "", timeout=5)
    finally:
        restarted.stop()
    assert run_cli(daemon.data_dir, "reindex", "--check").returncode == 0


def test_changes_made_while_the_daemon_was_down_are_found_at_start(daemon: Daemon) -> None:
    """The reconcile at start compares every file with the index: an edited page is read again,
    a new one indexed, a deleted one's rows removed, a touched one's new stat kept."""
    seed(daemon, 4)
    daemon.stop()
    notes = daemon.data_dir / "wiki" / "acme-api" / "notes"
    (notes / "note-0.md").write_text(page_text("Note 0", "Rewritten offline: it mentions quartzwren now."))
    (notes / "note-1.md").unlink()
    (notes / "added.md").write_text(page_text("Added", "Written while stopped: basaltkite."))
    later = (notes / "note-2.md").stat().st_mtime_ns + 5_000_000_000
    os.utime(notes / "note-2.md", ns=(later, later))
    restarted = Daemon(daemon.data_dir).start()
    try:
        assert "acme-api/notes/note-0.md" in search_paths(restarted, "quartzwren")
        assert "acme-api/notes/note-0.md" not in search_paths(restarted, "zircon0")
        assert "acme-api/notes/added.md" in search_paths(restarted, "basaltkite")
        assert "acme-api/notes/note-1.md" not in search_paths(restarted, "zircon1")
        db = sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite")
        try:
            stats = dict(db.execute("SELECT path, mtime_ns FROM pages WHERE path LIKE 'acme-api/notes/%'"))
        finally:
            db.close()
        assert "acme-api/notes/note-1.md" not in stats and stats["acme-api/notes/note-2.md"] == later
    finally:
        restarted.stop()
    assert run_cli(daemon.data_dir, "reindex", "--check").returncode == 0


def test_random_external_changes_leave_no_drift(daemon: Daemon) -> None:
    rng = random.Random(7)
    notes = daemon.data_dir / "wiki" / "acme-api" / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    alive: list[Path] = []
    for i in range(1000):
        action = rng.random()
        if alive and action < 0.25:
            victim = alive.pop(rng.randrange(len(alive)))
            victim.unlink()
        elif alive and action < 0.6:
            target = rng.choice(alive)
            target.write_text(page_text(target.stem, f"edit {i} word{rng.randrange(10**6)}"))
        else:
            path = notes / f"r{i}.md"
            path.write_text(page_text(f"r{i}", f"create {i}"))
            alive.append(path)
    db = daemon.data_dir / "db" / "memory.sqlite"

    def settled() -> bool:
        return run_cli(daemon.data_dir, "reindex", "--check").returncode == 0

    wait_until(settled, timeout=180, step=0.5)
    assert counts(db)[0] == len(alive)
    wait_until(lambda: git(daemon.data_dir / "wiki", "status", "--porcelain").strip() == "", timeout=10)
    fsck = subprocess.run(["git", "-C", str(daemon.data_dir / "wiki"), "fsck", "--strict"],
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_rebuild_keeps_vectors_and_piece_vectors(tmp_path: Path) -> None:
    """Nothing a rebuilt database can find by content hash is computed again: pooled vectors,
    and turns' piece vectors with their word counts (late interaction)."""
    from ai_memory.store.connection import open_write_connection
    from ai_memory.store.migrations import migrate
    from ai_memory.wiki.reindex import rebuild

    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    old = tmp_path / "memory.sqlite"
    conn = open_write_connection(old)
    migrate(conn)
    conn.execute("INSERT INTO embeddings(content_hash, model, dim, vector) VALUES ('h', 'm', 1, x'00000000')")
    conn.execute("INSERT INTO token_vectors(content_hash, model, count, bits) VALUES ('h', 'm', 2, x'0102')")
    conn.execute("INSERT INTO piece_counts(model, word, turns) VALUES ('m', '', 1), ('m', 'zircon', 1)")
    conn.close()
    new = sqlite3.connect(rebuild(tmp_path / "wiki", tmp_path / "raw", old).path)
    assert new.execute("SELECT content_hash, count, bits FROM token_vectors").fetchall() == [("h", 2, b"\x01\x02")]
    assert sorted(new.execute("SELECT word, turns FROM piece_counts")) == [("", 1), ("zircon", 1)]
    assert new.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 1


def test_a_rebuild_links_each_observation_to_its_vectors_as_before(data_dir: Path) -> None:
    """A reindex leaves no observation waiting for the embedding job: each is linked again to
    its whole text's, its sentences' and its pieces' vectors, unless its text differs."""
    from ai_memory.wiki.reindex import rebuild

    daemon = Daemon(data_dir, env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=60)
    cwd = "/home/dev/acme-api"
    daemon.post_hook({"session_id": "v1", "hook_event_name": "UserPromptSubmit", "cwd": cwd,
                      "prompt": "Why does the retry worker stop after three attempts? It should back off."})
    daemon.post_hook({"session_id": "v1", "hook_event_name": "PostToolUse", "cwd": cwd, "tool_name": "Bash",
                      "tool_input": {"command": "pytest -q tests/test_retry.py"},
                      "tool_response": {"stdout": "Traceback (most recent call last):\nValueError: attempts out of range",
                                        "stderr": "", "interrupted": False}})
    daemon.post_hook({"session_id": "v1", "hook_event_name": "Stop", "cwd": cwd,
                      "last_assistant_message": "The worker capped attempts at three. It now backs off exponentially."
                                                " The cap is read from the config file."})

    def embedded() -> bool:
        status = daemon.request("GET", "/status")[1]
        return status["embeddings"]["ready"] and status["embeddings"]["backlog"] == {"chunks": 0, "observations": 0}

    try:
        wait_until(embedded, timeout=120, step=0.3)
    finally:
        daemon.stop()
    db = daemon.data_dir / "db" / "memory.sqlite"
    links = "SELECT id, embed_hash, sentences_done FROM observations ORDER BY id"
    sentences = ("SELECT o.id, s.ord, s.content_hash FROM observation_sentences s"
                 " JOIN observations o ON o.rowid = s.obs_rowid ORDER BY 1, 2")
    old = sqlite3.connect(db)
    before, before_sentences = old.execute(links).fetchall(), old.execute(sentences).fetchall()
    assert any(h for _, h, _ in before) and before_sentences  # vectors and sentences were made
    changed = old.execute("SELECT id FROM observations WHERE event = 'user-prompt'").fetchone()[0]
    old.execute("UPDATE observations SET body = body || ' (edited)' WHERE id = ?", (changed,))
    old.commit()
    old.close()

    report = rebuild(daemon.data_dir / "wiki", daemon.data_dir / "raw", db)
    new = sqlite3.connect(report.path)
    after = new.execute(links).fetchall()
    assert after == [(i, None, 0) if i == changed else (i, h, done) for i, h, done in before]
    assert report.vector_links_kept == len(before) - 1
    assert new.execute(sentences).fetchall() == [s for s in before_sentences if s[0] != changed]
    from ai_memory.embed.model import MODEL_ID
    from ai_memory.retrieval.embedding_job import find_pending

    new.row_factory = sqlite3.Row
    waiting = find_pending(new, MODEL_ID)  # all the embedding job is left with: the edited observation
    rowid = new.execute("SELECT rowid FROM observations WHERE id = ?", (changed,)).fetchone()[0]
    assert [r for r, _ in waiting.obs] == [rowid] and not waiting.split and not waiting.skip_obs


def test_pages_written_after_a_live_reindex_get_their_vectors(data_dir: Path) -> None:
    """The embedding job remembers how far it has looked through the chunks; a reindex gives it
    a new file whose chunk ids start again from one, so it must look through them anew."""
    daemon = Daemon(data_dir, env={"AI_MEMORY_EMBED_ENABLED": "1"}).start(timeout=60)
    db = daemon.data_dir / "db" / "memory.sqlite"
    notes = daemon.data_dir / "wiki" / "acme-api" / "notes"
    notes.mkdir(parents=True)

    def unembedded_chunks() -> int | None:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM embeddings e"
                                " WHERE e.content_hash = c.content_hash)").fetchone()[0]
        finally:
            conn.close()

    def page_count() -> int:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        finally:
            conn.close()

    try:
        for version in range(6):  # each edit gives the page new chunk ids
            (notes / "retries.md").write_text(page_text("Retries", f"Version zircon{version}: the worker backs off."))
            wait_until(lambda v=version: "acme-api/notes/retries.md" in search_paths(daemon, f"zircon{v}"),
                       timeout=20)
            wait_until(lambda: unembedded_chunks() == 0, timeout=60, step=0.2)
        done = run_cli(daemon.data_dir, "reindex", "--json", "--url", daemon.url)
        assert done.returncode == 0, done.stderr
        (notes / "ledger.md").write_text(page_text("Ledger", "Exports of the ledger run every night."))
        # The watcher indexes it at once; on a loaded machine the 30-second reconcile may be first.
        wait_until(lambda: page_count() == 2, timeout=60, step=0.2)
        wait_until(lambda: unembedded_chunks() == 0, timeout=60, step=0.2)
    finally:
        daemon.stop()


def _rows(db: str) -> dict[str, list[str]]:
    """Every row of every table but the moments a row was written and the file's own id, in a
    comparable form."""
    conn = sqlite3.connect(db)
    out = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%_config'"):
        cursor = conn.execute(f"SELECT * FROM {table}")
        names = [d[0] for d in cursor.description]
        kept = [i for i, n in enumerate(names) if n not in ("indexed_at", "applied_at", "file_id")]
        out[table] = sorted(repr([row[i] for i in kept]) for row in cursor)
    conn.close()
    return out


def _copy_of_first(journal: Path, **fields: object) -> bytes:
    """A journal line: the journal's first observation with ``fields`` changed, under a new id."""
    first = next(r for r in map(json.loads, journal.read_bytes().splitlines()) if "title" in r)
    record = {k: v for k, v in first.items() if k != "idempotency_key"}
    return json.dumps({**record, "id": "copy-" + "-".join(sorted(fields)), **fields}).encode() + b"\n"


def test_a_rebuild_with_helper_processes_makes_the_same_database(daemon: Daemon, monkeypatch, caplog) -> None:
    """Pages, past versions and journal records read and analysed in a helper process, two to
    a batch so that many batches come back: the same rows as a rebuild that reads everything
    itself, broken pages, a link out of the vault, a generated index, records whose title or
    body is not text and a torn journal line included; no batch fell back to this process."""
    from ai_memory.wiki import read_ahead
    from ai_memory.wiki.reindex import rebuild

    seed(daemon, 12)
    wiki = daemon.data_dir / "wiki"
    (wiki / "acme-api" / "notes" / "broken.md").write_text("---\ntitle: [unclosed\n---\nBody of a broken page.\n")
    (wiki / "acme-api" / "notes" / "outside.md").symlink_to("/etc/hostname")
    (wiki / "acme-api" / "notes" / "note-3.md").write_text(page_text("Note 3", "Edited: zircon3 moved to basalt."))
    wait_until(lambda: "acme-api/notes/broken.md" in search_paths(daemon, "broken"), timeout=10)
    daemon.stop()
    git(wiki, "add", "-A")
    git(wiki, "commit", "-qm", "by hand")
    journal = sorted((daemon.data_dir / "raw").glob("*.jsonl"))[-1]
    with journal.open("ab") as fh:
        fh.write(_copy_of_first(journal, title=None) + _copy_of_first(journal, body=7))
        fh.write(b'{"id": "torn", "title": "half a li')
    db = daemon.data_dir / "db" / "memory.sqlite"
    monkeypatch.setattr(read_ahead, "BATCH", 2)
    caplog.set_level(logging.WARNING)
    alone = rebuild(wiki, daemon.data_dir / "raw", db, helpers=0)
    expected = _rows(alone.path)
    helped = rebuild(wiki, daemon.data_dir / "raw", db, helpers=1)
    assert (helped.pages, helped.broken_pages, helped.observations) == (alone.pages, alone.broken_pages,
                                                                        alone.observations) == (13, 1, 15)
    assert _rows(helped.path) == expected
    assert len(expected["page_history"]) > 13  # note 3 has two versions
    assert not [r.getMessage() for r in caplog.records if r.name == read_ahead.__name__]
    skipped = [r.getMessage() for r in caplog.records if "skipped a journal record" in r.getMessage()]
    assert len(skipped) == 4 and "its title is NoneType, not text" in skipped[0]  # two, in each rebuild


def test_a_record_without_text_is_skipped_by_catch_up_and_restore(daemon: Daemon, caplog) -> None:
    """Journal lines appended after a rebuild (``catch_up``) or found in a restored archive
    (``sync_index``): a null title and a body that is no text are skipped with a warning, the
    good line after them is stored."""
    from ai_memory.backup.restore import sync_index
    from ai_memory.wiki.reindex import catch_up, rebuild

    seed(daemon, 2)
    daemon.stop()
    raw, db = daemon.data_dir / "raw", daemon.data_dir / "db" / "memory.sqlite"
    report = rebuild(daemon.data_dir / "wiki", raw, db)
    journal = sorted(raw.glob("*.jsonl"))[-1]
    with journal.open("ab") as fh:
        fh.write(_copy_of_first(journal, title=None) + _copy_of_first(journal, body=["not", "text"])
                 + _copy_of_first(journal, redactions=5) + _copy_of_first(journal, project={"a": 1})
                 + _copy_of_first(journal, title="A prompt journaled late"))
    assert catch_up(Path(report.path), raw).observations == 1
    assert sync_index(daemon.data_dir) == (1, 0)
    skipped = [r.getMessage() for r in caplog.records if "skipped a journal record" in r.getMessage()]
    assert len(skipped) == 8 and "its body is list, not text" in skipped[1]


def _squares_unless_a_helper_meets_the_sixth_batch(batch: list[int]) -> list[tuple[int, int]]:
    from ai_memory.wiki.read_ahead import BATCH

    if BATCH * 5 in batch and multiprocessing.parent_process() is not None:
        os._exit(1)  # a helper killed in the middle of a batch, after five done
    return [(n * n, os.getpid()) for n in batch]


def test_a_helper_that_dies_leaves_its_work_to_the_rebuild(caplog) -> None:
    """The batches a helper finished are its; the one it died in, and every one after, are done
    here, in order, after one warning."""
    from ai_memory.wiki import read_ahead

    numbers = list(range(read_ahead.BATCH * 12))
    got = list(read_ahead.in_order(_squares_unless_a_helper_meets_the_sixth_batch, numbers, helpers=1))
    assert [square for square, _ in got] == [n * n for n in numbers]
    helper = got[0][1]
    assert helper != os.getpid()
    assert [pid for _, pid in got] == [helper] * (read_ahead.BATCH * 5) + [os.getpid()] * (read_ahead.BATCH * 7)
    warned = [r.getMessage() for r in caplog.records if r.name == read_ahead.__name__]
    assert len(warned) == 1 and "helper processes stopped" in warned[0]


def test_catching_up_reads_the_journal_from_where_the_rebuild_began(tmp_path: Path) -> None:
    """A live reindex replays only what was journaled since it began reading (with the writer
    closed meanwhile, every record read twice would keep new events waiting); a line an append
    was writing at that moment is read whole."""
    from ai_memory.store.raw_log import iter_lines, journal_position

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "2026-01-01.jsonl").write_bytes(b'{"n":1}\n{"n":2}\n')
    today = raw / "2026-01-02.jsonl"
    today.write_bytes(b'{"n":3}\n{"n":4,"pad":"' + b"x" * 100_000)  # an append cut mid-line
    position = journal_position(raw)
    with today.open("ab") as fh:
        fh.write(b'"}\n{"n":5}\n')
    (raw / "2026-01-03.jsonl").write_bytes(b'{"n":6}\n')
    assert [json.loads(line)["n"] for line in iter_lines(raw, position)] == [4, 5, 6]
    assert [json.loads(line)["n"] for line in iter_lines(raw)] == [1, 2, 3, 4, 5, 6]


def test_events_and_claims_during_a_live_reindex_are_all_kept(daemon: Daemon) -> None:
    """What is acknowledged while a reindex rebuilds (events, messages popped) is in the swapped
    file: the catch-up replays the journal from where the rebuild began reading it."""
    import threading

    seed(daemon, 200)
    for i in range(50):
        daemon.request("POST", "/v1/messages", {"to_project": "web", "body": f"note {i}"})
    acked: list[str] = []
    popped: list[str] = []
    stop = threading.Event()

    def use() -> None:
        n = 0
        while not stop.is_set():
            status, body = daemon.post_hook({"session_id": "during", "hook_event_name": "UserPromptSubmit",
                                             "prompt": f"during the rebuild {n}", "cwd": "/home/dev/acme-api"})
            if status == 202:
                acked.append(body["id"])
            status, body, _ = daemon.request("POST", "/v1/messages/pop", {"project": "web"})
            if status == 200:
                popped.extend(m["id"] for m in body["messages"])
            n += 1

    user = threading.Thread(target=use)
    user.start()
    try:
        done = run_cli(daemon.data_dir, "reindex", "--json", "--url", daemon.url)
    finally:
        stop.set()
        user.join()
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(daemon.data_dir / "db" / "memory.sqlite")
    stored = {r[0] for r in conn.execute("SELECT id FROM observations WHERE session_id = 'during'")}
    assert acked and set(acked) <= stored
    states = dict(conn.execute("SELECT id, state FROM messages"))
    assert popped and len(set(popped)) == len(popped) and all(states[m] == "popped" for m in popped)
    assert sum(s == "popped" for s in states.values()) == len(popped)
