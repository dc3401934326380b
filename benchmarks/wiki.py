"""Wiki figures: reindex time for generated wikis, and watcher latency from an external edit
to a searchable change.

    python benchmarks/wiki.py [--sizes 1000,10000] [--edits 60] [--json OUT]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ai_memory.wiki.reindex import rebuild  # noqa: E402

WORDS = ("token session deploy login cache retry worker queue schema migration billing invoice "
         "webhook latency timeout index search auth refresh rotate secret config flag rollout "
         "postgres redis kafka lambda docker compose nginx tls cert").split()


FAMILIES = ("notes", "decisions", "gotchas", "procedures", "concepts", "sessions")


def generate(wiki: Path, n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    for i in range(n):
        project = f"proj-{i % 20}"
        family = FAMILIES[i % len(FAMILIES)]
        words = " ".join(rng.choice(WORDS) for _ in range(250))
        links = " ".join(f"[[{project}/notes/page-{rng.randrange(n)}]]" for _ in range(3))
        text = (f"---\ntype: Note\ntitle: Page {i} about {rng.choice(WORDS)}\nproject: {project}\n"
                f"tags: [{rng.choice(WORDS)}, {rng.choice(WORDS)}]\n---\n# Page {i}\n\n"
                f"Uses `{rng.choice(WORDS).upper()}_TTL` in app/{rng.choice(WORDS)}.py. {words}\n\n{links}\n")
        path = wiki / project / family / f"page-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def reindex_time(n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate(root / "wiki", n)
        (root / "raw").mkdir()
        t0 = time.perf_counter()
        rebuild(root / "wiki", root / "raw", root / "db.sqlite")
        return time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def query(port: int, token: str, q: str) -> list[str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("POST", "/v1/query", body=json.dumps({"q": q, "all": True}),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    body = json.loads(conn.getresponse().read())
    conn.close()
    return [h["path"] for h in body["hits"]]


def watcher_latency(edits: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        data, port = Path(tmp) / "data", free_port()
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data)}
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        try:
            for _ in range(400):
                if (data / "token").exists():
                    try:
                        query(port, (data / "token").read_text().strip(), "warmup")
                        break
                    except OSError:
                        pass
                time.sleep(0.05)
            token = (data / "token").read_text().strip()
            generate(data / "wiki", 200)
            time.sleep(2)
            latencies = []
            for i in range(edits):
                word = f"edit{i}marker{random.randrange(10**9)}"
                rel = f"proj-{i % 20}/{FAMILIES[i % len(FAMILIES)]}/page-{i}.md"
                path = data / "wiki" / rel
                t0 = time.perf_counter()
                path.write_text(path.read_text() + f"\n{word}\n")
                while rel not in query(port, token, word):
                    if time.perf_counter() - t0 > 10:
                        raise RuntimeError(f"edit {i} not searchable after 10 s")
                    time.sleep(0.01)
                latencies.append(time.perf_counter() - t0)
            return latencies
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    out: dict[str, object] = {"reindex_s": {}}
    for n in (int(x) for x in args.sizes.split(",")):
        seconds = reindex_time(n)
        out["reindex_s"][str(n)] = round(seconds, 2)  # type: ignore[index]
        print(f"reindex {n:>6} pages: {seconds:6.2f} s ({n / seconds:,.0f} pages/s)", flush=True)
    lat = sorted(watcher_latency(args.edits))
    p50 = statistics.median(lat)
    p95 = lat[min(len(lat) - 1, int(len(lat) * 0.95))]
    out["watcher_ms"] = {"p50": round(p50 * 1000, 1), "p95": round(p95 * 1000, 1), "n": len(lat)}
    print(f"watcher edit -> searchable: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms ({len(lat)} edits)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
