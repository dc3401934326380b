"""Web-view search latency: ``GET /ui/?q=`` over a generated wiki, against ``POST /v1/query``
with the same questions in the same run.

    python benchmarks/ui_search.py [--pages 10000] [--queries 200] [--embed] [--vectors-from DB] [--json OUT]

1. Writes ``--pages`` pages with ``query.generate`` (20 projects, six families, wikilinks)
   before the daemon starts; the start-up reconcile indexes them.
2. Logs in as a browser does: ``POST /v1/ui/login`` with the token, the code exchanged for the
   session cookie.
3. Sequential searches from one keep-alive connection, each as the view asks them (project
   filter, ``explain`` on): first the JSON route (the baseline), then the web view, which adds
   the form parsing and the rendering of every hit and its explain table. p50/p95/p99 of each,
   the ratio of the p95s, and the target p95 <= 100 ms for the view.

Embeddings are off unless ``--embed`` (then every vector is computed or, with
``--vectors-from``, copied from an earlier run's database before the daemon starts, and the run
waits for the backlog to be empty), so a run takes a minute or two by default.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import seed_vectors  # noqa: E402
from query import Client, free_port, generate, make_queries, summarize_ms, wait_embedded, wait_up  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET_P95_MS = 100.0


class Browser:
    """One keep-alive connection carrying the view's session cookie."""

    def __init__(self, port: int, cookie: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Cookie": cookie, "Host": f"127.0.0.1:{port}"}

    def get(self, path: str) -> tuple[int, str]:
        self.conn.request("GET", path, headers=self.headers)
        resp = self.conn.getresponse()
        return resp.status, resp.read().decode()


def login(port: int, client: Client) -> str:
    status, body = client.call("POST", "/v1/ui/login", {})
    assert status == 200, body
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", body["path"], headers={"Host": f"127.0.0.1:{port}"})
    resp = conn.getresponse()
    resp.read()
    assert resp.status == 303, resp.status
    return f"aim_ui={SimpleCookie(resp.getheader('Set-Cookie'))['aim_ui'].value}"


def json_searches(client: Client, queries: list[dict[str, Any]]) -> dict[str, Any]:
    latencies, found = [], 0
    for item in queries:
        t0 = time.perf_counter()
        status, answer = client.call("POST", "/v1/query", {"q": item["q"], "project": item["project"], "explain": True})
        latencies.append(time.perf_counter() - t0)
        assert status == 200, answer
        found += item["target"] in [h["path"] for h in answer["hits"]]
    return {"latency_ms": summarize_ms(latencies), "sampled_page_in_hits": round(found / len(queries), 3)}


def view_searches(browser: Browser, queries: list[dict[str, Any]]) -> dict[str, Any]:
    latencies, found, size = [], 0, 0
    for item in queries:
        path = "/ui/?" + urlencode({"q": item["q"], "project": item["project"]})
        t0 = time.perf_counter()
        status, html = browser.get(path)
        latencies.append(time.perf_counter() - t0)
        assert status == 200, html[:300]
        found += item["target"] in html
        size += len(html)
    return {"latency_ms": summarize_ms(latencies), "sampled_page_in_hits": round(found / len(queries), 3),
            "mean_html_kb": round(size / len(queries) / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embed", action="store_true", help="run with embeddings (the vector streams) on")
    parser.add_argument("--vectors-from", type=Path, help="an earlier run's db/memory.sqlite to copy vectors from")
    parser.add_argument("--json", type=Path, help="write all figures to this file")
    args = parser.parse_args()
    out: dict[str, Any] = {"pages": args.pages, "queries": args.queries, "embeddings": args.embed,
                           "target_p95_ms": TARGET_P95_MS, "cores": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="aim-ui-bench-") as tmp:
        data, port = Path(tmp) / "data", free_port()
        specs = generate(data / "wiki", args.pages)
        queries, warm = make_queries(specs, args.queries), make_queries(specs, 20, seed=99)
        random.Random(5).shuffle(queries)
        if args.vectors_from:
            out["vectors_copied"] = seed_vectors(data / "db" / "memory.sqlite", args.vectors_from)
        env = {**os.environ, "AI_MEMORY_DATA_DIR": str(data), "HF_HUB_OFFLINE": "1",
               "AI_MEMORY_EMBED_ENABLED": "1" if args.embed else "0"}
        t_spawn = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "ai_memory.cli", "serve", "--port", str(port)],
                                env=env, cwd=REPO, stderr=subprocess.DEVNULL)
        try:
            wait_up(port, data / "token", proc)
            client = Client(port, (data / "token").read_text().strip())
            while client.call("GET", "/status")[1]["counts"]["pages"] < args.pages:
                time.sleep(0.2)
            if args.embed:
                wait_embedded(client, args.pages, 3600.0)
            out["start_and_index_s"] = round(time.perf_counter() - t_spawn, 1)
            print(f"daemon up, {args.pages} pages indexed {out['start_and_index_s']} s after spawn", flush=True)
            browser = Browser(port, login(port, client))
            json_searches(client, warm)
            view_searches(browser, warm)
            out["json_query"] = json_searches(client, queries)
            out["ui_search"] = view_searches(browser, queries)
            client.close()
        finally:
            proc.terminate()
            proc.wait(timeout=120)
    base, view = out["json_query"]["latency_ms"], out["ui_search"]["latency_ms"]
    out["p95_ratio_ui_to_json"] = round(view["p95"] / base["p95"], 2) if base["p95"] else None
    out["meets_target"] = view["p95"] <= TARGET_P95_MS
    print(f"POST /v1/query (explain): p50 {base['p50']} ms, p95 {base['p95']} ms, p99 {base['p99']} ms")
    print(f"GET /ui/?q=      (view): p50 {view['p50']} ms, p95 {view['p95']} ms, p99 {view['p99']} ms,"
          f" {out['ui_search']['mean_html_kb']} KB a page")
    print(f"view p95 / JSON p95 = {out['p95_ratio_ui_to_json']}; target p95 <= {TARGET_P95_MS} ms:"
          f" {'met' if out['meets_target'] else 'NOT met'}")
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
