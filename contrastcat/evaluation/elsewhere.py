"""Attributions made by other tools (Captum, inseq, ferret, a script): the minimal record, and
its alignment to the tokens of the model that evaluates it (docs/cli.md, "Attributions made
elsewhere").

A minimal record has ``text``, ``scores``, ``target`` and, for each score, its character span
``offsets`` or its token string ``tokens`` (``method`` and ``id`` are optional). Without token
ids, ``evaluate`` tokenises the text with the model's tokenizer and gives each of the model's
tokens the sum of the scores of the spans it overlaps (a word's score reaches every subword of
it; finer pieces add up). A model token that overlaps no scored span, or a token string that
cannot be found in the text, makes the line refused: a silent guess would change the map.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace

from ..errors import BadInput
from ..models.tokens import tokenize
from ..records.record import AttributionRecord

# How other tokenizers mark pieces of a word: BERT's "##", GPT-2's "Ġ" (a space) and "Ċ" (a new
# line), SentencePiece's "▁" (a space).
_MARKERS = re.compile(r"^(##|Ġ|▁|Ċ)+")
# A token string that stands for no text: [CLS], <s>, </s>, <pad>, <|endoftext|>, [SEP].
_SPECIAL = re.compile(r"^(\[[A-Za-z_]+\]|<\|?/?[A-Za-z_]*\|?>)$")


def made_elsewhere(record: AttributionRecord) -> bool:
    """A record without token ids: another tool's map, still to be aligned to a model's tokens."""
    return not record.token_ids


def _fold(text: str) -> tuple[str, list[int]]:
    """``text`` lower-cased and without accents, and for each of its characters the index of the
    character of ``text`` it came from (uncased tokenizers give tokens in this form)."""
    folded, where = [], []
    for index, character in enumerate(text):
        for piece in unicodedata.normalize("NFD", character.lower()):
            if not unicodedata.combining(piece):
                folded.append(piece)
                where.append(index)
    return "".join(folded), where


def spans_of_tokens(text: str, tokens: Sequence[str], where: str) -> list[list[int]]:
    """Each token string's span in ``text``, found in order; a token that stands for no text
    ([CLS], <s>) gets an empty span and counts as special."""
    folded, origin = _fold(text)
    spans, cursor = [], 0  # cursor: in the folded text
    for number, token in enumerate(tokens):
        piece = _MARKERS.sub("", token)
        if not piece.strip():
            spans.append([0, 0])
            continue
        needle, _ = _fold(piece.strip())
        found = folded.find(needle, cursor)
        if found < 0 or folded[cursor:found].strip():
            if _SPECIAL.match(token):
                spans.append([0, 0])
                continue
            shown = token if len(token) <= 30 else token[:27] + "..."
            raise BadInput(
                f"{where}: token {number} {shown!r} is not the next text after character {origin[cursor - 1] + 1 if cursor else 0}"
                " of 'text': cannot align it (give 'offsets', each score's [start, end) in the text)"
            )
        end = found + len(needle)
        spans.append([origin[found], origin[end - 1] + 1])
        cursor = end
    return spans


def align(record: AttributionRecord, classifier, where: str) -> AttributionRecord:
    """``record`` on the classifier's tokens: token ids, tokens, offsets and special flags of the
    model's tokenisation (cut at its length limit as explain cuts), each token scored by the sum
    of the scores of the spans it overlaps."""
    given = record.offsets
    if not any(end > start for start, end in given):  # no spans given: find the token strings
        given = spans_of_tokens(record.text, record.tokens, where)
    scored = [(start, end, score) for (start, end), score in zip(given, record.scores) if end > start]
    (tokens,) = tokenize(classifier.tokenizer, [record.text], classifier.max_length)  # as explain cuts it
    scores = []
    for (start, end), is_special in zip(tokens.offsets, tokens.special):
        if is_special or end <= start:
            scores.append(0.0)
            continue
        overlapping = [score for s, e, score in scored if s < end and start < e]
        if not overlapping:
            raise BadInput(
                f"{where}: the model's token {record.text[start:end]!r} (characters {start}-{end}) overlaps no "
                "scored span of the record: cannot align it to this model's tokens"
            )
        scores.append(float(sum(overlapping)))
    settings = {**record.settings, "made_elsewhere": True}
    return replace(
        record, token_ids=list(tokens.ids), tokens=list(tokens.tokens), offsets=[list(span) for span in tokens.offsets],
        special=list(tokens.special), scores=scores, truncated=tokens.truncated, tokens_dropped=tokens.dropped,
        settings=settings, **classifier.identity(),
    )
