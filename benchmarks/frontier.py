"""The cost–faithfulness frontier, and the table of every variant tried.

    python benchmarks/frontier.py --model minilm-rt --split select --variants paper,steps-3,lrp-mean
    python benchmarks/frontier.py --model minilm-rt --time 40      # seconds per input, one quiet run
    python benchmarks/frontier.py --model minilm-rt --plot docs/images/frontier-minilm-rt.png
    make frontier      # both models: every variant tried (select halves), then the methods and the
                       # chosen variant on the report halves, timed and drawn

``--skip a,b`` leaves variants out (``--variants methods --skip plus``).

Records are benchmarks/variants.py's (``build/variants/<model>/<split>/<name>.jsonl``, same
held-out rows, never the examples). Each variant is evaluated alone, as ``contrastcat compare``
evaluates (:func:`contrastcat.usecases.compare.evaluation`, its columns: deletion and the
tokenizer's [MASK], each with the curves, ERASER comprehensiveness and sufficiency and the
leave-one-out τ); what is particular here is the variants, the held-out halves and a cache of
every evaluation, so tens of variants are compared without evaluating any twice. That evaluation is cached next to its records (``<name>.<perturb>.json``,
recomputed when the records are newer; for the methods at their defaults the per-input values of
``build/verdict/<model>.json`` are used when it covers the split). The inputs' leave-one-out drops
are the same for every variant: they are kept in ``loo.<perturb>.json`` beside the records, and an
evaluation refuses them if the model changed. Printed: a Markdown table with the
``--against`` variant's value and every other variant's paired difference (inputs both evaluated,
95 % bootstrap, 10,000 resamples, seed 0), **bold** where the interval excludes 0, ᶠ on the cells
a variant's own selection was fitted to, and its seconds per input when ``--time`` measured them
(with its ratio to the ``--against`` variant's, both from the same run).

``--time N`` explains the first N inputs of the split with every variant, one after another in
this one process (one warm-up input first), and writes ``build/frontier/<model>-<split>-seconds.json``
with the CPU named: run it on a quiet machine, never beside another torch job.
``--plot`` draws s/input (log scale) against MoRF AOPC under deletion (the protocol Contrast-CAT
selects by) and under [MASK] (none does), each mean with its 95 % bootstrap interval.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import torch
from variants import VARIANTS, held_out, library_for, records_of, variant_library, variant_names  # benchmarks/variants.py

from contrastcat.api import explain, load_model
from contrastcat.errors import BadInput
from contrastcat.evaluation.fitted import SIGNS, fitted_cells
from contrastcat.usecases.compare import COLUMNS as COMPARED
from contrastcat.usecases.compare import evaluation as compare_evaluation
from contrastcat.usecases.evaluate_records import Evaluating
from contrastcat.evaluation.scalars import LeaveOneOut
from contrastcat.evaluation.stats import BootstrapSettings, mean_interval, paired_difference
from contrastcat.io.files import atomic_text_output
from contrastcat.methods import build_method
from contrastcat.models.precision import describe_hardware
from contrastcat.records.record import RecordFile

ROOT = Path(__file__).resolve().parent.parent
# (perturbation, metric, heading): compare's protocols, the fitted one first.
COLUMNS = tuple((c.perturb, c.key, f"{c.heading} {'↑' if c.higher_is_better else '↓'}") for c in COMPARED)
BOOTSTRAP = BootstrapSettings(10_000, 0.95, 0)


def per_input(method: dict) -> dict[str, dict[str, float]]:
    """metric -> {input key: value} from one method's entry of a JSON report made with per_input."""
    found = method["per_input"]
    values = {}
    for order in ("morf", "lerf"):
        if order in found:
            values[f"{order}_aopc"] = dict(zip(found[order]["keys"], found[order]["aopc"]))
    for key in ("eraser_comp", "eraser_suff", "loo_tau"):
        if key in found:
            values[key] = dict(zip(found[key]["keys"], found[key]["values"]))
    return {metric: {k: v for k, v in table.items() if v is not None} for metric, table in values.items()}


def evaluation(classifier, library, model: str, split: str, name: str, perturb: str, records, loo: LeaveOneOut) -> dict:
    """The variant's JSON report entry under ``perturb`` (cached), with a per-input part; ``loo``
    keeps the leave-one-out drops of the inputs between variants (they are the inputs', not the maps')."""
    base = ROOT / "build" / "variants" / model / split
    cache, source = base / f"{name}.{perturb}.json", base / f"{name}.jsonl"
    if cache.exists() and cache.stat().st_mtime >= source.stat().st_mtime:
        return json.loads(cache.read_text())
    method, options = VARIANTS[name]
    verdict = ROOT / "build" / "verdict" / f"{model}.json"
    if not options and split == "report" and verdict.exists():
        entry = json.loads(verdict.read_text())[perturb]["methods"].get(method)
        if entry is not None and entry["evaluated"] == sum(1 for _ in records_in(source)):
            cache.write_text(json.dumps(entry))
            return entry
    report = compare_evaluation(classifier, records, perturb,
                                Evaluating(library, bootstrap=BOOTSTRAP, loo=loo, source=str(source)))
    (entry,) = report.to_dict(per_input=True, compare=None)["methods"].values()
    cache.write_text(json.dumps(entry))
    return entry


def kept_loo(path: Path, perturb: str) -> LeaveOneOut:
    """The leave-one-out drops an earlier run kept (evaluate refuses them if the model changed);
    unreadable ones are computed again."""
    if path.exists():
        try:
            return LeaveOneOut.from_state(json.loads(path.read_text()))
        except (ValueError, BadInput) as error:  # JSONDecodeError is a ValueError
            print(f"{path}: not kept drops ({str(error).splitlines()[0]}); computing them again", file=sys.stderr)
    return LeaveOneOut(perturb, None)


def records_in(path: Path):
    return RecordFile(str(path)).records()


def seconds_per_input(classifier, library, rows, names: list[str], count: int, model: str) -> dict[str, float]:
    """Every variant on the same ``count`` inputs, one after another, after one warm-up input each."""
    chosen, found = rows[:count], {}
    for name in names:
        method, options = VARIANTS[name]
        reads = variant_library(classifier, library, model, name)
        list(explain(classifier, rows[count : count + 1], reads, method, **options))  # warm-up
        start = time.perf_counter()
        list(explain(classifier, chosen, reads, method, **options))
        found[name] = (time.perf_counter() - start) / len(chosen)
        print(f"{name}: {found[name]:.4f} s/input", file=sys.stderr)
    return found


def cell(values: dict, against: dict, metric: str, is_against: bool, sign: str) -> str:
    mine = values.get(metric)
    if not mine:
        return "n/a"
    if is_against:
        return f"{np.mean(list(mine.values())):.3f}{sign}"
    difference = paired_difference(mine, against.get(metric, {}), BOOTSTRAP)
    if difference is None or difference.interval is None:
        return "n/a"
    text = f"{difference.mean:+.3f} [{difference.interval.low:+.3f}, {difference.interval.high:+.3f}]"
    return (f"**{text}**" if difference.excludes_zero else text) + sign


def table(entries: dict, names: list[str], against: str, seconds: dict[str, float]) -> str:
    lines = [
        "| variant | " + " | ".join(h for _, _, h in COLUMNS) + " | s/input |",
        "|---|" + "---|" * len(COLUMNS) + "---:|",
    ]
    for name in names:
        method, options = VARIANTS[name]
        settings = build_method(method, **options).settings()
        cells = []
        for perturb, metric, _ in COLUMNS:
            sign = SIGNS.get(fitted_cells(method, settings, perturb, ("morf", "lerf")).get(metric), "")
            values = per_input(entries[name][perturb])
            cells.append(cell(values, per_input(entries[against][perturb]), metric, name == against, sign))
        cost = f"{seconds[name]:.3f}" if name in seconds else "–"
        if name in seconds and against in seconds and name != against:  # the ratio of one run's times
            cost += f" ({seconds[name] / seconds[against]:.2f}×)"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {cost} |")
    inputs = [entries[n]["delete"]["evaluated"] for n in names]
    lines += ["", f"inputs evaluated per variant: {min(inputs)}–{max(inputs)}"]
    return "\n".join(lines)


def plot(entries: dict, names: list[str], seconds: dict[str, float], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = (("delete", "MoRF AOPC, deletion (Contrast-CAT selects by it)"), ("mask", "MoRF AOPC, [MASK] (no method selects by it)"))
    figure, axes = plt.subplots(1, 2, figsize=(12, 5), sharex=True)
    for axis, (perturb, label) in zip(axes, panels):
        for name in names:
            if name not in seconds:
                continue
            values = np.array(list(per_input(entries[name][perturb])["morf_aopc"].values()))
            interval = mean_interval(values, BOOTSTRAP)
            mean = float(values.mean())
            axis.errorbar(seconds[name], mean, yerr=[[mean - interval.low], [interval.high - mean]], fmt="o", capsize=3)
            axis.annotate(name, (seconds[name], mean), textcoords="offset points", xytext=(4, 3), fontsize=7)
        axis.set_xscale("log")
        axis.set_xlabel("seconds per input (log scale)")
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    figure.suptitle(textwrap.fill(title, 160), fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=130, metadata={"Software": None})
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=("minilm-rt", "minilm-bbc"), default="minilm-rt")
    parser.add_argument("--split", choices=("select", "report"), default="report")
    parser.add_argument("--variants", default="methods", help="comma list of variants.py names; methods: every method at its defaults")
    parser.add_argument("--against", default="paper")
    parser.add_argument("--skip", default="", help="comma list of variants to leave out (e.g. the slowest)")
    parser.add_argument("--time", type=int, default=0, metavar="N", help="measure s/input on the first N inputs")
    parser.add_argument("--plot", help="draw the frontier into this picture (needs --time now or earlier)")
    args = parser.parse_args()
    try:
        names = variant_names(args.variants, args.against, args.skip)
    except ValueError as error:
        parser.error(str(error))
    rows = held_out(args.model, args.split)
    timing = ROOT / "build" / "frontier" / f"{args.model}-{args.split}-seconds.json"
    # Checked before the model loads: what would otherwise fail after an hour of evaluation.
    if not 0 <= args.time < len(rows):
        parser.error(f"--time {args.time}: must be 0 to {len(rows) - 1} (one more input warms up)")
    if args.plot:
        picture = Path(args.plot)
        if not picture.parent.is_dir():
            parser.error(f"--plot {args.plot}: no directory {picture.parent}")
        if picture.suffix.lower() not in (".png", ".svg", ".pdf"):
            parser.error(f"--plot {args.plot}: must end in .png, .svg or .pdf")
        if not args.time and not timing.exists():
            parser.error(f"--plot needs seconds per input: add --time N (none kept in {timing})")

    classifier = load_model(args.model)
    library = library_for(classifier, args.model)
    hardware = describe_hardware(torch.device("cpu"))
    if args.time:
        found = seconds_per_input(classifier, library, rows, names, args.time, args.model)
        known = json.loads(timing.read_text()) if timing.exists() else {}
        if known.get("cpu") != hardware or known.get("inputs") != args.time:
            known = {"cpu": hardware, "inputs": args.time, "split": args.split, "seconds": {}}
        known["seconds"].update(found)
        timing.parent.mkdir(parents=True, exist_ok=True)
        timing.write_text(json.dumps(known, indent=1))
    measured = json.loads(timing.read_text()) if timing.exists() else {"seconds": {}, "cpu": None}
    base = ROOT / "build" / "variants" / args.model / args.split
    entries, kept = {}, {perturb: kept_loo(base / f"loo.{perturb}.json", perturb) for perturb in ("delete", "mask")}
    for name in names:
        records, _ = records_of(classifier, library, rows, args.model, args.split, name)
        entries[name] = {
            perturb: evaluation(classifier, library, args.model, args.split, name, perturb, records, kept[perturb])
            for perturb in ("delete", "mask")
        }
        for perturb, drops in kept.items():  # the inputs' leave-one-out drops, for the next run
            with atomic_text_output(str(base / f"loo.{perturb}.json")) as stream:  # whole or not at all
                stream.write(json.dumps(drops.state()))
        print(f"{name}: evaluated", file=sys.stderr)
    header = (
        f"{args.model}, {args.split} half: {len(rows)} held-out inputs (not the examples); differences "
        f"paired against {args.against}, 95 % bootstrap (10,000 resamples, seed 0); s/input: "
        + (f"{measured['inputs']} inputs of the {measured['split']} half, one run, {measured['cpu']}" if measured["cpu"] else "not measured")
    )
    text = header + "\n\n" + table(entries, names, args.against, measured["seconds"]) + "\n"
    out = ROOT / "build" / "frontier"
    out.mkdir(parents=True, exist_ok=True)
    against = "" if args.against == "paper" else f"-vs-{args.against}"
    (out / f"{args.model}-{args.split}{against}.md").write_text(text)
    print(text)
    if args.plot:
        plot(entries, names, measured["seconds"], args.plot, header)


if __name__ == "__main__":
    main()
