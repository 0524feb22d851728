"""Input-gradient baselines on the embeddings: input x gradient, the gradient's norm and
integrated gradients.

All three attribute the target logit z_c (as the CAT family does, docs/spec.md §1) to the
word embeddings, before position embeddings are added, and sum over the
embedding dimension. Families whose word embeddings enter a LayerNorm
directly (ModernBERT, DeBERTa-v3) are attributed at the embedding module's
output instead, the first layer's input A^1: a LayerNorm is scale-invariant,
so input x gradient at its input is zero up to rounding (``models.families``).
"""

from __future__ import annotations

from collections.abc import Sequence
import numpy as np
import torch

from ..capture.core import EMBEDDING_GRADIENTS, EMBEDDINGS, Captured
from ..capture.passes import ModelPasses
from ..errors import BadInput
from ..scaling import minmax
from .base import AttributionMethod, Candidates
from .options import IntegratedGradientsOptions

class InputXGradient(AttributionMethod):
    name = "input-x-gradient"
    signed = True
    summary = "word embedding x gradient of the target logit, summed over the embedding"
    needs = frozenset({EMBEDDINGS, EMBEDDING_GRADIENTS})

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for b, length in enumerate(captured.lengths):
            raw = (captured.embeddings[b, :length].double() * captured.embedding_gradients[b, :length].double()).sum(-1)
            maps.append(Candidates(minmax(raw).float()[None], raw))
        return maps


class GradientNorm(AttributionMethod):
    """Saliency (Simonyan et al. 2014) on the embeddings: each token's score is the L2 norm of the
    target logit's gradient at its embedding, the "gradient L2" Bastings et al. (2022) found to
    rank planted shortcuts well for BERT. Unsigned: a norm says how much the logit moves with the
    token's embedding, not in which direction."""

    name = "gradient-norm"
    summary = "L2 norm of the target logit's gradient at each word embedding (saliency)"
    needs = frozenset({EMBEDDING_GRADIENTS})

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for b, length in enumerate(captured.lengths):
            raw = captured.embedding_gradients[b, :length].double().norm(dim=-1)
            maps.append(Candidates(minmax(raw).float()[None], raw))
        return maps


def gauss_legendre(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1]: exact for polynomials of degree < 2·steps (Captum's default rule)."""
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    return (nodes + 1) / 2, weights / 2


class IntegratedGradients(AttributionMethod):
    """Sundararajan et al. 2017, on the embeddings (see the module docstring).

    The baseline keeps the special tokens' own embeddings and replaces every
    other token by the zero vector (``zero``) or the [PAD] embedding (``pad``),
    so special tokens score exactly 0 before scaling. The path integral uses
    ``ig_steps`` Gauss–Legendre nodes; all (input, node) pairs of a batch run
    through the model together.
    """

    name = "integrated-gradients"
    signed = True
    summary = "integrated gradients on the word embeddings, zero or [PAD] baseline (Sundararajan et al. 2017)"
    Options = IntegratedGradientsOptions
    needs = frozenset({EMBEDDINGS})

    @property
    def ig_steps(self) -> int:
        return self.options.ig_steps

    @property
    def ig_baseline(self) -> str:
        return self.options.ig_baseline

    def baseline(
        self, embeddings: torch.Tensor, special: torch.Tensor, ids: Sequence[int], passes: ModelPasses
    ) -> torch.Tensor:
        if self.ig_baseline == "pad":
            # The input with every non-special token replaced by the pad token, embedded.
            padded = [token if flag else passes.classifier.pad_id for token, flag in zip(ids, special.tolist())]
            replacement = passes.embeddings_of(padded).to(embeddings.device)
        else:
            replacement = torch.zeros_like(embeddings)
        return torch.where(special[:, None], embeddings, replacement)

    def candidate_maps(self, captured: Captured, library=None, passes: ModelPasses | None = None) -> list[Candidates]:
        if passes is None:
            raise BadInput("integrated-gradients needs model passes (call it through contrastcat.explain or contrastcat.attribution.pipeline)")
        alphas, weights = gauss_legendre(self.ig_steps)
        starts, differences, integrals = [], [], []
        for b, length in enumerate(captured.lengths):
            embeddings = captured.embeddings[b, :length]
            start = self.baseline(embeddings, captured.special[b, :length], captured.token_ids[b], passes)
            starts.append(start)
            differences.append(embeddings - start)
            integrals.append(torch.zeros_like(embeddings, dtype=torch.float64))
        # (input, node) pairs in chunks of one pass each, shorter inputs first (a chunk pads its rows
        # to its longest): only one chunk of path points and gradients is alive at a time.
        inputs = sorted(range(len(starts)), key=lambda b: (int(captured.lengths[b]), b))
        pairs = [(b, k) for b in inputs for k in range(len(alphas))]
        # A chunk: one input's steps (or a batch's worth of rows, if more), as the token budget allows.
        rows = max(passes.gradient_batch_size, len(alphas))
        for positions in passes.gradient_chunks([int(captured.lengths[b]) for b, _ in pairs], rows):
            part = [pairs[p] for p in positions]
            gradients = passes.embedding_gradients(
                [starts[b] + float(alphas[k]) * differences[b] for b, k in part],
                [captured.special[b, : captured.lengths[b]].tolist() for b, _ in part],
                [int(captured.targets[b]) for b, _ in part],
                [captured.token_ids[b] for b, _ in part],
            )
            for (b, k), gradient in zip(part, gradients):
                integrals[b] += float(weights[k]) * gradient.double()
        raws = [(difference.double() * integral).sum(-1) for difference, integral in zip(differences, integrals)]
        return [Candidates(minmax(raw).float()[None], raw) for raw in raws]
