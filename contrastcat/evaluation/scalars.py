"""Faithfulness metrics with one value per input, none of which any method here selects its maps by
(docs/spec.md §5.3):

- ERASER comprehensiveness and sufficiency (DeYoung et al., 2020): the target's probability drop
  when the top k % of the tokens are removed, and when only they are kept, averaged over
  k in {1, 5, 10, 20, 50};
- leave-one-out agreement: Kendall τ-b between a map and the drop of removing each token alone
  (ferret's ``taucorr_loo``).

All three perturb as the evaluation's ``perturb`` says (delete, or replace by a mask, pad or unk
token); special tokens are never perturbed and are not counted in k.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import arguments
from ..deletion.names import MORF
from ..deletion.perturb import perturb, ranked_positions
from ..deletion.plan import DeletionPlan
from ..errors import BadInput
from .kendall import kendall_tau_b
from .metrics import ERASER_BINS, ERASER_COMP, ERASER_SUFF, LOO_TAU, PLAUSIBILITY_KEYS

SCALAR_KEYS = (ERASER_COMP, ERASER_SUFF, LOO_TAU, *PLAUSIBILITY_KEYS)


def eraser_counts(nonspecial: int, bins: Sequence[int] = ERASER_BINS) -> list[int]:
    """Tokens in the top k % of ``nonspecial`` per bin, floored as ERASER's and ferret's code do
    (``int(k/100 * n)``; in integers here, which gives the same counts for these bins), bins of no
    token left out: removing nothing is no evidence, and ferret skips them too."""
    return [count for count in ((k * nonspecial) // 100 for k in bins) if count > 0]


def _mean_drop(base: float, probs: np.ndarray) -> float:
    return float(np.mean(base - probs)) if len(probs) else float("nan")


class EraserRows:
    """The perturbed inputs of comprehensiveness and sufficiency for one chunk of records, in a
    shared :class:`DeletionPlan` (an input removing the same tokens as a curve's step runs once)."""

    def __init__(self, plan: DeletionPlan, mode: str, replacement: int | None) -> None:
        self.plan, self.mode, self.replacement = plan, mode, replacement
        self._rows: list[tuple[list[int], list[int]]] = []  # per record: comprehensiveness rows, sufficiency rows

    def add(self, ids: Sequence[int], scores: Sequence[float], special: Sequence[bool]) -> None:
        ranking = ranked_positions(scores, special, MORF)  # ties: the earlier position first
        counts = eraser_counts(len(ranking))
        removed = self.plan.steps(ids, ranking, counts, self.mode, self.replacement)
        # Sufficiency keeps the top k and perturbs every other non-special token; order is kept.
        kept = [self.plan.add(perturb(ids, ranking[count:], self.mode, self.replacement)) for count in counts]
        self._rows.append((removed, kept))

    def values(self, probs: np.ndarray, base: np.ndarray, targets: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Per record: comprehensiveness = mean(p − p(without the top k)), sufficiency =
        mean(p − p(only the top k)); NaN for a record with no bin (a single non-special token)."""
        comp, suff = [], []
        for (removed, kept), p, target in zip(self._rows, base, targets):
            comp.append(_mean_drop(p, probs[removed, target]))
            suff.append(_mean_drop(p, probs[kept, target]))
        return np.array(comp, dtype=np.float64), np.array(suff, dtype=np.float64)


class LeaveOneOut:
    """Each non-special token's drop when it alone is perturbed, per input. Inputs repeat across
    methods (every method explains the same texts), so the drops are kept by input and target and
    each input's single-token perturbations are predicted once per evaluation."""

    def __init__(
        self, mode: str, replacement: int | None, model_fingerprint: str | None = None, dtype: str | None = None
    ) -> None:
        self.mode, self.replacement = mode, replacement
        # The drops are the model's, in one precision: kept across evaluations, they must not meet another.
        self.model_fingerprint, self.dtype = model_fingerprint, dtype
        self._drops: dict[tuple[str, int], np.ndarray] = {}

    @property
    def empty(self) -> bool:
        return not self._drops

    def add(self, plan: DeletionPlan, key: str, target: int, ids: Sequence[int], special: Sequence[bool]) -> list[int] | None:
        """The plan's rows of this input's perturbations, or None when its drops are known."""
        known = self._drops.get((key, target))
        if known is not None:
            if len(known) != len(special) - sum(map(bool, special)):  # drops given (from_state) for another input
                raise BadInput(
                    f"leave-one-out drops of input {key!r}: {len(known)} given, but it has "
                    f"{len(special) - sum(map(bool, special))} tokens to perturb; they belong to another input"
                )
            return None
        return [plan.add(perturb(ids, [i], self.mode, self.replacement)) for i, flag in enumerate(special) if not flag]

    def state(self) -> dict:
        """The drops and what they were made with, as JSON values (to keep them between runs)."""
        return {
            "mode": self.mode, "replacement": self.replacement, "model_fingerprint": self.model_fingerprint,
            "dtype": self.dtype, "drops": [[key, target, values.tolist()] for (key, target), values in self._drops.items()],
        }

    @classmethod
    def from_state(cls, state: dict) -> LeaveOneOut:
        """The inverse of :meth:`state`, checked: a malformed state is refused in one line, and an
        evaluation refuses the drops if they were made with another model, precision, perturbation
        or replacement token, or if an input's drops are not one per perturbable token."""
        keys = ("mode", "replacement", "model_fingerprint", "dtype", "drops")
        if not isinstance(state, dict) or set(state) != set(keys):
            raise BadInput(f"leave-one-out state: must be a mapping of exactly {', '.join(keys)}")
        mode, replacement, fingerprint, dtype = (state[key] for key in keys[:4])
        if not isinstance(mode, str) or not all(v is None or isinstance(v, str) for v in (fingerprint, dtype)):
            raise BadInput("leave-one-out state: mode must be text, model_fingerprint and dtype text or null")
        if replacement is not None and not arguments.plain_int(replacement):
            raise BadInput(f"leave-one-out state: replacement must be a token id or null, got {arguments.shown(replacement)}")
        loo = cls(mode, replacement, fingerprint, dtype)
        if not isinstance(state["drops"], list):
            raise BadInput("leave-one-out state: drops must be a list of [input key, target, drops]")
        for n, entry in enumerate(state["drops"]):
            if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                    and arguments.plain_int(entry[1]) and isinstance(entry[2], list)
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in entry[2])):
                raise BadInput(f"leave-one-out state: drops entry {n} must be [input key, target class, [numbers]]")
            values = np.asarray(entry[2], dtype=np.float64)
            if not np.all(np.isfinite(values)):
                raise BadInput(f"leave-one-out state: drops entry {n} holds NaN or infinite values")
            if (entry[0], entry[1]) in loo._drops:
                raise BadInput(f"leave-one-out state: drops entry {n} repeats input {entry[0]!r}, target {entry[1]}")
            loo._drops[(entry[0], entry[1])] = values
        return loo

    def drops(self, key: str, target: int, rows: list[int] | None, probs: np.ndarray, base: float) -> np.ndarray:
        if rows is not None:
            self._drops.setdefault((key, target), base - probs[rows, target])
        return self._drops[(key, target)]


# Drops closer than this are tied. A float32 forward pass gives a probability to about 1e-7, and
# the same sequence in another batch (other padding, other kernels) differs by about that much:
# most tokens of a text barely move the prediction, and without this their order would be noise
# and the τ would change with the batch size.
LOO_TIE = 1e-6


def loo_tau(scores: Sequence[float], special: Sequence[bool], drops: np.ndarray) -> float:
    """Kendall τ-b between the map's scores of the non-special tokens and their leave-one-out drops,
    drops within :data:`LOO_TIE` tied (NaN when either side is constant: τ is undefined, and the
    input is left out of the mean)."""
    values = np.asarray(scores, dtype=np.float64)[~np.asarray(special, dtype=bool)]
    if len(values) < 2:
        return float("nan")
    return kendall_tau_b(values, drops, LOO_TIE)
