"""contrastcat build-refs: the per-class reference library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from contrastcat.api import build_refs as build

from .common import (
    printing_after,
    BatchOption,
    DeviceOption,
    DtypeOption,
    ForwardDtypeOption,
    QuietOption,
    notifier,
    phased_progress,
    reports_errors,
    stderr_console,
    warn,
)

EPILOG = """\
Examples:

\b
  contrastcat build-refs --model minilm-rt                  # writes ./refs.h5, which explain then uses
  contrastcat build-refs --model bert-sst2 -o sst2-refs.h5
  contrastcat build-refs --model ./my-model --data train.jsonl --label-field y -o refs.h5
  contrastcat build-refs --model bert-imdb --max-scan 5000 --gamma 1e-2 -o imdb-refs.h5 --json
  contrastcat build-refs --model minilm-rt --pools same,random -o refs-ablation.h5
  contrastcat build-refs --model ./my-nli --data nli-train.jsonl --pair-field hypothesis -o nli-refs.h5
"""


# The API's names for the options whose flag says it differently (errors speak in flags here).
FLAGS = {"k": "--min-refs", "output": "--output"}


Model = Annotated[str, typer.Option("--model", "-m", help="Alias, hub id or local model directory.")]
Output = Annotated[
    str | None,
    typer.Option(
        "--output", "-o",
        help="Library file to write (HDF5). Default: refs.h5 here, replaced only if it is a library of "
        "the same model (explain uses ./refs.h5 when given no --refs or --model).",
    ),
]
Data = Annotated[
    str | None,
    typer.Option(help="Labelled data: a .jsonl/.csv file or a hub data set NAME[:CONFIG]. Default: the alias's."),
]
Split = Annotated[str | None, typer.Option(help="Split of a hub data set. Default: the alias's (train).")]
TextField = Annotated[str | None, typer.Option(help="Text column. Default: the alias's, else 'text'.")]
LabelField = Annotated[str | None, typer.Option(help="Label column. Default: the alias's, else 'label'.")]
PairField = Annotated[
    str | None,
    typer.Option(help="Sentence pairs: the column of each row's second text (a pair classifier's library)."),
]
Keep = Annotated[int, typer.Option(min=1, help="References stored per class when enough pass gamma.")]
Gamma = Annotated[float, typer.Option(min=0.0, help="A reference for class c needs f_c(r) < gamma.")]
MinRefs = Annotated[
    int, typer.Option(min=1, help="K: fill each class up to this many (next-lowest f_c) when too few pass gamma.")
]
StrictGamma = Annotated[bool, typer.Option(help="Refuse (exit 1) instead of filling up below gamma.")]
MinTokens = Annotated[int, typer.Option(min=1, help="Skip shorter references (special tokens count).")]
MaxScan = Annotated[int | None, typer.Option(min=1, help="Scan at most the first N rows.")]
MaxLength = Annotated[
    int | None,
    typer.Option(min=2, help="Tokens per row, up to the model's position limit. Default: the tokenizer's limit."),
]
StoreDtype = Annotated[str, typer.Option(help="Activations on disk: float32 or float16 (half the size).")]
Pools = Annotated[
    str,
    typer.Option(
        help="Pools stored beside the contrasting references: random (the default; contrastcat-plus and "
        "--reference-select random read it), same, same,random, or none (the paper's Table 3; same adds "
        "up to --keep references per class, random one pool of --keep rows in all)."
    ),
]
Seed = Annotated[int, typer.Option(help="Seed that draws the random pool.")]
Json = Annotated[bool, typer.Option("--json", help="Print the summary as JSON on stdout.")]


@reports_errors
def build_refs(
    model: Model,
    output: Output = None,
    data: Data = None,
    split: Split = None,
    text_field: TextField = None,
    label_field: LabelField = None,
    pair_field: PairField = None,
    keep: Keep = 50,
    gamma: Gamma = 1e-3,
    min_refs: MinRefs = 30,
    strict_gamma: StrictGamma = False,
    min_tokens: MinTokens = 10,
    max_scan: MaxScan = None,
    max_length: MaxLength = None,
    store_dtype: StoreDtype = "float32",
    dtype: DtypeOption = "auto",
    forward_dtype: ForwardDtypeOption = "same",
    pools: Pools = "random",
    seed: Seed = 0,
    batch_size: BatchOption = 32,
    as_json: Json = False,
    device: DeviceOption = "auto",
    quiet: QuietOption = False,
) -> None:
    """Build the reference library: for each class, training rows the model is sure are NOT that class."""
    if dtype == "float16" and store_dtype == "float32":  # what --dtype float16 meant before 0.3
        warn("--dtype float16 loads the model's weights in float16 (since 0.3); the activations on disk "
             "stay float32: --store-dtype float16 halves the file")
    with phased_progress(quiet) as progress:
        report = build(
            model, output, data, split=split, text_field=text_field, label_field=label_field, pair_field=pair_field, k=min_refs, keep=keep,
            gamma=gamma, min_tokens=min_tokens, max_scan=max_scan, max_length=max_length, pools=pools, seed=seed,
            store_dtype=store_dtype, strict_gamma=strict_gamma, batch_size=batch_size, device=device, dtype=dtype,
            forward_dtype=forward_dtype, progress=progress, notify=notifier(quiet, FLAGS),
        )
    with printing_after(("the library", report.path)):
        _summary(report, gamma, as_json, quiet)


def _summary(report, gamma: float, as_json: bool, quiet: bool) -> None:
    for warning in report.selection.warnings:  # shown even with --quiet: docs/spec.md §2 requires it
        warn(warning)
    if report.truncated:
        warn(
            f"{report.truncated} of {report.scanned} scanned row(s) had more than {report.max_length} tokens "
            f"and were cut to {report.max_length} (--max-length takes up to {report.position_limit})"
        )
    summary = {
        "output": str(Path(report.path)),
        "fingerprint": report.fingerprint,
        "scanned": report.scanned,
        "truncated": report.truncated,
        "gamma": gamma,
        "classes": [
            {
                "class": c.target,
                "name": report.label_names[c.target],
                "stored": len(c.rows),
                "below_gamma": c.passing,
                "candidates": c.candidates,
                "max_f_c": float(c.f_c.max()) if len(c.f_c) else None,
            }
            for c in report.selection.classes
        ],
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
    elif not quiet:
        table = Table(title=Text(f"{summary['output']}: {report.scanned} rows scanned, gamma = {gamma:g}"))
        for column in ("class", "stored", f"f_c < {gamma:g}", "candidates", "largest f_c"):
            table.add_column(column, justify="left" if column == "class" else "right")
        for row in summary["classes"]:
            table.add_row(
                Text(row["name"]), str(row["stored"]), str(row["below_gamma"]), str(row["candidates"]), f"{row['max_f_c']:.2e}"
            )
        stderr_console().print(table)
