"""Coding-session retrieval: a project's history replayed as agent sessions, against BM25 and MiniLM.

    python benchmarks/codesessions.py --data ../shared/data/codesessions/yarl.json [--json OUT]
        [--vectors-cache FILE] [--embed-threads 2] [--keep DIR | --reuse DIR]

Any file in the codesessions format (``../shared/data/codesessions/README.md``; its converter
makes one from any git history with towncrier fragments) works. A fresh data dir and daemon;
each session goes through the real hook path as Claude Code sends it: SessionStart,
UserPromptSubmit with the prompt, one PostToolUse Edit per edit (``file_path`` under
``--root``/<project>), Stop with the reply as ``last_assistant_message``, SessionEnd, with the
session's time plus a second per event as ``timestamp``. Once every session is compiled and
embedded, each question goes through ``/v1/query`` for that project (k=10) and the sessions
returned are scored (hit@1/5/10, MRR@10, latency through HTTP), overall and by question kind.
In the same run: SQLite FTS5 BM25 over each session's text (prompt, file paths, old and new
strings, reply; one document a session, OR of the question's words without stopwords) and
MiniLM (a session scored by its best text: the prompt, each edit, the reply). Each search
also reports the time of each of its retrieval stages (``profile``), printed beside the latency.

``--vectors-cache`` keeps every vector (the daemon's and the MiniLM baseline's) by content
hash in one file, so a re-run embeds only texts it has not seen.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness import (
    RANK_METRICS, REPO, Daemon, ablation_rows, encode_cached, explained_hits, latency_summary, mean_of,
    print_ablation, rank_metrics, rank_of, save_vectors, seed_vectors,
)

sys.path.insert(0, str(REPO))

from ai_memory.retrieval.fts import STOPWORDS  # noqa: E402

DEFAULT_ROOT = "/home/dev"


class FormatError(ValueError):
    """The data file is not in the codesessions format."""


def load(path: Path) -> dict[str, Any]:
    """The data set, checked for what the replay reads."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FormatError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("project"), str):
        raise FormatError("expected an object with project, sessions and questions")
    sessions, questions = data.get("sessions"), data.get("questions")
    if not isinstance(sessions, list) or not isinstance(questions, list) or not sessions or not questions:
        raise FormatError("sessions and questions must be non-empty lists")
    for s in sessions:
        if not (isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("time"), str)
                and isinstance(s.get("prompt"), str) and isinstance(s.get("edits", []), list)):
            raise FormatError(f"bad session: {str(s)[:120]}")
        for e in s.get("edits", []):
            if not (isinstance(e, dict) and all(isinstance(e.get(k), str)
                                                for k in ("file_path", "old_string", "new_string"))):
                raise FormatError(f"bad edit in session {s['id']}: {str(e)[:120]}")
    known = {s["id"] for s in sessions}
    for q in questions:
        if not (isinstance(q, dict) and isinstance(q.get("q"), str) and isinstance(q.get("gold"), list)
                and q["gold"] and set(q["gold"]) <= known):
            raise FormatError(f"bad question (needs q and gold sessions that exist): {str(q)[:120]}")
    return data


def when(session: dict[str, Any]) -> datetime:
    moment = datetime.fromisoformat(session["time"].replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def hook_events(session: dict[str, Any], cwd: str) -> list[dict[str, Any]]:
    """The session as Claude Code's hooks would post it."""
    sid, start = session["id"], when(session)
    base = {"session_id": sid, "cwd": cwd, "transcript_path": f"/tmp/{sid}.jsonl"}
    events: list[dict[str, Any]] = [{"hook_event_name": "SessionStart", "source": "startup"},
                                    {"hook_event_name": "UserPromptSubmit", "prompt": session["prompt"]}]
    for i, edit in enumerate(session.get("edits", [])):
        path = f"{cwd}/{edit['file_path']}"
        events.append({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": f"toolu_{sid}_{i}",
                       "tool_input": {"file_path": path, "old_string": edit["old_string"],
                                      "new_string": edit["new_string"], "replace_all": False},
                       "tool_response": {"filePath": path, "success": True}})
    events.append({"hook_event_name": "Stop", "stop_hook_active": False,
                   "last_assistant_message": session.get("reply") or ""})
    events.append({"hook_event_name": "SessionEnd", "reason": "exit"})
    return [{**base, **event, "timestamp": (start + timedelta(seconds=i)).isoformat()}
            for i, event in enumerate(events)]


def ingest(d: Daemon, data: dict[str, Any], cwd: str) -> int:
    n = 0
    for session in data["sessions"]:
        for event in hook_events(session, cwd):
            status, body = d.call("POST", "/hook?agent=claude", event)
            if status != 202:
                raise RuntimeError(f"hook refused ({status}): {body}")
            n += 1
    return n


def ask(d: Daemon, project: str, q: str) -> tuple[list[str], float, dict[str, float]]:
    """The sessions found, the time through HTTP, and the time of each stage (a search times
    its stages anyway: ``profile`` only returns them)."""
    t0 = time.perf_counter()
    status, body = d.call("POST", "/v1/query", {"q": q, "project": project, "k": 10, "profile": True})
    elapsed = (time.perf_counter() - t0) * 1000
    if status != 200:
        raise RuntimeError(f"query refused ({status}): {body}")
    ranked = list(dict.fromkeys(h.get("session_id") or h["path"] for h in body["hits"]))
    return ranked, elapsed, body.get("profile_ms") or {}


# ---- baselines over the same session text ------------------------------------------------------

def session_texts(session: dict[str, Any]) -> list[str]:
    """What the daemon was told, one text per event: the prompt, each edit, the reply."""
    texts = [session["prompt"]]
    texts += [f"{e['file_path']}\n{e['old_string']}\n{e['new_string']}" for e in session.get("edits", [])]
    if session.get("reply"):
        texts.append(session["reply"])
    return texts


class Baselines:
    def __init__(self, data: dict[str, Any], embedder: Any, cache: Path | None) -> None:
        self.ids = [s["id"] for s in data["sessions"]]
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        self.db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)",
                            [(i + 1, "\n".join(session_texts(s))) for i, s in enumerate(data["sessions"])])
        self.embedder = embedder
        owners, texts = [], []
        for i, s in enumerate(data["sessions"]):
            for text in session_texts(s):
                owners.append(i)
                texts.append(text)
        self.owners = owners
        self.matrix = encode_cached(embedder, texts, cache)

    def bm25(self, question: str) -> list[str]:
        words = list(dict.fromkeys(w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS))
        if not words:
            return []
        expr = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,)).fetchall()
        return [self.ids[r[0] - 1] for r in rows]

    def minilm(self, question: str) -> list[str]:
        sims = self.matrix @ self.embedder.encode([question])[0]
        ranked: list[str] = []
        for i in sims.argsort()[::-1]:
            sid = self.ids[self.owners[int(i)]]
            if sid not in ranked:
                ranked.append(sid)
                if len(ranked) == 10:
                    break
        return ranked


# ---- the run -----------------------------------------------------------------------------------

def prepare(args: argparse.Namespace, data: dict[str, Any], home: Path) -> Daemon:
    """A daemon over a data dir holding every session, compiled and embedded."""
    env = {"AI_MEMORY_EMBED_THREADS": str(args.embed_threads)} if args.embed_threads else {}
    if args.reuse:
        d = Daemon(args.reuse, env)
        d.wait_ready(0, progress=True)  # compiled by the run that built it
        return d
    db = home / "db" / "memory.sqlite"
    if args.vectors_cache and args.vectors_cache.exists():
        print(f"seeded {seed_vectors(db, args.vectors_cache):,} vectors from {args.vectors_cache}", flush=True)
    d = Daemon(home, env)
    t0 = time.time()
    n = ingest(d, data, f"{args.root}/{data['project']}")
    t1 = time.time()
    print(f"{n:,} hook events of {len(data['sessions']):,} sessions posted in {t1 - t0:.1f} s", flush=True)
    d.wait_ready(len(data["sessions"]), progress=True)
    print(f"compiled and embedded {time.time() - t1:.1f} s later", flush=True)
    if args.vectors_cache:
        print(f"{save_vectors(db, args.vectors_cache):,} new vectors kept in {args.vectors_cache}", flush=True)
    return d


def measure(d: Daemon, data: dict[str, Any], baselines: Baselines) -> dict[str, Any]:
    project = data["project"]
    rows: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
    stages: dict[str, list[float]] = defaultdict(list)
    misses = []
    ask(d, project, data["questions"][0]["q"])  # warm: the first search loads the vector matrices
    # Ours first, each question after the other, the baselines after: the baseline model's
    # threads keep spinning on both cores for a while after each of its encodings, and between
    # our searches they had doubled the full-text stages.
    answers = []
    for qa in data["questions"]:
        ranked, ms, profile = ask(d, project, qa["q"])
        answers.append(ranked)
        latencies.append(ms)
        for name, value in profile.items():
            stages[name].append(float(value))
        stages["(all stages)"].append(sum(profile.values()))
        stages["(outside: HTTP, worker)"].append(ms - sum(profile.values()))
    for qa, ranked in zip(data["questions"], answers):
        kind = str(qa.get("kind") or "-")
        for system, found in (("ours", ranked), ("fts5", baselines.bm25(qa["q"])),
                              ("minilm", baselines.minilm(qa["q"]))):
            metrics = rank_metrics(rank_of(found, qa["gold"]))
            rows[system]["all"].append(metrics)
            rows[system][kind].append(metrics)
        if ranked[:1] != qa["gold"][:1] and ranked[:1] and ranked[0] not in qa["gold"]:
            misses.append({"id": qa.get("id"), "q": qa["q"][:160], "gold": qa["gold"],
                           "rank": rank_of(ranked, qa["gold"]), "top": ranked[:3]})
    kinds = sorted({k for k in rows["ours"] if k != "all"}, key=lambda k: -len(rows["ours"][k]))
    return {
        "questions": len(data["questions"]),
        "systems": {s: mean_of(rows[s]["all"], RANK_METRICS) for s in ("ours", "fts5", "minilm")},
        "by_kind": {k: {"n": len(rows["ours"][k]), **{s: mean_of(rows[s][k], RANK_METRICS)
                                                       for s in ("ours", "fts5", "minilm")}} for k in kinds},
        "latency_ms": latency_summary(latencies),
        "stages_ms": {name: latency_summary(values) for name, values in stages.items()},
        "misses_at_1": misses,
    }


def ablation(d: Daemon, data: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Every question's candidates with their features, ranked again without each feature."""
    explained = [(explained_hits(d, {"q": qa["q"], "project": data["project"]}), qa["gold"])
                 for qa in data["questions"]]

    def judge(hits: list[dict[str, Any]], gold: list[str]) -> dict[str, float]:
        return rank_metrics(rank_of(list(dict.fromkeys(h.get("session_id") or h["path"] for h in hits)), gold))

    return ablation_rows(explained, judge, RANK_METRICS)


def report(result: dict[str, Any]) -> None:
    systems = result["systems"]
    lat = result["latency_ms"]
    print(f"\n{result['questions']} questions, {result['sessions']:,} sessions, "
          f"{result['observations']:,} observations")
    print(f"{'':<16}" + "".join(f"{m:>10}" for m in RANK_METRICS) + f"{'p50 ms':>10}{'p95 ms':>10}")
    for name, label in (("ours", "ours"), ("fts5", "fts5 bm25"), ("minilm", "minilm")):
        tail = f"{lat['p50']:>10.1f}{lat['p95']:>10.1f}" if name == "ours" else ""
        print(f"{label:<16}" + "".join(f"{systems[name][m]:>10.3f}" for m in RANK_METRICS) + tail)
    for base in ("fts5", "minilm"):
        print(f"{'ours/' + base:<16}" + "".join(
            f"{systems['ours'][m] / systems[base][m] if systems[base][m] else 0:>10.3f}" for m in RANK_METRICS))
    print("\nby question kind (hit@1 / MRR@10: ours | fts5 | minilm)")
    for kind, k in result["by_kind"].items():
        cells = " | ".join(f"{k[s]['hit@1']:.3f} / {k[s]['mrr@10']:.3f}" for s in ("ours", "fts5", "minilm"))
        print(f"  {kind:<12}{k['n']:>4}  {cells}")
    print(f"\nquery latency through HTTP: p50 {lat['p50']} ms, p95 {lat['p95']} ms, p99 {lat['p99']} ms, "
          f"max {lat['max']} ms")
    if result["stages_ms"]:
        print("stages of the same searches (profile), p50 / p95 ms:")
        for name, s in result["stages_ms"].items():
            print(f"  {name:<22}{s['p50']:>8.1f}{s['p95']:>8.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "codesessions" / "yarl.json")
    parser.add_argument("--root", default=DEFAULT_ROOT, help="the sessions' project lives in ROOT/<project>")
    parser.add_argument("--json", type=Path, help="write every figure (and the misses at rank 1) here")
    parser.add_argument("--vectors-cache", type=Path, help="a file of vectors by content hash, read and grown")
    parser.add_argument("--embed-threads", type=int, help="AI_MEMORY_EMBED_THREADS for the daemon")
    parser.add_argument("--ablation", action="store_true",
                        help="also rank every question with each reranker feature removed in turn")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path, help="build the data dir here and leave it")
    where.add_argument("--reuse", type=Path, help="query a data dir an earlier --keep built (no ingest)")
    args = parser.parse_args()
    try:
        data = load(args.data)
    except FormatError as exc:
        print(f"codesessions: {exc}", file=sys.stderr)
        return 2
    from ai_memory.config import user_model_cache
    from ai_memory.embed.model import MiniLM

    embedder = MiniLM(threads=2, cache_dir=user_model_cache())
    baselines = Baselines(data, embedder, args.vectors_cache)  # first: the daemon's ingest is timed alone
    with tempfile.TemporaryDirectory() as tmp:
        home = args.keep or Path(tmp) / "data"
        d = prepare(args, data, home)
        try:
            status = d.call("GET", "/status")[1]
            result = {"data": str(args.data), "sessions": len(data["sessions"]),
                      "observations": status["counts"]["observations"], **measure(d, data, baselines)}
            if args.ablation:
                result["ablation"] = ablation(d, data)
        finally:
            d.stop()
    report(result)
    if "ablation" in result:
        print_ablation(result["ablation"], RANK_METRICS)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
