"""The CAT family: gradient x activation summed over layers, with optional contrast.

One formula covers three methods (SPEC §3, §6):

    I_R(x)_i = sum_l w^l_i * sum_j G^l_ij * (A^l_ij - R^l_ij)

- CAT:          w = 1,          R = 0
- AttCAT:       w = alpha-hat,  R = 0
- Contrast-CAT: w = alpha-hat,  R = each of K references of the target class
"""

from __future__ import annotations

import numpy as np
import torch

from ..capture import ACTIVATIONS, ATTENTION_RECEIVED, GRADIENTS, Captured
from ..errors import BadInput
from ..refine import RHO_RULES, RefineSettings
from .base import AttributionMethod, ReferenceSource, input_seed, minmax

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


REFERENCE_SELECTIONS = ("contrast", "same", "random")


def parse_layers(layers: str | int) -> int | None:
    """``all`` (None) or the number of last layers to use (the paper's Figure 5A)."""
    if isinstance(layers, int) or (isinstance(layers, str) and layers.isascii() and layers.isdigit()):
        count = int(layers)
        if count < 1:
            raise BadInput("--layers must be all or a positive number of last layers")
        return count
    if layers == "all":
        return None
    raise BadInput(f"--layers must be all or a positive number of last layers, got {layers!r}")


def last_layers(count: int | None, num_layers: int) -> slice:
    if count is not None and count > num_layers:
        raise BadInput(f"--layers {count}: the model has {num_layers} layers")
    return slice(None) if count is None else slice(num_layers - count, None)


class CAT(AttributionMethod):
    name = "cat"
    summary = "gradient x activation summed over layers (Qiang et al. 2022)"
    needs = frozenset({ACTIVATIONS, GRADIENTS})
    attention_weighted = False

    def __init__(self, layers: str | int = "all") -> None:
        self.layer_count = parse_layers(layers)

    def settings(self) -> dict:
        return {"layers": "all" if self.layer_count is None else self.layer_count}

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[torch.Tensor]:
        used = last_layers(self.layer_count, captured.activations.shape[1])
        maps = []
        for b, length in enumerate(captured.lengths):
            weights = captured.attention_received[b, used, :length] if self.attention_weighted else None
            raw = contrast_maps(
                captured.activations[b, used, :length], captured.gradients[b, used, :length], weights, None
            )
            maps.append(minmax(raw))
        return maps


class AttCAT(CAT):
    name = "attcat"
    summary = "CAT weighted by the attention each token receives (Qiang et al. 2022)"
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    attention_weighted = True


class ContrastCAT(AttributionMethod):
    """Contrast-CAT and the paper's ablations of it.

    ``refs_used=0`` is AttCAT; ``attention=False`` drops the alpha-hat weights;
    ``reference_select`` picks the references from the library's contrast pool
    (the method), its same-class pool or its random pool (the paper's Table 3);
    ``layers`` keeps the last N layers (Figure 5A); ``rho`` is the deletion
    threshold rule (Appendix).
    """

    name = "contrastcat"
    summary = "AttCAT contrasted with low-f_c references, refined by a deletion test (Han et al. 2025)"
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    uses_library = True

    def __init__(
        self,
        refs_used: int = 30,
        refine: bool = True,
        rho: str = "mean+std",
        deletion_grid: int = 10,
        attention: bool = True,
        reference_select: str = "contrast",
        layers: str | int = "all",
        seed: int = 0,
    ) -> None:
        if refs_used < 0:
            raise BadInput("--refs-used must be 0 (AttCAT) or more")
        if rho not in RHO_CHOICES:
            raise BadInput(f"--rho must be one of {', '.join(RHO_CHOICES)}, got {rho!r}")
        if deletion_grid < 2:
            raise BadInput("--deletion-grid must be at least 2")
        if reference_select not in REFERENCE_SELECTIONS:
            raise BadInput(
                f"--reference-select must be one of {', '.join(REFERENCE_SELECTIONS)}, got {reference_select!r}"
            )
        self.refs_used = refs_used
        self.refine = refine
        self.rho = rho
        self.deletion_grid = deletion_grid
        self.attention = attention
        self.reference_select = reference_select
        self.layer_count = parse_layers(layers)
        self.seed = seed
        self.uses_library = refs_used > 0
        self.needs = frozenset({ACTIVATIONS, GRADIENTS} | ({ATTENTION_RECEIVED} if attention else set()))

    @property
    def refinement(self) -> RefineSettings | None:
        return RefineSettings(self.rho, self.deletion_grid) if self.refine else None

    @property
    def reference_pool(self) -> str:
        return self.reference_select

    @property
    def references_needed(self) -> int:
        return self.refs_used

    def settings(self) -> dict:
        return {
            "refs_used": self.refs_used,
            "refine": self.refine,
            "rho": self.rho,
            "deletion_grid": self.deletion_grid,
            "attention": self.attention,
            "reference_select": self.reference_select,
            "layers": "all" if self.layer_count is None else self.layer_count,
            "seed": self.seed,
        }

    def _references(self, library: ReferenceSource, target: int, ids, device) -> torch.Tensor:
        if self.reference_select != "random":
            return library.references(target, self.refs_used, device, pool=self.reference_select)
        available = library.pool_size("random", target)
        generator = np.random.default_rng(input_seed(self.seed, ids))
        rows = generator.permutation(available)[: self.refs_used]
        return library.references(target, len(rows), device, pool="random", rows=[int(r) for r in rows])

    def candidate_maps(self, captured: Captured, library: ReferenceSource | None = None, passes=None) -> list[torch.Tensor]:
        if self.uses_library and library is None:
            raise BadInput("method contrastcat needs a reference library (--refs)")
        used = last_layers(self.layer_count, captured.activations.shape[1])
        maps = []
        for b, length in enumerate(captured.lengths):
            references = None
            if self.uses_library:
                references = self._references(
                    library, int(captured.targets[b]), captured.token_ids[b], captured.activations.device
                )[:, used]
            raw = contrast_maps(
                captured.activations[b, used, :length],
                captured.gradients[b, used, :length],
                captured.attention_received[b, used, :length] if self.attention else None,
                references,
            )
            maps.append(minmax(raw))
        return maps
