"""contrastcat build-refs: the per-class reference library."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, BuildRefsOptions

from .common import notifier, phased_progress, printing_after, reports_errors, stderr_console, warn
from .spec import command

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


def _build_refs(values: dict) -> None:
    quiet = values["quiet"]
    if values["dtype"] == "float16" and values["store_dtype"] == "float32":  # what --dtype float16 meant before 0.3
        warn("--dtype float16 loads the model's weights in float16 (since 0.3); the activations on disk "
             "stay float32: --store-dtype float16 halves the file")
    with phased_progress(quiet) as progress:
        options = BuildRefsOptions.read(
            {**values, "progress": progress, "notify": notifier(quiet)}, ON_COMMAND_LINE, where=None
        )
        report = api.run_build_refs(options)
    with printing_after(("the library", report.path)):
        _summary(report, options.gamma, options.as_json, quiet)


build_refs = reports_errors(command(
    BuildRefsOptions, _build_refs,
    "Build the reference library: for each class, training rows the model is sure are NOT that class.",
))


def _summary(report, gamma: float, as_json: bool, quiet: bool) -> None:
    # Rich's tables load with the output they print: --help and refusals need none.
    from rich.table import Table
    from rich.text import Text

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
