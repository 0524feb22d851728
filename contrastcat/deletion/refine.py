"""Refinement by deletion test (docs/spec.md §4).

Each candidate map is scored by how much deleting its top tokens lowers the
target probability; maps scoring below rho are discarded and the rest are
averaged. Beyond the paper (contrastcat-plus): the score may also subtract
the drop when the map's bottom tokens go, and the N best maps may be kept
instead of those above rho. All deletion inputs of a batch run through the model together, and
identical truncated inputs run once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import BadInput
from ..models.tokens import ProbabilityFn
from ..scaling import minmax
from .names import LERF, MEASURES, MORF, SCORE_RULES
from .perturb import ranked_positions
from .plan import DeletionPlan, grid_counts

RHO_RULES = {  # by the names of names.RHO_NAMES (the options check those without numpy)
    "mean+std": lambda s: s.mean() + s.std(),
    "mean": lambda s: s.mean(),
    "mean-std": lambda s: s.mean() - s.std(),
}


@dataclass(frozen=True)
class RefineSettings:
    rho: str = "mean+std"  # threshold rule, see RHO_RULES
    grid: int = 10  # deletion counts round(g * T) for g = linspace(0, 1, grid)[1:]
    score: str = "morf"  # see SCORE_RULES
    keep: int | None = None  # beyond the paper: keep the `keep` best-scoring maps instead of rho's threshold
    # Beyond the paper (to make the test cheaper): the grid's steps the test runs, 1-based
    # among deletion_counts (a short input's grid has fewer; a step past its end is skipped).
    # None: every step, the paper's test.
    steps: tuple[int, ...] | None = None
    measure: str = "probability"  # see MEASURES

    def __post_init__(self) -> None:
        if self.rho not in RHO_RULES:
            raise BadInput(f"`rho` must be one of {', '.join(RHO_RULES)}, got {self.rho!r}")
        if self.score not in SCORE_RULES:
            raise BadInput(f"`score` must be one of {', '.join(SCORE_RULES)}, got {self.score!r}")
        if self.keep is not None and self.keep < 1:
            raise BadInput(f"`keep` must be at least 1, got {self.keep}")
        if self.measure not in MEASURES:
            raise BadInput(f"`test_measure` must be one of {', '.join(MEASURES)}, got {self.measure!r}")
        if self.steps is not None and (not self.steps or any(not 1 <= step < self.grid for step in self.steps)):
            raise BadInput(f"`test_steps` must name steps 1 to {self.grid - 1} of the grid, got {self.steps!r}")


def deletion_counts(length: int, grid: int = 10) -> list[int]:
    """The reference grid's counts (:func:`~contrastcat.deletion.plan.grid_counts`), duplicates
    dropped, order kept: deleting the same tokens twice would only weigh that step twice."""
    return list(dict.fromkeys(grid_counts(length, grid)))


@dataclass(frozen=True)
class RefineItem:
    """One input's candidate maps [K, T] and what the deletion test needs to know."""

    ids: tuple[int, ...]
    special: tuple[bool, ...]
    target: int
    maps: np.ndarray


@dataclass(frozen=True)
class Refined:
    scores: np.ndarray  # [T], min–max scaled
    kept: np.ndarray  # bool [K]
    drop_scores: np.ndarray  # [K]
    raw: np.ndarray  # [T], the mean of the kept maps before the last scaling (a method of one map: its own)


def tested_counts(length: int, grid: int = 10, steps: Sequence[int] | None = None) -> list[int]:
    """The counts the test deletes: every step of the grid, or the chosen ones (1-based) that this
    length's grid has; if it has none of them, its first step (an input too short to hold them
    still gets a test)."""
    counts = deletion_counts(length, grid)
    if steps is None:
        return counts
    chosen = [counts[step - 1] for step in sorted(set(steps)) if step <= len(counts)]
    return chosen or counts[:1]


def log_odds(probs: np.ndarray, target: int, multi_label: bool = False) -> np.ndarray:
    """log p_c - log(1 - p_c) per row, 1 - p_c summed from the other classes (exact where p_c
    rounds to 1); a probability of exactly 0 counts as the smallest positive float. For a
    multi-label classifier the labels are independent sigmoids: 1 - p_c is the label's own
    complement (float64 tells it from 0 up to a logit of about 36)."""
    tiny = np.finfo(np.float64).tiny
    own = probs[:, target]
    others = 1.0 - own if multi_label else np.delete(probs, target, axis=1).sum(axis=1)
    return np.log(np.maximum(own, tiny)) - np.log(np.maximum(others, tiny))


@dataclass(frozen=True)
class _Test:
    """One item's rows in a :class:`DeletionPlan`: its own, and per map, per order, its steps'."""

    own: int
    per_map: list[list[list[int]]]


def _planned(items: Sequence[RefineItem], settings: RefineSettings) -> tuple[DeletionPlan, list[_Test]]:
    """Every sequence the test of ``items`` predicts, each once, and where each item's are."""
    orders = (MORF,) if settings.score == "morf" else (MORF, LERF)
    plan, tests = DeletionPlan(), []
    for item in items:
        own = plan.add(item.ids)
        counts = tested_counts(len(item.ids), settings.grid, settings.steps)
        tests.append(_Test(own, [
            [plan.steps(item.ids, ranked_positions(scores, item.special, order), counts) for order in orders]
            for scores in item.maps
        ]))
    return plan, tests


def _measured(probs: np.ndarray, target: int, settings: RefineSettings, multi_label: bool) -> np.ndarray:
    """What a step's drop is a drop of, per row: the target's probability or its log-odds."""
    return probs[:, target] if settings.measure == "probability" else log_odds(probs, target, multi_label)


def _scores(test: _Test, values: np.ndarray) -> np.ndarray:
    """Per map: the mean drop of ``values`` over its MoRF steps, less that of its LeRF steps."""
    base = values[test.own]
    return np.array([
        sum((1.0 if order == 0 else -1.0) * float(np.mean(base - values[rows])) for order, rows in enumerate(per_order))
        for per_order in test.per_map
    ])


def drop_scores(
    items: Sequence[RefineItem], predict: ProbabilityFn, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> list[np.ndarray]:
    """S(I_R) for every map of every item: mean MoRF drop over the steps (``settings.score``
    ``morf-lerf``: minus the mean LeRF drop over the same steps); ``settings.steps``: only those of
    the grid; ``settings.measure``: the drop of the target's probability or of its log-odds."""
    plan, tests = _planned(items, settings)
    probs = plan.predict(predict)
    return [_scores(test, _measured(probs, item.target, settings, multi_label)) for item, test in zip(items, tests)]


# Maps with the same ranking have exactly the same S (their deletion inputs are
# the same sequences, scored once). When the scores split evenly into two values,
# mean + std *is* the upper value, and the last bit of the float sum would decide
# whether those maps pass; padding a batch differently flips it. Within this
# margin a score counts as reaching the threshold.
TIE_MARGIN = 1e-12


def select_maps(scores: np.ndarray, rho: str = "mean+std", keep: int | None = None) -> np.ndarray:
    """Keep maps with S >= rho (population std); if none pass, keep all (a NaN S passes
    nothing). With ``keep``, the threshold is the keep-th largest S instead: maps tied
    with it are kept too (they are averaged), so ``keep=1`` can keep several."""
    kept = _passing(scores, rho, keep)
    return kept if kept.any() else np.ones_like(kept)


def _passing(scores: np.ndarray, rho: str, keep: int | None) -> np.ndarray:
    """The maps at or above the threshold (:func:`select_maps` before it keeps all if none are)."""
    if keep is not None:
        threshold = np.sort(scores)[::-1][min(keep, len(scores)) - 1]
    else:
        threshold = RHO_RULES[rho](scores)
    return scores >= threshold - TIE_MARGIN * max(1.0, abs(float(threshold)))


def combine(maps: np.ndarray, kept: np.ndarray, drop_scores: np.ndarray) -> Refined:
    """The mean of the kept maps, min–max scaled (a constant map becomes zeros), and before."""
    mean = maps[kept].mean(axis=0)
    return Refined(scores=minmax(mean), kept=kept, drop_scores=drop_scores, raw=mean)


def refine(
    items: Sequence[RefineItem], predict: ProbabilityFn, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> list[Refined]:
    """Each item's maps kept by the deletion test and averaged (``multi_label``: ``predict`` gives
    a sigmoid per label, whose log-odds are the label's own)."""
    results = []
    found = drop_scores(items, predict, settings, multi_label)
    for item, scores in zip(items, found):
        kept = select_maps(scores, settings.rho, settings.keep)
        results.append(combine(item.maps, kept, scores))
    return results


# --- a lower precision proposes, float32 decides --------------------------------------------
# The deletion test's forward passes are most of explain's time, and bfloat16 runs them faster
# where the hardware has it natively; but its probabilities differ in the third decimal, and a
# score near the threshold would keep other maps. Here the lower precision scores every map; each
# row's error is bounded from its own probability and a stated bound on the logits' move, so each
# map's score and the threshold get an interval; the rows of every map whose side of the
# threshold those intervals leave open are predicted again at full precision, and again, until
# every map's side is known. The maps kept are those a full-precision test keeps, wherever the
# stated bound holds.

# A full-precision pass rounds too: a probability, or a log-odds, computed twice from the same
# logits in float32 may differ in its 7th digit. Every row's bound gets this much on top.
ROUNDING = 1e-6
# A probability given in float32 (a softmax's) is the true one to within half a unit in the last
# place near 1: a row's interval starts from that much on either side.
FLOAT32_HALF_ULP = 2.0**-24
# Past this log-odds a probability's complement is lost to rounding (float64 tells 1 - p from 0
# up to about 36; a float32 softmax less): the log-odds is clamped, and no margin bounds its move.
SATURATED_LOG_ODDS = 30.0


@dataclass(frozen=True)
class Proposed:
    """Probabilities from a lower precision (``low``), checked by full precision (``exact``) where
    they could decide otherwise. ``margin``: the most the difference of two logits of a sequence
    (a multi-label model's: one logit) may move from ``exact``'s to ``low``'s (measured with a
    safety factor: :func:`logit_margin`)."""

    low: ProbabilityFn
    exact: ProbabilityFn
    margin: float
    # The most a map's score may move, where known (measured on a first batch with a safety factor,
    # as benchmarks/bf16_proposals.py does): a cap on what its rows' intervals add up to.
    score_bound: float = float("inf")


@dataclass(frozen=True)
class Checked:
    """What a proposed test did: the sequences it predicted, and how many of them again exactly."""

    rows: int
    again: int


def row_errors(values: np.ndarray, margin: float, measure: str) -> np.ndarray:
    """The most each row's value (a probability or a log-odds, from the lower precision) is off,
    when the logits' differences are off by at most ``margin``. A probability p = 1 / (1 + S),
    S the sum of exp(z_j - z_c) over the other classes (a sigmoid's: exp(-z)), lies between
    p / (p + e^m (1 - p)) and p / (p + e^-m (1 - p)); a log-odds, -log S, within ``margin``."""
    if measure != "probability":
        bounded = np.abs(values) < SATURATED_LOG_ODDS  # NaN too: not bounded
        return np.where(bounded, margin + ROUNDING * (1.0 + np.abs(values)), np.inf)
    p = np.clip(values, 0.0, 1.0)
    below, above = np.clip(p - FLOAT32_HALF_ULP, 0.0, 1.0), np.clip(p + FLOAT32_HALF_ULP, 0.0, 1.0)
    low = below / (below + np.exp(margin) * (1.0 - below))
    high = above / (above + np.exp(-margin) * (1.0 - above))
    return np.where(np.isfinite(values), np.maximum(p - low, high - p) + ROUNDING, np.inf)


def _errors(test: _Test, errors: np.ndarray) -> np.ndarray:
    """Per map: the most its score is off when each row is off by at most ``errors`` (the own
    row is exact: it is predicted again first; a LeRF mean subtracts, its error adds)."""
    return np.array([sum(float(np.mean(errors[rows])) for rows in per_order) for per_order in test.per_map])


def _sides(scores: np.ndarray, errors: np.ndarray, settings: RefineSettings) -> np.ndarray:
    """Per map, its side of the threshold for any true scores within ``errors`` of ``scores``: 1
    at or above, -1 below, 0 not known. Exact scores: :func:`select_maps`' own sides."""
    if not errors.any():
        return np.where(_passing(scores, settings.rho, settings.keep), 1, -1)
    if not np.all(np.isfinite(scores)):  # an exact NaN: decided once every score is exact
        return np.zeros(len(scores), dtype=int)
    if settings.keep is not None:
        return _keep_sides(scores, errors, settings.keep)
    threshold = float(RHO_RULES[settings.rho](scores))
    up, down = _threshold_moves(scores, errors, settings.rho)
    tie = 2 * TIE_MARGIN * max(1.0, abs(threshold) + max(up, down))
    return np.where(scores - errors - tie > threshold + up, 1, np.where(scores + errors + tie < threshold - down, -1, 0))


def _threshold_moves(scores: np.ndarray, errors: np.ndarray, rho: str) -> tuple[float, float]:
    """How far up and down ρ can move when each score moves at most its error. The mean moves at
    most the errors' mean. The population std (a norm of the deviations c from the mean, over
    the square root of K) moves at most the errors' root mean square; closer: for deviations
    moved by h, |c + h| >= |c| + <c, h>/|c| (Cauchy-Schwarz) and |c + h| <= |c| + <c, h>/|c| +
    |h|^2 / (2|c|), so mean +- std moves by sum_j h_j (1 +- z_j) / K, z the standardised scores,
    plus at most mean(error^2) / (2 std) on the std's side."""
    mean_move = float(errors.mean())
    if rho == "mean":
        return mean_move, mean_move
    crude = mean_move + float(np.sqrt(np.mean(errors**2)))
    std = float(scores.std())
    if std <= 0.0:
        return crude, crude
    sign = 1.0 if rho == "mean+std" else -1.0
    linear = float(np.mean(errors * np.abs(1.0 + sign * (scores - scores.mean()) / std)))
    square = float(np.mean(errors**2)) / (2.0 * std)
    up, down = (linear + square, linear) if sign > 0 else (linear, linear + square)
    return min(up, crude), min(down, crude)


def _keep_sides(scores: np.ndarray, errors: np.ndarray, keep: int) -> np.ndarray:
    """:func:`_sides` for the ``keep`` best: a map is kept when fewer than ``keep`` others can
    reach it, and not when at least ``keep`` others surely lie above it."""
    tie = 2 * TIE_MARGIN * max(1.0, float(np.max(np.abs(scores) + errors)))
    upper, lower = scores + errors, scores - errors
    others = ~np.eye(len(scores), dtype=bool)
    can_reach = ((upper[None, :] >= lower[:, None] - tie) & others).sum(axis=1)
    surely_above = ((lower[None, :] > upper[:, None] + tie) & others).sum(axis=1)
    return np.where(can_reach < keep, 1, np.where(surely_above >= keep, -1, 0))


def _rows_again(test: _Test, side: np.ndarray, exact: np.ndarray, bounds: np.ndarray) -> list[int]:
    """The rows to predict again for maps whose side is not known: theirs; where those are all
    exact already, the threshold's error is what leaves them open: the rows of the quarter of the
    other maps that move it most (the largest bounds; at least 4 maps)."""
    def rows_of(maps) -> list[int]:
        return [row for k in maps for steps in test.per_map[k] for row in steps if not exact[row]]

    open_ = np.flatnonzero(side == 0)
    rows = rows_of(open_)
    if rows or not len(open_):
        return rows
    inexact = np.flatnonzero(bounds > 0)
    largest = inexact[np.argsort(-bounds[inexact], kind="stable")]
    return rows_of(largest[: max(4, len(largest) // 4)])


def refine_proposed(
    items: Sequence[RefineItem], proposed: Proposed, settings: RefineSettings = RefineSettings(),
    multi_label: bool = False,
) -> tuple[list[Refined], Checked]:
    """:func:`refine` with ``proposed.low``'s probabilities, the rows of every map whose side of
    the threshold they leave open predicted again with ``proposed.exact``, until every side is
    known: the maps kept, and so the result, are those of :func:`refine` with ``exact`` wherever
    ``margin`` holds (``drop_scores``: exact where predicted again, else the proposal's)."""
    plan, tests = _planned(items, settings)
    sequences = plan.sequences
    probs = np.asarray(proposed.low(sequences), dtype=np.float64)
    exact = np.zeros(len(sequences), dtype=bool)
    sides = [np.zeros(len(item.maps), dtype=int) for item in items]
    again = sorted({test.own for test in tests})  # the base of every drop, exact from the start
    while again:
        probs[again] = proposed.exact([sequences[row] for row in again])
        exact[again] = True
        wanted: set[int] = set()
        for item, test, side in zip(items, tests, sides):
            values = _measured(probs, item.target, settings, multi_label)
            errors = np.where(exact, 0.0, row_errors(values, proposed.margin, settings.measure))
            open_ = side == 0  # a side once known stays known: the scores' intervals only narrow
            derived = _errors(test, errors)
            # The measured bound caps a map's, but not one that no margin bounds (a saturated row).
            bounds = np.where(np.isfinite(derived), np.minimum(derived, proposed.score_bound), np.inf)
            bounds[derived == 0] = 0.0  # a map whose rows are all exact
            scores = _scores(test, values)
            # A score the proposal could not give (a NaN, an infinity) is anything: decided exactly.
            bounds[~np.isfinite(scores) & (bounds > 0)] = np.inf
            side[open_] = _sides(np.where(np.isfinite(bounds), scores, 0.0), bounds, settings)[open_]
            wanted.update(_rows_again(test, side, exact, bounds))
        again = sorted(wanted)
    results = []
    for item, test, side in zip(items, tests, sides):
        kept = side > 0
        scores = _scores(test, _measured(probs, item.target, settings, multi_label))
        results.append(combine(item.maps, kept if kept.any() else np.ones_like(kept), scores))
    return results, Checked(len(sequences), int(exact.sum()))


def logit_margin(low: np.ndarray, exact: np.ndarray, multi_label: bool = False) -> float:
    """The largest move of a difference of two logits (a multi-label model: of one logit) between
    two precisions' probabilities of the same sequences [N, C], read from the probabilities:
    log p_j - log p_k is z_j - z_k (a sigmoid: log p - log(1 - p) is z). Probabilities too near
    0 (or a sigmoid's too near 1) to give their logit are left out."""
    low, exact = np.asarray(low, dtype=np.float64), np.asarray(exact, dtype=np.float64)
    if multi_label:
        usable = (np.minimum(low, exact) > 1e-6) & (np.maximum(low, exact) < 1 - 1e-6)
        moves = np.where(usable, np.log(low) - np.log1p(-low) - np.log(exact) + np.log1p(-exact), 0.0)
        return float(np.abs(moves).max()) if moves.size else 0.0
    usable = np.minimum(low, exact) > 1e-30
    moves = np.log(np.where(usable, low, 1.0)) - np.log(np.where(usable, exact, 1.0))
    spread = np.where(usable, moves, -np.inf).max(axis=1) - np.where(usable, moves, np.inf).min(axis=1)
    return float(np.max(spread, initial=0.0))


def average(maps: np.ndarray) -> Refined:
    """No refinement: every map is kept (``--no-refine``, and single-map methods)."""
    kept = np.ones(len(maps), dtype=bool)
    return combine(maps, kept, np.full(len(maps), np.nan))
