"""Sanitizer: recall on the corpus, false positives on real source code, and per-event cost,
today's rules beside those of main's HEAD before issue 39 (commit 21c539d, read from git) and of
commit efd2560 (``benchmarks/frozen``), all in one run; optionally detect-secrets as the engine.

    python benchmarks/sanitizer.py [--repeat N] [--max-files N] [--json OUT] [--table docs/secrets.md]
                                   [--detect-secrets DIR] [--base COMMIT]

- Recall: the corpus of ``tests/sanitizer_corpus.py`` (every format, each set in several
  contexts and wrappers); a sample counts as found when none of its secret survives (not even a
  12-character piece) and a redaction is there. Also three sets the corpus cannot hold as plain
  text: a token split across two JSON fields, and the corpus under two other seeds. ``--table``
  writes the per-format table (``tests/sanitizer_table.py``) the docs show.
- False positives: every line of the ``.py`` files of this interpreter's site-packages (the
  venv: torch, numpy, aiohttp, ...), test suites left out as they hold deliberate fake keys; a
  line counts when any redaction touches it. Scanned 100 lines at a time, as a tool's output is.
  detect-secrets, a hundred times slower, reads every 20th file, and so do ours beside it.
- Per-event cost: 2 KB events of four shapes, clean and with one to three corpus secrets spliced
  in; each event timed with every rule set back to back, its best of ``--repeat`` rounds kept,
  and the mean over events reported, so all meet the same machine (a shared one); the ratios
  today/base and today/efd2560 are the figures that matter (target: today at most 1.5× base).
  detect-secrets is timed beside today's on the first 40 events of each shape, 3 rounds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import string
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from ai_memory.core import sanitizer as new  # noqa: E402
from ai_memory.core.secret_patterns import scan as new_scan  # noqa: E402
from frozen import sanitizer_efd2560 as old  # noqa: E402
from frozen.secret_patterns_efd2560 import scan as old_scan  # noqa: E402
from sanitizer_corpus import flagged_lines, format_ids, leaked, secret_samples, stdlib_files  # noqa: E402
from sanitizer_engines import DetectSecrets, at_commit  # noqa: E402
from sanitizer_table import render, rows  # noqa: E402

SIZE = 2048
CHUNK = 100
SKIPPED = {"test", "tests", "testing", "__pycache__"}
SHELL = """$ git status
On branch feature/login-retry
Your branch is ahead of 'origin/feature/login-retry' by 2 commits.
Changes not staged for commit:
  modified:   src/auth/session.py
  modified:   tests/test_session.py
$ pytest -q tests/test_session.py
........................................F.....                          [100%]
FAILED tests/test_session.py::test_refresh_expired - AssertionError: 401 != 200
1 failed, 45 passed in 2.31s
$ ls -la build/
drwxr-xr-x  5 dev staff   160 Nov 30 09:12 .
-rw-r--r--  1 dev staff 48213 Nov 30 09:12 app-1.4.2-py3-none-any.whl
$ pip install -e '.[test]'
Collecting httpx>=0.27 (from acme-api==1.4.2)
  Using cached httpx-0.27.2-py3-none-any.whl (76 kB)
Successfully installed acme-api-1.4.2 httpx-0.27.2
"""
PROSE = """The login flow retries forever when the refresh endpoint returns 401. Can you make the client
give up after three attempts, log a warning with the user id, and surface a clear error to the
caller? Keep the backoff we already have, and add a test that fakes the clock instead of sleeping.
Also check whether the session cookie is cleared on logout, because support says users stay signed
in on shared machines. Please do not change the public API of the Session class.
"""
LIBRARY_EVENTS = 40


# -- recall -------------------------------------------------------------------------------------

def recall(module, samples) -> tuple[float, list]:
    missed = [s for s in samples if leaked(s.secret, out := module.sanitize(s.text).text) or "[REDACTED:" not in out]
    return 1 - len(missed) / len(samples), missed


def split_payloads(rng: random.Random) -> list[tuple[dict, str]]:
    """A token cut in two and sent as two fields of one payload (a half too short to match, or
    one that matches alone and leaves the other half as text)."""
    alnum, hexa, upper = string.ascii_letters + string.digits, "0123456789abcdef", string.ascii_uppercase + string.digits

    def draw(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    makers = [lambda: "ghp_" + draw(alnum, 36), lambda: "glpat-" + draw(alnum + "-_", 20),
              lambda: f"xoxb-{draw(string.digits, 12)}-{draw(string.digits, 13)}-{draw(alnum, 24)}",
              lambda: "sk_live_" + draw(alnum, 24), lambda: "AKIA" + draw(upper, 16),
              lambda: "dop_v1_" + draw(hexa, 64)]
    out = []
    for make in makers:
        for _ in range(5):
            token = make()
            cut = rng.randint(5, len(token) - 5)
            out.append(({"tool_input": {"part_a": token[:cut], "part_b": token[cut:]}, "note": "x"}, token))
    return out


def split_recall(module, payloads: list[tuple[dict, str]]) -> float:
    found = 0
    for payload, token in payloads:
        dumped = json.dumps(module.sanitize_json(payload).value)
        parts = payload["tool_input"]
        found += parts["part_a"] not in dumped and parts["part_b"] not in dumped and token not in dumped
    return found / len(payloads)


# -- false positives on real code ---------------------------------------------------------------

def source_files(max_files: int | None) -> list[Path]:
    root = Path(sysconfig.get_paths()["purelib"])
    files = sorted(p for p in root.rglob("*.py") if not SKIPPED & set(p.relative_to(root).parts[:-1])
                   and not p.name.startswith("test_"))
    return files[:max_files] if max_files else files


def false_positives(files: list[Path], scans: dict[str, Callable[[str], list]]) -> dict[str, dict]:
    results: dict[str, dict] = {}
    texts = [(p, p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)) for p in files]
    total = sum(len(lines) for _, lines in texts)
    for name, scan in scans.items():
        started = time.perf_counter()
        hits = [(path, i, kind, lines[i]) for path, lines in texts for i, kind in flagged_lines(scan, lines)]
        seconds = time.perf_counter() - started
        unique = {(path, i) for path, i, _, _ in hits}
        results[name] = {"lines": total, "flagged": len(unique), "rate": len(unique) / total,
                         "seconds": round(seconds, 1), "examples": hits[:12]}
    return results


# -- per-event cost -----------------------------------------------------------------------------

def _fill(text: str) -> str:
    return (text * (SIZE // len(text) + 1))[:SIZE]


def clean_events(rng: random.Random) -> dict[str, list[str]]:
    code = []
    for path in rng.sample(stdlib_files(), 200):
        source = path.read_text(encoding="utf-8", errors="replace")
        if len(source) > SIZE:
            start = rng.randrange(len(source) - SIZE)
            code.append(source[start:start + SIZE])
    return {"code": code, "shell": [_fill(SHELL[i:] + SHELL[:i]) for i in range(0, 400, 10)],
            "prose": [_fill(PROSE[i:] + PROSE[:i]) for i in range(0, 400, 10)]}


def with_secrets(events: list[str], rng: random.Random) -> list[str]:
    samples = secret_samples()
    out = []
    for text in events:
        for _ in range(rng.randint(1, 3)):
            at = text.rfind("\n", 0, rng.randrange(len(text))) + 1
            text = text[:at] + rng.choice(samples).text + "\n" + text[at:]
        out.append(text[:SIZE + 600])
    return out


def payloads(texts: list[str]) -> list[dict]:
    return [{"session_id": "bench", "hook_event_name": "PostToolUse", "cwd": "/home/dev/acme-api",
             "tool_name": "Read", "tool_input": {"file_path": "/home/dev/acme-api/src/auth/session.py"},
             "tool_response": {"file": {"content": text, "numLines": text.count("\n")}}} for text in texts]


def paired_costs(fns: dict[str, Callable[[object], object]], events: list, repeat: int) -> dict[str, float]:
    """Mean over events of each event's best time, old and new timed back to back on every event
    (a burst of another process's work lands on both, and the best of ``repeat`` discards it)."""
    clock = time.perf_counter_ns
    best = {name: [float("inf")] * len(events) for name in fns}
    for _ in range(repeat):
        for i, event in enumerate(events):
            for name, fn in fns.items():
                started = clock()
                fn(event)
                best[name][i] = min(best[name][i], clock() - started)
    return {name: sum(times) / len(times) / 1e3 for name, times in best.items()}


def event_shapes() -> list[tuple[str, str, list]]:
    rng = random.Random(2025)
    clean = clean_events(rng)
    shapes: list[tuple[str, str, list]] = []
    for shape, events in clean.items():
        shapes += [(f"{shape} (2 KB)", "text", events), (f"{shape} (2 KB) + secrets", "text", with_secrets(events, rng))]
    shapes += [("hook payload (sanitize_json)", "json", payloads(clean["code"])),
               ("hook payload + secrets", "json", payloads(with_secrets(clean["code"], rng)))]
    return shapes


def _callers(engines: dict[str, object], how: str) -> dict[str, Callable[[object], object]]:
    return {name: (lambda t, m=module: m.sanitize(t, m.TextKind.TOOL_IO)) if how == "text" else module.sanitize_json
            for name, module in engines.items()}


def costs(engines: dict[str, object], base: str, repeat: int, library: object | None) -> list[dict]:
    rows_out = []
    for name, how, events in event_shapes():
        best = paired_costs(_callers(engines, how), events, repeat)
        row = {"event": name, **{f"{k}_us": round(v, 1) for k, v in best.items()},
               "ratio": round(best["today"] / best[base], 2), "ratio_efd2560": round(best["today"] / best["efd2560"], 2)}
        if library is not None:
            pair = paired_costs(_callers({"today": new, "library": library}, how), events[:LIBRARY_EVENTS], 3)
            row["detect_secrets_over_today"] = round(pair["library"] / pair["today"], 1)
        rows_out.append(row)
    return rows_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--max-files", type=int, default=0, help="site-packages files to read (0: all)")
    parser.add_argument("--base", default="21c539d", help="the commit whose rules are 'before' (read from git)")
    parser.add_argument("--detect-secrets", metavar="DIR", help="measure detect-secrets too (its install dir)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--table", type=Path, help="write the per-format table (docs/secrets.md) here")
    args = parser.parse_args(argv)
    base, base_scan = at_commit(REPO, args.base)
    engines: dict[str, object] = {"efd2560": old, args.base: base, "today": new}
    scans: dict[str, Callable[[str], list]] = {"efd2560": old_scan, args.base: base_scan.scan, "today": new_scan}
    library = DetectSecrets(args.detect_secrets, new) if args.detect_secrets is not None else None
    report: dict[str, object] = {"base": args.base}

    samples = secret_samples()
    table = rows(samples)
    print(f"corpus: {len(set(format_ids()))} formats, {len(samples)} samples")
    corpus: dict[str, object] = {"formats": len(set(format_ids())), "samples": len(samples),
                                 "per_format": {r.id: [r.found, r.samples] for r in table}}
    for name, module in {**engines, **({"detect-secrets": library} if library else {})}.items():
        rate, missed = recall(module, samples)
        print(f"  recall, rules of {name:14} {rate:8.2%}  ({len(missed)} missed)")
        corpus[f"recall_{name}"] = round(rate, 4)
        if name == "today":
            for s in missed[:10]:
                print(f"    missed {s.context}: {s.text[:100]!r}")
    print(f"  formats with every sample found: {sum(r.found == r.samples for r in table)} of {len(table)}")
    for seed in (7, 8):
        others = secret_samples(seed=seed)
        rate, _ = recall(new, others)
        print(f"  recall, rules of today, corpus seed {seed}: {rate:.2%} of {len(others)}")
        corpus[f"recall_today_seed_{seed}"] = round(rate, 4)
    split = split_payloads(random.Random(5))
    for name, module in engines.items():
        rate = split_recall(module, split)
        print(f"  token split across two JSON fields, rules of {name:8} {rate:8.2%} of {len(split)}")
        corpus[f"split_fields_{name}"] = round(rate, 4)
    report["corpus"] = corpus
    if args.table:
        args.table.write_text(render(table))

    files = source_files(args.max_files or None)
    print(f"false positives: {len(files)} .py files of {sysconfig.get_paths()['purelib']}")
    fp = false_positives(files, scans)
    for name, row in fp.items():
        print(f"  rules of {name:8} {row['flagged']:6} of {row['lines']} lines = {row['rate']:.4%}"
              f"  (scanned in {row['seconds']} s)")
    for path, i, kind, line in fp["today"]["examples"]:
        print(f"    {kind:22} {path.name}:{i + 1}: {line.strip()[:90]!r}")
    report["false_positives"] = {k: {x: v for x, v in row.items() if x != "examples"} for k, row in fp.items()}
    if library is not None:
        fp_sample = false_positives(files[::20], {"today": new_scan, "detect-secrets": library.scan})
        for name, row in fp_sample.items():
            print(f"  every 20th file, {name:14} {row['flagged']:6} of {row['lines']} lines = {row['rate']:.4%}"
                  f"  (scanned in {row['seconds']} s)")
        for path, i, kind, line in fp_sample["detect-secrets"]["examples"][:6]:
            print(f"    {kind:22} {path.name}:{i + 1}: {line.strip()[:90]!r}")
        report["false_positives_every_20th_file"] = {k: {x: v for x, v in row.items() if x != "examples"}
                                                     for k, row in fp_sample.items()}

    cost_rows = costs(engines, args.base, args.repeat, library)
    print(f"per-event cost, each event's best of {args.repeat} rounds, all rule sets back to back:")
    print(f"  {'event':34} {'efd2560 µs':>11} {args.base + ' µs':>12} {'today µs':>9} {'today/base':>11}"
          f" {'today/efd':>10}" + ("  detect-secrets/today" if library else ""))
    for row in cost_rows:
        print(f"  {row['event']:34} {row['efd2560_us']:11.1f} {row[args.base + '_us']:12.1f} {row['today_us']:9.1f}"
              f" {row['ratio']:11.2f} {row['ratio_efd2560']:10.2f}"
              + (f"  {row['detect_secrets_over_today']:>20}" if library else ""))
    mean = statistics.geometric_mean(row["ratio"] for row in cost_rows)
    mean_old = statistics.geometric_mean(row["ratio_efd2560"] for row in cost_rows)
    print(f"  geometric mean of the ratios: today/{args.base} {mean:.2f}, today/efd2560 {mean_old:.2f}")
    report["cost"] = {"rows": cost_rows, "geometric_mean_ratio": round(mean, 2),
                      "geometric_mean_ratio_efd2560": round(mean_old, 2)}
    if library is not None:
        lib = statistics.geometric_mean(row["detect_secrets_over_today"] for row in cost_rows)
        print(f"  detect-secrets costs {lib:.0f}× today's rules (geometric mean)")
        report["cost"]["detect_secrets_over_today"] = round(lib, 1)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps({k: v for k, v in corpus.items() if k != "per_format"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
