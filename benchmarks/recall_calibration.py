"""How prompt recall's confidence was fitted, and what each threshold gives.

    python benchmarks/recall_calibration.py STUDY.json [--ratio 0.8] [--repeats 10]

STUDY.json is what ``prompt_recall.py --study`` writes: for every development question and every
prompt of another project, the hits of ``/v1/query`` with what a confidence is made of
(coverage, title, phrase, meaning, written) and whether each is gold. This fits the logistic
model of ``ai_memory/retrieval/confidence.py`` on the first three hits of every prompt (gold
hits against all others, the other project's hits among them), twice: with the model's meaning
and with words only. It prints

- the coefficients of both fits, as ``confidence.py`` holds them;
- for each threshold, what an item rule of "confidence at least the threshold, score at least
  ``--ratio`` of the best hit's, the first three hits" gives (hit, precision, the other
  project's prompts with any item), in sample with the confidence the daemon computed, and
  out of sample: fitted on a random half of the prompts, measured on the other half,
  ``--repeats`` times (mean ± standard deviation).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

FEATURES = ("coverage", "title", "phrase", "meaning", "written")
WORDS_ONLY = ("coverage", "title", "phrase", "written")
TOP = 3
THRESHOLDS = (0.1, 0.15, 0.18, 0.2, 0.22, 0.25, 0.3, 0.35)
L2, STEPS, RATE = 1e-2, 20_000, 0.5


def rows(prompts: list[dict[str, Any]], names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    x = [[float(h[n]) for n in names] for p in prompts for h in p["hits"][:TOP]]
    y = [float(h["gold"]) for p in prompts for h in p["hits"][:TOP]]
    return np.array(x, dtype=float).reshape(-1, len(names)), np.array(y)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by gradient descent (a few thousand rows: no library
    needed, and the same numbers on every machine)."""
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        g = p - y
        w -= RATE * (x.T @ g / len(y) + L2 * w)
        b -= RATE * float(g.mean())
    return w, b


def handed(prompt: dict[str, Any], sure: Any, threshold: float, ratio: float) -> list[dict[str, Any]]:
    hits = prompt["hits"]
    if not hits:
        return []
    best = max(h["score"] for h in hits)
    return [h for h in hits[:TOP] if sure(h) >= threshold and h["score"] >= best * ratio]


def measure(pos: list[dict[str, Any]], neg: list[dict[str, Any]], sure: Any, threshold: float,
            ratio: float) -> tuple[float, float, float]:
    given = [handed(p, sure, threshold, ratio) for p in pos]
    right = sum(1 for items in given for h in items if h["gold"])
    total = sum(len(items) for items in given)
    hit = sum(1 for items in given if any(h["gold"] for h in items)) / len(pos)
    loud = sum(1 for p in neg if handed(p, sure, threshold, ratio)) / len(neg)
    return hit, right / total if total else 0.0, loud


def fitted(names: tuple[str, ...], w: np.ndarray, b: float) -> Any:
    return lambda h: 1.0 / (1.0 + np.exp(-(sum(wi * float(h[n]) for wi, n in zip(w, names)) + b)))


def out_of_sample(pos: list[dict[str, Any]], neg: list[dict[str, Any]], names: tuple[str, ...], ratio: float,
                  repeats: int) -> dict[float, np.ndarray]:
    rng = np.random.default_rng(0)
    found: dict[float, list[tuple[float, float, float]]] = {t: [] for t in THRESHOLDS}
    for _ in range(repeats):
        p_order, n_order = rng.permutation(len(pos)), rng.permutation(len(neg))
        halves = [(p_order[: len(pos) // 2], n_order[: len(neg) // 2]), (p_order[len(pos) // 2:], n_order[len(neg) // 2:])]
        for train, test in (halves, halves[::-1]):
            x, y = rows([pos[i] for i in train[0]] + [neg[i] for i in train[1]], names)
            sure = fitted(names, *fit(x, y))
            for t in THRESHOLDS:
                found[t].append(measure([pos[i] for i in test[0]], [neg[i] for i in test[1]], sure, t, ratio))
    return {t: np.array(v) for t, v in found.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path)
    parser.add_argument("--ratio", type=float, default=0.8)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    doc = json.loads(args.study.read_text())
    pos, neg = doc["pos"], doc["neg"]
    for label, names in (("with meaning", FEATURES), ("words only", WORDS_ONLY)):
        w, b = fit(*rows(pos + neg, names))
        print(f"{label}: " + ", ".join(f"{n}={v:.2f}" for n, v in zip(names, w)) + f", intercept={b:.2f}")
    print(f"\nitems: confidence >= threshold, score >= {args.ratio} x the best hit's, of the first {TOP} hits")
    print(f"{'threshold':>10} | {'in sample (the daemon confidence)':^34} | {'out of sample, fitted on half':^45}")
    print(f"{'':>10} | {'hit':>8}{'prec':>8}{'neg':>8}{'':>10} | {'hit':>9}{'':>6}{'prec':>9}{'':>6}{'neg':>9}")
    cv = out_of_sample(pos, neg, FEATURES, args.ratio, args.repeats)
    for t in THRESHOLDS:
        hit, prec, loud = measure(pos, neg, lambda h: h["confidence"], t, args.ratio)
        m, s = cv[t].mean(axis=0), cv[t].std(axis=0)
        print(f"{t:>10.2f} | {hit:>8.3f}{prec:>8.3f}{loud:>8.3f}{'':>10} | "
              + "".join(f"{m[i]:>9.3f}±{s[i]:.3f}" + " " * 1 for i in range(3)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
