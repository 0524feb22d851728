"""contrastcat render: attributions as coloured tokens in the terminal, or as one HTML page."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from contrastcat.api import render_file
from contrastcat.errors import BadInput

from .common import QuietOption, info, printing_after, reports_errors, watching_stdout

EPILOG = """\
Examples:

\b
  contrastcat render attr.jsonl --words
  contrastcat explain in.jsonl --refs refs.h5 -o - | contrastcat render - --limit 5
  contrastcat render attr.jsonl --threshold 0.5 -o marked.txt   # plain text, [word 0.87] marks
  contrastcat render attr.jsonl --html attr.html --words       # one self-contained page
  contrastcat render attr.jsonl --top 5                         # the 5 most relevant words per input
  contrastcat render attr.jsonl --compare contrastcat,attcat    # two methods, one above the other
"""

COLOR_CHOICES = ("auto", "always", "never")


def use_color(choice: str, terminal: bool) -> bool:
    if choice not in COLOR_CHOICES:
        raise BadInput(f"--color must be one of {', '.join(COLOR_CHOICES)}, got {choice!r}")
    if choice == "auto":
        return terminal and not os.environ.get("NO_COLOR")
    return choice == "always"


# The API's names for the options whose flag says it differently (errors speak in flags here).
FLAGS = {"attributions": "ATTR", "output": "--output"}

Attributions = Annotated[str, typer.Argument(metavar="ATTR", help="Records from explain (JSONL); - for stdin.")]
Threshold = Annotated[
    float, typer.Option(min=0.0, max=1.0, help="Colour (or, in plain text, mark) only tokens scoring at least this.")
]
Limit = Annotated[Optional[int], typer.Option(min=1, help="Show only the first N records.")]
Words = Annotated[bool, typer.Option(help="Merge word pieces into words (a word scores as its strongest piece).")]
Rescale = Annotated[
    bool, typer.Option(help="Min-max scale over the shown tokens (special tokens are hidden); --no-rescale: stored scores.")
]
Color = Annotated[str, typer.Option(help="auto (colour on a terminal without NO_COLOR), always or never.")]
Output = Annotated[
    Optional[str],
    typer.Option("--output", "-o", metavar="FILE", help="Write the text here instead of stdout (written whole or not at all)."),
]
Html = Annotated[
    Optional[str], typer.Option("--html", metavar="FILE", help="Write one self-contained HTML page instead (- for stdout).")
]
Top = Annotated[
    Optional[int], typer.Option(min=1, metavar="K", help="Print each record's K most relevant words (tokens without --words).")
]
Compare = Annotated[
    Optional[str], typer.Option(metavar="A,B", help="Only methods A and B, each input's shadings one above the other.")
]


@reports_errors
def render(
    attributions: Attributions,
    threshold: Threshold = 0.0,
    limit: Limit = None,
    words: Words = False,
    rescale: Rescale = True,
    color: Color = "auto",
    html: Html = None,
    top: Top = None,
    compare: Compare = None,
    output: Output = None,
    quiet: QuietOption = False,
) -> None:
    """Print each record's text with relevant tokens highlighted (stronger red = more relevant)."""
    colored = use_color(color, terminal=output in (None, "-") and sys.stdout.isatty())
    target = output if html is None else html
    printed = None if target not in (None, "-") else "the page" if html is not None else "the text"
    # Printed as it is made, once every record was read and checked: Ctrl-C may cut it short.
    with watching_stdout() as watched, printing_after(stdout=lambda: printed if watched.written else None):
        run = render_file(
            attributions, html=html, threshold=threshold, limit=limit, words=words, rescale=rescale, top=top,
            compare=compare, color=colored, output=output if html is not None else (output or "-"),
        )
    # The file is written whole by now: Ctrl-C in its "wrote" line says so.
    with printing_after(("the page" if html is not None else "the text", run.wrote)):
        if run.wrote is not None:
            info(f"wrote {run.wrote}", quiet)
