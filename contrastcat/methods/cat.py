"""The CAT family: gradient x activation summed over layers, with optional contrast.

One formula covers three methods (SPEC §3, §6):

    I_R(x)_i = sum_l w^l_i * sum_j G^l_ij * (A^l_ij - R^l_ij)

- CAT:          w = 1,          R = 0
- AttCAT:       w = alpha-hat,  R = 0
- Contrast-CAT: w = alpha-hat,  R = each of K references of the target class
"""

from __future__ import annotations

import torch

from ..capture import ACTIVATIONS, ATTENTION_RECEIVED, GRADIENTS, Captured
from ..errors import BadInput
from ..refine import RHO_RULES, RefineSettings
from .base import AttributionMethod, ReferenceSource, minmax

RHO_CHOICES = tuple(RHO_RULES)


def contrast_maps(
    activations: torch.Tensor,
    gradients: torch.Tensor,
    weights: torch.Tensor | None,
    references: torch.Tensor | None,
) -> torch.Tensor:
    """Unscaled maps for one input.

    activations, gradients: [L, T, n]; weights: [L, T] or None (all ones);
    references: [K, L, T_r, n] or None (one map against R = 0). Returns [K, T].
    References are aligned by position: truncated to T or zero-padded.
    """
    own = (gradients * activations).sum(dim=-1)  # [L, T]
    if references is None:
        per_layer = own[None]
    else:
        # Positions past the reference's end contrast with R = 0: their G.R term is 0.
        overlap = min(activations.shape[1], references.shape[2])
        against = own.new_zeros(references.shape[0], *own.shape)  # [K, L, T]
        against[:, :, :overlap] = torch.einsum(
            "ltn,kltn->klt", gradients[:, :overlap], references[:, :, :overlap]
        )
        per_layer = own[None] - against
    if weights is not None:
        per_layer = per_layer * weights[None]
    return per_layer.sum(dim=1)


class CAT(AttributionMethod):
    name = "cat"
    summary = "gradient x activation summed over layers (Qiang et al. 2022)"
    needs = frozenset({ACTIVATIONS, GRADIENTS})
    attention_weighted = False

    def candidate_maps(self, captured: Captured, library: ReferenceSource | None) -> list[torch.Tensor]:
        maps = []
        for b, length in enumerate(captured.lengths):
            weights = captured.attention_received[b, :, :length] if self.attention_weighted else None
            raw = contrast_maps(
                captured.activations[b, :, :length], captured.gradients[b, :, :length], weights, None
            )
            maps.append(minmax(raw))
        return maps


class AttCAT(CAT):
    name = "attcat"
    summary = "CAT weighted by the attention each token receives (Qiang et al. 2022)"
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    attention_weighted = True


class ContrastCAT(AttributionMethod):
    name = "contrastcat"
    summary = "AttCAT contrasted with low-f_c references, refined by a deletion test (Han et al. 2025)"
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    uses_library = True

    def __init__(
        self, refs_used: int = 30, refine: bool = True, rho: str = "mean+std", deletion_grid: int = 10
    ) -> None:
        if refs_used < 1:
            raise BadInput("--refs-used must be at least 1 for contrastcat (0 is --method attcat)")
        if rho not in RHO_CHOICES:
            raise BadInput(f"--rho must be one of {', '.join(RHO_CHOICES)}, got {rho!r}")
        if deletion_grid < 2:
            raise BadInput("--deletion-grid must be at least 2")
        self.refs_used = refs_used
        self.refine = refine
        self.rho = rho
        self.deletion_grid = deletion_grid

    @property
    def refinement(self) -> RefineSettings | None:
        return RefineSettings(self.rho, self.deletion_grid) if self.refine else None

    def settings(self) -> dict:
        return {
            "refs_used": self.refs_used,
            "refine": self.refine,
            "rho": self.rho,
            "deletion_grid": self.deletion_grid,
        }

    def candidate_maps(self, captured: Captured, library: ReferenceSource | None) -> list[torch.Tensor]:
        if library is None:
            raise BadInput("method contrastcat needs a reference library (--refs)")
        maps = []
        for b, length in enumerate(captured.lengths):
            references = library.references(
                int(captured.targets[b]), self.refs_used, captured.activations.device
            )
            raw = contrast_maps(
                captured.activations[b, :, :length],
                captured.gradients[b, :, :length],
                captured.attention_received[b, :, :length],
                references,
            )
            maps.append(minmax(raw))
        return maps
