"""Plausibility: how well one map finds known evidence (a planted shortcut, a human rationale).

Arrays in, numbers out, one input at a time (as Captum's metrics take tensors, not records): a
map's scores over an input's tokens, which tokens are evidence (a token that overlaps an evidence
span), which are special. Special tokens are left out of both sides: a [CLS] is neither ranked nor
counted as evidence, whatever a span covers. An input with no evidence among its other tokens
has no value (NaN, left out of a mean): every measure here is a share of the evidence.

A token's key is its score (``signed``: evidence against the class ranks last) or the score's
magnitude (``magnitude``: evidence either way ranks first). Which is right depends on the question:
a signed map that gives one word of a planted pair a negative score has found that the model reads
it, but as evidence against the class; ranked by signed score that word counts as missed.

- **precision@k**, k the evidence's size: the share of the k highest keys that are evidence.
  Tokens tied across the k-th place are taken in a uniformly random order, and the *expected*
  share is given (so a constant map scores the evidence's base rate, not 0 or 1 by position).
- **AUPRC**, average precision: Σ over the distinct keys, from the highest, of the recall gained
  there times the precision of every token at or above it (tied tokens enter together, as
  scikit-learn's ``average_precision_score``). ferret and ERASER take the trapezoidal area under
  the precision-recall curve instead, which interpolates linearly between the curve's points
  (Davis & Goadrich 2006 on why that is not the curve): on a map without ties it averages each
  evidence token's rise in precision with the dip before it, so it scores lower (one evidence
  token at rank r: half of 1/r), and across tied keys it can score higher
  (``benchmarks/plausibility_ferret.py`` measures both on real records).
- **token F1** and **token IOU** (ERASER's hard-rationale measures): the tokens whose key is at
  least ``threshold`` of the largest key's magnitude are the map's rationale (none if the largest
  key is not positive); F1 and intersection over union of that set with the evidence. An **IOU
  match** is an IOU of at least 0.5 (ERASER's partial match): over inputs that all have a
  rationale, the share of matches is ERASER's IOU F1. ferret takes the top k tokens instead of a
  threshold (k its option, 5 by default).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .metrics import MAGNITUDE, PLAUSIBILITY_KEYS, SIGNED

RANKINGS = (SIGNED, MAGNITUDE)
THRESHOLD = 0.5  # of the largest key: the hard rationale of token F1 and IOU
IOU_MATCH = 0.5  # ERASER's partial-match threshold


@dataclass(frozen=True)
class Plausibility:
    """One input's measures (NaN: no evidence among its non-special tokens)."""

    precision_at_k: float
    auprc: float
    token_f1: float
    token_iou: float
    iou_match: float  # 1.0 where the IOU reaches IOU_MATCH, else 0.0

    @classmethod
    def undefined(cls) -> Plausibility:
        nan = float("nan")
        return cls(nan, nan, nan, nan, nan)


def plausibility(scores, evidence, special=None, ranking: str = SIGNED, threshold: float = THRESHOLD) -> Plausibility:
    """The measures of one map against one input's evidence (see the module's docstring).
    ``scores``, ``evidence`` and ``special`` run over the same tokens."""
    values, gold, kept = _arrays(scores, evidence, special)
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, got {ranking!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
        raise ValueError(f"threshold must be a number in (0, 1], got {threshold!r}")
    keys = values[kept] if ranking == SIGNED else np.abs(values[kept])
    gold = gold[kept]
    if not gold.any():
        return Plausibility.undefined()
    chosen = _rationale(keys, threshold)
    overlap, union = int((chosen & gold).sum()), int((chosen | gold).sum())
    iou = overlap / union
    return Plausibility(
        precision_at_k=precision_at_k(keys, gold),
        auprc=average_precision(keys, gold),
        token_f1=2 * overlap / (int(chosen.sum()) + int(gold.sum())),
        token_iou=iou,
        iou_match=float(iou >= IOU_MATCH),
    )


def _arrays(scores, evidence, special) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three per-token arrays, checked: one dimension, one length, finite numbers, evidence
    and special given as booleans (or 0 and 1)."""
    try:
        values = np.asarray(scores, dtype=np.float64)
        marks = [np.asarray(flags) for flags in (evidence, special if special is not None else [False] * values.size)]
    except (TypeError, ValueError):
        raise ValueError("scores must be numbers, evidence and special booleans, one per token") from None
    if values.ndim != 1 or any(mark.shape != values.shape for mark in marks):
        raise ValueError("scores, evidence and special must be one value per token, alike in length")
    for name, mark in zip(("evidence", "special"), marks):
        if mark.dtype != bool and not (mark.dtype.kind in "iuf" and np.all((mark == 0) | (mark == 1))):
            raise ValueError(f"{name} must be booleans (or 0 and 1), one per token")
    if not np.all(np.isfinite(values)):
        raise ValueError("scores must be finite")
    return values, marks[0].astype(bool), ~marks[1].astype(bool)


def precision_at_k(keys: np.ndarray, gold: np.ndarray) -> float:
    """The expected share of evidence among the k = |evidence| highest keys, ties in random order."""
    k = int(gold.sum())
    order = np.argsort(-keys, kind="stable")
    sorted_keys, sorted_gold = keys[order], gold[order]
    boundary = sorted_keys[k - 1]  # the key at the k-th place
    above = sorted_keys > boundary
    tied = sorted_keys == boundary
    slots = k - int(above.sum())  # places left to the tied group
    found = float(sorted_gold[above].sum()) + slots * float(sorted_gold[tied].sum()) / int(tied.sum())
    return found / k


def average_precision(keys: np.ndarray, gold: np.ndarray) -> float:
    """Σ over the distinct keys, highest first, of (recall gained) × (precision at that key)."""
    total = int(gold.sum())
    levels, inverse = np.unique(-keys, return_inverse=True)  # ascending -key: highest key first
    at_level = np.bincount(inverse, minlength=len(levels))
    gold_at_level = np.bincount(inverse, weights=gold.astype(np.float64), minlength=len(levels))
    predicted, found = np.cumsum(at_level), np.cumsum(gold_at_level)
    return float(np.sum(gold_at_level / total * found / predicted))


def _rationale(keys: np.ndarray, threshold: float) -> np.ndarray:
    """The tokens whose key is at least ``threshold`` of the largest key (none if it is not positive)."""
    largest = float(keys.max()) if len(keys) else 0.0
    if largest <= 0:
        return np.zeros(len(keys), dtype=bool)
    return keys >= threshold * largest


def plausibility_columns(scores, evidence, special) -> dict[str, np.ndarray]:
    """Per input, every measure under both rankings (``metrics.PLAUSIBILITY_KEYS``): ``scores``,
    ``evidence`` and ``special`` are per input, ``evidence`` None for an input without any (NaN)."""
    found: dict[str, list[float]] = {key: [] for key in PLAUSIBILITY_KEYS}
    for values, gold, flags in zip(scores, evidence, special):
        for ranking in RANKINGS:
            measured = Plausibility.undefined() if gold is None else plausibility(values, gold, flags, ranking)
            for measure, value in _named(measured).items():
                found[f"{measure}_{ranking}"].append(value)
    return {key: np.asarray(values, dtype=np.float64) for key, values in found.items()}


def _named(measured: Plausibility) -> dict[str, float]:
    """The columns' measures: IOU F1 is the share of IOU matches, so each input gives its match."""
    return {"precision_at_k": measured.precision_at_k, "auprc": measured.auprc,
            "token_f1": measured.token_f1, "iou_f1": measured.iou_match}
