"""Where another tool's token strings are in the text: their character spans, found in order
(records made elsewhere, docs/cli.md). Case, accents and the piece markers of common tokenizers
are ignored; strings that stand for no text ([CLS], <s>) get an empty span."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..errors import BadInput

# How other tokenizers mark pieces of a word: BERT's "##", GPT-2's "Ġ" (a space) and "Ċ" (a new
# line), SentencePiece's "▁" (a space).
_MARKERS = re.compile(r"^(##|Ġ|▁|Ċ)+")
# A token string that stands for no text: [CLS], <s>, </s>, <pad>, <|endoftext|>, [SEP].
_SPECIAL = re.compile(r"^(\[[A-Za-z_]+\]|<\|?/?[A-Za-z_]*\|?>)$")


def _fold(text: str) -> tuple[str, list[int]]:
    """``text`` lower-cased, without accents and in compatibility form (a ligature "ﬁ" as "fi",
    full-width letters as ASCII, as NFKC-normalising tokenizers give them), and for each of its
    characters the index of the character of ``text`` it came from."""
    folded, where = [], []
    for index, character in enumerate(text):
        for piece in unicodedata.normalize("NFKD", character.lower()):
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


def check_tokens_at_offsets(
    texts: tuple[str, str | None], tokens: Sequence[str], offsets: Sequence[Sequence[int]],
    segments: Sequence[int | None] | None, where: str,
) -> None:
    """A record whose ``tokens`` and ``offsets`` disagree (one edited, not the other) would be
    evaluated by its offsets and shown by its tokens: refuse it. Compared are the tokens that are
    a plain word or number once their piece marker is gone (``good``, ``##ing``, ``Ġfilm``), with
    case and accents ignored as uncased tokenizers drop them; tokens with other characters
    (byte-level pieces of non-ASCII text, punctuation a normaliser may have rewritten) and
    tokens with an empty span are not, so no tokenizer's own records are refused."""
    for number, (token, (start, end)) in enumerate(zip(tokens, offsets)):
        if start == end:
            continue
        piece = _MARKERS.sub("", token).strip()
        if not (piece.isascii() and piece.isalnum()):
            continue
        text = texts[1] if segments is not None and segments[number] == 1 and texts[1] is not None else texts[0]
        span = text[start:end].strip()
        if span == piece or span.lower() == piece.lower() or _fold(span)[0] == piece.lower():
            continue
        shown = span if len(span) <= 30 else span[:27] + "..."
        raise BadInput(
            f"{where}: token {number} {token[:30]!r} is not the text at its offsets [{start}, {end}) ({shown!r}): "
            "'tokens' and 'offsets' disagree"
        )
