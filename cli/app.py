"""The Typer app: one command per module, no math here."""

from __future__ import annotations

from typing import Annotated

import typer

from contrastcat import __version__

from . import build_refs, compare, completions, evaluate, explain, merge, models, render, sanity, summarize
from .method_flags import with_method_options

HELP = """\
Explain transformer text classifiers with Contrast-CAT (Han, Lee & Lee, UAI 2025)
and measure how faithful the explanations are.

Pipeline: build-refs (reference library, HDF5) -> explain (JSONL records)
-> evaluate (AOPC / log-odds / Kendall-τ), render (coloured tokens) and
summarize (what the model relies on across a dataset).
"""

def _version(value: bool) -> None:
    if value:
        typer.echo(f"contrastcat {__version__}")
        raise typer.Exit(0)


def main_options(
    version: Annotated[
        bool, typer.Option("--version", "-V", is_eager=True, callback=_version, help="Print the version and exit.")
    ] = False,
) -> None:
    """Explain transformer text classifiers with Contrast-CAT."""


def build_app() -> typer.Typer:
    """The CLI, with explain's method flags generated from the methods registered now."""
    application = typer.Typer(
        name="contrastcat",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    application.callback()(main_options)
    for module, name in (
        (build_refs, "build-refs"),
        (explain, "explain"),
        (evaluate, "evaluate"),
        (render, "render"),
        (merge, "merge"),
        (summarize, "summarize"),
        (sanity, "sanity"),
        (compare, "compare"),
        (completions, "completions"),
    ):
        command = getattr(module, name.replace("-", "_"))
        if name == "explain":
            command = with_method_options(command)
        application.command(name, epilog=module.EPILOG)(command)
    application.add_typer(models.app, name="models")
    return application


app = build_app()
