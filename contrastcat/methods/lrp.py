"""LRP-based methods: AttnLRP, and the paper's three LRP baselines computed from its relevances.

All four read relevances of one pass under AttnLRP's rules (``contrastcat.capture.lrp_rules``
says which rule applies where). The paper's originals (Chefer et al.'s code)
propagated with older rules: α1β0 (positive contributions only) through linear
layers, the plain gradient through LayerNorm, relevance copied through the
softmax, and re-normalised splits at additions and products. Here the three
baselines keep their read-outs and take AttnLRP's relevances instead:

- ``full-lrp``: relevance at the input of the first transformer layer (the
  embedding module's output), summed over the hidden dimension: where Chefer's
  ``generate_full_lrp`` reads it. Chefer zeroes [CLS]; here it keeps its
  relevance, as input x gradient does.
- ``attnlrp``: relevance at the word embeddings, summed over the embedding
  (as ``lxt`` reads it): position and token-type embeddings keep their shares.
- ``partial-lrp``: relevance of the last layer's attention probabilities,
  positive part, head mean, the pooled token's row with its own entry set to 0
  (Chefer's ``generate_LRP_last_layer``, his reading of Voita et al. 2019, who
  ranked heads rather than tokens).
- ``transatt``: per layer, the plain gradient of the target logit with respect
  to the attention probabilities times their relevance, positive part, head
  mean; plus the identity, rows normalised, rolled out over all layers (first
  layer first); the pooled token's row with its own entry set to the row's
  minimum (Chefer's ``generate_LRP``, start layer 0). Its gradient comes from
  the ordinary pass, its relevance from the LRP pass: two backward passes.

Relevance scale. AttnLRP (and ``lxt``) explain the logit's value: the output's
relevance is z_c, so ``attnlrp``'s relevances sum to about z_c. Chefer's code
starts its propagation from a one-hot 1 instead, and the three baselines do the
same here: their relevances are divided by z_c (every rule is linear in the
relevance it receives, so this is the same as starting from 1). It matters
where a map is not only scaled: the positive part (``partial-lrp``,
``transatt``) flips with the sign of z_c, and TransAtt's rollout adds the
identity to relevance × gradient, so its scale sets how much the residual
weighs. A target logit of exactly 0 leaves the relevances as they are.

Scores are min–max scaled like every method's. ``attnlrp``'s are signed
relevances of the logit's value: a token that lowers the target logit scores
lowest. ``full-lrp``'s are divided by the logit: when the target logit is
negative (often so for a class other than the predicted one), the tokens that
push it further down score highest, as relevance started from 1 gives them
(Chefer's α1β0 relevances were all positive, so his code never met this).
"""

from __future__ import annotations

import torch

from ..capture.core import ATTENTION_GRADIENTS, ATTENTION_RELEVANCE, LAYER_RELEVANCE, WORD_RELEVANCE, Captured
from ..scaling import minmax
from .attention import pooled_row
from .base import AttributionMethod, Candidates


def unit_relevance(captured: Captured, b: int) -> float:
    """What input b's relevances are divided by so that the target's own relevance is 1 (Chefer's start):
    the target logit of the pass the relevances come from (with --mask-special, the masked one)."""
    logit = float(captured.relevance_logits[b])
    return logit if logit != 0.0 else 1.0


class _TokenRelevance(AttributionMethod):
    field: str
    from_one: bool = True  # relevance of the target = 1 (Chefer), not z_c (AttnLRP)

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        relevance = getattr(captured, self.field)
        maps = []
        for b, length in enumerate(captured.lengths):
            scores = relevance[b, :length] / (unit_relevance(captured, b) if self.from_one else 1.0)
            maps.append(Candidates(minmax(scores).float()[None], scores))
        return maps


class AttnLRP(_TokenRelevance):
    name = "attnlrp"
    signed = True
    summary = "AttnLRP relevance of the word embeddings (Achtibat et al. 2024): one backward pass under its rules"
    needs = frozenset({WORD_RELEVANCE})
    field = "word_relevance"
    from_one = False


class FullLRP(_TokenRelevance):
    name = "full-lrp"
    signed = True
    summary = "LRP relevance of the first layer's input, summed over hidden units (Ding et al. 2017; AttnLRP's rules)"
    needs = frozenset({LAYER_RELEVANCE})
    field = "layer_relevance"


class PartialLRP(AttributionMethod):
    name = "partial-lrp"
    summary = "LRP relevance of the last layer's attention from the pooled token, head mean (Voita et al. 2019)"
    needs = frozenset({ATTENTION_RELEVANCE})

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for b, length in enumerate(captured.lengths):
            last = captured.attention_relevance[b, -1, :, :length, :length].double() / unit_relevance(captured, b)
            scores = pooled_row(last.clamp(min=0).mean(dim=0), captured.pooled[b])
            maps.append(Candidates(minmax(scores).float()[None], scores))
        return maps


class TransAtt(AttributionMethod):
    name = "transatt"
    summary = "relevance x gradient of every layer's attention, rolled out (Chefer, Gur & Wolf 2021)"
    needs = frozenset({ATTENTION_RELEVANCE, ATTENTION_GRADIENTS})

    def candidate_maps(self, captured: Captured, library=None, passes=None) -> list[Candidates]:
        maps = []
        for b, length in enumerate(captured.lengths):
            relevance = captured.attention_relevance[b, :, :, :length, :length].double() / unit_relevance(captured, b)
            gradient = captured.attention_gradients[b, :, :, :length, :length].double()
            eye = torch.eye(length, dtype=torch.float64, device=relevance.device)
            rollout = eye
            for layer_relevance, layer_gradient in zip(relevance, gradient):
                mixed = (layer_gradient * layer_relevance).clamp(min=0).mean(dim=0) + eye
                rollout = (mixed / mixed.sum(dim=-1, keepdim=True)) @ rollout
            pooled = captured.pooled[b]
            scores = rollout[pooled].clone()
            scores[pooled] = scores.min()
            maps.append(Candidates(minmax(scores).float()[None], scores))
        return maps
