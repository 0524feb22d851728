"""Records as one self-contained HTML page (``render --html``).

The blocks are the records' own markup (:mod:`contrastcat.records.markup`). No
script, no network: the page carries its own style and a Content-Security-Policy
that forbids scripts and remote loads. Dark mode follows the reader's system
setting.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from ..records.markup import STYLE, by_input, input_block, kinds_shown, legends
from ..records.view import VIEW
from ..records.spans import visible

PAGE_STYLE = """
body { font: 16px/1.6 system-ui, sans-serif; margin: 0; padding: 1.5rem max(1rem, calc((100% - 72rem) / 2)); }
h1 { font-size: 1.2rem; }
"""

# Scripts, frames and remote loads forbidden: only the page's own style runs.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"



def html_page(
    records: Iterable, title: str, words: bool = False, rescale: bool = VIEW.rescale, label=None, signed: bool = VIEW.signed
) -> str:
    """The whole page: one block per input, methods of the same input side by side (a signed map's
    tokens, with ``signed``, in two colours; an unsigned map's in grey)."""
    groups = by_input(records)
    blocks = [input_block(group, words, rescale, label, signed) for group in groups]
    unit = "words" if words else "tokens"
    if words:
        scaling = "a word's the sum of its tokens' raw scores, min–max scaled over each text's words"
    else:
        scaling = "min–max scaled over each text's tokens" if rescale else "as stored"
    kinds = kinds_shown(groups, signed)  # what the page shows: unsigned maps, signed ones
    if kinds[1]:
        scaling += "; a signed map's divided by its largest magnitude: red for the class, blue against it"
    if kinds[0] and kinds[1]:
        scaling += "; an unsigned map's in grey: a relevance without a direction"
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(visible(title))}</title><style>{PAGE_STYLE}{STYLE}</style></head><body class=\"contrastcat\">"
        f"<h1>{html.escape(visible(title))}</h1>"
        f'<p class="muted">{len(blocks)} input(s); {unit} shaded by attribution score ({scaling}); '
        "hover or focus (Tab) a token for its score.</p>"
        f"{legends(kinds)}<main>{''.join(blocks)}</main></body></html>\n"
    )
