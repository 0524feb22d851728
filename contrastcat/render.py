"""Records as text: coloured with Rich (stronger red = more relevant) or plain.

Only this module and the CLI import Rich; the engine does not.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from .records import AttributionRecord


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the record's text
    end: int
    score: float


def spans(record: AttributionRecord, words: bool = False, rescale: bool = False) -> list[Span]:
    """Scored character spans of the non-special tokens.

    With ``words``, pieces that touch (one ends where the next begins, as
    WordPiece ``##`` pieces do) merge into one word scored by its strongest piece.
    With ``rescale``, scores are min–max scaled over the spans shown, so a
    special token holding the top score does not wash out the text.
    """
    result: list[Span] = []
    for (start, end), score, special in zip(record.offsets, record.scores, record.special):
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


def header(record: AttributionRecord) -> str:
    probability = record.probs[record.target] if len(record.probs) > record.target else float("nan")
    return f"{record.id}  {record.method} → {record.target_name} (p={probability:.3f})"


def _shade(score: float) -> str:
    """White (0) to strong red (1) background, with text that stays readable."""
    level = max(0.0, min(1.0, score))
    green_blue = int(round(255 * (1 - level)))
    foreground = "white" if level > 0.6 else "black"
    return f"{foreground} on #ff{green_blue:02x}{green_blue:02x}"


def render_rich(record: AttributionRecord, threshold: float = 0.0, words: bool = False, rescale: bool = False) -> Text:
    text = Text()
    cursor = 0
    for span in spans(record, words, rescale):
        text.append(record.text[cursor : span.start])
        piece = record.text[span.start : span.end]
        text.append(piece, style=_shade(span.score) if span.score >= threshold else "")
        cursor = span.end
    text.append(record.text[cursor:])
    return text


def render_plain(record: AttributionRecord, threshold: float = 0.0, words: bool = False, rescale: bool = False) -> str:
    """The text with ``[token 0.87]`` marks on tokens scoring at least ``threshold``."""
    parts = []
    cursor = 0
    for span in spans(record, words, rescale):
        parts.append(record.text[cursor : span.start])
        piece = record.text[span.start : span.end]
        parts.append(f"[{piece} {span.score:.2f}]" if span.score >= threshold else piece)
        cursor = span.end
    parts.append(record.text[cursor:])
    return "".join(parts)
