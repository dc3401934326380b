"""Query latency: /v1/query over a generated wiki with every stream on, idle and under hook load.

    python benchmarks/query.py [--pages 10000] [--queries 200] [--json OUT] [--no-profile]

1. Writes ``--pages`` markdown pages (20 projects, six families, frontmatter, 150-300 word
   bodies with ``code_identifiers`` and [[wikilinks]]) into ``<data>/wiki`` before the daemon
   starts (it reconciles them at start), then posts ~2,000 hook events.
2. Waits until the pages are indexed and every chunk and observation has a vector; prints the
   embedding throughput. A ``POST /v1/reindex`` then links the session pages to the hook
   sessions (``sessions.page_path``), so the turn streams have pages to rank.
3. Sequential queries from one keep-alive client: natural-language questions, identifiers and
   file paths; p50/p95/p99 against the target p95 <= 50 ms.
4. Unless ``--no-profile``: each retrieval stage timed in-process on the same database while
   the daemon idles (which stream dominates), with the two costs a concurrent writer adds: a
   vector-matrix reload and waiting behind one embedding batch for the shared model lock.
5. The same queries while 32 concurrent clients post hooks (a separate process, stopped when
   the query phase ends, which ``--load-seconds`` bounds): first a control of SessionStart
   events (stored, never embedded; ``--no-control`` skips it), then UserPromptSubmit and
   PostToolUse events (each also queues an embedding). Percentiles again, plus the hook
   throughput achieved meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import math
import multiprocessing as mp
import os
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from harness import seed_vectors  # noqa: E402

TARGET_P95_MS = 50.0
HOOK_CLIENTS = 32
SETUP_HOOKS = 2000
HOOK_SESSIONS = 100

PROJECTS = ("acme-api", "billing-svc", "search-indexer", "web-frontend", "mobile-app", "data-pipeline",
            "auth-gateway", "notify-service", "infra-terraform", "ml-platform", "payments-core", "admin-portal",
            "reports-etl", "cli-tools", "edge-proxy", "inventory-svc", "shipping-api", "analytics-ui",
            "docs-site", "chat-backend")
FAMILIES = (("notes", "Note"), ("decisions", "Decision"), ("gotchas", "Gotcha"),
            ("procedures", "Procedure"), ("concepts", "Concept"), ("sessions", "Session Summary"))
COMPONENTS = ("auth billing search ingest gateway scheduler notifier payments reports exporter importer "
              "webhooks sessions accounts inventory shipping analytics mailer uploads audit").split()
NOUNS = ("token session cache retry worker queue schema migration invoice webhook latency timeout index "
         "refresh secret config flag rollout cert pool connection batch cursor lock lease backoff quota "
         "shard replica snapshot checkpoint handler middleware payload header cookie signature digest").split()
TECH = ("Postgres Redis Kafka Nginx Docker Kubernetes Terraform Celery FastAPI SQLAlchemy GraphQL S3 Lambda "
        "gRPC Prometheus Grafana Sentry OpenTelemetry RabbitMQ Elasticsearch").split()
VERBS = ("rotate retry migrate cache invalidate throttle shard replay backfill deploy validate serialize "
         "compress encrypt refresh evict reconcile debounce paginate").split()
SUFFIXES = ("TTL", "TIMEOUT", "LIMIT", "MAX_RETRIES", "BATCH_SIZE", "INTERVAL")
KINDS = ("Client", "Worker", "Handler", "Manager", "Repository", "Service")
ERRORS = ("ConnectionResetError", "TimeoutError", "IntegrityError", "KeyError", "PermissionDenied",
          "DeadlockDetected", "RateLimitExceeded")

SENTENCES = (
    "The {comp} {noun} is {verb}d through {tech} whenever the {noun2} exceeds `{const}`.",
    "We saw {noun} {noun2} spikes in {comp} right after the {tech} upgrade, so `{func}()` now retries with "
    "exponential backoff and jitter.",
    "`{cls}` owns the {noun} {noun2} and lives in `{path}` next to its tests.",
    "Keep the {noun} {noun2} below {num} ms, otherwise the {comp} {noun3} queue backs up and the workers "
    "start timing out.",
    "To {verb} the {noun} safely, drain the {comp} workers first and double-check `{const}` in the "
    "deployment config.",
    "The root cause was a stale {noun2} in {tech}: the {comp} {noun} handler read it before the migration "
    "had finished.",
    "Tests live in `tests/{comp}/test_{noun}.py`; run them with `pytest -k {noun}_{verb}` before merging.",
    "{tech} {noun} settings are shared with the {comp2} service, so a change to `{const2}` affects both.",
    "We decided to {verb} the {noun} in {tech} rather than in process memory, because {comp} runs several "
    "replicas behind the load balancer.",
    "After the rollout, p95 {noun} latency dropped from {num} ms to {num2} ms on the {comp} dashboards.",
    "A `{error}` in `{func}` means the {noun2} expired while the {noun} was still being {verb}d.",
    "The on-call runbook says: check the {tech} {noun3} metrics, then restart `{cls}` if the {noun} lag "
    "keeps growing.",
    "Never {verb} the {noun2} from a request handler; schedule it on the {comp} {noun3} worker instead.",
    "The {comp2} team owns `{path2}`, which still calls `{func2}()` with the old {noun} format.",
)
QUESTIONS = (
    "how do we {verb} the {comp} {noun}?",
    "why did the {tech} {noun} time out in {comp}?",
    "what did we decide about {noun} {verb} for {comp}?",
    "which gotchas exist around {tech} {noun2} in the {comp} service?",
    "where is the {comp} {noun} {noun2} configured?",
    "what broke after the {tech} upgrade for {comp} {noun}?",
    "steps to {verb} {noun} {noun2} safely",
    "{comp} {noun} latency spikes with {tech}",
)


def camel(word: str) -> str:
    return word[:1].upper() + word[1:]


def topic(rng: random.Random) -> dict[str, Any]:
    comp, comp2 = rng.sample(COMPONENTS, 2)
    noun, noun2, noun3 = rng.sample(NOUNS, 3)
    verb = rng.choice(VERBS)
    t = {"comp": comp, "comp2": comp2, "noun": noun, "noun2": noun2, "noun3": noun3, "verb": verb,
         "tech": rng.choice(TECH), "error": rng.choice(ERRORS)}
    t["const"] = f"{comp.upper()}_{noun.upper()}_{rng.choice(SUFFIXES)}"
    t["const2"] = f"{comp2.upper()}_{noun2.upper()}_{rng.choice(SUFFIXES)}"
    t["func"] = f"{verb}_{comp}_{noun}"
    t["func2"] = f"{rng.choice(VERBS)}_{comp2}_{noun2}"
    t["cls"] = f"{camel(comp)}{camel(noun)}{rng.choice(KINDS)}"
    t["path"] = f"src/{comp}/{noun}_{rng.choice(('client', 'worker', 'handler', 'service', 'models'))}.py"
    t["path2"] = f"src/{comp2}/{noun2}.py"
    return t


def title_of(kind: str, t: dict[str, Any]) -> str:
    return {
        "Note": "{Comp} {noun} notes: {noun2} and {tech}",
        "Decision": "Use {tech} to {verb} the {comp} {noun}",
        "Gotcha": "{tech} {noun2} breaks {comp} {noun} {verb}",
        "Procedure": "How to {verb} the {comp} {noun}",
        "Concept": "{Comp} {noun} lifecycle",
        "Session Summary": "Session: {verb} {comp} {noun} with {tech}",
    }[kind].format(Comp=camel(t["comp"]), **t)


def body_of(rng: random.Random, t: dict[str, Any], links: list[str]) -> str:
    """2-3 paragraphs, 150-300 words in all, each sentence partly about the page's topic."""
    target = rng.randint(150, 300)
    paragraphs: list[list[str]] = [[]]
    words = 0
    order = rng.sample(SENTENCES, len(SENTENCES))  # no template twice until all were used
    while words < target:
        fill = dict(t)
        if rng.random() < 0.4:  # wander off-topic a little, like real notes do
            fill.update(noun2=rng.choice(NOUNS), noun3=rng.choice(NOUNS), tech=rng.choice(TECH))
        fill.update(num=rng.randrange(80, 2000), num2=rng.randrange(5, 80))
        sentence = order[len(sum(paragraphs, [])) % len(order)].format(**fill)
        paragraphs[-1].append(sentence)
        words += len(sentence.split())
        if len(" ".join(paragraphs[-1]).split()) > rng.randint(70, 110) and words < target - 30:
            paragraphs.append([])
    see_also = "See also " + ", ".join(f"[[{link}]]" for link in links) + "."
    return "\n\n".join(" ".join(p) for p in paragraphs if p) + "\n\n" + see_also + "\n"


def session_ids() -> list[tuple[str, str]]:
    """(session id, project) of the sessions the hook events belong to."""
    return [(f"sess-{PROJECTS[i % len(PROJECTS)]}-{i:04d}", PROJECTS[i % len(PROJECTS)])
            for i in range(HOOK_SESSIONS)]


def generate(wiki: Path, n: int, seed: int = 7) -> list[dict[str, Any]]:
    """Write n pages; return what each is about (for building queries)."""
    rng = random.Random(seed)
    specs = page_specs(rng, n)
    _write_pages(wiki, rng, specs)
    return specs


def page_specs(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """What each of n pages is about: the same for the same generator state (``generate``
    writes them; ``scale.py --reuse`` only needs them for its queries)."""
    specs = []
    for i in range(n):
        project = PROJECTS[i % len(PROJECTS)]
        family, kind = FAMILIES[(i // len(PROJECTS)) % len(FAMILIES)]
        t = topic(rng)
        specs.append({"i": i, "project": project, "family": family, "kind": kind, "topic": t,
                      "rel": f"{project}/{family}/{t['comp']}-{t['noun']}-{i}.md"})
    return specs


def _write_pages(wiki: Path, rng: random.Random, specs: list[dict[str, Any]]) -> None:
    by_project: dict[str, list[int]] = {}
    for s in specs:
        by_project.setdefault(s["project"], []).append(s["i"])
    hook_sessions = {p: [sid for sid, proj in session_ids() if proj == p] for p in PROJECTS}
    for s in specs:
        t, project = s["topic"], s["project"]
        peers = by_project[project]
        links = [specs[j]["rel"].removesuffix(".md") for j in rng.sample(peers, min(len(peers), rng.randint(2, 3)))
                 if j != s["i"]]
        tags = sorted({t["comp"], t["noun"], t["tech"].lower()})
        entities = [t["tech"], t["cls"], t["const"]]
        meta = [f"type: {s['kind']}", f"title: {json.dumps(title_of(s['kind'], t))}", f"project: {project}",
                f"tags: [{', '.join(tags)}]", f"entities: [{', '.join(entities)}]"]
        if s["kind"] == "Session Summary":
            pool = hook_sessions[project]
            nth = s["i"] // (len(PROJECTS) * len(FAMILIES))  # the project's nth session page
            sid = pool[nth] if nth < len(pool) else f"sess-{project}-old-{s['i']}"
            meta.append(f"session_id: {sid}")
            s["session_id"] = sid
        text = "---\n" + "\n".join(meta) + f"\n---\n# {title_of(s['kind'], t)}\n\n" + body_of(rng, t, links)
        path = wiki / s["rel"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def make_queries(specs: list[dict[str, Any]], n: int, seed: int = 11) -> list[dict[str, Any]]:
    """Half natural-language questions, 30% identifiers, 20% file paths, each from a sampled page."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = rng.choice(specs)
        t = s["topic"]
        roll = rng.random()
        if roll < 0.5:
            kind, q = "question", rng.choice(QUESTIONS).format(**t)
        elif roll < 0.8:
            kind, q = "identifier", t[rng.choice(("const", "func", "cls"))]
        else:
            kind, q = "path", t["path"]
        out.append({"q": q, "project": s["project"], "kind": kind, "target": s["rel"]})
    return out


def hook_payload(rng: random.Random, i: int, prefix: str = "toolu") -> dict[str, Any]:
    sid, project = rng.choice(session_ids())
    t = topic(rng)
    base = {"session_id": sid, "cwd": f"/home/dev/{project}", "transcript_path": f"/tmp/{sid}.jsonl"}
    if i % 2 == 0:
        return {**base, "hook_event_name": "UserPromptSubmit", "prompt": rng.choice(QUESTIONS).format(**t)
                + f" It fails with {t['error']} in `{t['func']}`."}
    tool = rng.choice(("Bash", "Edit", "Read"))
    if tool == "Bash":
        tin = {"command": f"pytest tests/{t['comp']}/test_{t['noun']}.py -k {t['func']} -q",
               "description": "run tests"}
        tout = {"stdout": f"tests/{t['comp']}/test_{t['noun']}.py::test_{t['func']} FAILED\n"
                          f"E   {t['error']}: {t['const']} exceeded ({rng.randrange(100, 900)} ms)\n"
                          f"1 failed, {rng.randrange(3, 40)} passed", "stderr": "", "exit_code": 1}
    elif tool == "Edit":
        tin = {"file_path": f"/home/dev/{project}/{t['path']}", "old_string": f"{t['const']} = 30",
               "new_string": f"{t['const']} = {rng.randrange(5, 120)}"}
        tout = {"filePath": f"/home/dev/{project}/{t['path']}", "success": True}
    else:
        tin = {"file_path": f"/home/dev/{project}/{t['path']}"}
        tout = {"content": f"class {t['cls']}:\n    def {t['func']}(self):\n        "
                           f"return self.{t['noun']}.{t['verb']}({t['const']})\n"}
    return {**base, "hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": f"{prefix}_{i:08d}",
            "tool_input": tin, "tool_response": tout}


# --- daemon and HTTP ------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """One keep-alive connection, like one agent asking questions."""

    def __init__(self, port: int, token: str, timeout: float = 120.0) -> None:
        self.port, self.token, self.timeout = port, token, timeout
        self.conn: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read()
                return resp.status, json.loads(raw) if raw else None
            except (http.client.HTTPException, ConnectionError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def wait_up(port: int, token_path: Path, proc: subprocess.Popen, limit_s: float = 900.0) -> None:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited with {proc.returncode}")
        if token_path.exists():
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
        time.sleep(0.1)
    raise RuntimeError("daemon did not start")


def wait_query_workers(client: Client, limit_s: float = 300.0) -> dict[str, Any]:
    """Searches are measured once the daemon's query worker processes serve (if it has any)."""
    t0 = time.perf_counter()
    while True:
        _, st = client.call("GET", "/status")
        workers = st.get("query_workers", {"configured": 0})
        if workers.get("ready", 0) >= workers["configured"] or time.perf_counter() - t0 > limit_s:
            return workers
        time.sleep(0.2)


def wait_embedded(client: Client, pages: int, limit_s: float) -> tuple[dict[str, Any], float]:
    """Poll /status until all pages are indexed, the model is ready and the backlog is empty."""
    t0 = time.perf_counter()
    last_print = 0.0
    while True:
        _, st = client.call("GET", "/status")
        emb = st["embeddings"]
        done = (st["counts"]["pages"] == pages and emb.get("ready")
                and emb.get("backlog") == {"chunks": 0, "observations": 0})
        if done:
            return st, time.perf_counter()
        if emb.get("error"):
            raise RuntimeError(f"embeddings failed: {emb['error']}")
        now = time.perf_counter()
        if now - t0 > limit_s:
            raise RuntimeError(f"backlog not empty after {limit_s:.0f} s: {emb}")
        if now - last_print > 30:
            print(f"    … {now - t0:5.0f} s: pages {st['counts']['pages']}, embedded {emb.get('embedded')}, "
                  f"backlog {emb.get('backlog')}", flush=True)
            last_print = now
        time.sleep(1.0)


async def post_hooks(port: int, token: str, payloads: list[dict[str, Any]], concurrency: int) -> float:
    import aiohttp

    it = iter(payloads)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    async def worker(session: aiohttp.ClientSession) -> None:
        for p in it:
            while True:
                async with session.post(f"http://127.0.0.1:{port}/hook?agent=claude", data=json.dumps(p),
                                        headers=headers) as resp:
                    await resp.read()
                    if resp.status == 429:
                        await asyncio.sleep(0.05)
                        continue
                    assert resp.status == 202, resp.status
                    break

    t0 = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return time.perf_counter() - t0


def control_payload(rng: random.Random, i: int) -> dict[str, Any]:
    """A SessionStart: stored like any event, but the embedding job skips it (no model work)."""
    sid, project = rng.choice(session_ids())
    return {"session_id": sid, "cwd": f"/home/dev/{project}", "hook_event_name": "SessionStart",
            "source": "startup", "transcript_path": f"/tmp/{sid}.jsonl", "n": i}


def hook_load(port: int, token: str, clients: int, kind: str, started: Any, stop: Any, results: Any,
              rate: float = 0.0) -> None:
    """Child process: ``clients`` keep-alive clients post hooks until ``stop`` is set, as fast
    as they are answered or, with ``rate``, that many a second in all (each client its share,
    evenly spaced).

    ``kind`` "embedded": UserPromptSubmit/PostToolUse (each one also queues an embedding);
    "control": SessionStart events, which are stored but never embedded.
    """
    import aiohttp

    async def run() -> dict[str, Any]:
        counts = {"accepted": 0, "rejected_429": 0, "errors": 0}
        latencies: list[float] = []
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        url = f"http://127.0.0.1:{port}/hook?agent=claude"
        seq = iter(range(10**9))

        async def client(session: aiohttp.ClientSession, n: int) -> None:
            rng = random.Random(1000 + n)
            interval = clients / rate if rate > 0 else 0.0
            due = time.monotonic() + interval * n / clients
            while not stop.is_set():
                if interval:  # a steady pace: a client that fell behind does not catch up in a burst
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    due = max(due + interval, time.monotonic())
                i = next(seq)
                body = json.dumps(hook_payload(rng, i, prefix="load") if kind == "embedded"
                                  else control_payload(rng, i))
                t0 = time.perf_counter()
                try:
                    async with session.post(url, data=body, headers=headers) as resp:
                        await resp.read()
                        if resp.status == 202:
                            counts["accepted"] += 1
                            latencies.append(time.perf_counter() - t0)
                            if counts["accepted"] == clients:
                                started.set()
                        elif resp.status == 429:
                            counts["rejected_429"] += 1
                            await asyncio.sleep(0.01)
                        else:
                            counts["errors"] += 1
                except aiohttp.ClientError:
                    counts["errors"] += 1

        t0 = time.perf_counter()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients)) as session:
            await asyncio.gather(*(client(session, n) for n in range(clients)))
        elapsed = time.perf_counter() - t0
        ordered = sorted(latencies)
        return {**counts, "elapsed_s": round(elapsed, 2), "hooks_per_s": round(counts["accepted"] / elapsed, 1),
                "p50_ms": round(pct(ordered, 50) * 1000, 1) if ordered else None,
                "p99_ms": round(pct(ordered, 99) * 1000, 1) if ordered else None}

    results.put(asyncio.run(run()))


# --- measuring -------------------------------------------------------------------------------------

def pct(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    return ordered[max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))]


def summarize_ms(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    return {"p50": round(pct(ordered, 50) * 1000, 1), "p95": round(pct(ordered, 95) * 1000, 1),
            "p99": round(pct(ordered, 99) * 1000, 1), "mean": round(statistics.fmean(ordered) * 1000, 1),
            "max": round(ordered[-1] * 1000, 1), "n": len(ordered)}


def run_queries(client: Client, queries: list[dict[str, Any]], budget_s: float | None = None) -> dict[str, Any]:
    """Sequential queries; with ``budget_s``, stop early once that much time has passed."""
    deadline = time.perf_counter() + budget_s if budget_s else None
    latencies: list[float] = []
    by_kind: dict[str, list[float]] = {}
    streams: dict[str, int] = {}
    empty = found = 0
    for item in queries:
        body = {"q": item["q"], "project": item["project"], "k": 10}
        t0 = time.perf_counter()
        status, answer = client.call("POST", "/v1/query", body)
        elapsed = time.perf_counter() - t0
        assert status == 200, (status, answer)
        latencies.append(elapsed)
        by_kind.setdefault(item["kind"], []).append(elapsed)
        for name in answer["streams"]:
            streams[name] = streams.get(name, 0) + 1
        paths = [h["path"] for h in answer["hits"]]
        empty += not paths
        found += item["target"] in paths
        if deadline is not None and time.perf_counter() > deadline:
            break
    n = len(latencies)
    return {"latency_ms": summarize_ms(latencies),
            "by_kind_ms": {k: summarize_ms(v) for k, v in sorted(by_kind.items())},
            "streams_used": dict(sorted(streams.items())), "empty_answers": empty,
            "sampled_page_in_top10": round(found / n, 3),
            "completed": n, "stopped_early": n < len(queries)}


def stage_profile(db: Path, queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Each stage of Retriever.answer timed in-process on the benchmark's database, daemon stopped."""
    from datetime import datetime, timezone

    from ai_memory.config import user_model_cache
    from ai_memory.embed.model import MiniLM
    from ai_memory.retrieval.embedding_job import observation_text
    from ai_memory.retrieval.search import Query, Retriever
    from ai_memory.retrieval.vectors import VectorIndex
    from ai_memory.store.connection import open_read_connection

    embedder = MiniLM(threads=1, cache_dir=user_model_cache())  # the daemon's default embed.threads
    embedder.load()
    conn = open_read_connection(db)
    index = VectorIndex(embedder.model_id, embedder.dim)
    t0 = time.perf_counter()
    chunks = index.chunk_matrix(conn)
    t1 = time.perf_counter()
    obs = index.observation_matrix(conn)
    t2 = time.perf_counter()
    retriever = Retriever(embedder, index, ready=lambda: True)
    texts = [observation_text(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT title, body, event FROM observations WHERE event IN ('user-prompt', 'post-tool-use') LIMIT 128")]
    embedder.encode(texts[:4])  # warm
    t3 = time.perf_counter()
    embedder.encode(texts)
    batch_s = time.perf_counter() - t3
    stages: dict[str, list[float]] = {}
    now = datetime.now(timezone.utc)
    for item in queries:  # the stages as Retriever.answer runs them (the query encoded meanwhile)
        start = time.perf_counter()
        answer = retriever.answer(conn, Query(q=item["q"], project=item["project"], k=10, profile=True), now)
        stages.setdefault("total", []).append(time.perf_counter() - start)
        for name, ms in answer.stages_ms.items():
            stages.setdefault(name, []).append(ms / 1000)
    conn.close()
    return {
        "stages_ms": {k: {"p50": round(pct(sorted(v), 50) * 1000, 2), "p95": round(pct(sorted(v), 95) * 1000, 2),
                          "mean": round(statistics.fmean(v) * 1000, 2), "n": len(v)} for k, v in stages.items()},
        "chunk_matrix_load_ms": round((t1 - t0) * 1000, 1), "chunk_vectors": int(len(chunks.keys)),
        "observation_matrix_load_ms": round((t2 - t1) * 1000, 1), "observation_vectors": int(len(obs.keys)),
        "embedding_batch_ms": round(batch_s * 1000, 1), "embedding_batch_size": len(texts),
    }


def db_figures(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        one = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        return {"chunks": one("SELECT COUNT(*) FROM chunks"),
                "distinct_chunk_texts": one("SELECT COUNT(DISTINCT content_hash) FROM chunks"),
                "observations": one("SELECT COUNT(*) FROM observations"),
                "observations_with_vector": one("SELECT COUNT(*) FROM observations WHERE embed_hash != ''"),
                "vectors": one("SELECT COUNT(*) FROM embeddings"),
                "links": one("SELECT COUNT(*) FROM links"),
                "sessions_with_page": one("SELECT COUNT(*) FROM sessions WHERE page_path IS NOT NULL")}
    finally:
        conn.close()


# --- main ------------------------------------------------------------------------------------------

def loaded_phase(client: Client, port: int, token: str, kind: str, queries: list[dict[str, Any]],
                 budget_s: float) -> dict[str, Any]:
    """Sequential queries while HOOK_CLIENTS clients in another process post hooks; both stop together."""
    _, before = client.call("GET", "/status")
    ctx = mp.get_context("spawn")
    started, stop, results = ctx.Event(), ctx.Event(), ctx.Queue()
    loader = ctx.Process(target=hook_load, args=(port, token, HOOK_CLIENTS, kind, started, stop, results))
    loader.start()
    try:
        if not started.wait(60):
            raise RuntimeError("hook clients did not start")
        t0 = time.perf_counter()
        loaded = run_queries(client, queries, budget_s)
        query_window = time.perf_counter() - t0
    finally:
        stop.set()
    hooks = results.get(timeout=60)
    loader.join(timeout=30)
    _, after = client.call("GET", "/status")
    loaded["query_window_s"] = round(query_window, 1)
    loaded["hooks"] = hooks
    loaded["embedding_backlog_after"] = after["embeddings"]["backlog"]
    loaded["vectors_embedded_meanwhile"] = after["embeddings"]["embedded"] - before["embeddings"]["embedded"]
    loaded["writer"] = {k: after["writer"][k] - before["writer"][k] for k in ("batches", "jobs")}
    loaded["writer"]["mean_batch"] = round(loaded["writer"]["jobs"] / max(1, loaded["writer"]["batches"]), 1)
    print(f"  {fmt(loaded['latency_ms'])}" + (f"  [{loaded['completed']} queries in {budget_s:.0f} s budget]"
                                              if loaded["stopped_early"] else ""), flush=True)
    print(f"  hooks: {hooks['accepted']:,} accepted in {hooks['elapsed_s']} s = {hooks['hooks_per_s']:,.0f}/s "
          f"(p50 {hooks['p50_ms']} ms, p99 {hooks['p99_ms']} ms, 429s {hooks['rejected_429']}, "
          f"errors {hooks['errors']}); embedding backlog after: {loaded['embedding_backlog_after']}", flush=True)
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", type=Path, help="write all figures to this file")
    parser.add_argument("--load-seconds", type=float, default=90.0,
                        help="time budget of each query phase under hook load (queries stop early past it)")
    parser.add_argument("--no-control", action="store_true",
                        help="skip the control phase (hook load of events that are never embedded)")
    parser.add_argument("--no-profile", action="store_true", help="skip the in-process per-stage timing")
    parser.add_argument("--embed-threads", type=int, help="AI_MEMORY_EMBED_THREADS for the daemon (default: its own)")
    parser.add_argument("--embed-timeout", type=float, default=3600.0, help="give up waiting for vectors after s")
    parser.add_argument("--vectors-from", type=Path,
                        help="an earlier run's db/memory.sqlite: copy its vectors (keyed by model and content hash)"
                             " into the fresh data dir, so the daemon starts with everything already embedded")
    parser.add_argument("--workdir", type=Path,
                        help="keep the data dir here; a later run with the same --pages reuses it, and its vectors"
                             " (keyed by content hash), instead of embedding everything again")
    args = parser.parse_args()
    out: dict[str, Any] = {"pages": args.pages, "queries": args.queries, "target_p95_ms": TARGET_P95_MS,
                           "cores": os.cpu_count(), "sqlite": sqlite3.sqlite_version,
                           "embed_threads": args.embed_threads or "default"}
    with _workdir(args.workdir) as tmp:
        data, port = Path(tmp) / "data", free_port()
        t0 = time.perf_counter()
        specs = generate(data / "wiki", args.pages)
        out["generate_s"] = round(time.perf_counter() - t0, 2)
        print(f"generated {args.pages} pages in {out['generate_s']:.1f} s", flush=True)
        queries = make_queries(specs, args.queries)
        warm = make_queries(specs, 20, seed=99)

        if args.vectors_from:
            out["vectors_copied"] = seed_vectors(data / "db" / "memory.sqlite", args.vectors_from)
            print(f"copied {out['vectors_copied']:,} vectors from {args.vectors_from}", flush=True)
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1"}
        if args.embed_threads:
            env["AI_MEMORY_EMBED_THREADS"] = str(args.embed_threads)
        t_spawn = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        client = None
        try:
            wait_up(port, data / "token", proc)
            token = (data / "token").read_text().strip()
            client = Client(port, token)
            while True:  # the start-up reconcile runs before the port opens: normally at once
                _, st = client.call("GET", "/status")
                if st["counts"]["pages"] == args.pages:
                    break
                time.sleep(0.2)
            t_indexed = time.perf_counter()
            embedded0 = st["embeddings"].get("embedded", 0)
            out["start_and_index_s"] = round(t_indexed - t_spawn, 2)
            print(f"daemon up, {args.pages} pages indexed {out['start_and_index_s']:.1f} s after spawn", flush=True)

            rng = random.Random(3)
            setup_hooks = [hook_payload(rng, i) for i in range(SETUP_HOOKS)]
            seconds = asyncio.run(post_hooks(port, token, setup_hooks, 16))
            out["setup_hooks"] = {"n": SETUP_HOOKS, "seconds": round(seconds, 2),
                                  "hooks_per_s": round(SETUP_HOOKS / seconds, 1)}
            print(f"posted {SETUP_HOOKS} hook events in {seconds:.1f} s ({SETUP_HOOKS / seconds:,.0f}/s)", flush=True)

            st, t_done = wait_embedded(client, args.pages, args.embed_timeout)
            embedded = st["embeddings"]["embedded"] - embedded0
            window = t_done - t_indexed
            out["embedding"] = {"vectors": embedded, "seconds": round(window, 1),
                                "vectors_per_s": round(embedded / window, 1)}
            print(f"embedded {embedded} vectors (chunks + observations) in {window:.1f} s: "
                  f"{embedded / window:,.1f} vectors/s", flush=True)

            # Session pages written as files reach sessions.page_path only through a reindex.
            t0 = time.perf_counter()
            status, report = client.call("POST", "/v1/reindex", {})
            assert status == 200, (status, report)
            wait_embedded(client, args.pages, args.embed_timeout)
            out["reindex_s"] = round(time.perf_counter() - t0, 2)
            print(f"reindex (links session pages to hook sessions) + re-hash: {out['reindex_s']:.1f} s", flush=True)

            out["query_workers"] = wait_query_workers(client)
            print(f"query workers: {out['query_workers']}", flush=True)
            t0 = time.perf_counter()
            client.call("POST", "/v1/query", {"q": warm[0]["q"], "project": warm[0]["project"], "k": 10})
            out["first_query_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            run_queries(client, warm[1:])
            _, explained = client.call("POST", "/v1/query", {"q": warm[0]["q"], "project": warm[0]["project"],
                                                             "k": 10, "explain": True})
            top = explained["hits"][0] if explained["hits"] else {}
            out["explain_sample"] = {"q": warm[0]["q"], "streams": explained["streams"], "top_path": top.get("path"),
                                     "top_stream_ranks": top.get("explain", {}).get("streams")}

            print(f"phase 1: {args.queries} sequential queries, idle daemon", flush=True)
            out["idle"] = run_queries(client, queries)
            print(f"  {fmt(out['idle']['latency_ms'])}", flush=True)
            out["db_at_idle"] = db_figures(data / "db" / "memory.sqlite")

            if not args.no_profile:
                print("profiling retrieval stages in-process on the same database (daemon idle) …", flush=True)
                out["profile"] = stage_profile(data / "db" / "memory.sqlite", queries[: min(len(queries), 100)])

            if not args.no_control:
                print(f"phase 2a (control): queries while {HOOK_CLIENTS} clients post SessionStart hooks "
                      "(stored, never embedded)", flush=True)
                out["under_control_hooks"] = loaded_phase(client, port, token, "control", queries, args.load_seconds)

            print(f"phase 2: queries while {HOOK_CLIENTS} clients post UserPromptSubmit/PostToolUse hooks",
                  flush=True)
            out["under_hooks"] = loaded_phase(client, port, token, "embedded", queries, args.load_seconds)
        finally:
            if client is not None:
                client.close()
            proc.terminate()
            proc.wait(timeout=120)
        out["db_at_end"] = db_figures(data / "db" / "memory.sqlite")
    print_summary(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


@contextlib.contextmanager
def _workdir(keep: Path | None) -> Iterator[str]:
    """A temporary directory, or ``keep`` (created if needed and left in place)."""
    if keep is None:
        with tempfile.TemporaryDirectory() as tmp:
            yield tmp
        return
    keep.mkdir(parents=True, exist_ok=True)
    yield str(keep)


def fmt(m: dict[str, float]) -> str:
    verdict = "meets" if m["p95"] <= TARGET_P95_MS else "MISSES"
    return (f"p50 {m['p50']:7.1f} ms  p95 {m['p95']:7.1f} ms  p99 {m['p99']:7.1f} ms  max {m['max']:7.1f} ms  "
            f"({verdict} target p95 <= {TARGET_P95_MS:.0f} ms)")


def print_summary(out: dict[str, Any]) -> None:
    d = out["db_at_idle"]
    print("\n=== summary " + "=" * 86)
    print(f"pages {out['pages']:,} | {d['chunks']:,} chunks | {d['observations']:,} observations "
          f"({d['observations_with_vector']:,} with a vector) | {d['vectors']:,} vectors | {d['links']:,} links | "
          f"{d['sessions_with_page']} sessions with a page | {out['cores']} cores, sqlite {out['sqlite']}, "
          f"embed threads {out['embed_threads']}")
    print(f"generate {out['generate_s']} s | daemon start + index {out['start_and_index_s']} s | "
          f"reindex {out['reindex_s']} s | first (cold) query {out['first_query_ms']} ms")
    e = out["embedding"]
    print(f"embedding: {e['vectors']:,} vectors (chunks + observations) in {e['seconds']} s = "
          f"{e['vectors_per_s']} vectors/s")
    phases = [("idle, 1 client", "idle")]
    if "under_control_hooks" in out:
        phases.append((f"+{HOOK_CLIENTS} SessionStart clients", "under_control_hooks"))
    phases.append((f"+{HOOK_CLIENTS} prompt/tool clients", "under_hooks"))
    print(f"\n{'/v1/query latency':<30}{'n':>5}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}"
          f"   p95 <= {TARGET_P95_MS:.0f} ms   hooks/s meanwhile")
    for label, key in phases:
        r = out[key]
        m = r["latency_ms"]
        verdict = "ok" if m["p95"] <= TARGET_P95_MS else "MISSED"
        rate = f"{r['hooks']['hooks_per_s']:>10,.0f}" if "hooks" in r else f"{'-':>10}"
        print(f"{label:<30}{m['n']:>5}{m['p50']:>10.1f}{m['p95']:>10.1f}{m['p99']:>10.1f}{m['max']:>10.1f}"
              f"   {verdict:<14}{rate}")
        for kind, k in r["by_kind_ms"].items():
            print(f"  {kind:<28}{k['n']:>5}{k['p50']:>10.1f}{k['p95']:>10.1f}{k['p99']:>10.1f}{k['max']:>10.1f}")
    for label, key in phases[1:]:
        r = out[key]
        h = r["hooks"]
        print(f"{label}: {h['accepted']:,} hooks in {h['elapsed_s']} s (p50 {h['p50_ms']} ms, p99 {h['p99_ms']} ms, "
              f"429s {h['rejected_429']}, errors {h['errors']}); writer {r['writer']['batches']:,} commits, "
              f"mean batch {r['writer']['mean_batch']}; vectors embedded meanwhile {r['vectors_embedded_meanwhile']:,}, "
              f"backlog after {r['embedding_backlog_after']}")
    for label, key in phases:
        r = out[key]
        print(f"{label}: streams used {r['streams_used']}; empty answers {r['empty_answers']}; "
              f"sampled page in top 10: {r['sampled_page_in_top10']:.0%}")
    ex = out["explain_sample"]
    print(f"explain sample {ex['q']!r}: top {ex['top_path']} ranks {ex['top_stream_ranks']}")
    prof = out.get("profile")
    if prof:
        print(f"\nin-process stage timing over {prof['stages_ms']['total']['n']} queries (same database, daemon idle):")
        for name, s in prof["stages_ms"].items():
            print(f"  {name:<24} p50 {s['p50']:8.2f} ms  p95 {s['p95']:8.2f} ms  mean {s['mean']:8.2f} ms")
        print(f"  vector matrix reload (paid by the next query after any write that changes embeddings or "
              f"observations): chunks {prof['chunk_matrix_load_ms']} ms ({prof['chunk_vectors']:,} vectors), "
              f"observations {prof['observation_matrix_load_ms']} ms ({prof['observation_vectors']:,} vectors)")
        print(f"  one embedding batch of {prof['embedding_batch_size']} observations holds the model lock "
              f"{prof['embedding_batch_ms']} ms (a query's encode waits for it)")


if __name__ == "__main__":
    main()
