"""Words as a reader calls them, and each word's score from its tokens': the one place where
``render --words``, ``render --top``, ``explain --words`` and a dataset's summary make words.

A word is found in the text, not in the tokens: a run of letters and digits with the
apostrophes and hyphens inside it (``isn't``, ``well-made``), a number with its decimal point
(``3.5``), one ideograph (Chinese and Japanese write no spaces, and their tokenizers read one
character at a time), or a run of other symbols (``,``, ``...``, ``?!``), which is a unit of its
own and never part of the word beside it (control and format characters, invisible, part words
as white space does): AttCAT's "Dull" (+0.84) and its comma (-1.00) are two
units, not "Dull," at -0.16. Every tokenizer's pieces (WordPiece's ``##``, byte-level ``Ġ``,
SentencePiece's ``▁``, pairs) land in the words their character spans overlap; a token that
spans several words gives each a share in proportion to the characters it covers there.

A word's score is, by ``rule``:
- ``sum``: the sum of its pieces' scores. Relevance that adds up to the logit (LRP, integrated
  gradients, input × gradient: the signed maps) still does over words, and evidence split over
  pieces is counted once whatever the split.
- ``max``: the piece of largest magnitude, its sign kept. A map that scores each piece on its
  own scale (Contrast-CAT's, attention's: unsigned) would credit a word of three pieces three
  times by their sum ("videotapes" above every word of one piece).
- ``mean``: their mean.
- ``auto`` (what the views use): ``sum`` for a signed map, ``max`` for an unsigned one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

RULES = ("auto", "sum", "mean", "max")

# Hiragana, Katakana, CJK Unified Ideographs (and extension A) and compatibility ideographs.
_IDEOGRAPHS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Control and format characters (C0, DEL, C1, soft hyphen, zero-width and bidi controls, BOM):
# nothing a reader sees, so no unit of their own; they part words as white space does.
_INVISIBLE = "\x00-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"


@functools.cache
def _unit_pattern() -> re.Pattern:
    # Marks (accents written apart, the vowel signs of Devanagari, Thai, ...) are not letters to
    # Python's regular expressions, but are part of the word they sit on. Those of the Basic
    # Multilingual Plane, as ranges (the scan takes milliseconds; all of Unicode, a tenth of a second).
    codes = {code for code in range(0x10000) if unicodedata.category(chr(code)).startswith("M")}
    starts = sorted(code for code in codes if code - 1 not in codes)
    ends = sorted(code for code in codes if code + 1 not in codes)
    marks = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in zip(starts, ends))
    letter = rf"(?:[^\W_{_IDEOGRAPHS}]|[{marks}])"  # a letter or digit of a script that writes spaces
    return re.compile(
        rf"[{_IDEOGRAPHS}]"  # one ideograph
        r"|\d+(?:[.,]\d+)+"  # a number with its decimal point or thousands separators
        rf"|{letter}+(?:['’\-]{letter}+)*"  # a word, with the apostrophes and hyphens inside it
        rf"|(?P<symbols>_+|[^\w\s{_INVISIBLE}]+)"  # a run of other symbols
    )


@dataclass(frozen=True)
class Unit:
    """A word or a run of symbols in a text: characters ``start`` to ``end``."""

    start: int
    end: int
    is_word: bool  # letters, digits or an ideograph; False: punctuation and other symbols


def units(text: str) -> list[Unit]:
    """The words and symbol runs of ``text``, in order."""
    # Only a run matched as symbols is asked what it holds (a mark standing alone is part of no
    # letter, yet not punctuation): the words, most units, are words by the alternative they matched.
    return [Unit(m.start(), m.end(), m.lastgroup is None or not _is_symbols(m.group()))
            for m in _unit_pattern().finditer(text)]


def _is_symbols(found: str) -> bool:
    return not any(character.isalnum() or unicodedata.category(character).startswith("M") for character in found)


@dataclass(frozen=True)
class Piece:
    """A token's characters (leading white space left out) in its segment, and its score."""

    start: int
    end: int
    score: float
    segment: int = 0


@dataclass(frozen=True)
class Scored:
    """A unit of one segment's text with its score by the rule, and how many pieces fell in it."""

    start: int
    end: int
    score: float
    segment: int
    is_word: bool
    pieces: int


def scored_units(texts: Sequence[str], pieces: Sequence[Piece], rule: str = "auto") -> list[Scored]:
    """The units the pieces fall in (in text order, segment by segment), each scored by ``rule``
    from the pieces' shares; units no piece reaches (text past a cut) are left out. ``auto``
    reads the pieces as a signed map where any scores below 0."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if rule == "auto":
        rule = "sum" if any(piece.score < 0 for piece in pieces) else "max"
    return [
        Scored(unit.start, unit.end, combined(values, rule), segment, unit.is_word, len(values))
        for segment, unit, values in unit_shares(texts, pieces)
    ]


def unit_shares(texts: Sequence[str], pieces: Sequence[Piece]) -> list[tuple[int, Unit, list[float]]]:
    """Each unit the pieces reach, as (segment, unit, the shares of the pieces' scores it got), in
    text order: what a rule combines (a dataset's summary combines them by two rules at once, and
    picks one per method once it has seen whether the method's maps are signed)."""
    found: list[tuple[int, Unit, list[float]]] = []
    for segment, text in enumerate(texts):
        found += _segment_shares(units(text), [p for p in pieces if p.segment == segment], segment)
    return found


def _segment_shares(found: list[Unit], pieces: list[Piece], segment: int) -> list[tuple[int, Unit, list[float]]]:
    ends = [unit.end for unit in found]
    shares: dict[int, list[float]] = {}
    for piece in pieces:
        covered, index = [], bisect_right(ends, piece.start)  # the first unit that ends after it begins
        while index < len(found) and found[index].start < piece.end:
            overlap = min(piece.end, found[index].end) - max(piece.start, found[index].start)
            if overlap > 0:
                covered.append((index, overlap))
            index += 1
        total = sum(overlap for _, overlap in covered)
        for index, overlap in covered:
            shares.setdefault(index, []).append(piece.score * overlap / total)
    return [(segment, found[index], values) for index, values in sorted(shares.items())]


def combined(values: list[float], rule: str) -> float:
    """A unit's score from its pieces' shares by ``rule`` (sum, mean or max: not auto)."""
    if rule == "sum":
        return sum(values)
    if rule == "mean":
        return sum(values) / len(values)
    return max(values, key=abs)


