"""The variants harness: Contrast-CAT variants against the paper's method on held-out inputs.

    python benchmarks/variants.py --model minilm-rt --split select --variants paper,random-refs,k50
    python benchmarks/variants.py --model minilm-bbc --split report --variants paper,<chosen>

The held-out rows of the model's corpus that are not among its examples
(``examples/<model>/inputs.jsonl``) are taken in their fixed order: the first
500 for ``minilm-rt``, all of them for ``minilm-bbc``; ``--split select`` is the
first half (choose variants and their defaults there), ``--split report`` the
second (report the chosen one there, once). Each variant's records are cached
in ``build/variants/<model>/<split>/<variant>.jsonl`` (delete to recompute).
A cache made with other settings than the variant now has is recomputed.
Printed per variant, for AOPC and for LOdds: the MoRF and LeRF means (paper
grid; deletion, or masking with ``--perturb mask``) with their bootstrap
intervals, the paired difference against ``paper`` (``--against``) with its 95 % interval
(10,000 resamples, seed 0), and explain's seconds per input (one run; run it
on a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from contrastcat.api import explain, load_model
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records
from contrastcat.evaluation.stats import BootstrapSettings, paired_difference
from contrastcat.library import RefLibrary
from contrastcat.methods import METHODS, build_method
from contrastcat.models.precision import describe_hardware
from contrastcat.records.corpora import CORPORA
from contrastcat.records.record import AttributionRecord, RecordFile, write_records

ROOT = Path(__file__).resolve().parent.parent
# name -> (method, options). Every variant tried stays here, the ones that lost included.
VARIANTS: dict[str, tuple[str, dict]] = {
    "paper": ("contrastcat", {}),
    "attcat": ("attcat", {}),
    "tis": ("tis", {}),
    "attnlrp": ("attnlrp", {}),
    "integrated-gradients": ("integrated-gradients", {}),
    "random": ("random", {}),
    "no-refine": ("contrastcat", {"refine": False}),
    "random-refs": ("contrastcat", {"reference_select": "random"}),
    "same-refs": ("contrastcat", {"reference_select": "same"}),
    "k50": ("contrastcat", {"refs_used": 50}),
    "rho-mean": ("contrastcat", {"rho": "mean"}),
    "mixed30": ("contrastcat", {"reference_select": "contrast+random"}),  # 15 + 15
    "mixed60": ("contrastcat", {"reference_select": "contrast+random", "refs_used": 60}),  # 30 + 30
    "random50": ("contrastcat", {"reference_select": "random", "refs_used": 50}),
    "plus": ("contrastcat-plus", {}),  # the shipped defaults: mixed60-top1-lerf, fixed on the select half
    # contrastcat-plus (beyond the paper) with its knobs: candidates K, pool, top_maps, refine_score, magnitude.
    "top1": ("contrastcat-plus", {"candidates": 30, "pool": "contrast", "top_maps": 1, "refine_score": "morf"}),
    "top3": ("contrastcat-plus", {"candidates": 30, "pool": "contrast", "top_maps": 3, "refine_score": "morf"}),
    "top5": ("contrastcat-plus", {"candidates": 30, "pool": "contrast", "top_maps": 5, "refine_score": "morf"}),
    "mixed60-top3": ("contrastcat-plus", {"candidates": 60, "top_maps": 3, "refine_score": "morf"}),
    "random50-top3": ("contrastcat-plus", {"candidates": 50, "pool": "random", "top_maps": 3, "refine_score": "morf"}),
    "mixed60-top1": ("contrastcat-plus", {"candidates": 60, "top_maps": 1, "refine_score": "morf"}),
    "mixed100-top3": ("contrastcat-plus", {"candidates": 100, "top_maps": 3, "refine_score": "morf"}),
    "mixed60-top1-lerf": ("contrastcat-plus", {"candidates": 60, "top_maps": 1, "refine_score": "morf-lerf"}),
    "mixed60-top3-lerf": ("contrastcat-plus", {"candidates": 60, "top_maps": 3, "refine_score": "morf-lerf"}),
    "top3-magnitude": (
        "contrastcat-plus", {"candidates": 30, "pool": "contrast", "top_maps": 3, "refine_score": "morf", "magnitude": True}
    ),
}
# A cheaper deletion test: the same maps, tested at fewer steps of the grid (a step's
# sequences are shorter the later it is, so step 1 costs most: 0.89 of a full forward per map).
for _steps in ("1", "2", "3", "4", "5", "1,5", "2,4", "1,3"):
    VARIANTS[f"steps-{_steps.replace(',', '+')}"] = ("contrastcat", {"test_steps": _steps})
# Beyond the paper: Contrast-CAT's formula with AttnLRP's modified gradients (contrastcat-lrp).
VARIANTS.update({
    "lrp-paper": ("contrastcat-lrp", {}),  # the paper's references and deletion test
    "lrp-mean": ("contrastcat-lrp", {"refine": False}),  # the mean of the 30 maps: no deletion test at all
    "lrp-random-mean": ("contrastcat-lrp", {"refine": False, "reference_select": "random"}),
    "lrp-noatt-mean": ("contrastcat-lrp", {"refine": False, "attention": False}),
    "lrp-zero": ("contrastcat-lrp", {"refs_used": 0}),  # R = 0: AttCAT with the modified gradients
    # Cheaper: contrastcat-lrp with a cheaper deletion test (the bar is against the paper's method).
    "lrp-k5": ("contrastcat-lrp", {"refs_used": 5}),
    "lrp-k8": ("contrastcat-lrp", {"refs_used": 8}),
    "lrp-k20-steps-5": ("contrastcat-lrp", {"refs_used": 20, "test_steps": "5"}),
    # Beyond the paper: the deletion test's drop in log-odds, for the confident minilm-bbc.
    "logodds": ("contrastcat", {"test_measure": "log-odds"}),
    "lrp-logodds": ("contrastcat-lrp", {"test_measure": "log-odds"}),
})
for _steps in ("1", "3", "5", "6", "7", "2+4"):
    VARIANTS[f"lrp-steps-{_steps}"] = ("contrastcat-lrp", {"test_steps": _steps.replace("+", ",")})
# Cheaper, tried and lost: the K references ranked best once per class on calibration
# training rows (benchmarks/ranked.py), averaged (rank-K) or tested (rank-K-test).
RANKED = {"rank-1": 1, "rank-3": 3, "rank-5": 5, "rank-10": 10, "rank-5-test": 5, "rank-8-test": 8}
for _name, _k in RANKED.items():
    VARIANTS[_name] = ("contrastcat", {"refs_used": _k, "refine": _name.endswith("-test")})
# Every method at its defaults is a variant too, under its method name but for these three.
NAMES = {"contrastcat": "paper", "contrastcat-plus": "plus", "contrastcat-lrp": "lrp-paper"}
for _method in METHODS:
    VARIANTS.setdefault(NAMES.get(_method, _method), (_method, {}))
CORPUS = {"minilm-rt": ("rotten-tomatoes", 500), "minilm-bbc": ("bbc-news", None)}


def variant_names(text: str, against: str, skip: str = "") -> list[str]:
    """The comma list's variants ("methods": every method at its defaults), ``against`` first if
    absent, without the ``skip`` comma list's (e.g. the slowest). ValueError for a name not known."""
    names = []
    for name in (n.strip() for n in text.split(",")):
        names += [NAMES.get(m, m) for m in METHODS] if name == "methods" else [name]
    skipped = [n.strip() for n in skip.split(",") if n.strip()]
    unknown = [n for n in names + skipped if n not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variant {unknown[0]!r} (the names: VARIANTS in benchmarks/variants.py)")
    if against not in VARIANTS:
        raise ValueError(f"unknown variant {against!r} for --against")
    if against in skipped:
        raise ValueError(f"--skip {against}: every other variant is paired against it")
    names = [n for n in dict.fromkeys(names) if n not in skipped]
    if not names:
        raise ValueError("--skip leaves none of the variants asked for")
    if against not in names:
        names.insert(0, against)
    return names


def held_out(model: str, split: str) -> list[dict]:
    corpus_name, count = CORPUS[model]
    shown = {json.loads(line)["text"] for line in (ROOT / "examples" / model / "inputs.jsonl").read_text().splitlines()}
    corpus = CORPORA[corpus_name]()
    rows = [e for e in corpus.held_out if e.text not in shown][:count]
    half = len(rows) // 2
    chosen = rows[:half] if split == "select" else rows[half:]
    return [{"id": e.id, "text": e.text, "label": corpus.label_names[e.label]} for e in chosen]


def library_for(classifier, model: str) -> RefLibrary:
    path = ROOT / "build" / "variants" / model / "refs.h5"
    if not path.exists():
        from contrastcat.api import build_library

        path.parent.mkdir(parents=True, exist_ok=True)
        build_library(classifier, path, pools=("same", "random"))
    return RefLibrary(path)


def records_of(classifier, library, rows, model, split, name) -> tuple[list[AttributionRecord], float | None]:
    path = ROOT / "build" / "variants" / model / split / f"{name}.jsonl"
    method, options = VARIANTS[name]
    if path.exists():
        cached = list(RecordFile(str(path)).records())
        if cached and made_by(cached[0], method, options):
            return cached, None
        print(f"{path}: made with other settings than {name!r} now has; recomputing", file=sys.stderr)
    start = time.perf_counter()
    found = list(explain(classifier, rows, variant_library(classifier, library, model, name), method, **options))
    seconds = (time.perf_counter() - start) / len(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_records(str(path), found)
    (path.with_suffix(".seconds")).write_text(f"{seconds:.4f}\n")
    return found, seconds


def variant_library(classifier, library: RefLibrary, model: str, name: str) -> RefLibrary:
    """The library the variant reads: the rank-* variants read it in ranked order."""
    if name not in RANKED:
        return library
    from ranked import CALIBRATION, RankedLibrary, ranking  # benchmarks/ranked.py

    corpus = CORPORA[CORPUS[model][0]]()
    cache = ROOT / "build" / "variants" / model / f"ranking-{CALIBRATION}.json"
    return RankedLibrary(library.path, ranking(classifier, library, [e.text for e in corpus.train], cache))


def made_by(record: AttributionRecord, method: str, options: dict) -> bool:
    """The cache holds what the variant asks for: same method, same settings."""
    wanted = build_method(method, **options).settings()
    return record.method == method and all(record.settings.get(key) == value for key, value in wanted.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=sorted(CORPUS), default="minilm-rt")
    parser.add_argument("--split", choices=("select", "report"), default="select")
    parser.add_argument("--variants", default="paper,attcat,random-refs")
    parser.add_argument("--against", default="paper", help="the variant the differences are taken against")
    parser.add_argument(
        "--perturb", choices=("delete", "mask"), default="delete",
        help="how the evaluation removes tokens; the deletion test inside the methods always deletes, so "
        "mask is a check the selection did not fit",
    )
    args = parser.parse_args()
    try:
        names = variant_names(args.variants, args.against)
    except ValueError as error:
        parser.error(str(error))

    classifier = load_model(args.model)
    library = library_for(classifier, args.model)
    rows = held_out(args.model, args.split)
    bootstrap = BootstrapSettings(10_000, 0.95, 0)
    values, seconds = {}, {}
    for name in names:
        found, cost = records_of(classifier, library, rows, args.model, args.split, name)
        cached = ROOT / "build" / "variants" / args.model / args.split / f"{name}.seconds"
        seconds[name] = cost if cost is not None else float(cached.read_text()) if cached.exists() else float("nan")
        report = evaluate_records(classifier, found, EvalSettings(perturb=args.perturb), Evaluating(library, bootstrap=bootstrap))
        (method_report,) = report.methods.values()
        values[name] = method_report
    print(f"{describe_hardware(torch.device('cpu'))}; {args.model}, {args.split} half: {len(rows)} held-out inputs "
          f"(not the examples), {args.perturb}; "
          f"paired differences against {args.against}, 95 % bootstrap (10,000 resamples, seed 0)")
    for key, better in (("aopc", "MoRF higher, LeRF lower"), ("lodds", "MoRF lower, LeRF higher")):
        print(f"\n{key.upper() if key == 'aopc' else 'LOdds'} (better: {better})")
        print(f"{'variant':14s} {'MoRF':>15s} {'Δ [95 %]':>26s} {'LeRF':>15s} "
              f"{'Δ [95 %]':>26s} {'s/input':>8s}")
        for name in names:
            print(" ".join([f"{name:14s}", *cells(values[name], values[args.against], key, name == args.against, bootstrap),
                            f"{seconds[name]:8.3f}"]))


def cells(mine, against, key: str, is_against: bool, bootstrap: BootstrapSettings) -> list[str]:
    found = []
    for order in ("morf", "lerf"):
        interval = mine.intervals[f"{order}_{key}"]
        mean = getattr(mine.curves[order], f"{key}_mean")
        found.append(f"{mean:7.3f} ± {interval.half_width:.3f}")
        if is_against:
            found.append(f"{'':>26s}")
            continue
        diff = paired_difference(mine.per_input[order].means(key), against.per_input[order].means(key), bootstrap)
        found.append(f"{diff.mean:+.3f} [{diff.interval.low:+.3f}, {diff.interval.high:+.3f}] n={diff.inputs:<4d}")
    return found


if __name__ == "__main__":
    main()
