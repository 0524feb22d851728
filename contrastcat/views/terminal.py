"""Records as text: coloured with Rich (an unsigned map in grey, darker = more relevant; a signed
map in red for the target and blue for evidence against it) or plain.

Only this module and the CLI import Rich; the engine does not. Every string from a record reaches
the terminal through :func:`~contrastcat.records.spans.visible`: control and bidi characters as escapes
(``\\x1b``, ``\\u202e``), never as themselves; and as Rich ``Text``, never read as markup.
"""

from __future__ import annotations

from rich.text import Text

from ..records.record import AttributionRecord
from ..records.spans import Span, segment_texts, spans, visible
from ..records.view import VIEW

__all__ = ["Span", "header", "legend", "render_plain", "render_rich", "spans", "visible"]


def header(record: AttributionRecord, label: str | None = None) -> str:
    """``id  method → target (p=0.970)``, one line; ``label`` shows in place of the method (a variant's
    label, ``contrastcat[refs_used=5]``)."""
    method = record.method if label is None else label
    line = f"{visible(record.id)}  {visible(method)} → {visible(record.target_name)}"
    if len(record.probs) > record.target:  # records of other tools may not say it
        line += f" (p={record.probs[record.target]:.3f})"
    return line


def _shade(score: float, signed: bool = True) -> str:
    """A signed map's: white (0) to strong red (1) background, with text that stays readable;
    below 0 (evidence against the target), white to strong blue (-1): red and blue stay apart in
    the common colour-vision deficiencies. An unsigned map's: white to dark grey, no hue, since
    it says how much a token matters and not for which side."""
    level = max(0.0, min(1.0, abs(score)))
    fade = int(round(255 * (1 - level)))
    foreground = "white" if level > 0.6 else "black"
    if not signed:
        grey = int(round(255 - (255 - 64) * level))  # to the page's grey, 64
        return f"{foreground} on #{grey:02x}{grey:02x}{grey:02x}"
    if score < 0:
        return f"{foreground} on #{fade:02x}{fade:02x}ff"
    return f"{foreground} on #ff{fade:02x}{fade:02x}"


def legend(signed: bool) -> Text:
    """One line naming a scale, with swatches: the unsigned one (grey) or the signed one."""
    text = Text()
    levels = (0.25, 0.5, 0.75, 1.0)
    if not signed:
        text.append("unsigned map: relevance 0 ", style="dim")
        for level in levels:
            text.append("  ", style=_shade(level, False))
        text.append(" 1", style="dim")
        return text
    text.append("signed map: against the class -1 ", style="dim")
    for level in (*(-v for v in reversed(levels)), *levels):
        text.append("  ", style=_shade(level))
    text.append(" +1 for it", style="dim")
    return text


def _mark(span: Span) -> str:
    """A span's score as printed: ``0.87``, or signed ``+0.87`` / ``-0.41``."""
    return f"{span.score:+.2f}" if span.signed else f"{span.score:.2f}"


# What opens the second text of a sentence pair, on a line of its own.
PAIR_MARK = "‖ "


def render_rich(
    record: AttributionRecord, threshold: float = 0.0, words: bool = False, rescale: bool = VIEW.rescale,
    signed: bool = VIEW.signed,
) -> Text:
    """The text, each token (or word) shaded by its score (a signed map's, with ``signed``, in two
    colours); only those scoring at least ``threshold`` (in magnitude)."""
    text = Text()
    found = spans(record, words, rescale, signed)
    for segment, body in enumerate(segment_texts(record)):
        if segment:
            text.append("\n" + PAIR_MARK, style="dim")
        cursor = 0
        for span in (s for s in found if s.segment == segment):
            text.append(visible(body[cursor : span.start], body=True))
            piece = visible(body[span.start : span.end], body=True)
            text.append(piece, style=_shade(span.score, span.signed) if abs(span.score) >= threshold else "")
            cursor = span.end
        text.append(visible(body[cursor:], body=True))
    return text


def render_plain(
    record: AttributionRecord, threshold: float = 0.0, words: bool = False, rescale: bool = VIEW.rescale,
    signed: bool = VIEW.signed,
) -> str:
    """The text with ``[token 0.87]`` marks on tokens scoring at least ``threshold`` (a signed map's:
    ``[token +0.87]``, ``[not -0.41]``, at least ``threshold`` in magnitude); a sentence pair's
    second text follows on its own line, after ``‖``."""
    parts = []
    found = spans(record, words, rescale, signed)
    for segment, body in enumerate(segment_texts(record)):
        if segment:
            parts.append("\n" + PAIR_MARK)
        cursor = 0
        for span in (s for s in found if s.segment == segment):
            parts.append(visible(body[cursor : span.start], body=True))
            piece = visible(body[span.start : span.end], body=True)
            parts.append(f"[{piece} {_mark(span)}]" if abs(span.score) >= threshold else piece)
            cursor = span.end
        parts.append(visible(body[cursor:], body=True))
    return "".join(parts)


def top_words(
    record: AttributionRecord, count: int, words: bool = True, rescale: bool = VIEW.rescale, signed: bool = VIEW.signed
) -> str:
    """The ``count`` most relevant words (or tokens) of a record, strongest first: ``film 1.00, dull 0.82``
    (scores rescaled over the words shown, as the shaded text is, unless ``rescale`` is off). A
    signed map's (with ``signed``) also its ``count`` strongest against the target, after them:
    ``film +1.00, dull +0.82; against: not -0.64``."""
    found = spans(record, words, rescale, signed)
    texts = segment_texts(record)

    def listed(chosen: list[Span]) -> str:
        return ", ".join(f"{visible(texts[s.segment][s.start:s.end])} {_mark(s)}" for s in chosen)  # one line

    strongest = sorted(found, key=lambda span: (-span.score, span.segment, span.start))
    if not (found and found[0].signed):
        return listed(strongest[:count])
    # Evidence that prints as ±0.00 is none: left out of both lists (all of it: the list as it is).
    least = 0.005
    evidence = [span for span in strongest if span.score >= least][:count]
    against = sorted((span for span in found if span.score <= -least), key=lambda span: (span.score, span.segment, span.start))
    if not (evidence or against):
        return listed(strongest[:count])
    return "; ".join(([listed(evidence)] if evidence else []) + ([f"against: {listed(against[:count])}"] if against else []))
