"""The verdict: every method, every protocol, on held-out inputs, against Contrast-CAT.

    python benchmarks/verdict.py --model minilm-rt      # then --model minilm-bbc --skip contrastcat-plus
    python benchmarks/verdict.py --model minilm-rt --methods contrastcat,attnlrp,attcat,random --limit 60
    make verdict                                         # both, into build/verdict/

One ``contrastcat compare`` (:func:`contrastcat.usecases.compare.compare`) per model, on the
held-out report half of benchmarks/variants.py (never the examples; the select half is left for
choosing variants; ``--limit N``: its first N inputs): every method explains the inputs alone,
timed, and every record is evaluated with deletion and with the tokenizer's [MASK], each time
with the curves, ERASER comprehensiveness and sufficiency and the leave-one-out τ. What is
particular to the verdict: the inputs, and a table paired against Contrast-CAT rather than
against the leader: Contrast-CAT's value, then for every other method the paired difference
against it (mean over the inputs both evaluated, 95 % bootstrap interval, 10,000 resamples, seed
0), **bold** where the interval excludes 0; ᶠ / ᵖ mark the cells a method's own selection was
fitted to (docs/cli.md). compare's own table (paired against the leader) and its recommendation
follow. Each method's records are kept in ``build/verdict/<model>-<split>/work/`` (a run cut short
continues from them; change the methods or inputs and it says to remove that folder). Written to
``build/verdict/<model>.md`` and, with every number, ``build/verdict/<model>.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from variants import held_out, library_for  # benchmarks/variants.py

from contrastcat.api import load_model
from contrastcat.evaluation.fitted import LEGEND, SIGNS
from contrastcat.evaluation.stats import BootstrapSettings
from contrastcat.methods import METHODS
from contrastcat.models.precision import describe_hardware
from contrastcat.records.inputs import InputRow
from contrastcat.usecases.compare import COLUMNS, CompareSettings, ResumableFolder, compare, report_document
from contrastcat.usecases.options.compare import Choice
from contrastcat.views.comparison import markdown_report

ROOT = Path(__file__).resolve().parent.parent
AGAINST = "contrastcat"
SLOW = ("contrastcat-plus", "integrated-gradients")  # 3.9x and 1.1x Contrast-CAT's cost (README)
BOOTSTRAP = BootstrapSettings(10_000, 0.95, 0)
BATCH_SIZE = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("minilm-rt", "minilm-bbc"), default="minilm-rt")
    parser.add_argument("--methods", default="all", help="comma list of method names (default: every method)")
    parser.add_argument("--split", choices=("select", "report"), default="report")
    parser.add_argument("--skip", default="", help="comma list of methods to leave out (e.g. the slowest)")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="the split's first N inputs (0: all)")
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
    if args.limit < 0 or args.limit == 1:
        raise SystemExit(f"--limit {args.limit}: 0 (all) or at least 2")

    classifier = load_model(args.model)
    library = library_for(classifier, args.model)
    chosen = held_out(args.model, args.split)[: args.limit or None]
    rows = [InputRow(line=n + 1, id=r["id"], text=r["text"], label=r["label"]) for n, r in enumerate(chosen)]
    out = ROOT / "build" / "verdict"
    # The slow ones last: a run cut short keeps the cheap methods' records.
    order = sorted(methods, key=lambda name: name in SLOW)
    settings = CompareSettings(batch_size=BATCH_SIZE, bootstrap=BOOTSTRAP, progress=_progress,
                               notify=lambda line: print(line, file=sys.stderr))
    store = ResumableFolder(str(out / f"{args.model}-{args.split}"), classifier, library, settings.explaining, [],
                            source=f"{args.model} {args.split} half")
    compared = compare(classifier, rows, library, [Choice(m) for m in order], settings, store)
    reports = compared.reports
    header = (
        f"{describe_hardware(torch.device('cpu'))}; {args.model}, {args.split} half: {len(rows)} held-out inputs "
        f"(not the examples); differences paired against {AGAINST}, 95 % bootstrap (10,000 resamples, seed 0)"
    )
    table = markdown(reports, methods)
    document = report_document(compared, classifier)
    text = header + "\n\n" + table + "\n\n" + "compare's own table, paired against the leader:\n\n" + markdown_report(document)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.model}.md").write_text(text + "\n")
    (out / f"{args.model}.json").write_text(json.dumps(
        {**{perturb: report.to_dict(per_input=True, compare=None) for perturb, report in reports.items()},
         "compare": document}, indent=1
    ))
    print(text)


def _progress(phase: str, done: int, total: int | None) -> None:
    if done == 0:
        print(phase, file=sys.stderr)


def markdown(reports: dict, methods: list[str]) -> str:
    lines = [
        "| method | " + " | ".join(f"{c.heading} {'↑' if c.higher_is_better else '↓'}" for c in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    rows = {perturb: {row.method: row for row in report.comparison(3).rows} for perturb, report in reports.items()}
    marks = set()
    for method in methods:
        cells = []
        for column in COLUMNS:
            perturb, key = column.perturb, column.key
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
