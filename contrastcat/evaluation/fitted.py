"""Which cells of an evaluation a method was fitted to (docs/spec.md §5.4).

Contrast-CAT keeps the maps whose top tokens, deleted at a sweep of fractions of the input, lower
the target's probability most: that score *is* the MoRF AOPC under deletion, so its value there
partly measures the selection, not the explanation. A cell is

- **fitted** (``ᶠ``) when the method's own selection used the metric's perturbation and order over
  a sweep of the input (either step grid: both sweep deletion across the whole sequence);
- **partly fitted** (``ᵖ``) when the selection used the metric's perturbation and order at other
  fractions: ERASER comprehensiveness under deletion (the top 1–50 % removed) for a MoRF-scored
  selection, sufficiency under deletion (the bottom 50–99 % removed) for a LeRF-scored one.

Everything else (masking, pad/unk replacement, leave-one-out, Kendall τ) no method here selects by.
"""

from __future__ import annotations

from ..deletion.perturb import DELETE, LERF, MORF
from ..methods import recorded_refinement
from .scalars import ERASER_COMP, ERASER_SUFF

FITTED = "fitted"
PARTLY = "partly"
SIGNS = {FITTED: "ᶠ", PARTLY: "ᵖ"}
LEGEND = {
    FITTED: "ᶠ fitted: the method chose its maps by this very test (same perturbation, order and sweep)",
    PARTLY: "ᵖ partly fitted: the method chose its maps by the same perturbation and order at other fractions",
}


def fitted_cells(method_name: str, settings, perturb: str, orders) -> dict[str, str]:
    """Column key -> FITTED or PARTLY for the cells of one method's row (none for most methods)."""
    refinement = recorded_refinement(method_name, settings)
    if refinement is None or perturb != DELETE:
        return {}
    selected = (MORF,) if refinement.score == "morf" else (MORF, LERF)
    cells = {f"{order}_{key}": FITTED for order in selected if order in orders for key in ("aopc", "lodds")}
    cells[ERASER_COMP] = PARTLY  # the top k removed: MoRF deletion
    if LERF in selected:
        cells[ERASER_SUFF] = PARTLY  # only the top k kept: the bottom removed, LeRF deletion
    return cells
