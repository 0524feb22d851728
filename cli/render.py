"""contrastcat render: attributions as coloured tokens in the terminal, or as one HTML page."""

from __future__ import annotations

from contrastcat import api
from contrastcat.api import ON_COMMAND_LINE, RenderOptions

from .common import info, printing_after, reports_errors, watching_stdout
from .spec import command

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

def _render(values: dict) -> None:
    quiet, html = values["quiet"], values["html"]
    if html is None and values["output"] is None:
        values = {**values, "output": "-"}  # the command prints the text
    target = values["output"] if html is None else html
    printed = None if target not in (None, "-") else "the page" if html is not None else "the text"
    # Printed as it is made, once every record was read and checked: Ctrl-C may cut it short.
    with watching_stdout() as watched, printing_after(stdout=lambda: printed if watched.written else None):
        chosen = RenderOptions.read(values, ON_COMMAND_LINE, where=None)  # refused here, before the work's modules load
        run = api.run_render(chosen)
    # The file is written whole by now: Ctrl-C in its "wrote" line says so.
    with printing_after(("the page" if html is not None else "the text", run.wrote)):
        if run.wrote is not None:
            info(f"wrote {run.wrote}", quiet)


render = reports_errors(command(
    RenderOptions, _render,
    "Print each record's text with relevant tokens shaded: an unsigned map in grey (darker = more relevant), "
    "a signed map in red for the class and blue against it.",
))
