"""Records as one self-contained HTML page (``render --html``).

The blocks are the records' own markup (:mod:`contrastcat.records.markup`). No
script, no network: the page carries its own style and a Content-Security-Policy
that forbids scripts and remote loads. Dark mode follows the reader's system
setting.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from ..records.markup import STYLE, any_signed, by_input, input_block, legends
from ..records.spans import visible

PAGE_STYLE = """
body { font: 16px/1.6 system-ui, sans-serif; margin: 0; padding: 1.5rem max(1rem, calc((100% - 72rem) / 2)); }
h1 { font-size: 1.2rem; }
"""

# Scripts, frames and remote loads forbidden: only the page's own style runs.
POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"



def html_page(
    records: Iterable, title: str, words: bool = False, rescale: bool = True, label=None, signed: bool = True
) -> str:
    """The whole page: one block per input, methods of the same input side by side (a signed map's
    tokens, with ``signed``, in two colours)."""
    groups = by_input(records)
    blocks = [input_block(group, words, rescale, label, signed) for group in groups]
    unit = "words" if words else "tokens"
    if words:
        scaling = "a word's the sum of its tokens' raw scores, min–max scaled over each text's words"
    else:
        scaling = "min–max scaled over each text's tokens" if rescale else "as stored"
    signed = signed and any_signed(groups)  # what the page shows: a signed map among its records
    if signed:
        scaling += "; a signed map's divided by its largest magnitude: red for the class, blue against it"
    return (
        "<!doctype html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(visible(title))}</title><style>{PAGE_STYLE}{STYLE}</style></head><body class=\"contrastcat\">"
        f"<h1>{html.escape(visible(title))}</h1>"
        f'<p class="muted">{len(blocks)} input(s); {unit} shaded by attribution score ({scaling}); '
        "hover or focus (Tab) a token for its score.</p>"
        f"{legends(signed)}<main>{''.join(blocks)}</main></body></html>\n"
    )
