"""contrastcat render: attributions as coloured tokens in the terminal, or as one HTML page."""

from __future__ import annotations

import itertools
import os
import sys
from typing import Annotated, Optional

import typer
from rich.text import Text

from contrastcat.errors import BadInput
from contrastcat.evaluation.gates import parse_pair
from contrastcat.evaluation.metrics import MethodLabels
from contrastcat.records.record import RecordFile
from contrastcat.views.terminal import header, render_plain, render_rich, top_words

from .common import reports_errors, stdout_console

EPILOG = """\
Examples:

\b
  contrastcat render attr.jsonl --words
  contrastcat explain in.jsonl --refs refs.h5 -o - | contrastcat render - --limit 5
  contrastcat render attr.jsonl --threshold 0.5 --color never > marked.txt
  contrastcat render attr.jsonl --html attr.html --words       # one self-contained page
  contrastcat render attr.jsonl --top 5                         # the 5 most relevant words per input
  contrastcat render attr.jsonl --compare contrastcat,attcat    # two methods, one above the other
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
    html: Annotated[
        Optional[str],
        typer.Option("--html", metavar="FILE", help="Write one self-contained HTML page instead (- for stdout)."),
    ] = None,
    top: Annotated[
        Optional[int], typer.Option(min=1, metavar="K", help="Print each record's K most relevant words (tokens without --words).")
    ] = None,
    compare: Annotated[
        Optional[str], typer.Option(metavar="A,B", help="Only methods A and B, each input's shadings one above the other.")
    ] = None,
) -> None:
    """Print each record's text with relevant tokens highlighted (stronger red = more relevant)."""
    colored = use_color(color)
    pair = parse_pair(compare)
    if html is not None and (top is not None or threshold > 0.0):
        raise BadInput("--html shades every token and shows each score on hover: --top and --threshold are for the terminal")
    source = RecordFile(attributions)
    methods: set[str] = set()
    labels = MethodLabels()  # variants of a method (an ablation run) by what differs: contrastcat[refs_used=5]
    # A bad line fails before anything is printed; then the records stream.
    source.check(lambda record: methods.add(labels.label(record)))
    missing = [name for name in pair or () if name not in methods]
    if missing:
        raise BadInput(f"--compare: no records of method {missing[0]!r} in {source.name} (it has: {', '.join(sorted(methods))})")
    records = source.records()
    if pair is not None:
        records = _input_major((r for r in records if labels.label(r) in pair), pair, labels.label)
    records = itertools.islice(records, limit)
    if html is not None:
        from contrastcat.io.files import atomic_text_output
        from contrastcat.views.html_page import html_page

        label = labels.label
        with atomic_text_output(html, [attributions]) as stream:
            stream.write(html_page(records, f"contrastcat: {source.name}", words, rescale, label))
        if html != "-":
            typer.echo(f"wrote {html}", err=True)
        return
    console = stdout_console(force_terminal=colored, no_color=not colored, soft_wrap=True)
    for index, record in enumerate(records):
        # A variant shows its label (contrastcat[refs_used=5]) where its method name would be ambiguous.
        # Every string from the record comes out escaped (contrastcat.records.spans.visible): no control or
        # bidi character reaches the terminal as itself.
        title = header(record, labels.label(record))
        if top is not None:
            typer.echo(f"{title}: {top_words(record, top, words, rescale)}")
            continue
        if index:
            console.print()
        if colored:
            console.print(Text(title, style="bold"))  # Text: an id like "a[/]" is not markup
            console.print(render_rich(record, threshold, words, rescale))
        else:
            typer.echo(title)
            typer.echo(render_plain(record, threshold, words, rescale))


def _input_major(records, pair, label):
    """Each input's record of A, then of B, in the order the inputs come (records of one input are adjacent
    when explain wrote them; otherwise an input's A waits for its B)."""
    waiting: dict = {}
    for record in records:
        key = (repr(record.id), record.text)
        found = waiting.setdefault(key, {})
        found[label(record)] = record
        if len(found) == 2:
            del waiting[key]
            yield from (found[name] for name in pair)
    for found in waiting.values():  # inputs only one of the two explained
        yield from found.values()
