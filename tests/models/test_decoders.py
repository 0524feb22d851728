"""Decoders (GPT-2, Llama, Qwen2): pooling, padding, special tokens, the all-deleted input.

The oracle for pooling is the model's own parts called directly in the test:
the sequence model on one unpadded input, and its ``score`` head applied to
the hidden state of the input's last token.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.capture.core import capture
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import perturbation_curves
from contrastcat.methods import build_method, build_methods
from contrastcat.models import classify, predictor, wrap_classifier
from contrastcat.models.tokens import pad, tokenize
from contrastcat.records.inputs import InputRow
from contrastcat.testing import tiny, toy

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


# --- padding: a batched input gets what it gets alone, up to float32 rounding -------------
#
# Batches are right-padded, so nothing a real token computes can see the padding: causal
# attention hides the keys after it (their softmax weight is exactly 0), its positions are
# 0..n-1 as alone, and the head reads its last real token. What padding does change is the
# float32 arithmetic: the batch's width T (keys summed in the softmax and in attention x values)
# and each matmul's row count (B x T: another kernel blocking) sum the same terms in another
# order. Measured with benchmarks/padding_drift.py (docs/models.md, Decoders), max over the four
# decoder families of |batch 16 - batch 1|, AVX-512 and AVX2 kernels: probabilities 3e-7, scores
# 1e-5 (the records' 6 decimals included). The bounds leave room for other CPUs' kernels (a tiny
# GPT-2's scores moved by 3.3e-4 on an AMD EPYC with AVX-512 BF16, not measurable here); a real
# padding error moves probabilities by 0.36 or more (test_the_bounds_catch_a_real_padding_error).
PROBABILITY_BOUND = 1e-4
SCORE_BOUND = 1e-3  # 3.3e-4 was reported on an AMD EPYC with AVX-512 BF16; min-max scaled scores; gradients and their cancelling sums amplify rounding
PADDING_METHODS = ("attcat", "integrated-gradients", "rawatt", "rollout", "input-x-gradient")
DECODERS = ("gpt2", "llama", "mistral", "qwen2")


@pytest.fixture
def ieee_float32():
    """The bounds are about float32. A process that set torch.set_float32_matmul_precision("medium")
    gets matmuls of bfloat16 operands on a CPU with AMX or AVX-512 BF16 (and float32 elsewhere):
    the test runs at torch's default, "highest", whatever the process chose, and puts it back."""
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(before)


def padding_rows() -> list[InputRow]:
    """16 inputs of 4 to 21 tokens: one batch of 16 pads the short ones by up to 17 tokens."""
    texts = ["a dull film", LONG, *(example.text for example in toy.make_examples(14, seed=5))]
    return [InputRow(i + 1, i, text) for i, text in enumerate(texts)]


def padding_drift(classifier, methods=PADDING_METHODS) -> tuple[float, float]:
    """(max |probability difference|, max |score difference|) between batches of 16 and one
    at a time: the probabilities of the predictor (not rounded) and of the records, the records' scores."""
    rows = padding_rows()
    built = build_methods(list(methods), ig_steps=4) if len(methods) > 1 else [build_method(methods[0])]
    together = list(explain(classifier, rows, built, options=ExplainSettings(batch_size=16)))
    alone = list(explain(classifier, rows, built, options=ExplainSettings(batch_size=1)))
    assert [(r.id, r.method) for r in together] == [(r.id, r.method) for r in alone]
    scores = max(float(np.abs(np.subtract(b.scores, a.scores)).max()) for b, a in zip(together, alone))
    records = max(float(np.abs(np.subtract(b.probs, a.probs)).max()) for b, a in zip(together, alone))
    sequences = [r.token_ids for r in alone[:: len(built)]]
    predicted = np.abs(predictor(classifier, 16)(sequences) - predictor(classifier, 1)(sequences)).max()
    return max(float(predicted), records), scores


@pytest.mark.parametrize("model_type", DECODERS)
def test_padding_moves_results_only_by_float32_rounding(model_type, ieee_float32):
    classifier = decoder(model_type)
    probabilities, scores = padding_drift(classifier)
    assert probabilities <= PROBABILITY_BOUND, probabilities
    assert scores <= SCORE_BOUND, scores
    # And one at a time is the model's own parts called directly.
    (record,) = explain(classifier, padding_rows()[:1], build_method("rawatt"))
    (text,) = tokenize(classifier.tokenizer, ["a dull film"], 64, classifier.empty_input)
    expected = torch.softmax(direct_logits(classifier, list(text.ids)).double(), dim=-1).numpy()
    assert np.allclose(record.probs, expected, atol=1e-5)


def test_padding_is_exact_up_to_float64_rounding_gpt2():
    """HF's GPT-2 runs in float64 end to end (Llama, Mistral and Qwen2 take their attention
    softmax in float32 whatever the weights): a right-padded batch's logits equal the unpadded
    ones to float64 rounding, on any CPU's kernels."""
    model, tokenizer = tiny.build("gpt2", seed=3, init_range=0.2)
    classifier = wrap_classifier(model.double(), tokenizer, name="tiny-gpt2-float64")
    sequences = [t.ids for t in tokenize(tokenizer, [r.text for r in padding_rows()], 64, classifier.empty_input)]
    with torch.no_grad():
        ids, mask = pad(sequences, classifier.pad_id, classifier.device)
        together, _ = classify(classifier, mask, mask.sum(dim=1), input_ids=ids)
        for row, sequence in enumerate(sequences):
            ids, mask = pad([sequence], classifier.pad_id, classifier.device)
            alone, _ = classify(classifier, mask, mask.sum(dim=1), input_ids=ids)
            assert float((together[row] - alone[0]).abs().max()) <= 1e-12
    assert len({len(s) for s in sequences}) > 5


# Real padding errors, made on purpose. Each wraps the sequence model of a classifier.


@contextlib.contextmanager
def shifted_positions(classifier):
    """Real tokens at positions shifted by their row's padding, as a left-padded batch without
    position ids computed from the mask (cumsum(mask) - 1) would put them."""

    def before(_module, args, kwargs):
        mask = kwargs["attention_mask"]
        width = mask.shape[1]
        shift = width - mask.sum(dim=1)
        return args, {**kwargs, "position_ids": torch.arange(width, device=mask.device)[None] + shift[:, None]}

    handle = classifier.adapter.base.register_forward_pre_hook(before, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def pads_attended(classifier):
    """Left padding with the pads left out of the attention mask: each real token also attends
    to the pads before it (positions stay right, and the head still reads the last real token)."""
    shifts: list[int] = []

    def before(_module, args, kwargs):
        mask = kwargs["attention_mask"]
        width = mask.shape[1]
        shifts[:] = (width - mask.sum(dim=1)).tolist()
        changed = dict(kwargs)
        for key in ("input_ids", "inputs_embeds"):
            if kwargs.get(key) is not None:
                changed[key] = torch.stack([row.roll(shift, 0) for row, shift in zip(kwargs[key], shifts)])
        changed["attention_mask"] = torch.ones_like(mask)
        changed["position_ids"] = (torch.arange(width)[None] - torch.tensor(shifts)[:, None]).clamp(min=0)
        return args, changed

    def after(_module, _args, _kwargs, output):
        output.last_hidden_state = torch.stack(
            [row.roll(-shift, 0) for row, shift in zip(output.last_hidden_state, shifts)]
        )
        return output

    handles = [
        classifier.adapter.base.register_forward_pre_hook(before, with_kwargs=True),
        classifier.adapter.base.register_forward_hook(after, with_kwargs=True),
    ]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextlib.contextmanager
def pad_pooled(classifier):
    """The head reads the batch's last position, a pad for every shorter input (what HF's head
    does when given ``inputs_embeds``)."""
    from contrastcat.models import forward

    original = forward._classify

    def last_position(classifier, inputs, attention_mask, lengths, output_attentions):
        return original(classifier, inputs, attention_mask, torch.full_like(lengths, attention_mask.shape[1]),
                        output_attentions)

    forward._classify = last_position
    try:
        yield
    finally:
        forward._classify = original


BREAKAGES = {"positions": shifted_positions, "pads-attended": pads_attended, "pad-pooled": pad_pooled}


@pytest.mark.parametrize(
    "model_type, breakage",
    [("gpt2", "positions"), ("gpt2", "pads-attended"), ("llama", "pads-attended"), ("qwen2", "pad-pooled")],
)
def test_the_bounds_catch_a_real_padding_error(model_type, breakage, ieee_float32):
    """Each error moves the probabilities 1,000 times past the bound (measured: 0.36 to 0.75).
    A shifted position is checked on GPT-2 only: rotary attention (Llama, Mistral, Qwen2) sees
    only differences of positions, so shifting a whole row changes nothing there but rounding."""
    classifier = decoder(model_type)
    with BREAKAGES[breakage](classifier):
        probabilities, scores = padding_drift(classifier, methods=("attcat",))
    assert probabilities > 1000 * PROBABILITY_BOUND, probabilities
    assert scores > SCORE_BOUND, scores


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
