"""contrastcat models: the embedded models (list, prepare)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from contrastcat.api import embedded_models
from contrastcat.api import prepare_model as prepare

from .common import DeviceOption, QuietOption, notifier, phased_progress, reports_errors

FLAGS: dict[str, str] = {}  # every parameter of the calls here is spelled as its flag

EPILOG = """\
Examples:

\b
  contrastcat models list
  contrastcat models prepare minilm-rt
  CONTRASTCAT_CACHE=/data/cc contrastcat models prepare minilm-bbc --force
"""

app = typer.Typer(
    help="Embedded models: real classifiers fine-tuned here from packaged parts, no hub needed.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)


@app.command("list", epilog=EPILOG)
@reports_errors
def list_models(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the embedded models, whether each is prepared, and its held-out accuracy."""
    rows = embedded_models()
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(box=None)
    for column in ("name", "status", "accuracy", "what"):
        table.add_column(column)
    for row in rows:
        accuracy = f"{row['held_out_accuracy']:.3f}" if row["held_out_accuracy"] is not None else "-"
        table.add_row(row["name"], row["status"], accuracy, row["summary"])
    Console(highlight=False).print(table)


@app.command("prepare", epilog=EPILOG)
@reports_errors
def prepare_model(
    name: Annotated[str, typer.Argument(help="An embedded model (see models list).")],
    force: Annotated[bool, typer.Option(help="Train again even if a usable cache entry exists.")] = False,
    quick: Annotated[bool, typer.Option(hidden=True, help="A few steps on a few hundred rows (tests only).")] = False,
    device: DeviceOption = "auto",
    quiet: QuietOption = False,
) -> None:
    """Fine-tune an embedded model now and cache it (otherwise it happens on first use)."""
    with phased_progress(quiet) as report:
        prepare(name, force=force, quick=quick, device=device, progress=report, notify=notifier(quiet, FLAGS))
