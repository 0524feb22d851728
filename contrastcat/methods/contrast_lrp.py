"""Beyond the paper: Contrast-CAT's contrast taken inside the LRP relevance pass.

Contrast-CAT multiplies the difference from a reference, A^l - R^l, by the
plain gradient of the target logit. AttnLRP's rules (``contrastcat.capture.lrp_rules``)
change only the backward pass, so that modified gradient x A^l is layer l's
relevance, conserved layer to layer, where the plain gradient x A^l is a
first-order term that is not. Here the same formula takes the modified
gradient instead:

    I_R(x)_i = sum_l alpha-hat^l_i * sum_j G~^l_ij * (A^l_ij - R^l_ij)

the relevance of the difference from each reference (its part of the logit
that the reference does not share), weighted and summed over layers like
Contrast-CAT's, then refined (or averaged) like Contrast-CAT's maps. Every
option is Contrast-CAT's; the activations and modified gradients come from the
LRP pass (whose forward is the plain one), alpha-hat from the plain pass.
"""

from __future__ import annotations

import torch

from ..capture.core import ATTENTION_RECEIVED, LRP_GRADIENTS, Captured
from .cat import ContrastCAT
from .options import ContrastCATOptions


class ContrastLRP(ContrastCAT):
    name = "contrastcat-lrp"
    summary = "beyond the paper: Contrast-CAT with AttnLRP's modified gradients (relevance of A - R)"
    Options = ContrastCATOptions

    def __init__(self, options: ContrastCATOptions | None = None, **values) -> None:
        super().__init__(options, **values)
        self.needs = frozenset({LRP_GRADIENTS} | ({ATTENTION_RECEIVED} if self.attention else set()))

    def layer_terms(self, captured: Captured) -> tuple[torch.Tensor, torch.Tensor]:
        return captured.lrp_activations, captured.lrp_gradients
