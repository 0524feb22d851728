"""The Typer app: one command per module, no math here."""

from __future__ import annotations

import importlib
from typing import Annotated

import typer

from contrastcat import __version__

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


# (name, module): the commands in the order --help lists them; ``models`` is a group of its own.
COMMANDS = (
    ("build-refs", "build_refs"), ("explain", "explain"), ("evaluate", "evaluate"), ("render", "render"),
    ("merge", "merge"), ("summarize", "summarize"), ("sanity", "sanity"), ("compare", "compare"),
    ("completions", "completions"), ("models", "models"),
)
# Commands that read the whole tree (the completion scripts list every command and option).
WHOLE_TREE = ("completions",)


def build_app(only: str | None = None) -> typer.Typer:
    """The CLI, with explain's method flags generated from the methods registered now.

    ``only``: the command a process was started for. Then only its module is imported and turned
    into a click command: the others' options and Typer's work on them are a good part of the
    start-up, which ``--help`` and a refused option should not pay. A name no command has (a typo,
    a flag) gets the whole app, so its error and the top-level help list every command."""
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
    chosen = [entry for entry in COMMANDS if entry[0] == only and only not in WHOLE_TREE] or COMMANDS
    for name, where in chosen:
        module = importlib.import_module(f"{__package__}.{where}")
        if name == "models":
            application.add_typer(module.app, name="models")
            continue
        command = getattr(module, where)
        if name == "explain":
            command = with_method_options(command)
        application.command(name, epilog=module.EPILOG)(command)
    return application


def __getattr__(name: str):
    """``app``: the whole CLI (what tests and the completion scripts' generator read), built when first asked for."""
    if name == "app":
        globals()["app"] = built = build_app()
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
