"""The CAT family: gradient x activation summed over layers, with optional contrast.

One formula covers three methods (docs/spec.md §3, §6):

    I_R(x)_i = sum_l w^l_i * sum_j G^l_ij * (A^l_ij - R^l_ij)

- CAT:          w = 1,          R = 0
- AttCAT:       w = alpha-hat,  R = 0
- Contrast-CAT: w = alpha-hat,  R = each of K references of the target class
"""

from __future__ import annotations

import numpy as np
import torch

from ..capture.core import ACTIVATIONS, ATTENTION_RECEIVED, GRADIENTS, Captured
from ..deletion.refine import RefineSettings
from ..errors import BadInput
from ..spec import Names, backticked
from ..scaling import minmax
from .base import AttributionMethod, Candidates, ReferenceSource, input_seed
from .options import MIXED, CATOptions, ContrastCATOptions, parse_layers, parse_steps

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


def last_layers(count: int | None, num_layers: int, named: Names = backticked) -> slice:
    if count is not None and count > num_layers:
        raise BadInput(f"{named('layers')} {count}: the model has {num_layers} layers")
    return slice(None) if count is None else slice(num_layers - count, None)


class CAT(AttributionMethod):
    name = "cat"
    signed = True
    summary = "gradient x activation summed over layers (Qiang et al. 2022)"
    Options = CATOptions
    needs = frozenset({ACTIVATIONS, GRADIENTS})
    attention_weighted = False

    @property
    def layer_count(self) -> int | None:
        return self.options.layer_count

    def check_model(self, num_layers: int, named: Names = backticked) -> None:
        last_layers(self.layer_count, num_layers, named)

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        used = last_layers(self.layer_count, captured.activations.shape[1])
        maps = []
        for b, length in enumerate(captured.lengths):
            weights = captured.attention_received[b, used, :length] if self.attention_weighted else None
            raw = contrast_maps(
                captured.activations[b, used, :length], captured.gradients[b, used, :length], weights, None
            )
            maps.append(Candidates(minmax(raw), raw[0]))
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
    Options = ContrastCATOptions
    needs = frozenset({ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED})
    uses_library = True

    def __init__(self, options: ContrastCATOptions | None = None, **values) -> None:
        super().__init__(options, **values)
        chosen = self.options
        self.refs_used = chosen.refs_used
        self.refine = chosen.refine
        self.rho = chosen.rho
        self.deletion_grid = chosen.deletion_grid
        self.attention = chosen.attention
        self.reference_select = chosen.reference_select
        self.layer_count = parse_layers(chosen.layers)
        self.seed = chosen.seed
        self.uses_library = chosen.refs_used > 0
        self.needs = frozenset({ACTIVATIONS, GRADIENTS} | ({ATTENTION_RECEIVED} if chosen.attention else set()))

    @property
    def refinement(self) -> RefineSettings | None:
        if not self.refine:
            return None
        chosen = self.options
        return RefineSettings(
            self.rho, self.deletion_grid, steps=parse_steps(chosen.test_steps, self.deletion_grid),
            measure=chosen.test_measure,
        )

    @property
    def selects_by_deletion(self) -> bool:
        return self.refinement is not None and self.refs_used > 0  # refs_used 0: AttCAT's one map

    @property
    def pools_needed(self) -> dict[str, int]:
        """contrast+random reads K - K//2 contrasting and K//2 random references."""
        if self.reference_select == MIXED:
            return {"contrast": self.refs_used - self.refs_used // 2, "random": self.refs_used // 2}
        return {self.reference_select: self.refs_used}

    def count_option(self, named: Names = backticked) -> str:
        return f"{named('refs_used')} {self.refs_used}"

    def check_model(self, num_layers: int, named: Names = backticked) -> None:
        last_layers(self.layer_count, num_layers, named)

    def _references(self, library: ReferenceSource, target: int, ids, device) -> torch.Tensor:
        if self.reference_select == MIXED:
            # Beyond the paper: half the maps against contrasting references, half against random rows.
            randoms = self._random(library, target, ids, device, self.refs_used // 2)
            contrast = library.references(target, self.refs_used - len(randoms), device, pool="contrast")
            length = max(randoms.shape[2], contrast.shape[2])
            pad = lambda r: torch.nn.functional.pad(r, (0, 0, 0, length - r.shape[2]))  # noqa: E731 - R = 0 beyond
            return torch.cat([pad(contrast), pad(randoms)])
        if self.reference_select != "random":
            return library.references(target, self.refs_used, device, pool=self.reference_select)
        return self._random(library, target, ids, device, self.refs_used)

    def _random(self, library: ReferenceSource, target: int, ids, device, count: int) -> torch.Tensor:
        available = library.pool_size("random", target)
        generator = np.random.default_rng(input_seed(self.seed, ids))
        rows = generator.permutation(available)[:count]
        return library.references(target, len(rows), device, pool="random", rows=[int(r) for r in rows])

    def candidate_maps(self, captured: Captured, library: ReferenceSource | None = None, passes=None) -> list[Candidates]:
        if self.uses_library and library is None:
            raise BadInput(f"method {self.name} needs a reference library (`library`)")
        activations, gradients = self.layer_terms(captured)
        used = last_layers(self.layer_count, activations.shape[1])
        maps = []
        for b, length in enumerate(captured.lengths):
            references = None
            if self.uses_library:
                references = self._references(
                    library, int(captured.targets[b]), captured.token_ids[b], activations.device
                )[:, used]
            raw = contrast_maps(
                activations[b, used, :length],
                gradients[b, used, :length],
                captured.attention_received[b, used, :length] if self.attention else None,
                references,
            )
            maps.append(Candidates(self.scaled(raw)))
        return maps

    def layer_terms(self, captured: Captured) -> tuple[torch.Tensor, torch.Tensor]:
        """A^l and the gradients the formula multiplies (A^l - R^l) by: [B, L, T, n] each."""
        return captured.activations, captured.gradients

    def scaled(self, raw: torch.Tensor) -> torch.Tensor:
        """The candidate maps [K', T] made from the unscaled maps [K, T]."""
        return minmax(raw)
