"""Records as text: coloured with Rich (stronger red = more relevant) or plain.

Only this module and the CLI import Rich; the engine does not.
"""

from __future__ import annotations

from rich.text import Text

from .records import AttributionRecord
from .spans import Span, spans

__all__ = ["Span", "header", "render_plain", "render_rich", "spans"]


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


def top_words(record: AttributionRecord, count: int, words: bool = True, rescale: bool = True) -> str:
    """The ``count`` most relevant words (or tokens) of a record, strongest first: ``film 1.00, dull 0.82``
    (scores rescaled over the words shown, as the shaded text is, unless ``rescale`` is off)."""
    found = sorted(spans(record, words, rescale), key=lambda span: (-span.score, span.start))[:count]
    return ", ".join(f"{record.text[s.start:s.end]} {s.score:.2f}" for s in found)
