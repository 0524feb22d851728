"""Faithfulness per model family on the planted-keyword task (trained tiny models).

    python benchmarks/families_toy.py [--families bert,roberta,gpt2,llama] [--seeds 0,1,2] [--inputs 150]

Each family is trained with ``contrastcat.testing.tiny.train_tiny`` (2,000 toy
sentences, 2 epochs) once per seed; a 30-reference library is built from 600
other sentences; Contrast-CAT, AttCAT and random scores explain ``--inputs``
held-out sentences. Printed per family: held-out accuracy, how often the top
non-special token is a planted keyword, MoRF and LeRF AOPC (paper grid), and
the paired differences Contrast-CAT - AttCAT and Contrast-CAT - random in
MoRF AOPC per input (all seeds pooled) with their 95 % intervals. Tiny models on a synthetic task: this
checks that every family runs the method as it should, not the paper's numbers.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from benchstats import paired_interval, per_input_aopc  # benchmarks/benchstats.py

from contrastcat.attribution.pipeline import explain
from contrastcat.methods import build_method
from contrastcat.models import predictor
from contrastcat.records.inputs import InputRow
from contrastcat.testing import tiny, toy

METHODS = ("contrastcat", "attcat", "random")
KEYWORDS = set(toy.POSITIVE + toy.NEGATIVE)


def keyword_first(record) -> bool:
    top = int(np.argmax(np.where(record.special, -np.inf, record.scores)))
    start, end = record.offsets[top]
    return record.text[start:end].strip() in KEYWORDS


def run_family(model_type: str, seeds: list[int], inputs: int, folder: Path) -> dict:
    held_out = toy.make_examples(inputs, seed=2)
    rows = [InputRow(i + 1, i, e.text, e.label) for i, e in enumerate(held_out)]
    with_keywords = [i for i, e in enumerate(held_out) if e.keywords]
    found = {name: {"first": [], "morf": [], "lerf": []} for name in METHODS}
    accuracy = []
    for seed in seeds:
        classifier, library = tiny.trained_classifier_and_library(model_type, seed, folder / f"{model_type}-{seed}.h5")
        predict = predictor(classifier, 64)
        records = list(explain(classifier, rows, [build_method(name) for name in METHODS], library))
        accuracy.append(np.mean([r.predicted == e.label for r, e in zip(records[:: len(METHODS)], held_out)]))
        for offset, name in enumerate(METHODS):
            mine = records[offset :: len(METHODS)]
            found[name]["first"] += [keyword_first(mine[i]) for i in with_keywords]
            for order in ("morf", "lerf"):
                found[name][order].append(per_input_aopc(mine, predict, classifier.label_names, order))
    for name in METHODS:
        for order in ("morf", "lerf"):
            found[name][order] = np.concatenate(found[name][order])
    return {"accuracy": float(np.mean(accuracy)), "methods": found}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default="bert,roberta,gpt2,llama")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--inputs", type=int, default=150)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"seeds {seeds}, {args.inputs} held-out inputs per seed")
    print("family    acc    keyword first (cc / att / rnd)   MoRF AOPC (cc / att / rnd)   LeRF AOPC (cc / att / rnd)"
          "   MoRF AOPC cc - att [95% CI]   cc - rnd [95% CI]")
    with tempfile.TemporaryDirectory() as folder:
        for model_type in args.families.split(","):
            result = run_family(model_type, seeds, args.inputs, Path(folder))
            m = result["methods"]
            first = " / ".join(f"{np.mean(m[n]['first']):.3f}" for n in METHODS)
            morf = " / ".join(f"{np.nanmean(m[n]['morf']):.3f}" for n in METHODS)
            lerf = " / ".join(f"{np.nanmean(m[n]['lerf']):.3f}" for n in METHODS)
            evaluated = int(np.isfinite(m["contrastcat"]["morf"]).sum())
            against = [paired_interval(m["contrastcat"]["morf"], m[other]["morf"]) for other in ("attcat", "random")]
            intervals = "  ".join(f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]" for mean, low, high in against)
            print(f"{model_type:9s} {result['accuracy']:.3f}  {first:30s}  {morf:27s}  {lerf:27s}  "
                  f"{intervals}  ({evaluated} inputs)", flush=True)


if __name__ == "__main__":
    main()
