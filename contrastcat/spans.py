"""Scored character spans of a record: what the terminal and the HTML view shade.

Rich-free and free of imports from the rest of the package, so the HTML view
(``contrastcat.html_view``) and the terminal renderer (``contrastcat.terminal``) share it.
A record is anything with ``text``, ``offsets``, ``scores`` and ``special``.
"""

from __future__ import annotations

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
