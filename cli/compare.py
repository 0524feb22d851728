"""contrastcat compare: which explanation to trust for this model, measured on its inputs."""

from __future__ import annotations

import json

import typer

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, CompareOptions

from .common import notifier, phased_progress, print_blocks, printing_after, reports_errors, stdout_console
from .spec import command, defaulted

EPILOG = """\
Examples:

\b
  contrastcat compare inputs.jsonl --refs refs.h5 --quick    # a first look, in about a minute
  contrastcat compare inputs.jsonl --refs refs.h5
  contrastcat compare inputs.jsonl --refs refs.h5 --method attnlrp,attcat,random --limit 40 -o cmp/
  contrastcat compare inputs.jsonl --refs refs.h5 \\
      --method 'contrastcat,contrastcat-lrp[refs_used=20,test_steps=5],random' --json

A sample of the inputs (--limit, drawn with --seed in file order) is explained
by each method alone (timed: seconds per input on this machine), and every
record is evaluated with deletion and with the tokenizer's [MASK]: the MoRF
and LeRF AOPC, ERASER comprehensiveness and sufficiency, and the
leave-one-out τ. Methods are ranked only on the protocols none of them chose
its maps by (Contrast-CAT's selection is the deletion MoRF test: that column
is shown, marked ᶠ, and not judged by). The recommendation names the most
faithful method only where the paired intervals single it out, otherwise it
says there is no clear winner; and a method at most half the leader's time
per input within --margin of it on every protocol (a cheaper method by less
than that is timing noise). Methods that made the same maps of every input
are said to be one method.

Printed: a table of the columns the ranking judges by (--all-columns: every
one), each difference over ± half its interval, then the recommendation;
--markdown prints report.md's table, --json the JSON report. -o DIR also
writes report.html: the table, the paired differences as a forest plot, the
cost picture and a few inputs as the leading methods explain them.

Exit codes: 0 done; 1 the run failed; 2 bad input; 130 interrupted.
"""


def _compare(values: dict) -> None:
    quiet, as_json = values["quiet"], values["as_json"]
    with phased_progress(quiet) as progress:
        chosen = CompareOptions.read(
            {**values, "progress": progress, "notify": notifier(quiet)}, ON_COMMAND_LINE, where=None, defaulted=defaulted()
        )
        run = api.run_compare(chosen)
    printed = "the JSON report" if as_json else "the Markdown table" if chosen.markdown else "the table"
    with printing_after(("records.jsonl, report.json, report.md and report.html", chosen.output), stdout=printed):
        if as_json or chosen.markdown:
            typer.echo(json.dumps(run.document, indent=2, ensure_ascii=False) if as_json else run.markdown())
            return
        console = stdout_console(soft_wrap=True)
        print_blocks(console, run.blocks(chosen.all_columns, console.color_system is None, chosen.bare("all_columns")))


compare = reports_errors(command(
    CompareOptions, _compare,
    "Which method to trust for this model: every method on a sample of its inputs, timed and evaluated.",
))
