"""The embedding encoders side by side, in one run: the torch encoder ai-memory ran before
(``embed/bert.py`` of ``--baseline``, read from git: bfloat16 where the CPU has bfloat16 units,
and float32), the daemon's encoder now (``embed.model.MiniLM``: OpenVINO over float16-stored
weights, in its automatic precision and in float32), and the same graph in float32 on ONNX
Runtime; each in a fresh process of its own, the compiled model made once before, as a daemon
keeps it between starts.

    python benchmarks/encoders.py [--queries 200] [--batch 64] [--threads 1] [--baseline 5391ada] [--json OUT]

For each: model load time (weights checked and read, first text encoded), resident memory after
the load and its peak after the work, query encoding p50/p95 (one short text at a time), alone and
beside batches (another thread encoding ``--batch`` texts without pause: a prompt searched while
the embedding job embeds it; the daemon's encoder runs a query's pass beside a batch's), batch
throughput (``--batch`` paragraph-long texts, best of 3), and vector parity with
sentence-transformers, the design card's library (the lowest cosine of the pooled vector over
the texts, and the largest difference of a piece's vector). Then the installed size of each
runtime in this venv, and the daemon's encoder's figures as ratios to the torch encoder's,
measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENCODERS = ("torch-bfloat16", "torch-float32", "openvino-auto", "openvino-float32", "onnxruntime-float32")


BESIDE_QUERIES = 50  # queries timed beside a running batch


def corpus(queries: int, batch: int) -> tuple[list[str], list[str]]:
    """Short questions and paragraph-long texts, from this repository's own README and docs."""
    text = "\n\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))])
    paragraphs = [p.replace("\n", " ") for p in text.split("\n\n") if len(p) > 300]
    lines = [line.strip("#-* ") for line in text.splitlines() if 20 < len(line.strip()) < 120]
    return [lines[i % len(lines)] for i in range(queries)], [paragraphs[i % len(paragraphs)] for i in range(batch)]


def rss_kib(kind: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(kind + ":"):
            return int(line.split()[1])
    return 0


def baseline_encoder(baseline: str, into: Path) -> Path:
    """``embed/bert.py`` as it was at ``baseline``, as a module file of its own."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{baseline}:ai_memory/embed/bert.py"],
                            check=True, capture_output=True, text=True).stdout
    path = into / "baseline_bert.py"
    path.write_text(source)
    return path


def load(name: str, threads: int, cache: Path) -> tuple[object, object]:
    """``name``'s encoder and a tokenizer of its own, loaded in this process."""
    from ai_memory.embed.model import MiniLM, packaged_model_dir, verify

    model_dir = packaged_model_dir()
    if name.startswith("torch"):
        import importlib.util

        import torch

        spec = importlib.util.spec_from_file_location("baseline_bert", cache / "baseline_bert.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        verify(model_dir)
        torch.set_num_threads(threads)
        encoder = module.Bert(model_dir, torch.bfloat16 if name.endswith("bfloat16") else torch.float32)
        return encoder, encoder.tokenizer()
    if name.startswith("openvino"):
        encoder = MiniLM(threads=threads, precision=name.split("-")[1], cache_dir=cache).load()
        return encoder, encoder.tokenizer()
    from ai_memory.embed.encoder import on_onnxruntime

    verify(model_dir)
    encoder = on_onnxruntime(model_dir, str(cache / "graph.onnx"), threads)
    return encoder, encoder.tokenizer()


def measure(name: str, queries: list[str], batch: list[str], threads: int, cache: Path) -> dict[str, object]:
    """In this (fresh) process: load ``name``'s encoder and time it."""
    import numpy as np

    t0 = time.perf_counter()
    encoder, tokenizer = load(name, threads, cache)
    encoder.encode(tokenizer, ["warm up"])
    load_s = time.perf_counter() - t0
    rss_loaded = rss_kib()
    times = []
    for q in queries:
        t = time.perf_counter()
        encoder.encode(tokenizer, [q])
        times.append((time.perf_counter() - t) * 1000)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        encoder.encode(tokenizer, batch)
        best = min(best, time.perf_counter() - t)
    beside = beside_batches(encoder, tokenizer, queries[:BESIDE_QUERIES], batch)
    texts = queries[:20] + batch[:12]
    found = encoder.encode(tokenizer, texts, pieces=True)
    return {"load_s": round(load_s, 3), "rss_loaded_mib": round(rss_loaded / 1024, 1),
            "rss_peak_mib": round(rss_kib("VmHWM") / 1024, 1),
            "query_p50_ms": round(statistics.median(times), 2),
            "query_p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2),
            "beside_p50_ms": round(statistics.median(beside), 2),
            "beside_p95_ms": round(sorted(beside)[int(0.95 * (len(beside) - 1))], 2),
            "batch_texts_per_s": round(len(batch) / best, 1),
            "_pooled": [np.asarray(e.pooled).tolist() for e in found],
            "_tokens": [np.asarray(e.token_vectors).tolist() for e in found], "_texts": texts}


def beside_batches(encoder: object, tokenizer: object, queries: list[str], batch: list[str]) -> list[float]:
    """Each query's encoding time (ms) while another thread encodes ``batch`` again and again with
    a tokenizer of its own: a prompt searched while the embedding job embeds that prompt's event."""
    import threading

    stop = threading.Event()
    other = encoder.tokenizer()

    def batches() -> None:
        while not stop.is_set():
            encoder.encode(other, batch)

    worker = threading.Thread(target=batches)
    worker.start()
    time.sleep(0.5)  # the batches under way
    times = []
    try:
        for q in queries:
            t = time.perf_counter()
            encoder.encode(tokenizer, [q])
            times.append((time.perf_counter() - t) * 1000)
    finally:
        stop.set()
        worker.join()
    return times


def parity(result: dict[str, object]) -> tuple[float, float]:
    """(lowest cosine of the pooled vectors, largest difference of a piece's vector) against
    sentence-transformers."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from ai_memory.embed.model import packaged_model_dir

    model = SentenceTransformer(str(packaged_model_dir()), device="cpu")
    texts = result["_texts"]
    expected = model.encode(texts, normalize_embeddings=True)
    tokens = model.encode(texts, output_value="token_embeddings")
    pooled = np.asarray(result["_pooled"], dtype=np.float32)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    cosine = float(min(np.dot(pooled[i], expected[i]) for i in range(len(texts))))
    worst = max(float(np.abs(np.asarray(found) - np.asarray(tokens[i])).max())
                for i, found in enumerate(result["_tokens"]))
    return cosine, worst


def installed_mib(package: str) -> float | None:
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent
    return round(sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 2**20, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--baseline", default="5391ada", help="the commit whose torch encoder is compared")
    parser.add_argument("--encoder", choices=ENCODERS, help=argparse.SUPPRESS)  # the child's side
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)  # the child's side: the graph file's folder
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    queries, batch = corpus(args.queries, args.batch)
    if args.encoder:
        print(json.dumps(measure(args.encoder, queries, batch, args.threads, args.cache)))
        return
    cache = Path(tempfile.mkdtemp(prefix="encoders-"))
    from ai_memory.embed.model import MiniLM, packaged_model_dir
    from ai_memory.embed.onnx_graph import model_bytes

    # made once, as a daemon's first start would; then read from disk
    (cache / "graph.onnx").write_bytes(model_bytes(packaged_model_dir()))
    MiniLM(cache_dir=cache).load()
    baseline_encoder(args.baseline, cache)
    results: dict[str, dict[str, object]] = {}
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for name in ENCODERS:
        done = subprocess.run([sys.executable, __file__, "--encoder", name, "--queries", str(args.queries),
                               "--batch", str(args.batch), "--threads", str(args.threads), "--cache", str(cache)],
                              capture_output=True, text=True, env=env, cwd=REPO, check=True)
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
        results[name]["parity_cosine_min"], results[name]["parity_piece_max_abs"] = parity(results[name])
        for key in ("_pooled", "_tokens", "_texts"):
            del results[name][key]
    print(f"{'encoder':<15} {'load s':>7} {'RSS MiB':>8} {'peak MiB':>9} {'query p50':>10} {'p95 ms':>7} "
          f"{'beside batches p50':>19} {'p95 ms':>7} {'batch/s':>8} {'cos min':>10} {'piece diff':>11}")
    for name, r in results.items():
        print(f"{name:<15} {r['load_s']:>7} {r['rss_loaded_mib']:>8} {r['rss_peak_mib']:>9} {r['query_p50_ms']:>10} "
              f"{r['query_p95_ms']:>7} {r['beside_p50_ms']:>19} {r['beside_p95_ms']:>7} {r['batch_texts_per_s']:>8} "
              f"{r['parity_cosine_min']:>10.7f} {r['parity_piece_max_abs']:>11.2e}")
    sizes = {name: installed_mib(name) for name in ("torch", "onnxruntime", "onnx", "openvino")}
    print("installed, MiB:", ", ".join(f"{k} {v}" for k, v in sizes.items()))
    for candidate in ("openvino-auto", "openvino-float32", "onnxruntime-float32"):
        c = results[candidate]
        for base in ("torch-bfloat16", "torch-float32"):
            r = results[base]
            print(f"{candidate} / {base}: batch throughput {c['batch_texts_per_s'] / r['batch_texts_per_s']:.2f}x, "
                  f"query p95 {c['query_p95_ms'] / r['query_p95_ms']:.2f}x, load {c['load_s'] / r['load_s']:.2f}x, "
                  f"peak RSS {c['rss_peak_mib'] / r['rss_peak_mib']:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"encoders": results, "installed_mib": sizes}, indent=2))


if __name__ == "__main__":
    main()
