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

from .errors import NonFiniteOutput


@dataclass(frozen=True)
class TokenizedText:
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    offsets: tuple[tuple[int, int], ...]
    special: tuple[bool, ...]
    dropped: int = 0  # tokens cut off the end to fit the length limit

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0


def tokenize(tokenizer, texts: Sequence[str], max_length: int) -> list[TokenizedText]:
    """Tokens, character offsets and special-token flags, cut to ``max_length``;
    each result says how many tokens the cut dropped."""
    if not texts:
        return []  # tokenizers fail on an empty batch
    encoded = tokenizer(
        list(texts),
        truncation=True,
        max_length=max_length,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    # Only a text that fills the limit can have been cut: count its full length.
    full = [i for i, ids in enumerate(encoded["input_ids"]) if len(ids) >= max_length]
    dropped = dict.fromkeys(range(len(texts)), 0)
    if full:
        untruncated = tokenizer([texts[i] for i in full], truncation=False, verbose=False)["input_ids"]
        for index, ids in zip(full, untruncated):
            dropped[index] = max(0, len(ids) - len(encoded["input_ids"][index]))
    result = []
    for index, (ids, offsets, special) in enumerate(
        zip(encoded["input_ids"], encoded["offset_mapping"], encoded["special_tokens_mask"])
    ):
        result.append(
            TokenizedText(
                ids=tuple(int(i) for i in ids),
                tokens=tuple(tokenizer.convert_ids_to_tokens(list(ids))),
                offsets=tuple((int(a), int(b)) for a, b in offsets),
                special=tuple(bool(s) for s in special),
                dropped=dropped[index],
            )
        )
    return result


def pad_id_of(tokenizer) -> int:
    pad = tokenizer.pad_token_id
    return int(pad) if pad is not None else 0


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


def make_predictor(model: torch.nn.Module, pad_id: int, device: torch.device, batch_size: int) -> ProbabilityFn:
    """Softmax probabilities [N, C] (float64) of N token-id sequences of any lengths."""

    @torch.no_grad()
    def predict(sequences: Sequence[Sequence[int]]) -> np.ndarray:
        if not sequences:
            return np.zeros((0, int(model.config.num_labels)))
        out = np.zeros((len(sequences), int(model.config.num_labels)))
        for batch in length_batches([len(s) for s in sequences], batch_size):
            ids, mask = pad([sequences[i] for i in batch], pad_id, device)
            logits = model(input_ids=ids, attention_mask=mask).logits
            check_finite(logits, [batch[i] for i in range(len(batch))])
            out[batch] = torch.softmax(logits.float(), dim=-1).double().cpu().numpy()
        return out

    return predict
