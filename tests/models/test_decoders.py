"""Decoders (GPT-2, Llama, Qwen2): pooling, padding, special tokens, the all-deleted input.

The oracle for pooling is the model's own parts called directly in the test:
the sequence model on one unpadded input, and its ``score`` head applied to
the hidden state of the input's last token.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.capture.core import capture
from contrastcat.evaluation.curves import EvalSettings, perturbation_curves
from contrastcat.methods import build_method, build_methods
from contrastcat.models import predictor, wrap_classifier
from contrastcat.models.tokens import tokenize
from contrastcat.records.inputs import InputRow
from contrastcat.testing import tiny

LONG = "we saw the city at night and it was a long road home with a friend and the dog was lovely"


def decoder(model_type: str):
    model, tokenizer = tiny.build(model_type, seed=3, init_range=0.2)
    return wrap_classifier(model, tokenizer, name=f"tiny-{model_type}")


def direct_logits(classifier, ids: list[int]) -> torch.Tensor:
    """score(last hidden state at the last token) of one unpadded input."""
    model = classifier.model
    base = getattr(model, model.base_model_prefix)
    with torch.no_grad():
        hidden = base(input_ids=torch.tensor([ids])).last_hidden_state
        return model.score(hidden[0, -1])


@pytest.mark.parametrize("model_type", ["gpt2", "llama"])
def test_scores_do_not_change_with_the_batch_padding(model_type):
    classifier = decoder(model_type)
    rows = [InputRow(1, "short", "a dull film"), InputRow(2, "long", LONG)]
    methods = build_methods(["attcat", "integrated-gradients", "rawatt", "rollout"], ig_steps=4)
    together = list(explain(classifier, rows, methods, options=ExplainSettings(batch_size=2)))
    alone = list(explain(classifier, rows[:1], methods, options=ExplainSettings(batch_size=1)))
    short = [r for r in together if r.id == "short"]
    assert len(short) == len(alone) == len(methods)
    for batched, single in zip(short, alone):
        assert np.allclose(batched.scores, single.scores, atol=1e-5), batched.method
        assert np.allclose(batched.probs, single.probs, atol=1e-6)
    (text,) = tokenize(classifier.tokenizer, ["a dull film"], 64, classifier.empty_input)
    expected = torch.softmax(direct_logits(classifier, list(text.ids)).double(), dim=-1).numpy()
    assert np.allclose(alone[0].probs, expected, atol=1e-5)


def test_pad_token_chosen_per_family_is_recorded():
    gpt2, llama, qwen2 = decoder("gpt2"), decoder("llama"), decoder("qwen2")
    assert gpt2.tokenizer.pad_token_id is None and gpt2.pad_id == gpt2.tokenizer.eos_token_id
    assert llama.tokenizer.pad_token_id is None and llama.pad_id == llama.tokenizer.eos_token_id
    assert qwen2.pad_id == qwen2.tokenizer.pad_token_id == qwen2.tokenizer.eos_token_id
    (record,) = explain(gpt2, [InputRow(1, 1, "a dull film")], build_method("attcat"))
    assert record.pad_token_id == gpt2.pad_id


@pytest.mark.parametrize("model_type", ["qwen2", "gpt2", "llama"])
def test_a_text_ending_in_eos_is_pooled_at_its_eos(model_type):
    """Qwen2 pads with its EOS: HF's head, looking for the last non-pad id, skips a final EOS."""
    classifier = decoder(model_type)
    eos = classifier.tokenizer.eos_token
    text = f"the film was lovely{eos}"
    (tokens,) = tokenize(classifier.tokenizer, [text], 64, classifier.empty_input)
    assert tokens.ids[-1] == classifier.tokenizer.eos_token_id and tokens.special[-1]
    ids = list(tokens.ids)
    expected = direct_logits(classifier, ids)
    long_ids = tokenize(classifier.tokenizer, [LONG], 64)[0]
    captured = capture(classifier, [ids, long_ids.ids], [tokens.special, long_ids.special], [None, None])
    assert torch.allclose(captured.logits[0], expected, atol=1e-5)
    alone = capture(classifier, [ids], [tokens.special], [None])
    assert torch.allclose(alone.logits[0], expected, atol=1e-5)
    if classifier.model.config.pad_token_id == classifier.tokenizer.eos_token_id:
        # What HF's own head does with this input: it pools the token before the EOS.
        with torch.no_grad():
            hf = classifier.model(input_ids=torch.tensor([ids])).logits[0]
        before = direct_logits(classifier, ids[:-1])
        assert torch.allclose(hf, before, atol=1e-5) and not torch.allclose(hf, expected, atol=1e-3)


class Spy:
    """A predictor that remembers every sequence it was asked to score."""

    def __init__(self, classifier):
        self.inner = predictor(classifier, 16)
        self.seen: list[tuple[int, ...]] = []

    def __call__(self, sequences):
        self.seen += [tuple(s) for s in sequences]
        return self.inner(sequences)


def test_bos_is_never_deleted_llama():
    classifier = decoder("llama")
    bos = classifier.tokenizer.bos_token_id
    rows = [InputRow(1, 1, LONG), InputRow(2, 2, "the film was awful and boring and dull")]
    records = list(explain(classifier, rows, build_method("attcat")))
    assert all(r.token_ids[0] == bos and r.special[0] and not any(r.special[1:]) for r in records)
    spy = Spy(classifier)
    for steps in ("paper", "reference"):
        perturbation_curves(records, spy, EvalSettings(min_tokens=3, steps=steps), classifier.label_names)
    assert spy.seen and all(s[0] == bos for s in spy.seen)
    assert (bos,) in spy.seen  # the reference grid's last step deletes every other token


def test_eos_is_never_deleted_and_an_all_deleted_input_is_eos_alone_gpt2(monkeypatch):
    classifier = decoder("gpt2")
    eos = classifier.tokenizer.eos_token_id
    assert classifier.empty_input == (eos,)
    text = f"the film was awful{classifier.tokenizer.eos_token} and the music was dull"
    rows = [InputRow(1, 1, text), InputRow(2, 2, "a lovely film and a great night")]
    (first, second) = list(explain(classifier, rows, build_method("attcat")))
    assert first.special.count(True) == 1 and first.token_ids[first.special.index(True)] == eos
    assert not any(second.special)  # GPT-2 adds no special token
    spy = Spy(classifier)
    perturbation_curves([first], spy, EvalSettings(min_tokens=3, steps="reference"), classifier.label_names)
    assert spy.seen and all(eos in s for s in spy.seen)
    # The reference grid's last step deletes every token of the second input:
    # an empty sequence, which the predictor scores as EOS alone.
    spy = Spy(classifier)
    perturbation_curves([second], spy, EvalSettings(min_tokens=3, steps="reference"), classifier.label_names)
    assert () in spy.seen
    assert np.allclose(classifier_probs(classifier, []), classifier_probs(classifier, [eos]))
    # Contrast-CAT's deletion test reaches the all-deleted step too, and runs.
    (record,) = explain(classifier, rows[1:], build_method("contrastcat", refs_used=0))
    assert np.all(np.isfinite(record.scores))


def classifier_probs(classifier, ids):
    return predictor(classifier, 4)([tuple(ids)])[0]
