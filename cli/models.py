"""contrastcat models: the embedded models (list, prepare)."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from contrastcat.errors import BadInput

from .common import DeviceOption, QuietOption, info, phased_progress, reports_errors

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
    from contrastcat.models.zoo import EMBEDDED, entry_status
    from contrastcat.models.zoo.cache import entry_dir, read_metadata

    rows = []
    for name, spec in EMBEDDED.items():
        ready, why = entry_status(name)
        metadata = read_metadata(entry_dir(name)) if ready else None
        rows.append(
            {
                "name": name,
                "summary": spec.summary,
                "ready": ready,
                "status": "ready" if ready else why,
                "held_out_accuracy": metadata["held_out_accuracy"] if metadata else None,
                # Entries made before 0.7 do not record it (they trained under bfloat16 autocast).
                "training_dtype": metadata.get("training_dtype") if metadata else None,
                "trained_on": metadata.get("trained_on") if metadata else None,
                "weights_fingerprint": metadata.get("weights_fingerprint") if metadata else None,
                "path": str(entry_dir(name)),
            }
        )
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
    from contrastcat.models.devices import resolve_device
    from contrastcat.models.zoo import EMBEDDED, entry_status, prepare
    from contrastcat.models.zoo.cache import entry_dir, read_metadata
    from contrastcat.models.zoo.registry import describe_entry

    if name not in EMBEDDED:
        raise BadInput(f"unknown embedded model {name!r} (available: {', '.join(EMBEDDED)})")
    if entry_status(name, quick)[0] and not force:
        info(describe_entry(name, read_metadata(entry_dir(name))), quiet)
        return
    with phased_progress(quiet) as report:
        prepare(
            name, report, lambda message: info(message, quiet), force=force, quick=quick, device=resolve_device(device)
        )
