"""Scored character spans of a record: what the terminal and the HTML view shade.

Rich-free, importing only the words module and the scaling beside it, so the HTML view
(``contrastcat.records.markup``) and the terminal renderer (``contrastcat.views.terminal``) share it.
A record is anything with ``text``, ``offsets``, ``scores`` and ``special``.
Both views pass every string from the records through :func:`visible` first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..scaling import minmax
from .words import Piece, scored_units

# Bidirectional controls: an unclosed U+202E (RIGHT-TO-LEFT OVERRIDE) reverses everything after it.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
LAYOUT = "\t\n\u2028\u2029"  # kept in a text's body, escaped where one line is expected


def _escape(character: str) -> str:
    return character.encode("unicode_escape").decode("ascii")  # \x1b, \r, \x00, \x85, \u202e


# C0 and C1 control characters (ESC, BEL, CR, NUL, ...), DEL and the bidi controls, as Python writes them.
_ESCAPED = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + list(BIDI_CONTROLS) + list(LAYOUT)
_ONE_LINE = {ord(c): _escape(c) for c in _ESCAPED}
_BODY = {code: escape for code, escape in _ONE_LINE.items() if chr(code) not in LAYOUT}


def visible(value, body: bool = False) -> str:
    r"""``value`` (any record field: id, text, token, method, label name) as shown: control characters
    (C0, DEL, C1) and bidi controls written as Python escapes (``\x1b``, ``\x07``, ``\r``, ``\x00``,
    ``\u202e``), so none reaches the terminal or the page as itself; the rest, non-ASCII letters and
    emoji included, unchanged. A line (a header, an id) also escapes tabs and line breaks (``\t``,
    ``\n``, ``\u2028``); a text's ``body`` keeps them, as layout. For display only: a backslash in
    the data is not escaped, so ``\x1b`` typed out reads the same."""
    return str(value).translate(_BODY if body else _ONE_LINE)


@dataclass(frozen=True)
class Span:
    start: int  # character offsets into the record's text (the pair's second text for segment 1)
    end: int
    score: float  # in [0, 1]; where ``signed``, in [-1, 1]: evidence against the target below 0
    segment: int = 0  # a sentence pair's text it is in: 0 (``text``) or 1 (``pair``)
    raw: float = 0.0  # before the view's scaling (with ``words``: its tokens' raw scores combined)
    signed: bool = False


def segment_texts(record) -> list[str]:
    """The texts a record's spans are in: ``[text]``, or ``[text, pair]`` for a sentence pair."""
    pair = getattr(record, "pair", None)
    return [record.text] if pair is None else [record.text, pair]


def raw_scores(record) -> list[float]:
    """The record's map before its last scaling (``raw_scores``), or its ``scores`` where it keeps
    none (records written before they were kept, other tools' records)."""
    raw = getattr(record, "raw_scores", None)
    return record.scores if raw is None else raw


# This tool's methods whose maps are signed (their classes say so, ``AttributionMethod.signed``; a
# test keeps the two alike, and :data:`METHODS_HERE` with the registry): a map of theirs is signed
# even where no score of one input is below 0, and one of the others is not, whatever its scores.
SIGNED_METHODS = frozenset({
    "att-grads", "att-x-att-grads", "attcat", "attnlrp", "cat", "full-lrp", "input-x-gradient",
    "integrated-gradients", "occlusion",
})
METHODS_HERE = SIGNED_METHODS | {
    "contrastcat", "contrastcat-plus", "contrastcat-lrp", "tis", "rawatt", "rollout", "grad-sam", "generic-attention",
    "partial-lrp", "transatt", "gradient-norm", "random",
}


def is_signed(record) -> bool:
    """Whether the record's map tells evidence for the target from evidence against it. A map of
    this tool's methods (one with token ids: not another tool's under a method's name) is as its
    method is, where the record keeps its raw scores (without them, its [0, 1] scores have no sign
    to show); another's is signed where its raw scores (or, without them, its scores) go below 0
    on a token shown (special tokens are not)."""
    method = getattr(record, "method", None)
    if method in METHODS_HERE and getattr(record, "token_ids", None) and not _made_elsewhere(record):
        return method in SIGNED_METHODS and getattr(record, "raw_scores", None) is not None
    return min((value for value, special in zip(raw_scores(record), record.special) if not special), default=0.0) < 0


def _made_elsewhere(record) -> bool:
    """Another tool's map aligned to a model's tokens says so in its settings (the name is
    records.variants.MADE_ELSEWHERE, which imports the records this module's views are of)."""
    return (getattr(record, "settings", None) or {}).get("made_elsewhere") is True




def text_pieces(record, values, texts: list[str]) -> list[Piece]:
    """The record's tokens that are text (not special, a span left once its leading white space
    is), with their scores."""
    found = []
    segments = getattr(record, "segments", None) or [0] * len(record.offsets)
    for (start, end), score, special, segment in zip(record.offsets, values, record.special, segments):
        segment = segment or 0  # a token the tokenizer added (None) is special: skipped below
        segment = segment if segment < len(texts) else 0
        text = texts[segment]
        while start < end and text[start].isspace():
            start += 1
        if not special and start < end:
            found.append(Piece(start, end, score, segment))
    return found


def _token_spans(pieces: list[Piece], summed: bool) -> list[Span]:
    """A span per token, those sharing characters (byte pieces of one character) one span:
    their sum where ``summed``, else their strongest."""
    result: list[Span] = []
    for piece in pieces:
        if result and result[-1].segment == piece.segment and piece.start < result[-1].end:
            previous = result.pop()
            merged = previous.score + piece.score if summed else max(previous.score, piece.score)
            result.append(Span(previous.start, max(previous.end, piece.end), float(merged), piece.segment))
        else:
            result.append(Span(piece.start, piece.end, float(piece.score), piece.segment))
    return result


def spans(
    record, words: bool = False, rescale: bool = False, signed: bool = False, rule: str = "auto", symbols: bool = True,
) -> list[Span]:
    """Scored character spans of the non-special tokens.

    Pieces that share characters are one span: byte-level tokenizers (GPT-2,
    RoBERTa) split a character they have no token for (Cyrillic, CJK, emoji) into
    byte tokens that all carry that character's span, and each would otherwise
    print the character again. Such a span scores as its strongest piece; with
    ``words`` or ``signed``, as the sum of its pieces' raw scores.
    With ``words``, the spans are the text's words and runs of symbols
    (:mod:`contrastcat.records.words`: punctuation is a unit of its own, never
    part of the word beside it; ``symbols`` off leaves those runs out), each
    scored from its pieces' raw scores (:func:`raw_scores`) by ``rule``
    (``auto``: their sum for a signed map, a relevance that sums to the logit
    still doing so over words; its strongest piece for an unsigned one, so a
    word of many pieces is not credited once per piece), then min–max scaled
    over the words.
    A piece's leading whitespace is not part of its span: SentencePiece-style
    tokenizers (Llama, ALBERT, XLM-R) give ``▁film`` the space before it, and the
    words of a sentence would otherwise all touch.
    With ``signed`` (a record whose map :func:`is_signed`), a span's score is its raw
    score divided by the largest magnitude: in [-1, 1], below 0 against the target.
    With ``rescale``, scores are min–max scaled over the spans shown (signed: divided
    by the largest magnitude shown), so a special token holding the top score does
    not wash out the text. A sentence pair's spans are in both texts, scaled
    together; each says which.
    """
    signed = signed and is_signed(record)
    summed = words or signed
    values = raw_scores(record) if summed else record.scores
    # Sums are taken in units of the largest magnitude: a sum of values near the largest float
    # would overflow (and scale to NaN) in the record's own.
    unit = float(np.abs(np.asarray(values, dtype=np.float64)).max(initial=0.0)) if summed else 1.0
    unit = unit if unit > 0 else 1.0
    if summed:
        values = [value / unit for value in values]
    texts = segment_texts(record)
    pieces = text_pieces(record, values, texts)
    if words:
        result = [Span(u.start, u.end, float(u.score), u.segment)
                  for u in scored_units(texts, pieces, rule) if symbols or u.is_word]
    else:
        result = _token_spans(pieces, summed)
    if not result:
        return result
    found = np.array([s.score for s in result], dtype=np.float64)
    if signed:
        # Without rescale, by the largest magnitude of any token's too (special ones), as the
        # stored scores are scaled over every token: that is the unit the values are in, 1.
        largest = np.abs(found).max()
        if not rescale:
            largest = max(largest, 1.0)
        shown = found / largest if largest > 0 else np.zeros_like(found)
    elif words or rescale:
        shown = minmax(found)
    else:
        shown = found
    return [Span(s.start, s.end, float(value), s.segment, s.score * unit, signed) for s, value in zip(result, shown)]


@dataclass(frozen=True)
class Word:
    """A word of a record: its text and where it is (character offsets into the record's text, or
    into its pair's for ``segment`` 1), the sum of its tokens' raw scores and that sum min–max
    scaled over the record's words, as a record's ``scores`` are over its tokens."""

    text: str
    start: int
    end: int
    score: float
    raw: float
    segment: int = 0

    def to_dict(self) -> dict:
        found = {"word": self.text, "start": self.start, "end": self.end, "score": self.score, "raw": self.raw}
        return {**found, "segment": self.segment} if self.segment else found


WORD_DECIMALS = 6


def word_scores(record) -> list[Word]:
    """The record's words and punctuation (:mod:`contrastcat.records.words`; special tokens left
    out), each scored from its pieces' raw scores (their sum for a signed map, the strongest
    for an unsigned one): what ``render --words`` shades."""
    texts = segment_texts(record)
    return [
        Word(texts[s.segment][s.start : s.end], s.start, s.end, round(s.score, WORD_DECIMALS),
             float(f"{s.raw:.7g}"), s.segment)
        for s in spans(record, words=True)
    ]
