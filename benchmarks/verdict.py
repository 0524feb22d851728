"""The verdict: every method, every protocol, on held-out inputs, against Contrast-CAT.

    python benchmarks/verdict.py --model minilm-rt      # then --model minilm-bbc --skip contrastcat-plus
    make verdict                                         # both, into build/verdict/

The inputs are the held-out report half of benchmarks/variants.py (never the examples; the
select half is left for choosing variants), each method's records cached there
(``build/variants/<model>/report/<name>.jsonl``). Evaluated twice, with deletion and with the
tokenizer's [MASK], each time with the curves, ERASER comprehensiveness and sufficiency and the
leave-one-out τ. Printed as a Markdown table: Contrast-CAT's value, then for every other method
the paired difference against it (mean over the inputs both evaluated, 95 % bootstrap interval,
10,000 resamples, seed 0), **bold** where the interval excludes 0; ᶠ / ᵖ mark the cells a
method's own selection was fitted to (docs/cli.md). Written to ``build/verdict/<model>.md`` and,
with every number, ``build/verdict/<model>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from variants import NAMES, held_out, library_for, records_of  # benchmarks/variants.py

from contrastcat.api import load_model
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.evaluation.fitted import LEGEND, SIGNS
from contrastcat.usecases.evaluate_records import Evaluating, evaluate_records
from contrastcat.evaluation.stats import BootstrapSettings
from contrastcat.methods import METHODS
from contrastcat.models.precision import describe_hardware

ROOT = Path(__file__).resolve().parent.parent
# (perturbation, column key, heading): the protocols of the table, the fitted one first.
COLUMNS = (
    ("delete", "morf_aopc", "MoRF AOPC, deletion ↑"),
    ("mask", "morf_aopc", "MoRF AOPC, [MASK] ↑"),
    ("delete", "lerf_aopc", "LeRF AOPC, deletion ↓"),
    ("mask", "lerf_aopc", "LeRF AOPC, [MASK] ↓"),
    ("delete", "eraser_comp", "comprehensiveness ↑"),
    ("delete", "eraser_suff", "sufficiency ↓"),
    ("mask", "eraser_comp", "comprehensiveness, [MASK] ↑"),
    ("mask", "eraser_suff", "sufficiency, [MASK] ↓"),
    ("delete", "loo_tau", "LOO τ ↑"),
    ("mask", "loo_tau", "LOO τ, [MASK] ↑"),
)
AGAINST = "contrastcat"
SLOW = ("contrastcat-plus", "integrated-gradients")  # 3.9x and 1.1x Contrast-CAT's cost (README)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("minilm-rt", "minilm-bbc"), default="minilm-rt")
    parser.add_argument("--methods", default="all", help="comma list of method names (default: every method)")
    parser.add_argument("--split", choices=("select", "report"), default="report")
    parser.add_argument("--skip", default="", help="comma list of methods to leave out (e.g. the slowest)")
    args = parser.parse_args()
    methods = list(METHODS) if args.methods == "all" else [m.strip() for m in args.methods.split(",")]
    skipped = {m.strip() for m in args.skip.split(",") if m.strip()}
    unknown = sorted((set(methods) | skipped) - set(METHODS))
    if unknown:
        raise SystemExit(f"unknown method {unknown[0]!r} (known: {', '.join(METHODS)})")
    if AGAINST in skipped:
        raise SystemExit(f"--skip {AGAINST}: every other method is paired against it")
    methods = [m for m in methods if m not in skipped]
    if AGAINST not in methods:
        methods.insert(0, AGAINST)

    classifier = load_model(args.model)
    library = library_for(classifier, args.model)
    rows = held_out(args.model, args.split)
    records = []
    # The slow ones last: a run cut short keeps the cheap methods' cached records.
    for method in sorted(methods, key=lambda name: name in SLOW):
        found, _ = records_of(classifier, library, rows, args.model, args.split, NAMES.get(method, method))
        records += found
        print(f"{method}: {len(found)} records", file=sys.stderr)
    bootstrap = BootstrapSettings(10_000, 0.95, 0)
    reports = {}
    for perturb in ("delete", "mask"):
        settings = EvalSettings(perturb=perturb, eraser=True, loo=True)
        reports[perturb] = evaluate_records(classifier, records, settings, Evaluating(library, bootstrap=bootstrap))
        print(f"evaluated with {perturb}", file=sys.stderr)
    out = ROOT / "build" / "verdict"
    out.mkdir(parents=True, exist_ok=True)
    header = (
        f"{describe_hardware(torch.device('cpu'))}; {args.model}, {args.split} half: {len(rows)} held-out inputs "
        f"(not the examples); differences paired against {AGAINST}, 95 % bootstrap (10,000 resamples, seed 0)"
    )
    table = markdown(reports, methods)
    (out / f"{args.model}.md").write_text(header + "\n\n" + table + "\n")
    (out / f"{args.model}.json").write_text(json.dumps(
        {perturb: report.to_dict(per_input=True, compare=None) for perturb, report in reports.items()}, indent=1
    ))
    print(header + "\n\n" + table)


def markdown(reports: dict, methods: list[str]) -> str:
    lines = [
        "| method | " + " | ".join(heading for _, _, heading in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    rows = {perturb: {row.method: row for row in report.comparison(3).rows} for perturb, report in reports.items()}
    marks = set()
    for method in methods:
        cells = []
        for perturb, key, _ in COLUMNS:
            report, row = reports[perturb], rows[perturb].get(method)
            if row is None or row.values.get(key) is None:
                cells.append("n/a")
                continue
            sign = SIGNS.get(row.fitted.get(key), "")
            if sign:
                marks.add(row.fitted[key])
            if method == AGAINST:
                cells.append(f"{row.values[key]:.3f}{sign}")
                continue
            difference = report.difference(method, AGAINST).get(key)
            if difference is None or difference.interval is None:
                cells.append("n/a")
                continue
            text = f"{difference.mean:+.3f} [{difference.interval.low:+.3f}, {difference.interval.high:+.3f}]"
            cells.append((f"**{text}**" if difference.excludes_zero else text) + sign)
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    legend = [LEGEND[kind] for kind in LEGEND if kind in marks]
    inputs = {m: r.evaluated for m, r in reports["delete"].methods.items()}
    return "\n".join(lines + [""] + legend + [f"inputs evaluated per method: {min(inputs.values())}–{max(inputs.values())}"])


if __name__ == "__main__":
    main()
