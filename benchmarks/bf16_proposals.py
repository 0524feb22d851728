"""Whether bfloat16 can propose the deletion test's choice and float32 decide it, exactly, for less.

    python benchmarks/bf16_proposals.py --inputs 64 --safety 3

Explains the first ``--inputs`` rows of build/compare/rt-heldout.jsonl (minilm-rt held-out
reviews, never the examples; build/demo/refs.h5 its library) with Contrast-CAT at float32,
keeping each batch's deletion test (its candidate maps). The first batch calibrates: every
deletion sequence it predicts, in bfloat16 and in float32; the largest move of a logit
difference, and of a map's score, times ``--safety``, are the stated bounds. Each later batch is
refined three ways: float32 (the oracle), bfloat16 alone, and bfloat16 proposing with the rows of
every map whose side of the threshold the bounds leave open predicted again in float32
(:func:`contrastcat.deletion.refine.refine_proposed`). Printed: inputs whose kept maps differ from
float32's, the share of rows predicted again, each way's seconds, and the CPU (bfloat16 is fast
only where native).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import contrastcat
from contrastcat.attribution import pipeline
from contrastcat.deletion import refine as refining
from contrastcat.library import RefLibrary
from contrastcat.methods import build_method
from contrastcat.models.forward import predictor
from contrastcat.models.precision import describe_hardware
from contrastcat.records.inputs import InputRow


def tests_of(classifier, rows, library) -> list:
    """Each batch's deletion test (its items and settings), as explain at float32 runs it."""
    found, real = [], pipeline.refine

    def keep(items, predict, settings, multi_label):
        found.append((list(items), settings))
        return real(items, predict, settings, multi_label)

    pipeline.refine = keep
    try:
        list(pipeline.explain(classifier, rows, [build_method("contrastcat")], library))
    finally:
        pipeline.refine = real
    return found


def calibrated(classifier, items, settings, safety: float):
    """The stated bounds from one batch's deletion test: the largest move of a logit difference
    and of a map's score (its base exact, as refine_proposed scores it) between bfloat16 and
    float32, each times ``safety``."""
    plan, tests = refining._planned(items, settings)
    exact = predictor(classifier, 64, None)(plan.sequences)
    low = predictor(classifier, 64, torch.bfloat16)(plan.sequences)
    largest = 0.0
    for item, test in zip(items, tests):
        truth = refining._measured(exact, item.target, settings, classifier.multi_label)
        proposed = refining._measured(low, item.target, settings, classifier.multi_label)
        proposed[test.own] = truth[test.own]
        largest = max(largest, float(np.abs(refining._scores(test, proposed) - refining._scores(test, truth)).max()))
    margin = refining.logit_margin(low, exact, classifier.multi_label)
    return margin * safety, largest * safety, len(plan.sequences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=64)
    parser.add_argument("--safety", type=float, default=3.0)
    args = parser.parse_args()
    print(describe_hardware(torch.device("cpu")), flush=True)
    classifier = contrastcat.load_model("minilm-rt", device="cpu")
    lines = [json.loads(line) for line in open("build/compare/rt-heldout.jsonl").read().splitlines()[:args.inputs]]
    rows = [InputRow(line=i + 1, id=row["id"], text=row["text"], label=None) for i, row in enumerate(lines)]
    batches = tests_of(classifier, rows, RefLibrary("build/demo/refs.h5"))
    exact, low = predictor(classifier, 64, None), predictor(classifier, 64, torch.bfloat16)
    margin, score_bound, calibration = calibrated(classifier, *batches[0], args.safety)
    proposal = refining.Proposed(low, exact, margin, score_bound)
    differ = same = total = rows_total = rows_again = 0
    seconds = {"float32": 0.0, "bfloat16 alone": 0.0, "proposed": 0.0}
    for items, settings in batches[1:]:
        began = time.perf_counter()
        oracle = refining.refine(items, exact, settings)
        seconds["float32"] += time.perf_counter() - began
        began = time.perf_counter()
        alone = refining.refine(items, low, settings)
        seconds["bfloat16 alone"] += time.perf_counter() - began
        began = time.perf_counter()
        proposed, checked = refining.refine_proposed(items, proposal, settings)
        seconds["proposed"] += time.perf_counter() - began
        total, rows_total, rows_again = total + len(items), rows_total + checked.rows, rows_again + checked.again
        differ += sum(a.kept.tolist() != o.kept.tolist() for a, o in zip(alone, oracle))
        same += sum(p.kept.tolist() == o.kept.tolist() for p, o in zip(proposed, oracle))
    print(f"calibration: {calibration} sequences; stated (x{args.safety:g}): a logit difference moves at most "
          f"{margin:.3f}, a map's score at most {score_bound:.4f}")
    print(f"{total} inputs after the first batch: bfloat16 alone keeps other maps for {differ}; proposed: the "
          f"same kept maps as float32 for {same}, {rows_again} of {rows_total} rows "
          f"({rows_again / max(rows_total, 1):.0%}) predicted again in float32")
    print("seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in seconds.items()))


if __name__ == "__main__":
    main()
