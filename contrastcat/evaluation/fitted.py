"""Which cells of an evaluation a method was fitted to (docs/spec.md §5.4).

Contrast-CAT keeps the maps whose top tokens, deleted at a sweep of fractions of the input, lower
the target's probability most: that score *is* the MoRF AOPC under deletion, so its value there
partly measures the selection, not the explanation. A cell is

- **fitted** (``ᶠ``) when the method's own selection used the metric's perturbation and order over
  the paper's sweep of the input (its deletion grid of 10, every step: either step grid of evaluate
  sweeps deletion across the whole sequence alike), scored by the probability's drop;
- **partly fitted** (``ᵖ``) when the selection used the metric's perturbation and order at other
  fractions or by another measure: another deletion grid (``deletion_grid`` 2 deletes everything at
  once, 3 half and then everything), a test at some steps only (``test_steps``) or of the log-odds
  (``test_measure``) for the curves' cells, ERASER comprehensiveness under deletion (the top 1–50 % removed) for a MoRF-scored
  selection, sufficiency under deletion (the bottom 50–99 % removed) for a LeRF-scored one.

Occlusion's map *is* the leave-one-out drop: its leave-one-out τ under the perturbation it
occluded by is **fitted**. Only where each record is scored for the class its map explains: a
selection made for one class fits no test of another (``comparison`` marks nothing then). Everything else (masking, pad/unk replacement, leave-one-out, Kendall τ)
no other method here selects by.
"""

from __future__ import annotations

from ..deletion.names import DELETE, LERF, MORF
from ..deletion.refine import RefineSettings
from ..methods import recorded_method
from .metrics import ERASER_COMP, ERASER_SUFF, LOO_TAU

FITTED = "fitted"
PARTLY = "partly"
SIGNS = {FITTED: "ᶠ", PARTLY: "ᵖ"}
LEGEND = {
    FITTED: "ᶠ fitted: the method chose its maps by this very test (same perturbation, order and sweep), "
    "or its map is that test's own drops (occlusion)",
    PARTLY: "ᵖ partly fitted: the method chose its maps by the same perturbation and order at other fractions "
    "or by another measure",
}


def fitted_cells(method_name: str, settings, perturb: str, orders) -> dict[str, str]:
    """Column key -> FITTED or PARTLY for the cells of one method's row (none for most methods)."""
    if not settings:
        return {}  # a record that says nothing of how it was made: no claim either way
    method = recorded_method(method_name, settings)
    if method is not None and method.occludes == perturb:
        return {LOO_TAU: FITTED}
    refinement = method.refinement if method is not None and method.selects_by_deletion else None
    if refinement is None or perturb != DELETE:
        return {}
    selected = (MORF,) if refinement.score == "morf" else (MORF, LERF)
    # The very test only when it swept every step of the paper's grid by the probability: another
    # grid, a test at some of the fractions, or of the log-odds, chose by the same perturbation and
    # order, not the same test (however the fractions were spelt: --deletion-grid 2 is --test-steps 9).
    paper = RefineSettings()
    same = refinement.steps is None and refinement.measure == paper.measure and refinement.grid == paper.grid
    cells = {f"{order}_{key}": FITTED if same else PARTLY
             for order in selected if order in orders for key in ("aopc", "lodds")}
    cells[ERASER_COMP] = PARTLY  # the top k removed: MoRF deletion
    if LERF in selected:
        cells[ERASER_SUFF] = PARTLY  # only the top k kept: the bottom removed, LeRF deletion
    return cells
