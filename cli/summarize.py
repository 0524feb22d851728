"""contrastcat summarize: what a classifier relies on across a records file, and a gate for CI."""

from __future__ import annotations

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, SummarizeOptions, is_standard_output

from .common import gates, one_thing_on_stdout, phased_progress, printing_after, reports_errors, tables_console
from .spec import command

EPILOG = """\
Examples:

\b
  contrastcat summarize attr.jsonl
  contrastcat explain held_out.jsonl --refs refs.h5 -o - | contrastcat summarize -
  contrastcat summarize attr.jsonl --min-count 5 --top 15 --html words.html
  contrastcat summarize attr.jsonl --json > summary.json
  contrastcat summarize attr.jsonl --forbid 'he,she,google' --top 10   # exit 3 when one drives a class
  contrastcat summarize attr.jsonl --forbid-file identity-terms.txt --markdown

Per method and target class (and, with gold labels, the model's right and
wrong predictions): each word's inputs, its mean value (each input's word
scores divided by that input's largest, so every input weighs the same) with
a bootstrap interval over inputs, and how often it is an input's strongest
word. A word scores the sum of its pieces in a signed map, its strongest piece
in an unsigned one (--rule). Candidate shortcuts: words the model predicts a
class with far more often than the gold labels support (or than the class's
share of inputs, without labels), by at least 10 points with the interval
above 0 at a Bonferroni-corrected level, and whose attribution to the class
lies above 0 and above the class's average word. docs/summarize.md says more.

Exit codes: 0 done; 1 the run failed; 2 bad input (a damaged line, records
of several models or libraries); 3 a --forbid word is among a class's top K
words or its candidate shortcuts (after the summary is written and printed);
130 interrupted.
"""


def _summarize(values: dict) -> None:
    quiet, output = values["quiet"], values["output"]
    one_thing_on_stdout(output, **{"--json": values["as_json"], "--markdown": values["markdown"],
                                   "--html -": values["html"] == "-"})
    with phased_progress(quiet) as progress:  # on a terminal: a bar per pass (a million records take minutes)
        chosen = SummarizeOptions.read({**values, "progress": progress}, ON_COMMAND_LINE, where=None)
        summary = api.run_summarize(chosen)
    printed = "the JSON summary" if chosen.as_json else "the Markdown tables" if chosen.markdown else "the tables"
    with printing_after(("the summary", output), ("the page", chosen.html), stdout=printed):
        if chosen.as_json:
            typer.echo(summary.to_json())
        elif chosen.markdown:
            typer.echo(summary.markdown(), nl=False)
        elif not is_standard_output(chosen.html):
            console = tables_console(output, quiet, soft_wrap=True)
            if console is not None:
                for block in summary.blocks():
                    console.print(block) if not isinstance(block, str) else typer.echo(block, err=console.stderr)
        gates(summary.problems)


summarize = reports_errors(command(
    SummarizeOptions, _summarize,
    "Which words drive each class across a records file, in its errors too; candidate shortcuts; a --forbid gate.",
))
