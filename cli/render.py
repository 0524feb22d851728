"""contrastcat render: attributions as coloured tokens in the terminal."""

from __future__ import annotations

import itertools
import os
import sys
from typing import Annotated, Optional

import typer
from rich.text import Text

from contrastcat.errors import BadInput
from contrastcat.records import RecordFile
from contrastcat.terminal import header, render_plain, render_rich

from .common import reports_errors, stdout_console

EPILOG = """\
Examples:

\b
  contrastcat render attr.jsonl --words
  contrastcat explain in.jsonl --refs refs.h5 -o - | contrastcat render - --limit 5
  contrastcat render attr.jsonl --threshold 0.5 --color never > marked.txt
"""

COLOR_CHOICES = ("auto", "always", "never")


def use_color(choice: str) -> bool:
    if choice not in COLOR_CHOICES:
        raise BadInput(f"--color must be one of {', '.join(COLOR_CHOICES)}, got {choice!r}")
    if choice == "auto":
        return sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return choice == "always"


@reports_errors
def render(
    attributions: Annotated[str, typer.Argument(metavar="ATTR", help="Records from explain (JSONL); - for stdin.")],
    threshold: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Colour (or, in plain text, mark) only tokens scoring at least this.")
    ] = 0.0,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Show only the first N records.")] = None,
    words: Annotated[bool, typer.Option(help="Merge word pieces into words (a word scores as its strongest piece).")] = False,
    rescale: Annotated[
        bool,
        typer.Option(help="Min-max scale over the shown tokens (special tokens are hidden); --no-rescale: stored scores."),
    ] = True,
    color: Annotated[str, typer.Option(help="auto (colour on a terminal without NO_COLOR), always or never.")] = "auto",
) -> None:
    """Print each record's text with relevant tokens highlighted (stronger red = more relevant)."""
    colored = use_color(color)
    source = RecordFile(attributions)
    source.check()  # a bad line fails before anything is printed; then the records stream
    records = itertools.islice(source.records(), limit)
    console = stdout_console(force_terminal=colored, no_color=not colored, soft_wrap=True)
    for index, record in enumerate(records):
        if index:
            console.print()
        if colored:
            console.print(Text(header(record), style="bold"))  # Text: an id like "a[/]" is not markup
            console.print(render_rich(record, threshold, words, rescale))
        else:
            typer.echo(header(record))
            typer.echo(render_plain(record, threshold, words, rescale))
