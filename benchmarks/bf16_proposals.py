"""Whether bfloat16 can propose the deletion test's choice and float32 decide it, exactly.

    python benchmarks/bf16_proposals.py --inputs 48 --safety 4

Explains the first ``--inputs`` rows of build/compare/rt-heldout.jsonl (minilm-rt held-out
reviews, never the examples; build/demo/refs.h5 its library) with Contrast-CAT at float32,
keeping each batch's deletion test (its candidate maps). The first batch calibrates: every
deletion sequence it predicts, in bfloat16 and in float32; the largest probability difference
times ``--safety`` is the stated bound. Each later batch is refined three ways: float32 (the
oracle), bfloat16 alone, and bfloat16 proposing with every undecided input tested again in float32
(:func:`contrastcat.deletion.refine.refine_proposed`). Printed: inputs whose kept maps differ from
float32's, inputs tested again, each way's seconds, and the CPU (bfloat16 is fast only where native).
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
from contrastcat.deletion.perturb import ranked_positions
from contrastcat.deletion.plan import DeletionPlan
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


def sequences_of(items, settings) -> list[list[int]]:
    """Every sequence the deletion test of ``items`` predicts, each once."""
    plan, seen = DeletionPlan(), []
    for item in items:
        plan.add(item.ids)
        counts = refining.tested_counts(len(item.ids), settings.grid, settings.steps)
        for scores in item.maps:
            plan.steps(item.ids, ranked_positions(scores, item.special, "morf"), counts)
    plan.predict(lambda sequences: seen.extend(sequences) or np.zeros((len(sequences), 2)))
    return [list(sequence) for sequence in seen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=48)
    parser.add_argument("--safety", type=float, default=4.0)
    args = parser.parse_args()
    print(describe_hardware(torch.device("cpu")), flush=True)
    classifier = contrastcat.load_model("minilm-rt", device="cpu")
    lines = [json.loads(line) for line in open("build/compare/rt-heldout.jsonl").read().splitlines()[:args.inputs]]
    rows = [InputRow(line=i + 1, id=row["id"], text=row["text"], label=None) for i, row in enumerate(lines)]
    batches = tests_of(classifier, rows, RefLibrary("build/demo/refs.h5"))
    exact, low = predictor(classifier, 64, None), predictor(classifier, 64, torch.bfloat16)
    calibration = sequences_of(*batches[0])
    largest = float(np.abs(low(calibration) - exact(calibration)).max())
    bound = largest * args.safety
    differ = again = same = total = 0
    seconds = {"float32": 0.0, "bfloat16 alone": 0.0, "proposed": 0.0}
    for items, settings in batches[1:]:
        began = time.perf_counter()
        oracle = refining.refine(items, exact, settings)
        seconds["float32"] += time.perf_counter() - began
        began = time.perf_counter()
        alone = refining.refine(items, low, settings)
        seconds["bfloat16 alone"] += time.perf_counter() - began
        began = time.perf_counter()
        proposed, tested = refining.refine_proposed(items, refining.Proposed(low, exact, bound), settings)
        seconds["proposed"] += time.perf_counter() - began
        total, again = total + len(items), again + tested
        differ += sum(a.kept.tolist() != o.kept.tolist() for a, o in zip(alone, oracle))
        same += sum(p.kept.tolist() == o.kept.tolist() for p, o in zip(proposed, oracle))
    print(f"calibration: {len(calibration)} sequences, largest |bfloat16 - float32| {largest:.2e}, "
          f"bound (x{args.safety:g}) {bound:.2e}")
    print(f"{total} inputs after the first batch: bfloat16 alone keeps other maps for {differ}; proposed: the "
          f"same kept maps as float32 for {same}, tested again in float32 for {again}")
    print("seconds: " + ", ".join(f"{name} {value:.1f}" for name, value in seconds.items()))


if __name__ == "__main__":
    main()
