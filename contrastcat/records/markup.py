"""How one record looks in HTML: tokens shaded by score, one block per input, and a notebook's display.

One block per input: its id, the prediction and its probability, and one row
per method that explained it (methods side by side when there is room), the
tokens (or ``words``) shaded by score (a signed map in two colours: red for the
target, blue against it), the score on hover and on keyboard focus, a legend. Every piece of text from the records is escaped (a text
holding ``<script>`` shows as text), its control and bidi characters shown as
escapes (``\\x1b``, ``\\u202e``, as in the terminal: :func:`~contrastcat.records.spans.visible`),
and each token isolated in direction, so no token can reorder the ones after it.

This sits with the records, not with the views, because a record's notebook
display (``_repr_html_``) is part of the object; ``render --html``'s page
(:mod:`contrastcat.views.html_page`) wraps these blocks.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from .spans import is_signed, segment_texts, spans, visible
from .view import VIEW, View

STYLE = """
.contrastcat { color-scheme: light dark; --fg: #1b1b1b; --bg: #ffffff; --muted: #5b5b5b; --line: #d0d0d0;
        --heat: 214, 39, 40; --cold: 33, 102, 172; --mag: 64, 64, 64; --focus: #1f5fbf; color: var(--fg);
        background: var(--bg); }
@media (prefers-color-scheme: dark) {
  .contrastcat { --fg: #e8e8e8; --bg: #161616; --muted: #a8a8a8; --line: #3a3a3a; --heat: 255, 82, 82; --cold: 96, 156, 255;
        --mag: 215, 215, 215; --focus: #7fb0ff; }
  .contrastcat .t.mag.hi { color: #111; }
}
.contrastcat .muted { color: var(--muted); font-size: .85rem; }
.contrastcat .legend { display: flex; align-items: center; gap: .5rem; margin: .5rem 0 1.5rem; }
.contrastcat .bar { width: 12rem; height: .8rem; border: 1px solid var(--line);
       background: linear-gradient(to right, rgba(var(--heat), 0), rgba(var(--heat), 1)); }
.contrastcat .bar.mag { background: linear-gradient(to right, rgba(var(--mag), 0), rgba(var(--mag), 1)); }
.contrastcat .bar.signed { background: linear-gradient(to right, rgba(var(--cold), 1), rgba(var(--cold), 0) 50%,
       rgba(var(--heat), 0) 50%, rgba(var(--heat), 1)); }
.contrastcat .input { border-top: 1px solid var(--line); padding: .75rem 0; }
.contrastcat .input:focus-within, .contrastcat .input:focus { outline: 2px solid var(--focus); outline-offset: 4px; }
.contrastcat .input h2 { font-size: 1rem; margin: 0 0 .4rem; }
.contrastcat .methods { display: grid; grid-template-columns: repeat(auto-fit, minmax(22rem, 1fr)); gap: .75rem 1.5rem; }
.contrastcat .method h3 { font-size: .85rem; margin: 0 0 .2rem; color: var(--muted); font-weight: 600; }
.contrastcat .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.contrastcat .t { background: rgba(var(--heat), var(--s)); border-radius: .2rem; position: relative; }
.contrastcat .t.neg { background: rgba(var(--cold), var(--s)); }
.contrastcat .t.mag { background: rgba(var(--mag), var(--s)); }
.contrastcat .t.hi { color: #fff; }
.contrastcat .t:focus { outline: 2px solid var(--focus); }
.contrastcat .t:hover::after, .contrastcat .t:focus::after { content: attr(data-score); position: absolute; left: 0; top: 1.5em; z-index: 1;
       background: var(--fg); color: var(--bg); font-size: .75rem; padding: 0 .3rem; border-radius: .2rem; }
"""

def _probability(record) -> float:
    return record.probs[record.target] if len(record.probs) > record.target else float("nan")


def shaded_text(record, words: bool = False, rescale: bool = VIEW.rescale, signed: bool = VIEW.signed) -> str:
    """The record's text, each token (or word) a focusable span shaded by its score (a signed map's,
    with ``signed``: red for the target, blue against it; an unsigned one's grey), isolated in direction (``unicode-bidi:
    isolate``: right-to-left letters stay inside their token). A sentence pair's two texts are two
    blocks, the second marked as the pair's."""
    found = spans(record, words, rescale, signed)
    blocks = []
    for segment, body in enumerate(segment_texts(record)):
        parts, cursor = [], 0
        for span in (s for s in found if s.segment == segment):
            level = max(0.0, min(1.0, abs(span.score)))
            piece = body[span.start : span.end]
            parts.append(html.escape(visible(body[cursor : span.start], body=True)))
            shown = f"{span.score:+.3f}" if span.signed else f"{span.score:.3f}"
            kind = ("t neg" if span.score < 0 else "t" if span.signed else "t mag") + (" hi" if level > 0.6 else "")
            parts.append(
                f'<span class="{kind}" style="--s:{level:.3f};unicode-bidi:isolate" tabindex="0" '
                f'data-score="{shown}" title="{shown}" aria-label="{html.escape(visible(piece))}: {shown}">'
                f"{html.escape(visible(piece, body=True))}</span>"
            )
            cursor = span.end
        parts.append(html.escape(visible(body[cursor:], body=True)))
        blocks.append("".join(parts))
    if len(blocks) == 1:
        return blocks[0]
    # Styled in place, so the page's style sheet (and every page of single texts) stays as it was.
    return (
        f'<span class="segment" style="display:block" aria-label="first text">{blocks[0]}</span>'
        f'<span class="segment pair" style="{PAIR_STYLE}" aria-label="second text">{blocks[1]}</span>'
    )


PAIR_STYLE = "display:block;border-left:3px solid var(--line);padding-left:.5rem;margin-top:.3rem"


def by_input(records: Iterable) -> list[list]:
    """Records of the same input (id and text) together, in order of first appearance."""
    groups: dict[tuple, list] = {}
    for record in records:
        groups.setdefault((repr(record.id), record.text, getattr(record, "pair", None)), []).append(record)
    return list(groups.values())


def _not_predicted(record, probability: float) -> str:
    """What a map of another class than the predicted one says of it: a multi-label classifier
    predicts every label above 0.5, not the highest one only."""
    if not record.multi_label:
        return " — not the predicted class"
    if probability != probability:
        return " — not the highest-scoring label"
    return " — a label the model predicts" if probability > 0.5 else " — a label the model does not predict"


def input_block(
    records: list, words: bool = False, rescale: bool = VIEW.rescale, label=None, signed: bool = VIEW.signed
) -> str:
    """One input: its id and prediction, then each method's shading of it (``label``: a record's
    method label, e.g. ``contrastcat[refs_used=5]`` for a variant; default its method)."""
    first = records[0]
    predicted = first.predicted
    heading = visible(first.id)
    methods = []
    for record in records:
        # A record made elsewhere may carry no probabilities: name the class alone.
        probability = _probability(record)
        target = record.target_name if probability != probability else f"{record.target_name} (p = {probability:.3f})"
        note = "" if record.target == predicted else _not_predicted(record, probability)
        methods.append(
            f'<div class="method"><h3>{html.escape(visible(label(record) if label else record.method))} → '
            f'{html.escape(visible(target))}{html.escape(note)}</h3>'
            f'<div class="text" dir="auto">{shaded_text(record, words, rescale, signed)}</div></div>'
        )
    cut = ' <span class="muted">(text cut to the model\'s length)</span>' if first.truncated else ""
    return (
        f'<section class="input" tabindex="-1" aria-label="input {html.escape(heading)}">'
        f"<h2>{html.escape(heading)}{cut}</h2>"
        f'<div class="methods">{"".join(methods)}</div></section>'
    )


# The two scales, each named: an unsigned map's relevance in grey, a signed map's from against (-1,
# blue) to for (+1, red). Only the scales of the records shown are given.
LEGEND = (
    '<div class="legend" aria-hidden="true"><span class="muted">unsigned maps: relevance 0</span>'
    '<span class="bar mag"></span><span class="muted">1</span></div>'
)
SIGNED_LEGEND = (
    '<div class="legend" aria-hidden="true"><span class="muted">signed maps: against the class −1</span>'
    '<span class="bar signed"></span><span class="muted">+1 for it</span></div>'
)


def kinds_shown(groups: list[list], signed: bool = VIEW.signed) -> tuple[bool, bool]:
    """Whether records of ``groups`` (by input) are shown unsigned, and whether signed (``signed``
    off: every map in one colour, as unsigned)."""
    flags = [signed and is_signed(record) for group in groups for record in group]
    return (not all(flags), any(flags))


def legends(kinds: tuple[bool, bool]) -> str:
    """The legend of each scale shown (``kinds``: unsigned, signed)."""
    unsigned, signed = kinds
    return (LEGEND if unsigned else "") + (SIGNED_LEGEND if signed else "")


def notebook_html(records: list, view: View = VIEW) -> str:
    """A notebook's display of records: the page's blocks (as ``render --html`` makes them, the
    same view), its legends and style, without the page."""
    groups = by_input(records)
    blocks = "".join(input_block(group, view.shown_words(), view.rescale, None, view.signed) for group in groups)
    return f"<div class=\"contrastcat\"><style>{STYLE}</style>{legends(kinds_shown(groups, view.signed))}{blocks}</div>"
