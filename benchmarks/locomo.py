"""LoCoMo retrieval benchmark: our daemon against BM25 and MiniLM baselines on the same turns.

    python benchmarks/locomo.py --data ../shared/data/locomo/locomo-dev.json [--conversations 0-4] [--json OUT]

For each conversation: a fresh data dir and daemon; each session is ingested through the real
hook path (SessionStart, one UserPromptSubmit per turn carrying "Speaker: text", as a
transcript writes it, SessionEnd) with timestamps from ``session_N_date_time``; then every
question of categories 1-4 goes through /v1/query for that conversation's project. A turn is
known by the observation id its hook was answered with: the benchmark maps the evidence
observations back to LoCoMo's dia_ids itself. In the same run the baselines score the same
turns: SQLite FTS5 BM25 over "<date> <speaker>: <text>" (OR-joined, stopwords dropped; a
session scored by its best turn) and MiniLM cosine over the turns.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from harness import REPO, Daemon, ablation_rows, explained_hits, print_ablation

sys.path.insert(0, str(REPO))

from ai_memory.retrieval.fts import STOPWORDS  # noqa: E402

METRICS = ("hit@1", "hit@3", "hit@5", "hit@10", "recall@5", "recall@10", "mrr@10", "turn_hit@5", "turn_hit@10")
_DIA = re.compile(r"D(\d+):(\d+)")


def parse_when(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def sessions_of(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    out = []
    for key, turns in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            out.append((int(m.group(1)), parse_when(conv[f"{key}_date_time"]), turns))
    return sorted(out)


def evidence_of(qa: dict[str, Any]) -> tuple[set[int], set[str]]:
    sessions, turns = set(), set()
    for item in qa.get("evidence") or []:
        for s, t in _DIA.findall(str(item)):
            sessions.add(int(s))
            turns.add(f"D{s}:{t}")
    return sessions, turns


def turn_payload(turn: dict[str, Any]) -> dict[str, Any]:
    """What a turn's hook carries: the turn as a transcript writes it."""
    return {"prompt": f"{turn['speaker']}: {turn['text']}"}


def ingest(d: Daemon, sample: str, conv: dict[str, Any]) -> dict[str, str]:
    """Post every session; the dia_id of each stored turn, by the observation id the hook returned."""
    cwd = f"/locomo/{sample}"
    dia_of: dict[str, str] = {}
    for number, when, turns in sessions_of(conv):
        sid = f"{sample}-s{number}"
        base = {"session_id": sid, "cwd": cwd}
        d.call("POST", "/hook?agent=locomo", {**base, "hook_event_name": "SessionStart",
                                               "timestamp": when.isoformat()})
        for i, turn in enumerate(turns):
            stamp = (when + timedelta(seconds=i + 1)).isoformat()
            status, body = d.call("POST", "/hook?agent=locomo", {
                **base, "hook_event_name": "UserPromptSubmit", "timestamp": stamp, **turn_payload(turn)})
            assert status == 202, body
            dia_of[body["id"]] = turn["dia_id"]
        d.call("POST", "/hook?agent=locomo", {**base, "hook_event_name": "SessionEnd", "reason": "other",
                                               "timestamp": (when + timedelta(seconds=len(turns) + 1)).isoformat()})
    return dia_of


def score(ranked_sessions: list[int], turn_lists: list[set[str]], gold_sessions: set[int],
          gold_turns: set[str]) -> dict[str, float]:
    out = {}
    for k in (1, 3, 5, 10):
        out[f"hit@{k}"] = float(any(s in gold_sessions for s in ranked_sessions[:k]))
    for k in (5, 10):
        out[f"recall@{k}"] = len(gold_sessions & set(ranked_sessions[:k])) / len(gold_sessions)
        out[f"turn_hit@{k}"] = float(any(t in gold_turns for ts in turn_lists[:k] for t in ts))
    rr = 0.0
    for i, s in enumerate(ranked_sessions[:10], start=1):
        if s in gold_sessions:
            rr = 1.0 / i
            break
    out["mrr@10"] = rr
    return out


def ours(d: Daemon, sample: str, qa: dict[str, Any], dia_of: dict[str, str]) -> tuple[dict[str, float], float]:
    t0 = time.perf_counter()
    status, body = d.call("POST", "/v1/query", {"q": qa["question"], "project": sample, "k": 10})
    elapsed = (time.perf_counter() - t0) * 1000
    assert status == 200, body
    return judged(body["hits"], qa, dia_of), elapsed


def judged(hits: list[dict[str, Any]], qa: dict[str, Any], dia_of: dict[str, str]) -> dict[str, float]:
    """One question's metrics from the hits, best first (sessions and their evidence turns)."""
    ranked, turns = [], []
    for hit in hits[:10]:
        sid = hit.get("session_id") or ""
        m = re.search(r"-s(\d+)$", sid)
        ranked.append(int(m.group(1)) if m else -1)
        turns.append({dia_of[e["observation_id"]] for e in hit.get("evidence", []) if e["observation_id"] in dia_of})
    gold_s, gold_t = evidence_of(qa)
    return score(ranked, turns, gold_s, gold_t)


# ---- baselines over the same turns ----------------------------------------------------------

class Baselines:
    def __init__(self, conv: dict[str, Any], embedder: Any) -> None:
        self.turns: list[tuple[int, str, str]] = []  # (session number, dia_id, text)
        for number, when, turns in sessions_of(conv):
            for turn in turns:
                date = when.strftime("%d %B %Y")
                self.turns.append((number, turn["dia_id"], f"{date} {turn['speaker']}: {turn['text']}"))
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        self.db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)",
                            [(i + 1, text) for i, (_, _, text) in enumerate(self.turns)])
        self.embedder = embedder
        self.matrix = embedder.encode([t for _, _, t in self.turns]) if embedder is not None else None

    def _rank(self, turn_order: list[int]) -> tuple[list[int], list[set[str]]]:
        sessions: list[int] = []
        for i in turn_order:
            s = self.turns[i][0]
            if s not in sessions:
                sessions.append(s)
        top_turns = [{self.turns[i][1]} for i in turn_order[:10]]
        return sessions[:10], top_turns

    def bm25(self, question: str) -> tuple[list[int], list[set[str]]]:
        words = [w for w in re.findall(r"\w+", question.lower()) if w not in STOPWORDS]
        if not words:
            return [], []
        expr = " OR ".join(f'"{w}"' for w in words)
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 200", (expr,)).fetchall()
        return self._rank([r[0] - 1 for r in rows])

    def minilm(self, question: str) -> tuple[list[int], list[set[str]]]:
        q = self.embedder.encode([question])[0]
        order = list((self.matrix @ q).argsort()[::-1][:200])
        return self._rank([int(i) for i in order])


def mean_metrics(rows: list[dict[str, float]], ms: list[float] | None = None) -> dict[str, float]:
    out = {m: round(statistics.fmean(r[m] for r in rows), 4) for m in METRICS} if rows else {}
    if ms:
        ordered = sorted(ms)
        out["query_ms_p50"] = round(statistics.median(ordered), 1)
        out["query_ms_p95"] = round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1)
    return out


def parse_range(text: str, n: int) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return [i for i in range(int(a), int(b) + 1) if i < n]
    return [int(x) for x in text.split(",") if int(x) < n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json")
    parser.add_argument("--conversations", default="0-9")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--ablation", action="store_true",
                        help="also rank every question with each reranker feature removed in turn")
    args = parser.parse_args()
    if not args.data.exists():
        sys.exit(f"LoCoMo data not found at {args.data}; pass --data PATH/locomo10.json")
    data = json.loads(args.data.read_text())
    from ai_memory.config import user_model_cache
    from ai_memory.embed.model import MiniLM

    embedder = MiniLM(threads=2, cache_dir=user_model_cache())
    ours_rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    base_rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    explained: list[tuple[list[dict[str, Any]], tuple[dict[str, Any], dict[str, str]]]] = []
    for index in parse_range(args.conversations, len(data)):
        item = data[index]
        sample = item.get("sample_id", f"conv-{index}")
        questions = [qa for qa in item["qa"] if qa.get("category") in (1, 2, 3, 4) and evidence_of(qa)[0]]
        with tempfile.TemporaryDirectory() as tmp:
            d = Daemon(Path(tmp) / "data")
            try:
                t0 = time.time()
                dia_of = ingest(d, sample, item["conversation"])
                d.wait_ready(len(sessions_of(item["conversation"])), timeout_s=900)
                print(f"{sample}: {len(dia_of)} turns ingested and indexed in {time.time() - t0:.1f} s; "
                      f"{len(questions)} questions", flush=True)
                baselines = Baselines(item["conversation"], embedder)
                for qa in questions:
                    metrics, ms = ours(d, sample, qa, dia_of)
                    latencies.append(ms)
                    ours_rows["all"].append(metrics)
                    ours_rows[str(qa["category"])].append(metrics)
                    gold_s, gold_t = evidence_of(qa)
                    base_rows["fts5"].append(score(*baselines.bm25(qa["question"]), gold_s, gold_t))
                    base_rows["minilm"].append(score(*baselines.minilm(qa["question"]), gold_s, gold_t))
                if args.ablation:
                    explained += [(explained_hits(d, {"q": qa["question"], "project": sample}), (qa, dia_of))
                                  for qa in questions]
            finally:
                d.stop()
    overall = mean_metrics(ours_rows["all"], latencies)
    result = {
        "overall": overall,
        "by_category": {c: mean_metrics(ours_rows[c]) for c in ("1", "2", "3", "4") if ours_rows[c]},
        "baselines": {"fts5": mean_metrics(base_rows["fts5"]), "minilm": mean_metrics(base_rows["minilm"])},
        "questions": len(ours_rows["all"]),
    }
    header = "".join(f"{m:>12}" for m in METRICS)
    print(f"\n{'':<14}{header}")
    for name, m in [("ours", overall), ("fts5 bm25", result["baselines"]["fts5"]),
                    ("minilm", result["baselines"]["minilm"])] + \
            [(f"ours cat {c}", result["by_category"][c]) for c in result["by_category"]]:
        print(f"{name:<14}" + "".join(f"{m[k]:>12.3f}" for k in METRICS))
    for name in ("fts5", "minilm"):
        base = result["baselines"][name]
        ratios = {k: round(overall[k] / base[k], 3) if base[k] else None for k in METRICS}
        result.setdefault("ratios", {})[name] = ratios
        print(f"{'ours/' + name:<14}" + "".join(f"{(ratios[k] or 0):>12.3f}" for k in METRICS))
    print(f"\nquery latency through HTTP: p50 {overall['query_ms_p50']} ms, p95 {overall['query_ms_p95']} ms; "
          f"{result['questions']} questions")
    if args.ablation:
        result["ablation"] = ablation_rows(explained, lambda hits, gold: judged(hits, *gold), METRICS)
        print_ablation(result["ablation"], METRICS)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
