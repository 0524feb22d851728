"""contrastcat models: the embedded models (list, prepare)."""

from __future__ import annotations

import json

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, ListModelsOptions, PrepareOptions

from .common import notifier, phased_progress, reports_errors
from .spec import command

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


def _list(values: dict) -> None:
    # Rich's tables load with the output they print: --help and refusals need none.
    from rich.console import Console
    from rich.table import Table

    options = ListModelsOptions.read(values, ON_COMMAND_LINE, where=None)
    rows = api.embedded_models()
    if options.as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(box=None)
    for column in ("name", "status", "accuracy", "what"):
        table.add_column(column)
    for row in rows:
        accuracy = f"{row['held_out_accuracy']:.3f}" if row["held_out_accuracy"] is not None else "-"
        table.add_row(row["name"], row["status"], accuracy, row["summary"])
    Console(highlight=False).print(table)


def _prepare(values: dict) -> None:
    quiet = values["quiet"]
    with phased_progress(quiet) as report:
        options = {**values, "progress": report, "notify": notifier(quiet)}
        chosen = PrepareOptions.read(options, ON_COMMAND_LINE, where=None)  # refused here, before the work's modules load
        api.run_prepare(chosen)


list_models = reports_errors(command(
    ListModelsOptions, _list,
    "List the embedded models, whether each is prepared, and its held-out accuracy.",
))
prepare_model = reports_errors(command(
    PrepareOptions, _prepare, "Fine-tune an embedded model now and cache it (otherwise it happens on first use).",
))
app.command("list", epilog=EPILOG)(list_models)
app.command("prepare", epilog=EPILOG)(prepare_model)
