"""Ranking tokens by score and removing or masking the top of the ranking.

Shared by the refinement step (docs/spec.md §4) and the evaluation (docs/spec.md §5) so the
two perturb inputs the same way. Special tokens are never perturbed; ties are
broken by position (stable sort), so runs are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import BadInput
from .names import DELETE, MASK, MORF, PAD, PERTURBATIONS, UNK


def ranked_positions(scores: Sequence[float], special: Sequence[bool], order: str = MORF) -> np.ndarray:
    """Non-special positions, most relevant first (MoRF) or least relevant first (LeRF)."""
    values = np.asarray(scores, dtype=np.float64)
    keys = -values if order == MORF else values
    ranking = np.argsort(keys, kind="stable")
    flags = np.asarray(special, dtype=bool)
    return ranking[~flags[ranking]]


def perturb(
    ids: Sequence[int],
    positions: Sequence[int],
    mode: str = DELETE,
    mask_id: int | None = None,
) -> tuple[int, ...]:
    """``ids`` with ``positions`` removed (the sequence gets shorter) or, with any other ``mode``,
    replaced by ``mask_id`` (the id of that mode's token: :func:`replacement_id`)."""
    chosen = set(int(p) for p in positions)
    if mode == DELETE:
        return tuple(token for i, token in enumerate(ids) if i not in chosen)
    if mask_id is None:
        raise ValueError("masking needs a mask (or pad) token id")
    return tuple(mask_id if i in chosen else token for i, token in enumerate(ids))


def replacement_id(mode: str, tokenizer, pad_id: int, named: str = "perturbing with") -> int | None:
    """The id that replaces a perturbed token (None: deletion). ``mask`` is the tokenizer's mask
    token, else its pad token (docs/spec.md §5); ``pad`` the id the classifier pads with; ``unk``
    the tokenizer's unknown token (refused for a tokenizer that has none, ``named`` saying what
    asked for it)."""
    if mode == DELETE:
        return None
    if mode == MASK:
        return mask_id_of(tokenizer, pad_id)
    if mode == PAD:
        return int(pad_id)
    if mode == UNK:
        unk = tokenizer.unk_token_id
        if unk is None:
            raise BadInput(f"{named} unk: this model's tokenizer has no unknown token; use delete, mask or pad")
        return int(unk)
    raise BadInput(f"`perturb` must be one of {', '.join(PERTURBATIONS)}, got {mode!r}")


def mask_id_of(tokenizer, pad_id: int) -> int:
    """The tokenizer's mask token, or else the pad token the classifier pads with (docs/spec.md §5;
    for GPT-2 and Llama, which have neither, that is EOS)."""
    mask = tokenizer.mask_token_id
    return int(mask) if mask is not None else int(pad_id)
