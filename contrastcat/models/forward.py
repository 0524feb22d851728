"""Every model call of the package: logits (and attention) of a right-padded batch.

Encoders go through the model's own head, which reads position 0. A decoder's
HuggingFace head pools "the last token that is not ``config.pad_token_id``",
found from ``input_ids``: it refuses batches when there is no pad token,
lands on the wrong token when pad = eos and a text ends in EOS, and cannot
see the padding at all when it is given ``inputs_embeds`` (integrated
gradients). So for decoders the sequence model runs here and the head
(``score``) is applied to the hidden state of the last *real* token, known
from each input's length: padding can never be pooled, and a batched result
equals the one-at-a-time result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from .borrowed import eager_eval
from .families import LAST
from .precision import forward_precision
from .tokens import ProbabilityFn, check_finite, length_batches, pad, probabilities

if TYPE_CHECKING:
    from .loading import Classifier


def classify(
    classifier: Classifier,
    attention_mask: torch.Tensor,
    lengths: torch.Tensor,
    input_ids: torch.Tensor | None = None,
    inputs_embeds: torch.Tensor | None = None,
    output_attentions: bool = False,
    type_ids: torch.Tensor | None = None,
) -> tuple[torch.Tensor, tuple[torch.Tensor, ...] | None]:
    """(logits [B, C], attentions per layer or None) of a right-padded batch.

    ``lengths`` are the real lengths (the padding), which the attention mask
    need not show: ``--mask-special`` zeroes special tokens in it too. Under
    :func:`replaced_embedding_output`, ``input_ids`` only set the shape. Sentence pairs get
    their segment ids from ``input_ids`` (see ``models.segments``), or, with
    ``inputs_embeds``, from ``type_ids``: the token ids the embeddings are of.
    """
    inputs = {"input_ids": input_ids} if inputs_embeds is None else {"inputs_embeds": inputs_embeds}
    walk = classifier.pair_types
    source = input_ids if inputs_embeds is None else type_ids
    if walk is not None and source is not None:
        inputs["token_type_ids"] = walk.batch(source, lengths).to(source.device)
    with in_use(classifier):
        return _classify(classifier, inputs, attention_mask, lengths, output_attentions)


def _classify(classifier, inputs: dict, attention_mask, lengths, output_attentions: bool):
    """The model's pass on ``inputs`` (ids or embeddings, and segment ids where it reads them)."""
    adapter = classifier.adapter
    if adapter.family.pooling != LAST:
        output = classifier.model(**inputs, attention_mask=attention_mask, output_attentions=output_attentions)
        return output.logits, output.attentions if output_attentions else None
    output = adapter.base(**inputs, attention_mask=attention_mask, output_attentions=output_attentions, use_cache=False)
    hidden = output.last_hidden_state
    rows = torch.arange(hidden.shape[0], device=hidden.device)
    logits = adapter.head(hidden[rows, lengths.to(hidden.device) - 1])
    return logits, output.attentions if output_attentions else None


@contextlib.contextmanager
def in_use(classifier: Classifier) -> Iterator[None]:
    """A borrowed model (the caller's, loaded in memory) runs with eager attention, the only
    implementation that returns attention probabilities, and in eval mode (no dropout); what it
    had before is put back after the pass, so the caller's model is left as it was."""
    if not classifier.borrowed:
        yield
        return
    with eager_eval(classifier.model):
        yield


@contextlib.contextmanager
def replaced_embedding_output(classifier: Classifier, value: torch.Tensor) -> Iterator[None]:
    """Run with ``value`` as A^1, the embeddings' output. Where the base model has an
    ``embeddings`` module its output is replaced, so everything that reads it sees
    ``value`` (DeBERTa-v2 also feeds it to a convolution beside the first layer);
    otherwise the first layer's input is, once (ALBERT applies that module again)."""
    embeddings = getattr(classifier.adapter.base, "embeddings", None)
    if isinstance(embeddings, torch.nn.Module):
        handle = embeddings.register_forward_hook(lambda _module, _args, output: value.to(output.dtype))
        try:
            yield
        finally:
            handle.remove()
        return
    calls = [0]

    def hook(_module, args, kwargs):
        calls[0] += 1
        if calls[0] > 1:
            return None
        if args and isinstance(args[0], torch.Tensor):
            return (value.to(args[0].dtype), *args[1:]), kwargs
        key = next(k for k in ("hidden_states", "x", "hidden_state") if isinstance(kwargs.get(k), torch.Tensor))
        return args, {**kwargs, key: value.to(kwargs[key].dtype)}

    handle = classifier.adapter.layers[0].register_forward_pre_hook(hook, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


def predictor(
    classifier: Classifier, batch_size: int, autocast: torch.dtype | None = None, wide: bool = False
) -> ProbabilityFn:
    """Probabilities [N, C] (float64) of N token-id sequences of any lengths: softmax over the
    classes, or a sigmoid per label for a multi-label classifier.

    An empty sequence (every token deleted from an input that has no special
    token, as GPT-2's) is scored as the classifier's ``empty_input``.
    ``autocast`` runs the passes in a lower precision (``--forward-dtype``). ``wide``: the
    softmax or sigmoid of the logits in float64, where a difference of two probabilities near 1
    is the answer (occlusion's drops: in float32 both round to 1 and the drop to 0).
    """
    device = classifier.device
    classes = classifier.num_classes

    @torch.no_grad()  # not inference_mode: a model's cached buffers must stay usable by autograd
    def predict(sequences: Sequence[Sequence[int]]) -> np.ndarray:
        out = np.zeros((len(sequences), classes))
        if not sequences:
            return out
        sequences = [s if len(s) else classifier.empty_input for s in sequences]
        for batch in length_batches([len(s) for s in sequences], batch_size):
            ids, mask = pad([sequences[i] for i in batch], classifier.pad_id, device)
            with forward_precision(device, autocast):
                logits, _ = classify(classifier, mask, mask.sum(dim=1), input_ids=ids)
            check_finite(logits, batch)
            if wide or classifier.multi_label:  # in float64 (a multi-label model's sigmoids always)
                out[batch] = probabilities(logits, classifier.multi_label).cpu().numpy()
            else:  # in float32 first, as every record and library so far was computed
                out[batch] = torch.softmax(logits.float(), dim=-1).double().cpu().numpy()
        return out

    return predict
