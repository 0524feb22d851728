"""Ranking tokens by score and removing or masking the top of the ranking.

Shared by the refinement step (docs/spec.md §4) and the evaluation (docs/spec.md §5) so the
two perturb inputs the same way. Special tokens are never perturbed; ties are
broken by position (stable sort), so runs are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MORF = "morf"
LERF = "lerf"
DELETE = "delete"
MASK = "mask"


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
    """``ids`` with ``positions`` removed (the sequence gets shorter) or replaced by ``mask_id``."""
    chosen = set(int(p) for p in positions)
    if mode == DELETE:
        return tuple(token for i, token in enumerate(ids) if i not in chosen)
    if mask_id is None:
        raise ValueError("masking needs a mask (or pad) token id")
    return tuple(mask_id if i in chosen else token for i, token in enumerate(ids))


def mask_id_of(tokenizer, pad_id: int) -> int:
    """The tokenizer's mask token, or else the pad token the classifier pads with (docs/spec.md §5;
    for GPT-2 and Llama, which have neither, that is EOS)."""
    mask = tokenizer.mask_token_id
    return int(mask) if mask is not None else int(pad_id)
