"""Attention-based baselines (docs/spec.md §6): attention maps, with or without their gradients.

Every formula runs on one input's real tokens ([L, H, T, T] slices of the
padded capture), so padding can never reach a result. Rows are queries,
columns keys; dA is the gradient of the target logit with respect to the
attention probabilities.

The methods that read one query row read the row of the token the
classification head pools: [CLS] (row 0) for encoders, the last real token
for decoders, whose head reads it (and whose row 0 sees only itself). They
set that token's own score to 0: its self-attention (and the identity added
by rollout) would otherwise dominate the min–max scaling.
"""

from __future__ import annotations

import torch

from ..capture.core import ATTENTION_GRADIENTS, ATTENTIONS, Captured
from ..scaling import minmax
from .base import AttributionMethod, Candidates


def pooled_row(matrix: torch.Tensor, pooled: int) -> torch.Tensor:
    scores = matrix[pooled].clone()
    scores[pooled] = 0.0
    return scores


class _PerInput(AttributionMethod):
    """One unscaled score vector per input, from its [L, H, T, T] attention (and gradient) slices."""

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for b, length in enumerate(captured.lengths):
            # Views, not copies: on BERT-base at 512 tokens one input's [L, H, T, T] is 150 MB.
            attention = captured.attentions[b, :, :, :length, :length]
            gradient = None
            if captured.attention_gradients is not None:
                gradient = captured.attention_gradients[b, :, :, :length, :length]
            scores = self.scores(attention, gradient, captured.pooled[b]).double()
            maps.append(Candidates(minmax(scores).float()[None], scores))
        return maps

    def scores(self, attention: torch.Tensor, gradient: torch.Tensor | None, pooled: int) -> torch.Tensor:
        """Unscaled scores [T]; ``pooled`` is the position the classification head reads."""
        raise NotImplementedError


class RawAttention(_PerInput):
    name = "rawatt"
    summary = "last layer's attention from the pooled token ([CLS]), head mean (class-blind)"
    needs = frozenset({ATTENTIONS})

    def scores(self, attention, gradient, pooled):
        return pooled_row(attention[-1].mean(dim=0), pooled)


class Rollout(_PerInput):
    name = "rollout"
    summary = "attention rollout through all layers, residual included (Abnar & Zuidema 2020; class-blind)"
    needs = frozenset({ATTENTIONS})

    def scores(self, attention, gradient, pooled):
        length = attention.shape[-1]
        rollout = torch.eye(length, dtype=attention.dtype, device=attention.device)
        for layer in attention:  # first layer first: R = Ā^L ··· Ā^1
            mixed = layer.mean(dim=0) + torch.eye(length, dtype=attention.dtype, device=attention.device)
            rollout = (mixed / mixed.sum(dim=-1, keepdim=True)) @ rollout
        return pooled_row(rollout, pooled)


class AttentionGradients(_PerInput):
    name = "att-grads"
    signed = True
    summary = "gradient of the target logit w.r.t. attention, head and query mean, summed over layers"
    needs = frozenset({ATTENTION_GRADIENTS})

    def scores(self, attention, gradient, pooled):
        return gradient.mean(dim=(1, 2)).sum(dim=0)


class AttentionTimesGradients(_PerInput):
    name = "att-x-att-grads"
    signed = True
    summary = "attention x its gradient, head and query mean, summed over layers"
    needs = frozenset({ATTENTIONS, ATTENTION_GRADIENTS})

    def scores(self, attention, gradient, pooled):
        return (gradient * attention).mean(dim=(1, 2)).sum(dim=0)


class GradSAM(_PerInput):
    name = "grad-sam"
    summary = "ReLU(attention gradient) x attention, mean over layers, heads and queries (Barkan et al. 2021)"
    needs = frozenset({ATTENTIONS, ATTENTION_GRADIENTS})

    def scores(self, attention, gradient, pooled):
        return (gradient.clamp(min=0) * attention).mean(dim=(0, 1, 2))


class GenericAttention(_PerInput):
    name = "generic-attention"
    summary = "gradient-weighted attention rollout (Chefer et al. 2021)"
    needs = frozenset({ATTENTIONS, ATTENTION_GRADIENTS})

    def scores(self, attention, gradient, pooled):
        length = attention.shape[-1]
        relevance = torch.eye(length, dtype=attention.dtype, device=attention.device)
        for layer_attention, layer_gradient in zip(attention, gradient):
            weighted = (layer_gradient * layer_attention).clamp(min=0).mean(dim=0)
            relevance = relevance + weighted @ relevance
        return pooled_row(relevance, pooled)
