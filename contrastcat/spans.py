"""Scored character spans of a record, and the record as HTML (a notebook's view).

Rich-free and free of imports from the rest of the package, so records
(``_repr_html_``) and the terminal renderer (``contrastcat.terminal``) share it.
A record is anything with ``text``, ``offsets``, ``scores`` and ``special``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the record's text
    end: int
    score: float


def spans(record, words: bool = False, rescale: bool = False) -> list[Span]:
    """Scored character spans of the non-special tokens.

    With ``words``, pieces that touch (one ends where the next begins, as
    WordPiece ``##`` pieces do) merge into one word scored by its strongest piece.
    A piece's leading whitespace is not part of its span: SentencePiece-style
    tokenizers (Llama, ALBERT, XLM-R) give ``▁film`` the space before it, and the
    words of a sentence would otherwise all touch.
    With ``rescale``, scores are min–max scaled over the spans shown, so a
    special token holding the top score does not wash out the text.
    """
    result: list[Span] = []
    text = record.text
    for (start, end), score, special in zip(record.offsets, record.scores, record.special):
        while start < end and text[start].isspace():
            start += 1
        if special or end <= start:
            continue
        if words and result and result[-1].end == start:
            previous = result.pop()
            result.append(Span(previous.start, end, max(previous.score, score)))
        else:
            result.append(Span(start, end, float(score)))
    if rescale and result:
        low = min(s.score for s in result)
        span = max(s.score for s in result) - low
        result = [Span(s.start, s.end, (s.score - low) / span if span > 0 else 0.0) for s in result]
    return result


def record_html(record, words: bool = True) -> str:
    """The text with each word's background from white (0) to red (1), its score in a tooltip."""
    parts = []
    cursor = 0
    for span in spans(record, words):
        parts.append(html.escape(record.text[cursor : span.start]))
        level = max(0.0, min(1.0, span.score))
        green_blue = int(round(255 * (1 - level)))
        colour = "white" if level > 0.6 else "black"
        piece = html.escape(record.text[span.start : span.end])
        parts.append(
            f'<span title="{span.score:.3f}" style="background:#ff{green_blue:02x}{green_blue:02x};'
            f'color:{colour}">{piece}</span>'
        )
        cursor = span.end
    parts.append(html.escape(record.text[cursor:]))
    probability = record.probs[record.target] if len(record.probs) > record.target else float("nan")
    title = html.escape(f"{record.id}  {record.method} → {record.target_name} (p={probability:.3f})")
    return f"<div><small>{title}</small><br>{''.join(parts)}</div>"
