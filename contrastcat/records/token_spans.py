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


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's byte-level alphabet, read backwards: the character a byte-level tokenizer (GPT-2,
    RoBERTa, most BPE decoders) writes for each byte, mapped to the byte (printable Latin-1 stands
    for itself; the other bytes are moved to U+0100 and up, so ``Ġ`` is a space)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in printable]
    alphabet = {chr(b): b for b in printable}
    alphabet.update({chr(256 + n): b for n, b in enumerate(shifted)})
    return alphabet


_BYTES = _byte_alphabet()


def _byte_level(tokens: Sequence[str]) -> bool:
    """Whether a record's tokens are byte-level ones: any token written with ``Ġ`` (a space) or
    ``Ċ`` (a new line), as every such tokenizer writes the words of a text with spaces or lines."""
    return any(token[:1] in ("Ġ", "Ċ") for token in tokens)


def _agrees_as_bytes(token: str, span: str) -> bool:
    """A byte-level token read back as bytes is in its span's UTF-8 bytes: the whole span, or
    a part of a character it splits (one Cyrillic letter, two tokens, the same span)."""
    if not token or any(character not in _BYTES for character in token):
        return False
    data = bytes(_BYTES[character] for character in token).strip()
    return not data or data in span.encode("utf-8")


def check_tokens_at_offsets(
    texts: tuple[str, str | None], tokens: Sequence[str], offsets: Sequence[Sequence[int]],
    segments: Sequence[int | None] | None, where: str,
) -> None:
    """A record whose ``tokens`` and ``offsets`` disagree (one edited, not the other) would be
    evaluated by its offsets and shown by its tokens: refuse it. Compared are the tokens that are
    a plain word or number once their piece marker is gone (``good``, ``##ing``, ``Ġfilm``), with
    case and accents ignored as uncased tokenizers drop them; tokens with other characters
    (byte-level pieces of non-ASCII text, punctuation a normaliser may have rewritten) and
    tokens with an empty span are not, so no tokenizer's own records are refused. Where the
    tokens are byte-level (GPT-2, RoBERTa), every token is compared, as the bytes it stands for,
    so text in any script is checked."""
    byte_level = _byte_level(tokens)
    for number, (token, (start, end)) in enumerate(zip(tokens, offsets)):
        if start == end:
            continue
        piece = _MARKERS.sub("", token).strip()
        plain = piece.isascii() and piece.isalnum()
        if not (plain or byte_level):
            continue
        text = texts[1] if segments is not None and segments[number] == 1 and texts[1] is not None else texts[0]
        span = text[start:end].strip()
        if span == piece or span.lower() == piece.lower() or _fold(span)[0] == piece.lower():
            continue
        if byte_level and (_agrees_as_bytes(token, text[start:end]) or (not plain and _SPECIAL.match(token))):
            continue
        shown = span if len(span) <= 30 else span[:27] + "..."
        raise BadInput(
            f"{where}: token {number} {token[:30]!r} is not the text at its offsets [{start}, {end}) ({shown!r}): "
            "'tokens' and 'offsets' disagree"
        )
