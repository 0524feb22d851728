"""Tokenized inputs, padding, and batched probabilities of token sequences.

Every model call in the package goes through :func:`pad` so that padding is
done one way: right padding with the attention mask at 0, which leaves the
real tokens' positions (and so their values) unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..errors import BadInput, NonFiniteOutput


@dataclass(frozen=True)
class TokenizedText:
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    special: tuple[bool, ...]
    dropped: int = 0  # tokens cut off the end to fit the length limit
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
        added = int(tokenizer.num_special_tokens_to_add(pair=True))
        if max_length < added + 2:  # the tokenizer would not cut at all, and say so only in its log
            raise BadInput(
                f"`max_length` {max_length} is too short for a sentence pair: the tokenizer adds {added} special "
                f"token(s), and each text needs one (at least {added + 2})"
            )
    encoded = tokenizer(
        list(texts),
        second,
        truncation=True,
        max_length=max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
        return_token_type_ids=second is not None,
    )
    # Only a text that fills the limit can have been cut: count its full length.
    full = [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) >= max_length]
    dropped = dict.fromkeys(range(len(texts)), 0)
    if full:
        untruncated = tokenizer(
            [texts[i] for i in full], None if second is None else [second[i] for i in full],
            truncation=False, verbose=False,
        )["input_ids"]
        for index, ids in zip(full, untruncated):
            dropped[index] = max(0, len(ids) - len(encoded["input_ids"][index]))
    special_ids = set(getattr(tokenizer, "all_special_ids", ()))
    result = []
    for index, (ids, offsets, special) in enumerate(
        zip(encoded["input_ids"], encoded["offset_mapping"], encoded["special_tokens_mask"])
    ):
        if not ids and empty_input:
            ids, offsets, special = list(empty_input), [(0, 0)] * len(empty_input), [True] * len(empty_input)
        special = [bool(flag) or int(token) in special_ids for flag, token in zip(special, ids)]
        segments = types = None
        if second is not None and len(ids) != len(encoded["input_ids"][index]):  # empty_input
            segments, types = (None,) * len(ids), (0,) * len(ids)
        elif second is not None:
            segments = tuple(encoded.sequence_ids(index))
            types = tuple(int(t) for t in encoded["token_type_ids"][index])
        result.append(
            TokenizedText(
                ids=tuple(int(i) for i in ids),
                tokens=tuple(tokenizer.convert_ids_to_tokens(list(ids))),
                offsets=tuple((int(a), int(b)) for a, b in offsets),
                special=tuple(bool(s) for s in special),
                dropped=dropped[index],
                segments=segments,
                types=types,
            )
        )
    return result


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
