"""Paired differences of per-input AOPC between methods of one records file.

    python benchmarks/paired_methods.py build/compare/all.jsonl --model minilm-rt \\
        --baseline contrastcat --methods full-lrp,attnlrp,transatt,partial-lrp

For each method, the mean over inputs of (method − baseline) in MoRF and in
LeRF AOPC (paper grid, deletion, evaluate's defaults), with a 95 % paired
bootstrap interval (10,000 resamples of the inputs, seed 0; percentile).
"""

from __future__ import annotations

import argparse

import numpy as np
from benchstats import per_input_aopc  # benchmarks/benchstats.py

from contrastcat.api import load_model
from contrastcat.models import predictor
from contrastcat.records.record import RecordFile


def bootstrap_interval(difference: np.ndarray, resamples: int = 10_000) -> tuple[float, float, float, int]:
    difference = difference[np.isfinite(difference)]
    draws = np.random.default_rng(0).integers(0, len(difference), size=(resamples, len(difference)))
    low, high = np.percentile(difference[draws].mean(axis=1), [2.5, 97.5])
    return float(difference.mean()), float(low), float(high), len(difference)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records")
    parser.add_argument("--model", default="minilm-rt")
    parser.add_argument("--baseline", default="contrastcat")
    parser.add_argument("--methods", required=True)
    args = parser.parse_args()

    classifier = load_model(args.model)
    predict = predictor(classifier, 64)
    records = list(RecordFile(args.records).records())
    by_method: dict[str, dict] = {}
    for record in records:
        by_method.setdefault(record.method, {})[record.id] = record
    base = by_method[args.baseline]
    for name in args.methods.split(","):
        ids = [i for i in base if i in by_method[name]]
        line = [f"{name:12s} − {args.baseline}:"]
        for order in ("morf", "lerf"):
            mine = per_input_aopc([by_method[name][i] for i in ids], predict, classifier.label_names, order)
            theirs = per_input_aopc([base[i] for i in ids], predict, classifier.label_names, order)
            mean, low, high, count = bootstrap_interval(mine - theirs)
            line.append(f"{order.upper()} AOPC {mean:+.3f} [{low:+.3f}, {high:+.3f}] (n={count})")
        print("  ".join(line))


if __name__ == "__main__":
    main()
