"""Forgetting by rules and feedback: the retention formula, a synthetic year swept by a real
daemon (dry run = real run, survivors, recovery from git), and feedback moving salience and rank."""

from __future__ import annotations

import json
import math
import os
import random
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, get_args

import pytest

from conftest import Daemon, run_cli
from wiki_helpers import search_paths, wait_until

from ai_memory.cli.feedback import SIGNALS
from ai_memory.core.errors import InputError
from ai_memory.core.retention import (
    FEEDBACK_DELTAS, SALIENCE_MAX, SALIENCE_MIN, PageFacts, RetentionParams, apply_feedback, authority_factor,
    judge, parse_moment, retention,
)
from ai_memory.mcp.models import Signal

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
PARAMS = RetentionParams()
PROJECT = "year-api"


# -- the formula and the rules (pure)

@pytest.mark.parametrize("salience, age, accesses, since, expected", [
    (1.0, 0, 0, 0, 1.0),
    (1.0, 80.47, 0, 0, 0.2),                                        # ln 5 / 0.02: the cold edge
    (1.0, 100, 0, 0, math.exp(-2.0)),
    (2.0, 100, 0, 0, 2 * math.exp(-2.0)),
    (0.25, 0, 0, 0, 0.25),
    (1.0, 365, 1, 0, math.exp(-7.3) + 0.6 * math.log(2)),           # old but found today
    (1.0, 200, 5, 20, math.exp(-4.0) + 0.6 * math.log(6) * math.exp(-0.8)),
    (1.0, 300, 3, 250, math.exp(-6.0) + 0.6 * math.log(4) * math.exp(-10.0)),
    (1.0, -5, 0, -1, 1.0),                                          # dates in the future count as now
])
def test_retention_formula(salience: float, age: float, accesses: int, since: float, expected: float) -> None:
    assert retention(salience, age, accesses, since, PARAMS) == pytest.approx(expected, abs=1e-4)


def test_retention_uses_the_params() -> None:
    slow = RetentionParams(lam=0.01, sigma=1.0, mu=0.0)
    assert retention(1.0, 100, 3, 50, slow) == pytest.approx(math.exp(-1.0) + math.log(4))


def _facts(tier: str = "episodic", age: float = 200, **kw: Any) -> PageFacts:
    return PageFacts(path="p/sessions/x.md", tier=tier, pinned=kw.pop("pinned", False),
                     superseded=kw.pop("superseded", False), changed_at=NOW - timedelta(days=age),
                     expires_at=kw.pop("expires_at", None), **kw)


@pytest.mark.parametrize("facts, reason", [
    (_facts(), "cold"),
    (_facts(age=30), None),
    (_facts(tier="semantic"), None),
    (_facts(tier="procedural", age=1000), None),
    (_facts(pinned=True, age=1000), None),
    (_facts(pinned=True, expires_at=NOW - timedelta(days=1)), None),  # a pin outranks expiry
    (_facts(superseded=True, age=1000), None),
    (_facts(superseded=True, tier="semantic", expires_at=NOW - timedelta(days=1)), "expired"),
    (_facts(tier="semantic", age=1, expires_at=NOW - timedelta(seconds=1)), "expired"),
    (_facts(tier="semantic", expires_at=NOW + timedelta(days=1)), None),
    (_facts(access_count=1, last_access_at=NOW), None),
    (_facts(age=40, salience=0.25), "cold"),
    (_facts(age=100, salience=2.0), None),
    (PageFacts("p/s.md", "episodic", False, False, None, None), None),  # undated: never guessed at
])
def test_judge(facts: PageFacts, reason: str | None) -> None:
    verdict = judge(facts, NOW, PARAMS)
    assert (verdict.reason if verdict else None) == reason


def test_feedback_moves_salience_within_bounds() -> None:
    assert apply_feedback(1.0, "helpful") == 1.25 and apply_feedback(1.0, "wrong") == 0.25
    assert apply_feedback(1.9, "helpful") == SALIENCE_MAX and apply_feedback(0.3, "stale") == SALIENCE_MIN
    with pytest.raises(InputError):
        apply_feedback(1.0, "great")
    assert authority_factor(None) == 1.0 and authority_factor(1.0) == 1.0
    assert authority_factor(SALIENCE_MAX) == pytest.approx(1.2) and authority_factor(SALIENCE_MIN) == pytest.approx(0.85)
    assert 0.8 <= authority_factor(-100) <= authority_factor(100) <= 1.2


def test_signal_lists_agree() -> None:
    assert tuple(FEEDBACK_DELTAS) == SIGNALS == get_args(Signal)


def test_dates_are_read_leniently() -> None:
    assert parse_moment("2026-01-02") == datetime(2026, 1, 2, tzinfo=timezone.utc)
    assert parse_moment("2026-01-02 10:00:00+02:00") == datetime(2026, 1, 2, 8, tzinfo=timezone.utc)
    assert parse_moment("2026-01-02T10:00:00Z") == datetime(2026, 1, 2, 10, tzinfo=timezone.utc)
    assert parse_moment("next tuesday") is None and parse_moment(None) is None


# -- a synthetic year, swept by a real daemon

@dataclass
class Planted:
    path: str
    text: str
    fate: str  # "cold", "expired", or "keep:<why>"
    token: str


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _page(family: str, type_: str, i: int, age: float, now: datetime, fate: str, **extra: Any) -> Planted:
    token = f"yeartok{family[:4]}{i}q"
    updated = now - timedelta(days=age)
    meta = {"type": type_, "title": f"{type_} {i} of the year", "project": PROJECT,
            "created": _stamp(updated - timedelta(hours=2)), "updated": _stamp(updated), **extra}
    head = "\n".join(f"{k}: {json.dumps(v) if isinstance(v, str) else str(v).lower()}" for k, v in meta.items())
    text = f"---\n{head}\n---\n# {meta['title']}\n\nWork on the billing service, marker {token}.\n"
    return Planted(f"{PROJECT}/{family}/{type_.lower().replace(' ', '-')}-{i:03d}.md", text, fate, token)


def _year(now: datetime) -> list[Planted]:
    """About 200 pages over a year. Unused episodic pages are either younger than 60 days or older
    than 100 (the cold edge is 80.5 days), so a few seconds between dry run and sweep change nothing."""
    rng = random.Random(8)
    pages: list[Planted] = []

    def add(family: str, type_: str, n: int, ages: tuple[float, float], fate: str, **extra: Any) -> None:
        for _ in range(n):
            pages.append(_page(family, type_, len(pages), rng.uniform(*ages), now, fate, **extra))

    add("sessions", "Session Summary", 40, (0.5, 60), "keep:young")
    add("sessions", "Session Summary", 45, (100, 365), "cold")
    add("episodes", "Episode", 15, (100, 365), "cold")
    add("notes", "Note", 5, (100, 365), "cold", tier="episodic")  # a tier set by hand decays too
    add("episodes", "Episode", 10, (5, 60), "keep:young")
    add("decisions", "Decision", 20, (0, 365), "keep:semantic")
    add("facts", "Fact", 15, (0, 365), "keep:semantic")
    add("rules", "Rule", 8, (0, 365), "keep:semantic")
    add("procedures", "Procedure", 8, (0, 365), "keep:semantic")
    add("sessions", "Session Summary", 8, (100, 365), "keep:pinned", pinned=True)
    add("facts", "Fact", 2, (0, 30), "keep:pinned", pinned=True, expires_at=_stamp(now - timedelta(days=3)))
    add("sessions", "Session Summary", 4, (150, 365), "keep:superseded", superseded_by=f"{PROJECT}/notes/newer.md")
    add("facts", "Fact", 6, (0, 30), "expired", expires_at=_stamp(now - timedelta(days=2)))
    add("sessions", "Session Summary", 3, (1, 10), "expired", expires_at=_stamp(now - timedelta(hours=1)))
    add("facts", "Fact", 4, (0, 365), "keep:semantic", expires_at=_stamp(now + timedelta(days=30)))
    add("sessions", "Session Summary", 8, (100, 365), "keep:recently-searched")
    add("sessions", "Session Summary", 6, (100, 365), "keep:used-20-days-ago")
    add("sessions", "Session Summary", 4, (150, 365), "cold:used-250-days-ago")
    add("episodes", "Episode", 2, (30, 50), "cold:rated-wrong")
    return pages


def _seed_usage(db: Path, pages: list[Planted], now: datetime) -> None:
    """Usage from the past, written while no daemon runs (a live one owns its database)."""
    rows = []
    for p in pages:
        if p.fate == "keep:used-20-days-ago":
            rows.append((p.path, 5, _stamp(now - timedelta(days=20))))
        elif p.fate == "cold:used-250-days-ago":
            rows.append((p.path, 3, _stamp(now - timedelta(days=250))))
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO page_stats(path, access_count, last_access_at) VALUES (?,?,?)", rows)
    conn.close()


def _git(wiki: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(wiki), *args], capture_output=True, text=True, check=True).stdout


def _sweep(daemon: Daemon, dry_run: bool) -> dict[str, Any]:
    status, body, _ = daemon.request("POST", "/v1/forget-sweep", {"dry_run": dry_run}, timeout=120)
    assert status == 200, body
    return body


def _listing(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["path"], r["tier"], r["reason"]) for r in report["removed"]]


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> Any:
    data_dir = tmp_path_factory.mktemp("year") / "data"
    Daemon(data_dir).start().stop()  # lay out the data dir and its schema
    now = datetime.now(timezone.utc)
    pages = _year(now)
    for p in pages:
        (data_dir / "wiki" / p.path).parent.mkdir(parents=True, exist_ok=True)
        (data_dir / "wiki" / p.path).write_text(p.text)
    _seed_usage(data_dir / "db" / "memory.sqlite", pages, now)
    daemon = Daemon(data_dir).start()
    yield daemon, pages
    daemon.stop()


def test_a_synthetic_year(year: tuple[Daemon, list[Planted]]) -> None:
    daemon, pages = year
    wiki = daemon.data_dir / "wiki"
    assert len(pages) >= 200
    for p in pages:  # a search hit today is a use: these must survive
        if p.fate == "keep:recently-searched":
            assert search_paths(daemon, p.token) == [p.path]
    for p in pages:  # feedback feeds retention: two "wrong" make a 30-50 day old episode cold
        if p.fate == "cold:rated-wrong":
            for _ in range(2):
                assert daemon.request("POST", "/v1/feedback", {"path": p.path, "signal": "wrong"})[0] == 200
    searched = {p.path for p in pages if p.fate == "keep:recently-searched"}
    # access counts are written just after the answer: wait until the plan no longer holds them
    wait_until(lambda: not searched & {r[0] for r in _listing(_sweep(daemon, dry_run=True))}, timeout=15)

    cli = run_cli(daemon.data_dir, "forget-sweep", "--dry-run", "--json", "--url", daemon.url)
    assert cli.returncode == 0, cli.stderr
    dry = json.loads(cli.stdout)
    assert dry["dry_run"] is True and dry["git_commit"] is None
    expected = sorted(p.path for p in pages if not p.fate.startswith("keep"))
    assert sorted(r["path"] for r in dry["removed"]) == expected
    assert all(p.exists() for p in (wiki / q.path for q in pages)), "a dry run changed the wiki"
    by_path = {p.path: p for p in pages}
    for item in dry["removed"]:
        assert item["reason"] == by_path[item["path"]].fate.split(":")[0]
        assert (item["retention"] is None) == (item["reason"] == "expired")
        assert item["retention"] is None or item["retention"] < 0.2

    real = _sweep(daemon, dry_run=False)
    assert _listing(real) == _listing(dry) and real["skipped"] == [] and real["git_commit"]
    _assert_survivors(daemon, pages)
    _assert_recoverable(daemon, pages, real)
    assert _sweep(daemon, dry_run=True)["removed"] == [] and _sweep(daemon, dry_run=False)["removed"] == []


def _assert_survivors(daemon: Daemon, pages: list[Planted]) -> None:
    wiki = daemon.data_dir / "wiki"
    for p in pages:
        assert (wiki / p.path).exists() == p.fate.startswith("keep"), (p.path, p.fate)
    status, body, _ = daemon.request("GET", f"/v1/pages?path={pages[0].path}")
    assert status == 200 and body["path"] == pages[0].path
    cold = next(p for p in pages if p.fate == "cold")
    assert daemon.request("GET", f"/v1/pages?path={cold.path}")[0] == 404
    assert search_paths(daemon, cold.token) == []


def _assert_recoverable(daemon: Daemon, pages: list[Planted], real: dict[str, Any]) -> None:
    wiki = daemon.data_dir / "wiki"
    status, body, _ = daemon.request("GET", f"/v1/tombstones?project={PROJECT}&limit=1000")
    assert status == 200, body
    stones = {t["path"]: t for t in body["tombstones"]}
    assert sorted(stones) == sorted(r["path"] for r in real["removed"])
    assert not _git(wiki, "status", "--porcelain").strip(), "the removals are committed"
    by_path = {p.path: p for p in pages}
    for path, stone in stones.items():
        assert stone["git_commit"] == real["git_commit"] and stone["reason"] == by_path[path].fate.split(":")[0]
        assert _git(wiki, "show", f"{stone['git_commit']}^:{path}") == by_path[path].text
        assert path in _git(wiki, "log", "--all", "--format=", "--name-only", "--diff-filter=D")
    listed = run_cli(daemon.data_dir, "forget-sweep", "--tombstones", "--url", daemon.url)
    assert listed.returncode == 0 and f"git show {real['git_commit'][:12]}^:" in listed.stdout


def test_old_tombstones_are_purged(year: tuple[Daemon, list[Planted]], tmp_path: Path) -> None:
    """purge_days 0: every tombstone is old enough; the sweep purges them (git still has the files)."""
    daemon, pages = year
    before = daemon.request("GET", "/v1/tombstones?limit=1000")[1]["tombstones"]
    if not before:  # run alone: sweep first so there is something to purge
        _sweep(daemon, dry_run=False)
        before = daemon.request("GET", "/v1/tombstones?limit=1000")[1]["tombstones"]
    assert before
    daemon.stop()
    daemon.env = {"AI_MEMORY_FORGET_PURGE_DAYS": "0"}
    daemon.start()
    dry = _sweep(daemon, dry_run=True)
    assert sorted(dry["purged_tombstones"]) == sorted(t["path"] for t in before)
    assert _sweep(daemon, dry_run=False)["purged_tombstones"] == dry["purged_tombstones"]
    assert daemon.request("GET", "/v1/tombstones?limit=1000")[1]["tombstones"] == []
    first = before[0]
    assert _git(daemon.data_dir / "wiki", "show", f"{first['git_commit']}^:{first['path']}")


def test_sweep_input_is_checked(year: tuple[Daemon, list[Planted]]) -> None:
    daemon, _ = year
    assert daemon.request("POST", "/v1/forget-sweep", {"dry_run": "yes"})[0] == 400
    assert daemon.request("POST", "/v1/forget-sweep", [1])[0] == 400
    assert daemon.request("GET", "/v1/tombstones?limit=0")[0] == 400


# -- feedback

EQUAL_BODY = "The flux capacitor needs 1.21 gigawatts from the plutonium chamber to reach 88 mph."


@pytest.fixture
def twins(data_dir: Path) -> Any:
    """Two notes that differ only in their titles' words, which the query does not use."""
    Daemon(data_dir).start().stop()
    paths = []
    for name in ("alpha", "omega"):
        path = f"fb-api/notes/{name}.md"
        (data_dir / "wiki" / "fb-api" / "notes").mkdir(parents=True, exist_ok=True)
        (data_dir / "wiki" / path).write_text(
            f"---\ntype: Note\ntitle: {name.title()} memo\nproject: fb-api\n---\n{EQUAL_BODY}\n")
        paths.append(path)
    daemon = Daemon(data_dir).start()
    yield daemon, paths
    daemon.stop()


def _ranked(daemon: Daemon) -> list[str]:
    status, body, _ = daemon.request("POST", "/v1/query", {"q": "flux capacitor plutonium gigawatts",
                                                          "project": "fb-api", "explain": True})
    assert status == 200, body
    return [h["path"] for h in body["hits"]]


def _feedback(daemon: Daemon, body: Any) -> tuple[int, Any]:
    status, answer, _ = daemon.request("POST", "/v1/feedback", body)
    return status, answer


def test_feedback_changes_rank_and_is_bounded(twins: tuple[Daemon, list[str]]) -> None:
    daemon, paths = twins
    first, second = _ranked(daemon)[:2]
    assert {first, second} == set(paths)
    status, body = _feedback(daemon, {"path": second, "signal": "helpful"})
    assert status == 200 and (body["salience_before"], body["salience"], body["feedback_count"]) == (1.0, 1.25, 1)
    _feedback(daemon, {"path": first, "signal": "not_helpful"})
    assert _ranked(daemon)[:2] == [second, first]
    for _ in range(6):
        top = _feedback(daemon, {"path": second, "signal": "helpful"})[1]
        low = _feedback(daemon, {"path": first, "signal": "wrong"})[1]
    assert top["salience"] == 2.0 and low["salience"] == 0.25 and top["feedback_count"] == 7
    assert _ranked(daemon)[:2] == [second, first]
    cli = run_cli(daemon.data_dir, "feedback", first, "helpful", "--json", "--url", daemon.url)
    assert cli.returncode == 0 and json.loads(cli.stdout)["salience"] == 0.5


def test_feedback_errors(twins: tuple[Daemon, list[str]]) -> None:
    daemon, paths = twins
    assert _feedback(daemon, {"path": paths[0], "signal": "great"})[0] == 400
    assert _feedback(daemon, {"path": paths[0]})[0] == 400
    assert _feedback(daemon, {"signal": "helpful"})[0] == 400
    assert _feedback(daemon, ["helpful"])[0] == 400
    status, body = _feedback(daemon, {"path": "fb-api/notes/nothing.md", "signal": "helpful"})
    assert status == 404 and body["error"]
    assert _feedback(daemon, {"id": "01NOSUCHID", "signal": "stale"})[0] == 404
    cli = run_cli(daemon.data_dir, "feedback", "fb-api/notes/nothing.md", "wrong", "--url", daemon.url)
    assert cli.returncode == 1 and "no such page" in cli.stderr
    assert run_cli(daemon.data_dir, "feedback", paths[0], "great").returncode == 2


def test_the_daemon_sweeps_by_itself(data_dir: Path) -> None:
    """forget.sweep_interval_hours: the background sweep removes a cold page one interval after start."""
    Daemon(data_dir).start().stop()
    now = datetime.now(timezone.utc)
    old = _page("sessions", "Session Summary", 1, 200, now, "cold")
    young = _page("sessions", "Session Summary", 2, 3, now, "keep:young")
    for p in (old, young):
        (data_dir / "wiki" / p.path).parent.mkdir(parents=True, exist_ok=True)
        (data_dir / "wiki" / p.path).write_text(p.text)
    daemon = Daemon(data_dir, env={"AI_MEMORY_FORGET_SWEEP_INTERVAL_HOURS": "0.0005"}).start()  # 1.8 s
    try:
        def stones() -> list[dict[str, Any]]:
            return daemon.request("GET", "/v1/tombstones")[1]["tombstones"]

        # the file goes first, then its tombstone, then the commit id is recorded: wait for the last
        wait_until(lambda: any(t["git_commit"] for t in stones()), timeout=30)
        assert not (data_dir / "wiki" / old.path).exists() and (data_dir / "wiki" / young.path).exists()
        assert [(t["path"], t["reason"], t["tier"]) for t in stones()] == [(old.path, "cold", "episodic")]
        text = run_cli(data_dir, "forget-sweep", "--dry-run", "--url", daemon.url)
        assert text.returncode == 0 and "would remove 0 pages" in text.stdout
    finally:
        daemon.stop()


def test_a_restart_does_not_reset_the_sweep_clock(data_dir: Path) -> None:
    """The last sweep's time outlives the daemon: one overdue at start runs at once."""
    Daemon(data_dir).start().stop()
    now = datetime.now(timezone.utc)
    old = _page("sessions", "Session Summary", 1, 200, now, "cold")
    (data_dir / "wiki" / old.path).parent.mkdir(parents=True, exist_ok=True)
    (data_dir / "wiki" / old.path).write_text(old.text)
    marker = data_dir / "db" / "forget-sweep.last"
    marker.touch()
    two_days_ago = time.time() - 2 * 86400
    os.utime(marker, (two_days_ago, two_days_ago))
    daemon = Daemon(data_dir, env={"AI_MEMORY_FORGET_SWEEP_INTERVAL_HOURS": "24"}).start()
    try:
        wait_until(lambda: not (data_dir / "wiki" / old.path).exists(), timeout=30)
        wait_until(lambda: marker.stat().st_mtime > two_days_ago + 86400, timeout=30)
    finally:
        daemon.stop()
