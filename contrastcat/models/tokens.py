"""Tokenized inputs, padding, and batched probabilities of token sequences.

Every model call in the package goes through :func:`pad` so that padding is
done one way: right padding with the attention mask at 0, which leaves the
real tokens' positions (and so their values) unchanged.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple
from operator import itemgetter

import numpy as np
import torch

from ..errors import BadInput, NonFiniteOutput


@dataclass(frozen=True)
class TokenizedText:
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    special: tuple[bool, ...]
    dropped: int = 0  # tokens cut to fit the length limit (off the end, or the start: ``truncation_side``)
    # A sentence pair: per token, 0 (first text), 1 (second) or None (a token the tokenizer
    # added); ``offsets`` are then into the token's own text. None for a single text.
    segments: tuple[int | None, ...] | None = None
    types: tuple[int, ...] | None = None  # a pair's token type ids as the tokenizer gives them

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0


def tokenize(
    tokenizer,
    texts: Sequence[str],
    max_length: int,
    empty_input: Sequence[int] = (),
    pairs: Sequence[str] | None = None,
) -> list[TokenizedText]:
    """Tokens, character offsets and special-token flags, cut to ``max_length``;
    each result says how many tokens the cut dropped.

    With ``pairs`` (the second text of each input), each input is a sentence pair as the
    tokenizer joins them, separators and all; a pair too long is cut from its longer
    text first (the tokenizer's ``longest_first``), and each token says its segment.

    Special tokens are those the tokenizer adds and any token whose id is one
    of its special ids ([UNK], a literal [SEP] or <|endoftext|> in the text):
    the deletion test and ``evaluate`` never remove them. A text that gives no
    token at all (GPT-2 adds none) becomes ``empty_input``, flagged special.
    """
    if not texts:
        return []  # tokenizers fail on an empty batch
    second = None if pairs is None else list(pairs)
    if second is not None:
        _check_pair_length(tokenizer, max_length)
    reading = _Reading.of(tokenizer, list(texts), second, max_length)
    encoded = tokenizer(
        reading.firsts,
        reading.seconds,
        truncation=True,
        max_length=max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        return_token_type_ids=second is not None,
    )
    dropped = reading.dropped(encoded["input_ids"])
    special_ids = set(getattr(tokenizer, "all_special_ids", ()))
    return [
        _tokenized(reading, encoded, index, dropped[index], empty_input, special_ids) for index in range(len(texts))
    ]


def _check_pair_length(tokenizer, max_length: int) -> None:
    added = int(tokenizer.num_special_tokens_to_add(pair=True))
    if max_length < added + 2:  # the tokenizer would not cut at all, and say so only in its log
        raise BadInput(
            f"a length limit of {max_length} tokens is too short for a sentence pair: the tokenizer adds {added} special "
            f"token(s), and each text needs one (at least {added + 2})"
        )


def _tokenized(
    reading: _Reading, encoded, index: int, dropped: int, empty_input: Sequence[int], special_ids: set[int]
) -> TokenizedText:
    """Input ``index`` of the tokenizer's ``encoded`` batch (``dropped`` tokens cut off), its
    offsets into the whole texts."""
    ids, offsets, special = (encoded[key][index] for key in ("input_ids", "offset_mapping", "special_tokens_mask"))
    replaced = not ids and bool(empty_input)
    if replaced:
        ids, offsets, special = list(empty_input), [(0, 0)] * len(empty_input), [True] * len(empty_input)
    paired = reading.second is not None and not replaced
    if reading.left:  # where a suffix was read, its offsets begin at its start in the whole text
        starts = reading.suffix_starts(index)
        sides = encoded.sequence_ids(index) if paired else [0] * len(ids)
        offsets = [o if flag or side is None else (o[0] + starts[side], o[1] + starts[side])
                   for o, flag, side in zip(offsets, special, sides)]
    special = [bool(flag) or int(token) in special_ids for flag, token in zip(special, ids)]
    segments = types = None
    if reading.second is not None and replaced:
        segments, types = (None,) * len(ids), (0,) * len(ids)
    elif paired:
        segments = tuple(encoded.sequence_ids(index))
        types = tuple(int(t) for t in encoded["token_type_ids"][index])
    return TokenizedText(
        ids=tuple(int(i) for i in ids),
        tokens=tuple(reading.tokenizer.convert_ids_to_tokens(list(ids))),
        offsets=tuple((int(a), int(b)) for a, b in offsets),
        special=tuple(bool(s) for s in special),
        dropped=dropped,
        segments=segments,
        types=types,
    )


# Texts up to this many characters (or 64 per token the model reads, if more) are tokenised
# whole, as the tokenizer alone would; longer ones by prefix and pieces (``_prefix``, ``_count``).
LONG_TEXT = 100_000
# Pieces the tokens past a long text's cut are counted in: bounded memory per piece. Read when
# called (a test may set it smaller), and grown where no cut in a piece is safe (``_spans``).
COUNT_PIECE = 200_000
# A cut between pieces is taken only where the tokenizer, read from two places SYNC characters
# or more apart, gives the same tokens for SYNC characters after it (``_spans``).
SYNC = 1_000
# A prefix ends at a cut that leaves the tokens before it as they are (``_spans``), and is used
# only if it gives this many tokens more than the model keeps: the tokens kept are far from it.
PREFIX_MARGIN = 64


def _long(text: str, max_length: int, pair: bool = False) -> bool:
    return len(text) > (_pair_step(max_length) if pair else max(LONG_TEXT, 64 * max_length))


# A pair is cut by the tokenizer whole while the product of its texts' lengths in characters is
# at most this many times ``max_length`` (its cost grows with that product; see ``_pair_step``).
PAIR_WHOLE = 1_000


def _heavy(first: str, second: str, max_length: int) -> bool:
    """A pair whose texts the tokenizer would cut at a cost of more than tens of MB: read by prefix."""
    return len(first) * len(second) > PAIR_WHOLE * max_length


def _pair_step(max_length: int) -> int:
    """A pair's texts are read by prefix once longer, in characters, than the tokens it needs,
    in pieces as small: the tokenizer cuts a pair (``longest_first``) in memory that grows with
    the product of its texts' token counts over ``max_length`` (two texts of 40,000 characters
    took 4 GB; of 4,000 CJK characters at 16 tokens, 5.6 GB), where a single text's cut grows
    only with its length. A character is at most a few tokens (an emoji, four bytes), so the
    texts the tokenizer cuts as a pair hold a few times ``max_length`` tokens at most."""
    return max_length + PREFIX_MARGIN


def _prefix(tokenizer, text: str, *, max_length: int, at_least: int = 0, pair: bool = False) -> str:
    """``text``, or a prefix of it that tokenises into the same first ``max_length`` tokens: read
    piece by piece (``_spans``, each cut leaving the tokens before it as the whole text has them)
    until ``PREFIX_MARGIN`` tokens more than that, and ``at_least``, are seen (a text of few,
    long tokens may need all of it)."""
    if not _long(text, max_length, pair):
        return text
    seen = 0
    # A few times what the model reads: the prefix grows by little (a pair's, by less).
    step = _pair_step(max_length) if pair else 16 * max_length + 4096
    try:
        for _, end, tokens in _spans(tokenizer, text, first=step, rest=step, clean=True):
            seen += tokens
            if seen >= max(max_length + PREFIX_MARGIN, at_least):
                return text[:end]
    except _Unsynced:
        pass
    return text


def _suffix(tokenizer, text: str, *, max_length: int, at_least: int = 0, pair: bool = False) -> str:
    """``text``, or a suffix of it that tokenises into the same last tokens, as many as
    ``_prefix`` reads from the front: for a tokenizer that cuts on the left. The suffix doubles
    from a piece's length until it begins where its tokens are the whole text's (``_clean_start``)
    and holds enough of them."""
    if not _long(text, max_length, pair):
        return text
    step = _pair_step(max_length) if pair else 16 * max_length + 4096
    needed = max(max_length + PREFIX_MARGIN, at_least)
    size = step
    while size < len(text):
        at = _clean_start(tokenizer, text, len(text) - size)
        if at is not None and _tokens_in(tokenizer, text[at:]) >= needed:
            return text[at:]
        size += max(size // 2, step)  # geometric, so the text is read a few times at most
    return text


def _clean_start(tokenizer, text: str, around: int, tries: int = 16) -> int | None:
    """A place at or before ``around`` where the text read from there gives the tokens the
    whole text has after it: the tokens of a window read from ``2 * SYNC`` characters before
    and of one read from the place itself are the same, ids and offsets, for ``SYNC``
    characters (the two readings have met, as in ``_spans``). Token starts are tried from
    ``around`` back, before white space first; None if none is safe."""
    low = max(0, around - 2 * SYNC)  # near the start, the window read from 0 is the whole text's own
    ids, offsets = _encode(tokenizer, text, low, min(len(text), around + 2 * SYNC))
    met = SYNC if low else 0  # read from SYNC characters before, at least (or from the text's start)
    starts, index = [], bisect_right(offsets, around - low, key=itemgetter(0)) - 1
    while index > 0 and offsets[index][0] >= met:
        if offsets[index - 1][1] <= offsets[index][0]:
            starts.append(offsets[index][0] + low)
        index -= 1
    starts = [at for at in starts if text[at].isspace()][:tries] + [at for at in starts if not text[at].isspace()][:tries]
    for at in starts:
        whole = _within(ids, offsets, low, at + _LEAD, at + SYNC)
        alone, alone_offsets = _encode(tokenizer, text, at, min(len(text), at + 2 * SYNC))
        if whole and _within(alone, alone_offsets, at, at + _LEAD, at + SYNC) == whole:
            return at
    return None


# A text read from a place may begin with tokens the whole text has not there (SentencePiece
# puts its word marker before a text's first word): compared from this many characters on. The
# tokens before are the suffix's first, which the cut on the left drops (``PREFIX_MARGIN`` more
# than it keeps are read, and a few characters are a few tokens).
_LEAD = 8


@dataclass
class _Reading:
    """A batch's texts as the tokenizer is given them: each text, or a prefix of it (a suffix,
    for a tokenizer that cuts on the left) that gives the tokens the model keeps (``_prefix``).
    ``counted``: the whole token count of each pair counted already (both texts, no special
    tokens), for :meth:`dropped`."""

    tokenizer: Any
    max_length: int
    texts: list[str]
    second: list[str] | None
    heavy: list[bool]  # a pair read by prefix (``_heavy``)
    left: bool
    firsts: list[str]
    seconds: list[str] | None
    counted: dict[int, int]

    @classmethod
    def of(cls, tokenizer, texts: list[str], second: list[str] | None, max_length: int) -> _Reading:
        # A text far longer than the model reads is cut to a prefix that still gives more tokens
        # than it keeps, so the tokenizer never materialises the whole of it (about 300 bytes of
        # Python objects per character); the tokens dropped are then counted piece by piece.
        # A tokenizer that truncates on the left keeps a text's last tokens: a suffix stands for
        # the text instead, and its tokens' offsets are moved back to where they are in the whole text.
        left = getattr(tokenizer, "truncation_side", "right") == "left"
        heavy = [False] * len(texts) if second is None else [_heavy(a, b, max_length) for a, b in zip(texts, second)]
        reading = cls(tokenizer, max_length, texts, second, heavy, left, [], None, {})
        reading.firsts = [reading.read(text, pair=h) for text, h in zip(texts, heavy)]
        if second is not None:
            reading.seconds = [reading.read(text, pair=h) for text, h in zip(second, heavy)]
            reading._keep_the_longer()
        return reading

    def read(self, text: str, at_least: int = 0, pair: bool = False) -> str:
        read = _suffix if self.left else _prefix
        return read(self.tokenizer, text, max_length=self.max_length, at_least=at_least, pair=pair)

    def suffix_starts(self, index: int) -> tuple[int, int]:
        """Where the suffixes read of input ``index`` begin in its whole texts."""
        return (len(self.texts[index]) - len(self.firsts[index]),
                0 if self.second is None else len(self.second[index]) - len(self.seconds[index]))

    def _keep_the_longer(self) -> None:
        """A pair too long is cut from its longer text first, and where the two end equal the
        longer keeps the odd token: so which text is longer must be the same for the prefixes
        the tokenizer sees as for the whole texts. Where it is not, the prefix of the text that
        is longer in full is read further (in place)."""
        tokenizer, texts, second = self.tokenizer, self.texts, self.second
        for index, (first, other) in enumerate(zip(self.firsts, self.seconds)):
            if first is texts[index] and other is second[index]:
                continue
            whole = (_count(tokenizer, texts[index]), _count(tokenizer, second[index]))
            self.counted[index] = sum(whole)
            seen = (whole[0] if first is texts[index] else _count(tokenizer, first),
                    whole[1] if other is second[index] else _count(tokenizer, other))
            if whole[0] > whole[1] and seen[0] <= seen[1]:
                self.firsts[index] = self.read(texts[index], at_least=seen[1] + 1, pair=self.heavy[index])
            elif whole[0] <= whole[1] and seen[0] > seen[1]:
                self.seconds[index] = self.read(second[index], at_least=seen[0], pair=self.heavy[index])

    def dropped(self, kept_ids) -> list[int]:
        """How many tokens the cut to ``max_length`` dropped from each input. Only an input
        that fills the limit can have been cut: its whole length is counted (in pieces if it is
        long)."""
        tokenizer, texts, second, max_length = self.tokenizer, self.texts, self.second, self.max_length
        dropped = [0] * len(texts)
        full = [i for i, ids in enumerate(kept_ids) if len(ids) >= max_length]
        short = [i for i in full if not _long(texts[i], max_length, self.heavy[i])
                 and (second is None or not _long(second[i], max_length, self.heavy[i]))]
        if short:
            untruncated = tokenizer(
                [texts[i] for i in short], None if second is None else [second[i] for i in short],
                truncation=False, verbose=False,
            )["input_ids"]
            for index, ids in zip(short, untruncated):
                dropped[index] = max(0, len(ids) - len(kept_ids[index]))
        added = int(tokenizer.num_special_tokens_to_add(pair=second is not None))
        for index in sorted(set(full) - set(short)):
            whole = self.counted.get(index)
            if whole is None:
                whole = _count(tokenizer, texts[index]) + (0 if second is None else _count(tokenizer, second[index]))
            dropped[index] = max(0, whole + added - len(kept_ids[index]))
        return dropped


class _Unsynced(Exception):
    """A piece did not begin with the tokens its cut was taken for (``_spans``): the caller
    reads the text whole instead."""


def _spans(
    tokenizer, text: str, first: int | None = None, rest: int | None = None, clean: bool = False
) -> Iterator[tuple[int, int, int]]:
    """``text`` as consecutive pieces (start, end, tokens) of about ``first``, then ``rest``,
    characters (``COUNT_PIECE``, read when called, where not given), each with the number of
    the whole text's tokens (no special tokens) it holds: they sum to what the tokenizer gives
    the whole text, and no more than a piece is tokenised at once.

    A piece is tokenised from ``SYNC`` characters before its start to ``3 * SYNC`` past its
    nominal end, and cut in its second half between two of its tokens, before white space (any
    kind) where it can be. The cut is taken only where the tokens read as the next piece reads
    them, from ``SYNC`` characters before it, are the piece's own, ids and offsets, for ``SYNC``
    characters after it: two readings begun apart have met, and the next piece goes on with the
    whole text's tokens. That holds for any tokenizer whose tokens at a place depend on less than
    ``SYNC`` characters around it, however it splits words (at any white space, at none, with a
    space marker before each text): a cut inside a word whose tokens it changes, or that adds a
    marker, is refused. With ``clean``, the tokens before the cut, read up to it, must be the
    piece's own as well (a prefix ending there gives the whole text's tokens). A piece with no
    safe cut grows (doubles), up to the whole text, rather than be cut where a count could be
    wrong. Should a piece not begin with the tokens its cut was taken for, ``_Unsynced``."""
    size = max(2, COUNT_PIECE if first is None else first)
    step = max(2, COUNT_PIECE if rest is None else rest)
    start, expected = 0, ()
    while start < len(text):
        low = max(0, start - SYNC)
        while True:
            high = min(len(text), start + size + 3 * SYNC)
            ids = offsets = None  # one piece held at a time
            ids, offsets = _encode(tokenizer, text, low, high)
            begin = _boundary(offsets, low, start)
            if begin is None or (start and _within(ids, offsets, low, start, start + SYNC) != expected):
                raise _Unsynced(f"the tokens after character {start} changed with what precedes them")
            if high == len(text):
                # Counting takes the rest whole; a prefix (``clean``) is still cut where it can be,
                # so a text a little longer than a piece is not handed back whole.
                cut = None
                if clean and len(text) - start > size:
                    cut = _cut(tokenizer, text, _Piece(ids, offsets, low), (start + size // 2, start + size), clean)
                if cut is None:
                    yield start, high, len(ids) - begin
                    return
                break
            cut = _cut(tokenizer, text, _Piece(ids, offsets, low), (start + size // 2, start + size), clean)
            if cut is not None:
                break
            size *= 2  # no safe cut: a larger piece, rather than a count that may be wrong
        end, index, expected = cut
        yield start, end, index - begin
        start, size = end, step


def _encode(tokenizer, text: str, low: int, high: int) -> tuple[list[int], _Offsets]:
    """Ids and offsets (into ``text[low:high]``) of ``text[low:high]``, no special tokens."""
    encoded = tokenizer(
        text[low:high], add_special_tokens=False, return_attention_mask=False, return_token_type_ids=False,
        verbose=False,
    )
    return encoded["input_ids"], _Offsets(encoded)


class _Offsets(Sequence):
    """A fast tokenizer's offsets, read one token at a time: only those near a piece's ends are
    read, and a list of them all would cost more than the ids (a tuple per token)."""

    def __init__(self, encoded) -> None:
        self._length = len(encoded["input_ids"])
        # The tokenizers library's own encoding where there is one: read through transformers'
        # wrapper, each offset cost several times as much (long texts read millions of them).
        encodings = getattr(encoded, "encodings", None)
        self._span = encodings[0].token_to_chars if encodings else encoded.token_to_chars

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> tuple[int, int]:
        if not 0 <= index < self._length:
            raise IndexError(index)
        return tuple(self._span(index))


def _boundary(offsets, low: int, at: int) -> int | None:
    """The index of the first token that begins at or after ``at`` (in the whole text; the
    offsets are from ``low``), if the token before it ends by ``at``; None if one spans it."""
    index = bisect_left(offsets, at - low, key=itemgetter(0))
    if index and offsets[index - 1][1] > at - low:
        return None
    return index


def _within(ids, offsets, low: int, begin: int, end: int) -> tuple[tuple[int, int, int], ...]:
    """Id, start and end (in the whole text) of the tokens that begin from ``begin`` to before ``end``."""
    first = bisect_left(offsets, begin - low, key=itemgetter(0))
    stop = bisect_left(offsets, end - low, lo=first, key=itemgetter(0))
    spans = map(offsets.__getitem__, range(first, stop))  # each read once
    return tuple((ids[i], start + low, end + low) for i, (start, end) in zip(range(first, stop), spans))


class _Piece(NamedTuple):
    """A piece of a text as read: its tokens' ids and offsets, which are from ``low``."""

    ids: list[int]
    offsets: _Offsets
    low: int


# A cut is tried at this many places before white space, and as many others, among the tokens
# of the last this many that begin in its window (``_cut``).
CUT_TRIES = 8
CUT_SCAN = 4096


def _cut(tokenizer, text: str, piece: _Piece, window: tuple[int, int], clean: bool) -> tuple[int, int, tuple] | None:
    """A safe cut in ``window`` (first, last: see ``_spans``) among a piece's tokens, tried from
    its last place back: before white space first, then anywhere between two tokens. Returns
    the cut, the index of the first token after it, and the tokens the next piece must begin
    with; None if no cut tried is safe."""
    ids, offsets, low = piece
    (first, last), tries, scan = window, CUT_TRIES, CUT_SCAN
    spaced, other = [], []
    final = bisect_right(offsets, last - low, key=itemgetter(0)) - 1  # the last token to begin by `last`
    for token in range(final, max(0, final - scan), -1):
        before, begin = offsets[token - 1][1] + low, offsets[token][0] + low
        if begin < first or len(spaced) >= tries:
            break
        at = max(before, first)  # where the gap between two tokens begins
        if at <= min(begin, last):
            (spaced if text[at].isspace() else other).append(at)
    for at in spaced + other[:tries]:
        index = _boundary(offsets, low, at)
        expected = () if index is None else _within(ids, offsets, low, at, at + SYNC)
        if not expected:
            continue
        after = max(0, at - SYNC)  # where the next piece is read from
        near, near_offsets = _encode(tokenizer, text, after, at + 2 * SYNC)
        if _boundary(near_offsets, after, at) is None or _within(near, near_offsets, after, at, at + SYNC) != expected:
            continue
        if clean:  # the tokens before the cut, read up to it, are the piece's own
            before = max(0, at - 2 * SYNC)
            near, near_offsets = _encode(tokenizer, text, before, at)
            if _within(near, near_offsets, before, at - SYNC, at) != _within(ids, offsets, low, at - SYNC, at):
                continue
        return at, index, expected
    return None


def _tokens_in(tokenizer, piece: str) -> int:
    return len(tokenizer(piece, add_special_tokens=False, verbose=False)["input_ids"])


def _count(tokenizer, text: str) -> int:
    """The tokens ``text`` gives without special tokens, counted piece by piece (``_spans``) so
    no more than a piece is ever held."""
    try:
        return sum(tokens for _, _, tokens in _spans(tokenizer, text))
    except _Unsynced:
        return _tokens_in(tokenizer, text)


def pad(
    sequences: Sequence[Sequence[int]], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad to the longest sequence: (input_ids, attention_mask), both [B, T]."""
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.as_tensor(list(sequence), dtype=torch.long)
        mask[row, : len(sequence)] = 1
    return ids.to(device), mask.to(device)


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length, so little compute goes to padding."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def check_finite(logits: torch.Tensor, rows: Sequence[int]) -> None:
    """NaN or infinite logits would turn every score into NaN downstream: stop here."""
    bad = ~torch.isfinite(logits).all(dim=-1)
    if bool(bad.any()):
        positions = [int(rows[i]) for i in torch.nonzero(bad).flatten().tolist()]
        raise NonFiniteOutput(
            f"the model's logits are not finite (NaN or infinite) for {len(positions)} input(s); "
            "its weights or its numeric precision are broken",
            positions,
        )


ProbabilityFn = Callable[[Sequence[Sequence[int]]], np.ndarray]


def probabilities(logits: torch.Tensor, multi_label: bool) -> torch.Tensor:
    """What a classifier's logits [B, C] mean: one softmax over the classes, or (multi-label) a
    sigmoid per label, in float64 (a sigmoid near 1 keeps the digits its complement needs)."""
    return torch.sigmoid(logits.double()) if multi_label else torch.softmax(logits.double(), dim=-1)
