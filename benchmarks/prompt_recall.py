"""Prompt recall: each development question sent as the prompt of a new session through the real
hook client, and what memory hands over read as Claude Code reads it, beside a BM25-top-3 baseline.

    python benchmarks/prompt_recall.py [--data yarl.json] [--negatives negatives-pytest.json]
        [--keep DIR | --reuse DIR] [--vectors-cache FILE] [--json OUT] [--study OUT]

A data dir holding the project's history replayed as sessions (``codesessions.py``'s replay, or
``--reuse`` of a dir it or this built), plus structured memories written through the API over
the replayed sessions: for every fourth question, a decision, rule, gotcha or procedure stating
what its gold session did (its reply's first paragraph, else its prompt), as an agent would
store it. Then each question, and each prompt of ``--negatives`` (another project's changelog,
which this memory does not hold), goes to ``ai-memory hook --agent claude --event
UserPromptSubmit`` as a new session's UserPromptSubmit payload, and the JSON it prints is read
as Claude Code reads it (``hookSpecificOutput.additionalContext``: the items are the page paths
it names). Figures:

- hit: the share of questions whose gold (its session, or the memory written over it) is among
  the items; any: the share of questions that got any item; precision: gold items / items;
- negatives: the share of the other project's prompts that got any item (should stay silent);
- context characters p95 (what the agent is handed beside a prompt), hook wall ms p50/p95 with
  the daemon up, stopped (SIGSTOP: hung) and gone;
- memories first: of the questions a memory was written for, the share where the memory was
  handed over ahead of the session it came from (what the project decided outranks what a
  session said);
- the same figures for BM25 top 3 over each session's text, held to the same character budget,
  in the same run.

``--study OUT`` also writes every prompt's hits with what their confidence is made of
(``/v1/query`` explain): ``recall_calibration.py OUT`` fits the confidence on it and prints what
each threshold gives (docs/guides/search.md: Prompt recall).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from codesessions import DEFAULT_ROOT, Baselines, FormatError, load, prepare
from harness import REPO, Daemon, latency_summary

EVERY = 4  # a memory over the gold session of every fourth question
KIND_OF_CHANGE = {"bugfix": "gotcha", "feature": "decision", "breaking": "decision", "packaging": "procedure",
                  "contrib": "procedure", "doc": "rule", "misc": "rule"}
ITEM = re.compile(r"^- \[[^\]]*\] (\S+\.md): (.*)$", re.M)
BUDGET = 1200
DOWN_PROMPTS = 40
CLI_COMMAND = f"{REPO / '.venv' / 'bin' / 'ai-memory'} hook --agent claude --event UserPromptSubmit"
RUN = f"{os.getpid()}-{int(time.time())}"  # every prompt a new session, in a reused data dir too


def memory_of(qa: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
    """A structured memory stating what the question's gold session did, as an agent would store it."""
    paragraph = (session.get("reply") or "").strip().split("\n\n")[0].strip() or session["prompt"]
    return {"text": " ".join(paragraph.split())[:600], "title": session["prompt"][:120],
            "kind": KIND_OF_CHANGE.get(str(qa.get("kind")), "decision"), "project": None,
            "idempotency_key": f"bench-memory-{qa.get('id')}", "tags": ["benchmark"]}


def write_memories(d: Daemon, data: dict[str, Any]) -> dict[str, str]:
    """question id → the memory's path (written once: a re-run finds them by idempotency key)."""
    sessions = {s["id"]: s for s in data["sessions"]}
    written = {}
    for i, qa in enumerate(data["questions"]):
        if i % EVERY:
            continue
        body = {**memory_of(qa, sessions[qa["gold"][0]]), "project": data["project"]}
        status, reply = d.call("POST", "/v1/pages", body)
        if status in (200, 201):
            written[str(qa.get("id"))] = reply["path"]
        elif status != 409:  # a duplicate of a memory written already (two questions, one session)
            raise RuntimeError(f"memory refused ({status}): {reply}")
    return written


def installed_command(data_dir: Path) -> str:
    """What ``install-hooks --agent claude`` writes for UserPromptSubmit (user scope), with the
    hook client it copies into the data dir."""
    from ai_memory.client.agent_settings import Target, hook_command, install_hook_client

    install_hook_client(data_dir)
    target = Target("claude", "user", Path.home(), Path.cwd(), "", data_dir)
    return hook_command(target, "UserPromptSubmit")


def hook(data_dir: Path, prompt: str, n: int, cwd: str, command: str) -> tuple[float, str]:
    """One prompt of a new session through ``command``, run as Claude Code runs it (``sh -c``):
    (wall ms, what it handed over)."""
    payload = {"session_id": f"recall-bench-{RUN}-{n}", "hook_event_name": "UserPromptSubmit", "cwd": cwd,
               "transcript_path": f"/tmp/recall-bench-{n}.jsonl", "prompt": prompt, "permission_mode": "default"}
    env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    t0 = time.perf_counter()
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=30)
    ms = (time.perf_counter() - t0) * 1000
    out = done.stdout.strip()
    context = ""
    if out.startswith("{"):
        context = (json.loads(out).get("hookSpecificOutput") or {}).get("additionalContext") or ""
    return ms, context


def score(prompts: list[dict[str, Any]], golds: list[set[str]], handed: list[list[str]]) -> dict[str, float]:
    hits = sum(1 for gold, items in zip(golds, handed) if gold & set(items))
    items = sum(len(items) for items in handed)
    right = sum(len(gold & set(items)) for gold, items in zip(golds, handed))
    return {"hit": hits / len(prompts), "any": sum(1 for items in handed if items) / len(prompts),
            "precision": right / items if items else 0.0}


def gold_paths(d: Daemon, data: dict[str, Any], memories: dict[str, str]) -> list[set[str]]:
    """Each question's gold pages: its sessions' pages, and the memory written over them."""
    page_of = _session_pages(d, data["project"])
    return [{page_of.get(g, g) for g in qa["gold"]} | ({memories[str(qa.get("id"))]}
            if str(qa.get("id")) in memories else set()) for qa in data["questions"]]


def run(d: Daemon, data: dict[str, Any], negatives: list[dict[str, Any]], memories: dict[str, str],
        baselines: Baselines, cwd: str, command: str) -> dict[str, Any]:
    sessions = {s["id"]: s for s in data["sessions"]}
    page_of = _session_pages(d, data["project"])
    golds = gold_paths(d, data, memories)
    ours, chars, ms, first = [], [], [], []
    for n, qa in enumerate(data["questions"]):
        took, context = hook(d.data, qa["q"], n, cwd, command)
        items = ITEM.findall(context)
        ours.append([path for path, _ in items])
        chars.append(len(context))
        ms.append(took)
        memory = memories.get(str(qa.get("id")))
        if memory:
            session_page = page_of.get(qa["gold"][0])
            paths = ours[-1]
            first.append(memory in paths and (session_page not in paths or paths.index(memory) < paths.index(session_page)))
    neg = []
    for n, qa in enumerate(negatives):
        took, context = hook(d.data, qa["q"], 10_000 + n, cwd, command)
        neg.append([path for path, _ in ITEM.findall(context)])
        chars.append(len(context))
        ms.append(took)
    result = {"ours": {**score(data["questions"], golds, ours),
                       "negatives_any": sum(1 for items in neg if items) / len(neg),
                       "context_chars_p95": _p95(chars), "hook_ms_up": latency_summary(ms),
                       "memories_first": sum(first) / len(first) if first else None, "memories": len(first)}}
    result["bm25_top3"] = bm25_baseline(data, negatives, baselines, golds, page_of, sessions)
    return result


def bm25_baseline(data: dict[str, Any], negatives: list[dict[str, Any]], baselines: Baselines,
                  golds: list[set[str]], page_of: dict[str, str], sessions: dict[str, Any]) -> dict[str, Any]:
    """BM25 top 3 sessions for every prompt, each as an item line (its prompt), within the budget."""
    handed, chars = [], []
    for qa in [*data["questions"], *negatives]:
        block, items = "", []
        for sid in baselines.bm25(qa["q"])[:3]:
            line = f"- [session] {page_of.get(sid, sid)}: {sessions[sid]['prompt'][:300]}\n"
            if len(block) + len(line) > BUDGET:
                break
            block += line
            items.append(page_of.get(sid, sid))
        handed.append(items)
        chars.append(len(block))
    positives = handed[:len(data["questions"])]
    return {**score(data["questions"], golds, positives),
            "negatives_any": sum(1 for items in handed[len(data["questions"]):] if items) / len(negatives),
            "context_chars_p95": _p95(chars)}


def _session_pages(d: Daemon, project: str) -> dict[str, str]:
    """session id → its page's path (what the hook hands over names the page)."""
    import sqlite3

    with sqlite3.connect(d.data / "db" / "memory.sqlite") as conn:
        return {str(s): str(p) for s, p in conn.execute(
            "SELECT id, page_path FROM sessions WHERE project = ? AND page_path IS NOT NULL", (project,))}


def down_and_hung(d: Daemon, prompts: list[str], cwd: str, commands: dict[str, str]) -> dict[str, Any]:
    """The hook's wall time while the daemon is stopped (SIGSTOP: hung, its socket still open)
    and once it is gone, through each command: what the agent pays when memory cannot answer."""
    times: dict[str, dict[str, list[float]]] = {name: {"hung": [], "down": []} for name in commands}
    os.kill(d.proc.pid, signal.SIGSTOP)
    try:
        for name, command in commands.items():
            times[name]["hung"] = [hook(d.data, p, 20_000 + n, cwd, command)[0] for n, p in enumerate(prompts)]
    finally:
        os.kill(d.proc.pid, signal.SIGCONT)
    d.proc.terminate()
    d.proc.wait(timeout=60)
    for name, command in commands.items():
        times[name]["down"] = [hook(d.data, p, 30_000 + n, cwd, command)[0] for n, p in enumerate(prompts)]
    return {name: {f"hook_ms_{state}": latency_summary(ms) for state, ms in states.items()}
            for name, states in times.items()}


def study(d: Daemon, data: dict[str, Any], negatives: list[dict[str, Any]], memories: dict[str, str],
          out: Path) -> None:
    """Every prompt's hits with what their confidence is made of (``/v1/query`` explain) and
    whether each is gold: what ``recall_calibration.py`` fits the confidence on."""
    golds = gold_paths(d, data, memories)
    rows: dict[str, list[dict[str, Any]]] = {"pos": [], "neg": []}
    for side, prompts, gold_of in (("pos", data["questions"], golds), ("neg", negatives, [set()] * len(negatives))):
        for qa, gold in zip(prompts, gold_of):
            status, body = d.call("POST", "/v1/query", {"q": qa["q"], "project": data["project"], "k": 10,
                                                       "explain": True})
            rows[side].append({"q": qa["q"], "hits": [evidence_of(h, gold) for h in body["hits"]]})
    out.write_text(json.dumps(rows))


def evidence_of(hit: dict[str, Any], gold: set[str]) -> dict[str, Any]:
    """What the confidence of a hit is computed from, its score, and whether it is gold."""
    features, streams = hit["explain"]["features"], hit["explain"]["streams"]
    meaning = max((streams[name]["score"] for name in ("vectors", "turns_vectors") if name in streams), default=0.0)
    return {"path": hit["path"], "gold": hit["path"] in gold, "score": hit["score"],
            "confidence": hit["confidence"], "coverage": features["coverage"], "title": features["title"],
            "phrase": features["phrase"], "meaning": meaning, "written": hit["type"] != "Session Summary"}


def _p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))] if ordered else 0


def report(result: dict[str, Any]) -> None:
    print(f"\n{result['questions']} questions ({result['ours']['memories']} with a memory written over their"
          f" session), {result['negatives']} prompts of another project")
    print(f"{'':<12}{'hit':>8}{'any':>8}{'precision':>11}{'negatives':>11}{'chars p95':>11}")
    for name in ("ours", "bm25_top3"):
        r = result[name]
        print(f"{name:<12}{r['hit']:>8.3f}{r['any']:>8.3f}{r['precision']:>11.3f}{r['negatives_any']:>11.3f}"
              f"{r['context_chars_p95']:>11}")
    ours = result["ours"]
    if ours["memories_first"] is not None:
        print(f"memories handed over ahead of the session they came from: {ours['memories_first']:.3f}")
    print(f"hook wall ms through {result['command']!r} (what install-hooks writes), and `ai-memory hook`:")
    rows = [("installed", "daemon up", ours["hook_ms_up"])]
    for name, states in result["unavailable"].items():
        rows += [(name, label, states[key]) for key, label in (("hook_ms_up", "daemon up"),
                 ("hook_ms_hung", "daemon stopped (SIGSTOP)"), ("hook_ms_down", "daemon gone")) if key in states]
    for name, label, lat in rows:
        print(f"  {name:<16}{label:<26} p50 {lat['p50']:>7.1f}  p95 {lat['p95']:>7.1f}  max {lat['max']:>7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = REPO.parent / "shared" / "data" / "codesessions"
    parser.add_argument("--data", type=Path, default=shared / "yarl.json")
    parser.add_argument("--negatives", type=Path, default=shared / "negatives-pytest.json")
    parser.add_argument("--root", default=DEFAULT_ROOT)
    parser.add_argument("--vectors-cache", type=Path)
    parser.add_argument("--embed-threads", type=int)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--study", type=Path, help="also write every prompt's hits with their features here")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--keep", type=Path)
    where.add_argument("--reuse", type=Path)
    args = parser.parse_args()
    try:
        data = load(args.data)
    except FormatError as exc:
        print(f"prompt_recall: {exc}", file=sys.stderr)
        return 2
    if not args.data.exists() or not args.negatives.exists():
        print(f"prompt_recall: {args.negatives} not found (it lives in ../shared)", file=sys.stderr)
        return 2
    negatives = json.loads(args.negatives.read_text())["questions"]
    from ai_memory.config import user_model_cache
    from ai_memory.embed.model import MiniLM

    baselines = Baselines(data, MiniLM(threads=2, cache_dir=user_model_cache()), args.vectors_cache)
    cwd = f"{args.root}/{data['project']}"
    with tempfile.TemporaryDirectory() as tmp:
        d = prepare(args, data, args.keep or Path(tmp) / "data")
        try:
            memories = write_memories(d, data)
            d.wait_ready(0)
            if args.study:
                study(d, data, negatives, memories, args.study)
            command = installed_command(d.data)
            result = {"questions": len(data["questions"]), "negatives": len(negatives), "command": command,
                      **run(d, data, negatives, memories, baselines, cwd, command)}
            up = [hook(d.data, qa["q"], 40_000 + n, cwd, CLI_COMMAND)[0]
                  for n, qa in enumerate(data["questions"][:DOWN_PROMPTS])]
            result["unavailable"] = down_and_hung(d, [qa["q"] for qa in data["questions"][:DOWN_PROMPTS]], cwd,
                                                  {"installed": command, "ai-memory hook": CLI_COMMAND})
            result["unavailable"]["ai-memory hook"]["hook_ms_up"] = latency_summary(up)
        finally:
            if d.proc.poll() is None:
                d.proc.terminate()
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
