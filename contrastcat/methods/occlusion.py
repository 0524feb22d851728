"""Occlusion: each token's own effect on the prediction, the map of leave-one-out.

A token's score is p_c(x) - p_c(x without it): the drop of the target's probability when that one
token is taken out (Zeiler & Fergus 2014 for images; Li, Monroe & Jurafsky 2016, "Understanding
neural networks through representation erasure", for text). Taken out as evaluate's
``--perturb`` does it (``occlude``): deleted, or replaced by the mask, pad or unknown token.
Special tokens are never taken out and score 0. The map is signed: a token whose removal raises
the probability is evidence against the class.

It is the map evaluate's leave-one-out τ compares every method with: under the same perturbation
its τ there is that of the drops with themselves, and evaluate marks the cell fitted.
Every input's perturbed copies go through the model in the passes' batches, all inputs of a
batch together; copies alike (a repeated token deleted) run once. The probabilities are the
softmax of the logits in float64, so the drops of a confident input keep their digits.
"""

from __future__ import annotations

import torch

from ..capture.core import Captured
from ..capture.passes import ModelPasses
from ..deletion.perturb import perturb, replacement_id
from ..deletion.plan import DeletionPlan
from ..errors import BadInput
from ..scaling import minmax
from .base import AttributionMethod, Candidates
from .options import OcclusionOptions


class Occlusion(AttributionMethod):
    name = "occlusion"
    signed = True
    summary = "each token's leave-one-out drop of the target probability, p_c(x) - p_c(x without it)"
    Options = OcclusionOptions
    needs = frozenset()

    @property
    def occludes(self) -> str:
        return self.options.occlude

    def candidate_maps(self, captured: Captured, library=None, passes: ModelPasses | None = None) -> list[Candidates]:
        if passes is None:
            raise BadInput("occlusion needs model passes (call it through contrastcat.explain or contrastcat.attribution.pipeline)")
        classifier = passes.classifier
        replacement = replacement_id(self.occludes, classifier.tokenizer, classifier.pad_id, "occlusion: occlude")
        plan = DeletionPlan()  # each distinct copy predicted once (a repeated token deleted)
        rows = []
        for b, length in enumerate(captured.lengths):
            ids = list(captured.token_ids[b])
            special = captured.special[b, :length].tolist()
            # The input itself through the same passes as its copies: both sides of a drop come from
            # one forward path (batching, precision), not the captured pass's logits.
            whole = plan.add(ids)
            copies = [(i, plan.add(perturb(ids, [i], self.occludes, replacement))) for i in range(length) if not special[i]]
            rows.append((whole, copies, length))
        # The softmax in float64: on a confident input p_c and its copies' are 1 - 1e-9 and the
        # like, which float32 rounds to 1 (every drop 0, the map a constant).
        probs = plan.predict(lambda sequences: passes.probabilities(sequences, wide=True))
        maps = []
        for b, (whole, copies, length) in enumerate(rows):
            target = int(captured.targets[b])
            raw = torch.zeros(length, dtype=torch.float64)
            for position, row in copies:
                raw[position] = float(probs[whole, target]) - float(probs[row, target])
            maps.append(Candidates(minmax(raw).float()[None].to(captured.logits.device), raw))
        return maps
