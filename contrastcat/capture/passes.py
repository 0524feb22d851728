"""Extra model passes that some methods need beyond the one captured pass.

Integrated gradients runs the model at points between a baseline and the
input; TIS scores masked copies of the input. Both go through this object,
so a method stays a function of what it is given, and padding is done the
one way ``tokens.pad`` does it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np
import torch

from ..models.families import LAYER
from ..models.forward import classify, predictor, replaced_embedding_output
from ..models.loading import Classifier
from ..models.tokens import pad
from .core import ACTIVATIONS, capture


# A forward pass alone keeps no activations for a backward one: it takes this many times the inputs
# of a batch that does (the deletion test's and the evaluation's perturbed copies).
FORWARD_BATCHES = 4
# A forward + backward pass of gradients alone (integrated gradients' path points) holds at most as
# many tokens as a batch of ``gradient_batch_size`` inputs of this many: a short input's 50 steps
# run in one pass, as Captum runs them, a long one's no more tokens than a batch holds.
GRADIENT_ROW_TOKENS = 512


@contextlib.contextmanager
def frozen_weights(model: torch.nn.Module) -> Iterator[None]:
    """The weights as constants for a pass whose gradients are the inputs' alone: autograd then
    keeps nothing for theirs (measured on minilm-rt, 50 rows of 28 tokens: a forward + backward
    0.80 to 0.97 of its time). Each weight's flag is put back, whatever happens."""
    thawed = [parameter for parameter in model.parameters() if parameter.requires_grad]
    try:
        for parameter in thawed:
            parameter.requires_grad_(False)
        yield
    finally:
        _thaw(thawed)


def _thaw(parameters: list[torch.nn.Parameter]) -> None:
    """Each flag set again; an interrupt that arrives while they are must not leave some frozen:
    they are set once more before it goes on."""
    try:
        for parameter in parameters:
            parameter.requires_grad_(True)
    except BaseException:
        for parameter in parameters:
            parameter.requires_grad_(True)
        raise


class ModelPasses:
    """Batched forward (and backward) passes of one classifier."""

    def __init__(
        self,
        classifier: Classifier,
        batch_size: int = 64,
        mask_special: bool = False,
        gradient_batch_size: int = 16,
        autocast: torch.dtype | None = None,
    ) -> None:
        self.classifier = classifier
        self.batch_size = batch_size  # forward-only passes
        self.gradient_batch_size = gradient_batch_size  # forward + backward: activations are kept
        self.mask_special = mask_special
        # Only the forward-only passes run in the lower precision (--forward-dtype);
        # gradients are taken at the weights' own.
        self._predict = predictor(classifier, batch_size, autocast)
        self._wide = predictor(classifier, batch_size, autocast, wide=True)

    def gradient_chunks(self, lengths: Sequence[int], rows: int) -> list[list[int]]:
        """Consecutive positions of ``lengths`` in chunks a gradient pass holds: at most ``rows``,
        and rows times the chunk's longest at most ``gradient_batch_size`` x
        ``GRADIENT_ROW_TOKENS`` tokens (a row longer than that alone)."""
        budget = max(1, self.gradient_batch_size) * GRADIENT_ROW_TOKENS
        chunks: list[list[int]] = []
        width = 0
        for position, length in enumerate(lengths):
            width = max(width, length)
            if chunks and len(chunks[-1]) < rows and (len(chunks[-1]) + 1) * width <= budget:
                chunks[-1].append(position)
            else:
                chunks.append([position])
                width = length
        return chunks

    def probabilities(self, sequences: Sequence[Sequence[int]], wide: bool = False) -> np.ndarray:
        """Softmax probabilities [N, C] (float64), plain attention mask, as for predictions;
        ``wide``: the softmax itself in float64 (``models.forward.predictor``)."""
        return (self._wide if wide else self._predict)(sequences)

    @torch.no_grad()
    def embeddings_of(self, ids: Sequence[int]) -> torch.Tensor:
        """[T, d] embeddings of ``ids`` at the family's attribution point (float32): the
        word embeddings, or the first layer's input (``models.families.LAYER``)."""
        classifier = self.classifier
        if classifier.adapter.embedding_point != LAYER:
            table = classifier.model.get_input_embeddings()
            return table(torch.as_tensor(list(ids), device=classifier.device)).float()
        captured = capture(classifier, [list(ids)], [[False] * len(ids)], [0], needs=frozenset({ACTIVATIONS}))
        return captured.activations[0, 0]

    def embedding_gradients(
        self,
        embeddings: Sequence[torch.Tensor],
        special: Sequence[Sequence[bool]],
        targets: Sequence[int],
        ids: Sequence[Sequence[int]] | None = None,
    ) -> list[torch.Tensor]:
        """d z_target / d embeddings at each of N embedding sequences [T_i, d], given at
        the family's attribution point (``inputs_embeds``, or the first layer's input).

        The attention mask follows ``mask_special`` like the captured pass, so
        every gradient a method combines comes from the same forward function.
        ``ids``: the token ids each sequence embeds, which give a sentence pair its segment ids.
        """
        model, device = self.classifier.model, self.classifier.device
        dtype = next(model.parameters()).dtype
        result: list[torch.Tensor] = [torch.empty(0)] * len(embeddings)
        order = sorted(range(len(embeddings)), key=lambda i: (len(embeddings[i]), i))
        for positions in self.gradient_chunks([len(embeddings[i]) for i in order], len(order)):
            batch = [order[p] for p in positions]
            width = max(len(embeddings[i]) for i in batch)
            _, real = pad([[0] * len(embeddings[i]) for i in batch], 0, device)
            stacked = torch.zeros(len(batch), width, embeddings[batch[0]].shape[-1], device=device, dtype=dtype)
            for row, index in enumerate(batch):
                stacked[row, : len(embeddings[index])] = embeddings[index].to(dtype)
            mask = real.clone()
            if self.mask_special:
                for row, index in enumerate(batch):
                    flags = torch.as_tensor(list(special[index]), dtype=torch.bool, device=device)
                    mask[row, : len(flags)] = mask[row, : len(flags)].masked_fill(flags, 0)
            stacked.requires_grad_()
            with torch.enable_grad(), frozen_weights(self.classifier.model):
                if self.classifier.adapter.embedding_point == LAYER:
                    ids, _ = pad([[self.classifier.pad_id] * len(embeddings[i]) for i in batch], 0, device)
                    with replaced_embedding_output(self.classifier, stacked):  # A^1 itself
                        logits, _ = classify(self.classifier, mask, real.sum(dim=1), input_ids=ids)
                else:
                    type_ids = None if ids is None else pad([ids[i] for i in batch], 0, device)[0]
                    logits, _ = classify(
                        self.classifier, mask, real.sum(dim=1), inputs_embeds=stacked, type_ids=type_ids
                    )
                chosen = torch.as_tensor([targets[i] for i in batch], device=device)
                (gradient,) = torch.autograd.grad(logits.gather(1, chosen[:, None]).sum(), stacked)
            for row, index in enumerate(batch):
                result[index] = gradient[row, : len(embeddings[index])].detach().float()
        return result
