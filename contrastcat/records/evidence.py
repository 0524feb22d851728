"""Evidence spans: the characters of an input known to decide its label (a planted shortcut, a
human rationale as ERASER gives them), and the tokens they cover.

A span is ``[start, end]`` in characters of the text (end excluded, as Python slices), or
``[start, end, segment]`` with segment 1 for the second text of a sentence pair. A token is
evidence where its characters overlap a span of its own segment: a span that covers part of a
word covers each word piece it touches. Special tokens cover no characters and are never evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..arguments import plain_int, shown
from ..errors import BadInput


def read_spans(value, texts: Sequence[str], where: str) -> tuple[tuple[int, int, int], ...]:
    """``value`` (a JSON list of spans) checked against ``texts`` (the text, and the pair's second
    text where there is one): (start, end, segment) per span, in the order given."""
    if not isinstance(value, (list, tuple)):
        raise BadInput(f"{where}: evidence must be a list of [start, end] character spans, got {shown(value, 40)}")
    spans = []
    for n, span in enumerate(value):
        if not (isinstance(span, (list, tuple)) and len(span) in (2, 3) and all(plain_int(v) for v in span)):
            raise BadInput(
                f"{where}: evidence span {n} must be [start, end] (or [start, end, segment] in a pair), "
                f"whole numbers, got {shown(span, 40)}"
            )
        start, end, segment = (*span, 0) if len(span) == 2 else span
        if segment not in range(len(texts)):
            raise BadInput(f"{where}: evidence span {n} names segment {shown(segment, 20)}: "
                           + ("a single text has segment 0 only" if len(texts) == 1 else "a pair has segments 0 and 1"))
        if not 0 <= start < end <= len(texts[segment]):
            raise BadInput(
                f"{where}: evidence span {n} {shown([start, end], 40)} is not within its text of {len(texts[segment])} "
                "characters with start before end"
            )
        spans.append((start, end, segment))
    return tuple(spans)


def written_spans(spans: Sequence[Sequence[int]]) -> list[list[int]]:
    """Spans as records write them: ``[start, end]``, and ``[start, end, 1]`` in a pair's second text."""
    return [[start, end] if segment == 0 else [start, end, segment] for start, end, segment in spans]


def evidence_tokens(
    offsets: Sequence[Sequence[int]], segments: Sequence[int | None] | None, spans: Sequence[Sequence[int]]
) -> list[bool]:
    """Per token, whether its characters overlap a span of its segment (``segments`` None: one text)."""
    found = []
    for index, (start, end) in enumerate(offsets):
        segment = 0 if segments is None else segments[index]
        found.append(end > start and any(
            segment == span_segment and start < span_end and end > span_start
            for span_start, span_end, span_segment in spans
        ))
    return found
