"""One forward and one backward pass: everything an attribution method reads.

``capture`` records, for a padded batch, the activations entering each layer
(A^l, docs/spec.md §1), the gradients of the target *logit* with respect to them, the
attention probabilities and their gradients, the word embeddings and their
gradients, and the logits. Methods declare which of these they need, so a
method that needs no gradient costs no backward pass, and several methods
explaining the same batch share one capture.

LRP relevances (``LRP_NEEDS``) come from a second forward and backward pass
under AttnLRP's rules (``contrastcat.capture.lrp_rules``), only when a method asks.

Hooks live only for the duration of one call and are removed in ``finally``.
They record layer inputs in call order, so a layer module applied several
times (ALBERT shares one across all L layers) gives one A^l per application.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from ..errors import BadInput, RunFailed
from ..models.adapters import layer_input
from ..models.families import LAYER
from ..models.forward import classify
from ..models.loading import Classifier
from ..models.tokens import check_finite, pad, probabilities
from .lrp_rules import lrp_rules

ACTIVATIONS = "activations"
GRADIENTS = "gradients"
ATTENTION_RECEIVED = "attention_received"  # alpha-hat only: [B, L, T]
ATTENTIONS = "attentions"  # full probabilities: [B, L, H, T, T], memory-hungry
ATTENTION_GRADIENTS = "attention_gradients"  # d z_c / d attention probabilities: [B, L, H, T, T]
EMBEDDINGS = "embeddings"  # word embeddings of the input ids: [B, T, d]
EMBEDDING_GRADIENTS = "embedding_gradients"  # d z_c / d word embeddings: [B, T, d]
NEEDS = frozenset(
    {ACTIVATIONS, GRADIENTS, ATTENTION_RECEIVED, ATTENTIONS, ATTENTION_GRADIENTS, EMBEDDINGS, EMBEDDING_GRADIENTS}
)
BACKWARD_NEEDS = frozenset({GRADIENTS, ATTENTION_GRADIENTS, EMBEDDING_GRADIENTS})
# LRP relevances (contrastcat.capture.lrp_rules): a second forward and backward pass under AttnLRP's rules.
WORD_RELEVANCE = "word_relevance"  # at the word embeddings, summed over the embedding: [B, T]
LAYER_RELEVANCE = "layer_relevance"  # at the first layer's input A^1, summed over n: [B, T]
ATTENTION_RELEVANCE = "attention_relevance"  # of the attention probabilities: [B, L, H, T, T]
# d z_c / d A^l under AttnLRP's rules, every layer: [B, L, T, n]. Times A^l it is layer l's relevance;
# times (A^l - R^l) the relevance of the difference from a reference (contrastcat-lrp).
LRP_GRADIENTS = "lrp_gradients"
LRP_NEEDS = frozenset({WORD_RELEVANCE, LAYER_RELEVANCE, ATTENTION_RELEVANCE, LRP_GRADIENTS})


@dataclass
class Captured:
    """Tensors of one batch, detached, padded to T on the right.

    ``activations``/``gradients``: [B, L, T, n]; ``attentions`` and
    ``attention_gradients``: [B, L, H, T, T] (queries, then keys);
    ``attention_received``: [B, L, T], the head- and query-averaged attention
    each token receives (alpha-hat), averaged over real (non-pad) queries only;
    ``embeddings``/``embedding_gradients``: [B, T, d], the word embeddings
    (before position embeddings are added), or for families whose word
    embeddings enter a LayerNorm directly, the first layer's input A^1
    (``models.families.LAYER``). Fields nobody asked for are ``None``.
    """

    token_ids: list[tuple[int, ...]]
    lengths: list[int]
    pooled: list[int]  # per input, the position the classification head reads ([CLS]: 0; decoders: the last)
    special: torch.Tensor  # bool [B, T]
    logits: torch.Tensor  # [B, C]
    targets: torch.Tensor  # long [B]
    activations: torch.Tensor | None = None
    gradients: torch.Tensor | None = None
    attentions: torch.Tensor | None = None
    attention_received: torch.Tensor | None = None
    attention_gradients: torch.Tensor | None = None
    embeddings: torch.Tensor | None = None
    embedding_gradients: torch.Tensor | None = None
    attributed_logits: torch.Tensor | None = None  # [B, C] of the pass gradients start from (masked or not)
    relevance_logits: torch.Tensor | None = None  # [B]: the target logit the LRP relevances start from
    word_relevance: torch.Tensor | None = None
    layer_relevance: torch.Tensor | None = None
    attention_relevance: torch.Tensor | None = None
    lrp_gradients: torch.Tensor | None = None
    lrp_activations: torch.Tensor | None = None  # A^l of the LRP pass (its forward is the plain one's)

    multi_label: bool = False  # the classifier's: its probabilities are a sigmoid per label

    @property
    def probs(self) -> torch.Tensor:
        return probabilities(self.logits, self.multi_label)


def _received_attention(attention: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """One layer's [B, H, T, T] attention, [B, T] real-token mask -> [B, T] mean attention received.

    The mean runs over all real queries; under causal attention a query that
    cannot see a key contributes 0 to it (docs/models.md, Model families).
    """
    head_mean = attention.float().mean(dim=1)  # [B, Tq, Tk]
    query_weight = real.to(head_mean.dtype)[:, :, None]
    return (head_mean * query_weight).sum(dim=1) / real.sum(dim=1).to(head_mean.dtype)[:, None]


def _checked_attentions(classifier: Classifier, attentions) -> tuple[torch.Tensor, ...]:
    """Attention probabilities of every layer, or one line naming the model type."""
    model_type = classifier.adapter.model_type
    if not attentions or any(a is None for a in attentions):
        raise BadInput(
            f"model type {model_type!r} returns no attention probabilities (attention implementation "
            f"{getattr(classifier.model.config, '_attn_implementation', None)!r}): methods that read attention "
            "cannot run on it; the others can"
        )
    if len(attentions) != classifier.num_layers:
        raise BadInput(
            f"model type {model_type!r} returns attention for {len(attentions)} layers, not its "
            f"{classifier.num_layers}: methods that read attention cannot run on it; the others can"
        )
    return tuple(attentions)


def capture(
    classifier: Classifier,
    sequences: Sequence[Sequence[int]],
    special: Sequence[Sequence[bool]],
    targets: Sequence[int | None],
    needs: frozenset[str] = NEEDS,
    mask_special: bool = False,
) -> Captured:
    """Run the batch once forward (and once backward when gradients are needed).

    ``targets[b] is None`` means the predicted class. ``mask_special`` reproduces
    the reference code, which zeroes special tokens in the attention mask of the
    attribution pass (docs/spec.md §1). LRP relevances (``LRP_NEEDS``) take one
    more forward and backward pass, under ``lrp_rules``, for the same targets.
    """
    plain, lrp = needs - LRP_NEEDS, needs & LRP_NEEDS
    if not lrp:
        return _capture_pass(classifier, sequences, special, targets, _Plan.of(plain, classifier), mask_special)
    captured = (_capture_pass(classifier, sequences, special, targets, _Plan.of(plain, classifier), mask_special)
                if plain else None)
    if captured is not None:
        targets = [int(t) for t in captured.targets]
    wanted = set()
    if WORD_RELEVANCE in lrp:
        wanted |= {EMBEDDINGS, EMBEDDING_GRADIENTS}
    if LAYER_RELEVANCE in lrp or LRP_GRADIENTS in lrp:
        wanted |= {ACTIVATIONS, GRADIENTS}
    if ATTENTION_RELEVANCE in lrp:
        wanted |= {ATTENTIONS, ATTENTION_GRADIENTS}
    implementation = getattr(classifier.model.config, "_attn_implementation", None)
    if implementation not in (None, "eager") and not classifier.borrowed:  # a borrowed model runs eager (forward.in_use)
        raise BadInput(
            f"the LRP methods need eager attention (attn_implementation='eager'); this model uses {implementation!r}"
        )
    with lrp_rules(classifier.model, classifier.adapter.family):
        # Relevance at the word embeddings in every family: under the LayerNorm rule the
        # norm is linear, so the scale invariance that moves input x gradient to A^1 is gone.
        # The word embeddings kept in every family (word_point).
        relevant = _capture_pass(
            classifier, sequences, special, targets, _Plan.of(frozenset(wanted), classifier, word_point=True), mask_special
        )
    if captured is None:
        captured = Captured(
            relevant.token_ids, relevant.lengths, relevant.pooled, relevant.special, relevant.logits, relevant.targets,
            multi_label=classifier.multi_label,
        )
    # With --mask-special the LRP pass starts from the masked pass's logit, not the prediction's.
    captured.relevance_logits = relevant.attributed_logits.gather(1, relevant.targets[:, None])[:, 0]
    # Relevance = value x modified gradient, summed in float64 (many terms of both signs).
    if WORD_RELEVANCE in lrp:
        captured.word_relevance = (relevant.embeddings.double() * relevant.embedding_gradients.double()).sum(-1)
    if LAYER_RELEVANCE in lrp:
        first, gradient = relevant.activations[:, 0].double(), relevant.gradients[:, 0].double()
        captured.layer_relevance = (first * gradient).sum(-1)
    if ATTENTION_RELEVANCE in lrp:
        captured.attention_relevance = relevant.attentions * relevant.attention_gradients
    if LRP_GRADIENTS in lrp:
        captured.lrp_gradients, captured.lrp_activations = relevant.gradients, relevant.activations
    return captured


@dataclass(frozen=True)
class _Plan:
    """What one pass records, from what the methods need."""

    needs: frozenset[str]  # what the methods read from the pass
    backward: bool
    layer_inputs: bool
    attention: bool
    embeddings: bool
    at_first_layer: bool  # the word-embedding point is A^1 (families whose embeddings enter a LayerNorm)

    @classmethod
    def of(cls, needs: frozenset[str], classifier: Classifier, word_point: bool = False) -> _Plan:
        """``word_point``: the word embeddings kept in every family (the LRP pass's relevance point)."""
        backward = bool(BACKWARD_NEEDS & needs)
        at_first_layer = (
            not word_point and classifier.adapter.embedding_point == LAYER and bool({EMBEDDINGS, EMBEDDING_GRADIENTS} & needs)
        )
        return cls(
            needs=needs,
            backward=backward,
            layer_inputs=bool({ACTIVATIONS, GRADIENTS} & needs) or at_first_layer,
            attention=bool({ATTENTIONS, ATTENTION_RECEIVED, ATTENTION_GRADIENTS} & needs),
            embeddings=bool({EMBEDDINGS, EMBEDDING_GRADIENTS} & needs) or backward,
            at_first_layer=at_first_layer,
        )


@dataclass
class _Pass:
    """What the hooked forward (and backward) of one batch gave."""

    logits: torch.Tensor  # of the attribution pass (masked with mask_special)
    plain_logits: torch.Tensor | None  # of the plain pass, with mask_special
    targets: torch.Tensor
    inputs: list[torch.Tensor]  # A^l, one per layer application
    attentions: tuple | None
    point: torch.Tensor | None  # where word-embedding gradients are taken
    gradients: list[torch.Tensor]  # in the order: layers, attentions, the point


def _capture_pass(
    classifier: Classifier,
    sequences: Sequence[Sequence[int]],
    special: Sequence[Sequence[bool]],
    targets: Sequence[int | None],
    plan: _Plan,
    mask_special: bool,
) -> Captured:
    """One forward (and backward) pass recording what ``plan`` says."""
    needs = plan.needs
    ids, real = pad(sequences, classifier.pad_id, classifier.device)
    special_mask = torch.zeros_like(real, dtype=torch.bool)
    for row, flags in enumerate(special):
        special_mask[row, : len(flags)] = torch.as_tensor(list(flags), dtype=torch.bool)
    batch = _Batch(ids, real, special_mask)
    done = _hooked_pass(classifier, batch, targets, needs, mask_special, plan)
    return _assemble(classifier, sequences, batch, needs, plan, done)


@dataclass(frozen=True)
class _Batch:
    """A padded batch: token ids, the attention mask of its real tokens, and its special tokens."""

    ids: torch.Tensor
    real: torch.Tensor
    special: torch.Tensor


@contextlib.contextmanager
def _recording(classifier: Classifier, plan: _Plan) -> Iterator[tuple[list, list]]:
    """Hooks that keep what the plan needs of one pass: each layer's input A^l and the
    embeddings' output, in the lists given; removed after the pass, however it ends."""
    inputs: list[torch.Tensor] = []
    embedded: list[torch.Tensor] = []

    def record_layer_input(_module, args, kwargs):
        inputs.append(layer_input(args, kwargs))

    def record_embeddings(_module, _args, output):
        if plan.backward and not output.requires_grad:
            output.requires_grad_()  # frozen weights: the graph must still reach everything after it
        embedded.append(output)

    handles = []
    try:
        if plan.embeddings:
            handles.append(classifier.model.get_input_embeddings().register_forward_hook(record_embeddings))
        if plan.layer_inputs:
            handles += [
                layer.register_forward_pre_hook(record_layer_input, with_kwargs=True)
                for layer in classifier.adapter.layers
            ]
        yield inputs, embedded
    finally:
        for handle in handles:
            handle.remove()


def _hooked_pass(classifier, batch: _Batch, targets, needs, mask_special, plan: _Plan) -> _Pass:
    """The forward pass with hooks on the layers and embeddings, and the backward of the target logits."""
    ids, real = batch.ids, batch.real
    lengths, rows = real.sum(dim=1), range(len(targets))
    plain_logits = None
    if mask_special:
        # The prediction (and so the target) comes from the plain mask; only
        # the attribution pass sees the special tokens masked.
        with torch.no_grad():
            plain_logits, _ = classify(classifier, real, lengths, input_ids=ids)
    forward_mask = real.masked_fill(batch.special, 0) if mask_special else real
    with _recording(classifier, plan) as (inputs, embedded):
        with torch.set_grad_enabled(plan.backward):
            logits, attentions = classify(
                classifier, forward_mask, lengths, input_ids=ids, output_attentions=plan.attention
            )
            check_finite(logits.detach(), rows)
            if plan.layer_inputs and len(inputs) != classifier.num_layers:
                raise RunFailed(
                    f"captured {len(inputs)} layer inputs, expected {classifier.num_layers}: "
                    f"the {classifier.adapter.model_type!r} row of contrastcat's families is wrong"
                )
            if plan.attention:
                attentions = _checked_attentions(classifier, attentions)
            if plain_logits is not None:
                check_finite(plain_logits, rows)
            predicted = (plain_logits if plain_logits is not None else logits).argmax(dim=-1)
            chosen = torch.as_tensor(
                [int(predicted[b]) if t is None else int(t) for b, t in enumerate(targets)], device=classifier.device
            )
            point = inputs[0] if plan.at_first_layer else embedded[0] if embedded else None
            wrt = [
                *(inputs if GRADIENTS in needs else []),
                *(list(attentions) if ATTENTION_GRADIENTS in needs else []),
                *([point] if EMBEDDING_GRADIENTS in needs else []),
            ]
            gradients = []
            if wrt:
                target_logits = logits.gather(1, chosen[:, None]).sum()
                gradients = [g.detach().float() for g in torch.autograd.grad(target_logits, wrt)]
    return _Pass(logits, plain_logits, chosen, inputs, attentions, point, gradients)


def _assemble(classifier, sequences, batch: _Batch, needs, plan: _Plan, done: _Pass) -> Captured:
    """The tensors the methods asked for, detached, in float32."""
    real, special_mask = batch.real, batch.special
    logits = done.plain_logits if done.plain_logits is not None else done.logits
    captured = Captured(
        token_ids=[tuple(s) for s in sequences],
        lengths=[len(s) for s in sequences],
        pooled=[len(s) - 1 if classifier.adapter.decoder else 0 for s in sequences],
        special=special_mask,
        logits=logits.detach().float(),
        targets=done.targets,
        attributed_logits=done.logits.detach().float(),
        multi_label=classifier.multi_label,
    )
    gradients = done.gradients
    if ACTIVATIONS in needs:
        captured.activations = torch.stack([a.detach().float() for a in done.inputs], dim=1)
    if GRADIENTS in needs:
        captured.gradients = torch.stack(gradients[: len(done.inputs)], dim=1)
        gradients = gradients[len(done.inputs) :]
    if plan.attention:
        # Layer by layer: a float32 copy of every layer's [H, T, T] at once would cost
        # L·H·T²·4 bytes (17 GB for a 7B decoder at 2,048 tokens) only to be averaged.
        captured.attention_received = torch.stack(
            [_received_attention(a.detach(), real.bool()) for a in done.attentions], dim=1
        )
        if ATTENTIONS in needs or ATTENTION_GRADIENTS in needs:
            captured.attentions = torch.stack([a.detach().float() for a in done.attentions], dim=1)
    if ATTENTION_GRADIENTS in needs:
        captured.attention_gradients = torch.stack(gradients[: len(done.attentions)], dim=1)
        gradients = gradients[len(done.attentions) :]
    if EMBEDDINGS in needs or EMBEDDING_GRADIENTS in needs:
        captured.embeddings = done.point.detach().float()
    if EMBEDDING_GRADIENTS in needs:
        captured.embedding_gradients = gradients[0]
    return captured
