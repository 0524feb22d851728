"""A record's words as a dataset's summary counts them: one value per distinct word of the input.

A word's value in an input is the mean of its occurrences' scores (a word said three times is one
input's evidence, not three), each occurrence scored from its pieces by a rule
(:mod:`contrastcat.records.words`) and divided by the largest magnitude of any unit of the record:
every input weighs the same, whatever the units of its method's map (a relevance that sums to a
logit of 9 and one of 0.5 both end in [-1, 1]). Both rules a summary may use are computed at once
(``total``: the sum of the pieces' shares, for a signed map; ``strongest``: the piece of largest
magnitude, for an unsigned one), since whether a method's maps are signed is known only once its
records were all read.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from ..errors import BadInput
from .spans import raw_scores, segment_texts, text_pieces
from .words import combined, unit_shares


@dataclass(frozen=True, slots=True)
class InputWord:
    """One distinct word (or run of symbols, or token) of an input, with its value by each rule."""

    key: str  # as counted: in Unicode's composed form (NFC), case-folded unless the case is kept
    is_word: bool  # False: punctuation and other symbols
    total: float  # in [-1, 1]: the sum rule, divided by the input's largest unit, mean over occurrences
    strongest: float  # the same by the max-magnitude rule


def input_words(record, where: str, tokens: bool = False, keep_case: bool = False) -> list[InputWord]:
    """The distinct words of ``record`` (``tokens``: its non-special tokens, as the tokenizer wrote
    them), in order of first occurrence. A record whose tokens reach none of the words of its
    text (offsets that are not its text's) is refused, named by ``where``."""
    values = raw_scores(record)
    # In units of the largest magnitude first: a sum of values near the largest float would overflow.
    largest = max((abs(value) for value in values), default=0.0) or 1.0
    values = [value / largest for value in values]
    if tokens:
        found = [(token, _has_word(token), [value])
                 for token, value, special in zip(record.tokens, values, record.special) if not special]
        return _distinct(found, keep_case)
    texts = segment_texts(record)
    found = [(texts[segment][unit.start:unit.end], unit.is_word, shares)
             for segment, unit, shares in unit_shares(texts, text_pieces(record, values, texts))]
    if not found and any(text.strip() for text in texts) and not all(record.special):
        raise BadInput(f"{where}: its tokens' offsets reach none of the words of its text: no words can be made of it")
    return _distinct(found, keep_case)


def word_key(text: str, keep_case: bool = False) -> str:
    """A word as counted: composed (NFC: "école" typed with a combining accent is the same word as
    with "é"), then case-folded unless ``keep_case`` (and composed again: folding may decompose)."""
    composed = unicodedata.normalize("NFC", text)
    return composed if keep_case else unicodedata.normalize("NFC", composed.casefold())


def _has_word(text: str) -> bool:
    return any(character.isalnum() for character in text)


def _distinct(found: list[tuple[str, bool, list[float]]], keep_case: bool) -> list[InputWord]:
    totals = [combined(values, "sum") for _, _, values in found]
    strongest = [combined(values, "max") for _, _, values in found]
    total_unit = max(map(abs, totals), default=0.0) or 1.0
    strongest_unit = max(map(abs, strongest), default=0.0) or 1.0
    merged: dict[str, list] = {}
    for (text, is_word, _), total, strong in zip(found, totals, strongest):
        key = word_key(text, keep_case)
        entry = merged.setdefault(key, [is_word, 0.0, 0.0, 0])
        entry[1] += total / total_unit
        entry[2] += strong / strongest_unit
        entry[3] += 1
    return [InputWord(key, is_word, total / count, strong / count) for key, (is_word, total, strong, count) in merged.items()]
