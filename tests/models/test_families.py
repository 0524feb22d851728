"""Every model family: a tiny random model built from its config (no network) runs the
whole pipeline, and what capture records is checked against HuggingFace directly.

Oracles are independent of contrastcat's code paths: ``output_hidden_states`` and
``torch.autograd.grad`` on the model's own forward pass (HF's own classification
head, on one unpadded input), and the one-at-a-time run for batching.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from contrastcat.attribution.pipeline import ExplainSettings, explain
from contrastcat.capture.core import capture
from contrastcat.evaluation.curves import EvalSettings
from contrastcat.usecases.evaluate_records import perturbation_curves
from contrastcat.library import BuildSettings, RefLibrary, SelectionSettings, build_library
from contrastcat.records.data import LabelledData
from contrastcat.methods import METHODS, build_method, build_methods
from contrastcat.models import FAMILIES, wrap_classifier
from contrastcat.models.families import LAYER_NORM
from contrastcat.models.tokens import tokenize
from contrastcat.records.inputs import InputRow
from contrastcat.testing import tiny, toy

from ..helpers import TEXTS as ALL_TEXTS
from ..helpers import assert_same_map, fallback_model

FAMILY_NAMES = sorted(FAMILIES)
ALBERT_LAYERS = 3
# Cheap settings: every method still runs its whole code path.
OPTIONS = {"refs_used": 4, "candidates": 4, "ig_steps": 4, "clusters": 4}
TEXTS = ALL_TEXTS[:5]


def test_every_family_has_a_tiny_builder():
    assert sorted(tiny.TINY) == FAMILY_NAMES


@pytest.mark.parametrize("model_type", FAMILY_NAMES)
def test_each_row_names_every_norm_of_its_models_and_its_kind(model_type):
    """The LRP rules hold a norm's normaliser constant by the row's word (capture.lrp_rules): a norm
    class missing from the row would be differentiated, and a wrong kind centred or not. The kind
    is checked on the module's own arithmetic: a layer norm ignores a shift of its input, an RMS
    norm does not."""
    model, _ = tiny.build(model_type, seed=1, layers=2)
    row = dict(FAMILIES[model_type].norms)
    found = {type(m).__name__: m for m in model.modules()
             if isinstance(m, torch.nn.LayerNorm) or type(m).__name__.endswith("Norm")}
    assert sorted(found) == sorted(row)
    for name, module in found.items():
        x = torch.randn(3, module.weight.shape[-1])
        with torch.no_grad():
            shifted = torch.allclose(module(x), module(x + 2.0), atol=1e-5)
        assert shifted == (row[name] == LAYER_NORM), (name, row[name])


_CLASSIFIERS: dict[str, object] = {}


def tiny_classifier(model_type: str):
    if model_type not in _CLASSIFIERS:
        layers = ALBERT_LAYERS if model_type == "albert" else 2
        model, tokenizer = tiny.build(model_type, seed=1, layers=layers, init_range=0.2)
        _center_head(model, tokenizer)
        _CLASSIFIERS[model_type] = wrap_classifier(model, tokenizer, name=f"tiny-{model_type}")
    return _CLASSIFIERS[model_type]


@torch.no_grad()
def _center_head(model, tokenizer) -> None:
    """A random [CLS]-pooled encoder gives almost the same logits for every input,
    so one class wins everywhere and no class has references of another. Centre
    the output layer's bias on the toy sentences so the predictions vary; decoder
    heads have no bias and already vary."""
    heads = [m for m in model.modules() if isinstance(m, torch.nn.Linear) and m.out_features == len(toy.LABELS)]
    if not heads or heads[-1].bias is None:
        return
    texts = [e.text for e in toy.make_examples(60, seed=5)]
    encoded = tokenizer(texts, padding=True, return_tensors="pt")
    logits = model(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]).logits
    heads[-1].bias -= logits.mean(dim=0)


@pytest.mark.parametrize("model_type", FAMILY_NAMES)
def test_capture_matches_hidden_states_and_autograd(model_type):
    classifier = tiny_classifier(model_type)
    (text,) = tokenize(classifier.tokenizer, [TEXTS[1]], 64, classifier.empty_input)
    captured = capture(classifier, [text.ids], [text.special], [1])

    ids = torch.tensor([list(text.ids)])
    with torch.enable_grad():
        output = classifier.model(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
        entering = output.hidden_states[: classifier.num_layers]
        gradients = torch.autograd.grad(output.logits[0, 1], entering)
    assert classifier.num_layers == classifier.model.config.num_hidden_layers
    assert torch.allclose(captured.logits[0], output.logits[0].detach(), atol=1e-5)
    for layer in range(classifier.num_layers):
        assert torch.allclose(captured.activations[0, layer], entering[layer][0].detach(), atol=1e-5), layer
        assert torch.allclose(captured.gradients[0, layer], gradients[layer][0], atol=1e-5), layer
    if model_type == "albert":
        # One shared layer module applied L times: each application is its own A^l.
        assert captured.activations.shape[1] == ALBERT_LAYERS
        for a in range(ALBERT_LAYERS):
            for b in range(a + 1, ALBERT_LAYERS):
                assert not torch.allclose(captured.activations[0, a], captured.activations[0, b], atol=1e-3)


def _library(classifier, path) -> RefLibrary:
    """A library over toy sentences labelled with the random model's own predictions
    (references must be classified correctly)."""
    from contrastcat.models import predictor

    texts = [e.text for e in toy.make_examples(60, seed=5)]
    tokenized = tokenize(classifier.tokenizer, texts, 64, classifier.empty_input)
    predicted = predictor(classifier, 16)([t.ids for t in tokenized]).argmax(axis=1)
    assert len(set(predicted.tolist())) >= 2, "the random model predicts one class only: no references"
    build_library(
        classifier,
        LabelledData(texts, predicted.tolist(), "toy"),
        path,
        BuildSettings(selection=SelectionSettings(k=4, keep=6, min_tokens=4), pools=("same", "random")),
    )
    return RefLibrary(path)


@pytest.mark.parametrize("model_type", FAMILY_NAMES)
def test_build_refs_explain_every_method_evaluate(model_type, tmp_path):
    classifier = tiny_classifier(model_type)
    library = _library(classifier, tmp_path / "refs.h5")
    assert library.info.pad_token_id == classifier.pad_id
    rows = [InputRow(line=i + 1, id=i, text=text) for i, text in enumerate(TEXTS)]
    methods = build_methods(list(METHODS), **OPTIONS)
    together = list(explain(classifier, rows, methods, library, options=ExplainSettings(batch_size=len(rows))))
    alone = list(explain(classifier, rows, methods, library, options=ExplainSettings(batch_size=1)))
    assert len(together) == len(rows) * len(methods)
    for batched, single in zip(together, alone):
        assert (batched.id, batched.method) == (single.id, single.method)
        assert_same_map(batched, single)
        assert np.allclose(batched.probs, single.probs, atol=1e-5)
        assert batched.refs_kept == single.refs_kept
        assert batched.pad_token_id == classifier.pad_id
        assert len(batched.scores) == len(batched.tokens) and all(0 <= s <= 1 for s in batched.scores)

    from contrastcat.models import predictor

    predict = predictor(classifier, 8)
    for name in METHODS:
        report = perturbation_curves(
            [r for r in together if r.method == name], predict, EvalSettings(min_tokens=3), classifier.label_names
        )
        assert report.evaluated >= 3
        for curve in report.curves.values():
            assert np.all(np.isfinite(curve.aopc)) and np.all(np.isfinite(curve.lodds))


@pytest.mark.parametrize("kind", ["camembert", "gpt_neox", "bloom"])
def test_a_family_with_no_row_works_through_the_checked_fallback(kind):
    assert kind not in FAMILIES
    model, tokenizer = fallback_model(kind)
    classifier = wrap_classifier(model, tokenizer, name=kind)
    warning = classifier.adapter.warning
    assert warning and f"model type {kind!r} has no row" in warning and "\n" not in warning
    assert classifier.adapter.decoder == (kind in ("gpt_neox", "bloom"))
    # BLOOM's word embeddings enter a LayerNorm: the fallback finds it and attributes A^1.
    assert classifier.adapter.embedding_point == ("layer" if kind == "bloom" else "word")
    assert classifier.adapter.family.norms == (("LayerNorm", LAYER_NORM),)  # guessed from the class names
    (text,) = tokenize(tokenizer, [TEXTS[1]], 64, classifier.empty_input)
    captured = capture(classifier, [text.ids], [text.special], [0])
    ids = torch.tensor([list(text.ids)])
    output = model(input_ids=ids, output_hidden_states=True)
    assert torch.allclose(captured.logits[0], output.logits[0].detach(), atol=1e-5)
    for layer in range(2):
        assert torch.allclose(captured.activations[0, layer], output.hidden_states[layer][0].detach(), atol=1e-5)
    methods = build_methods(["attcat", "input-x-gradient", "integrated-gradients"], ig_steps=4)
    records = list(explain(classifier, [InputRow(1, 1, TEXTS[1]), InputRow(2, 2, TEXTS[2])], methods))
    assert len(records) == 6
    if kind == "camembert":  # positions counted from padding_idx + 1, as RoBERTa: 66 - 2 usable
        assert classifier.position_limit == 64
        long = " ".join(["good film"] * 80)
        (record,) = explain(classifier, [InputRow(1, 1, long)], build_method("attcat"),
                            options=ExplainSettings(max_length=classifier.position_limit))
        assert len(record.tokens) == 64 and record.truncated


def test_a_family_whose_layers_cannot_be_found_is_refused_in_one_line():
    from contrastcat.errors import BadInput

    model, tokenizer = fallback_model("camembert")
    model.config.num_hidden_layers = 5  # no list of 5 layers anywhere
    with pytest.raises(BadInput) as caught:
        wrap_classifier(model, tokenizer, name="odd")
    message = str(caught.value)
    assert message.startswith("model type 'camembert' is not supported: no single layer list") and "\n" not in message


@pytest.mark.parametrize("model_type", ["modernbert", "deberta-v2"])
def test_families_with_normalized_word_embeddings_attribute_the_first_layer_input(model_type):
    """Their word embeddings enter a LayerNorm, which is scale-invariant: input x gradient
    there sums to zero for every token. Input-gradient methods use A^1 instead."""
    from contrastcat.capture.passes import ModelPasses

    classifier = tiny_classifier(model_type)
    assert classifier.adapter.embedding_point == "layer"
    (text,) = tokenize(classifier.tokenizer, [TEXTS[1]], 64, classifier.empty_input)
    ids = torch.tensor([list(text.ids)])
    model = classifier.model
    words = model.get_input_embeddings()(ids).detach().requires_grad_()
    with torch.enable_grad():
        output = model(inputs_embeds=words, output_hidden_states=True)
        word_gradient, first_gradient = torch.autograd.grad(output.logits[0, 2], [words, output.hidden_states[0]])
    at_words = (words * word_gradient).sum(-1)[0]
    assert at_words.abs().max() < 1e-4 * (words.norm(dim=-1) * word_gradient.norm(dim=-1)).max()

    captured = capture(classifier, [text.ids], [text.special], [2])
    assert torch.allclose(captured.embeddings[0], output.hidden_states[0][0].detach(), atol=1e-5)
    assert torch.allclose(captured.embedding_gradients[0], first_gradient[0], atol=1e-5)
    at_first = (captured.embeddings[0] * captured.embedding_gradients[0]).sum(-1)
    assert at_first.max() - at_first.min() > 1e-2  # a map that is not rounding noise
    # Integrated gradients' passes feed A^1 directly: at the input itself they give the same gradient.
    passes = ModelPasses(classifier, batch_size=4)
    (again,) = passes.embedding_gradients([captured.embeddings[0]], [list(text.special)], [2])
    assert torch.allclose(again, first_gradient[0], atol=1e-5)


def test_deberta_with_position_biased_input_keeps_the_word_embeddings():
    model, tokenizer = tiny.build("deberta-v2", seed=1)
    model.config.position_biased_input = True
    assert wrap_classifier(model, tokenizer, name="v2").adapter.embedding_point == "word"


def test_a_guessed_layer_list_that_does_not_run_once_per_layer_is_refused():
    """Funnel's encoder.blocks has num_hidden_layers entries, but they are lists, never called."""
    import transformers

    from contrastcat.errors import BadInput

    config = transformers.FunnelConfig(
        vocab_size=100, d_model=32, n_head=4, d_head=8, d_inner=64, block_sizes=[1, 1], num_labels=2
    )
    assert config.num_hidden_layers == 2
    with pytest.raises(BadInput, match=r"model type 'funnel' is not supported: the 2 modules at 'encoder.blocks' ran 0"):
        wrap_classifier(transformers.FunnelForSequenceClassification(config), tiny.make_tokenizer("bert"), name="f")


def test_without_attention_probabilities_attention_methods_fail_in_one_line_and_the_others_run():
    from contrastcat.errors import BadInput

    model, tokenizer = tiny.build("bert", seed=1)
    classifier = wrap_classifier(model, tokenizer, name="sdpa-bert")
    model.config._attn_implementation = "sdpa"  # a kernel that returns no attention probabilities
    rows = [InputRow(1, 1, TEXTS[1])]
    for name in ("rawatt", "attcat", "grad-sam"):
        with pytest.raises(BadInput, match=r"^model type 'bert' returns no attention probabilities \(attention "
                           r"implementation 'sdpa'\): methods that read attention cannot run on it; the others can$"):
            list(explain(classifier, rows, build_method(name)))
    for name in ("cat", "input-x-gradient", "tis"):
        (record,) = explain(classifier, rows, build_methods([name], shared=True, clusters=4))
        assert np.all(np.isfinite(record.scores))


@pytest.mark.parametrize("model_type", FAMILY_NAMES)
def test_tiny_tokenizers_are_the_same_every_time(model_type):
    """A tokenizer trainer that numbers its vocabulary differently from run to run
    would make every trained toy model (and its test) change."""
    first, second = tiny.make_tokenizer(model_type), tiny.make_tokenizer(model_type)
    assert first.get_vocab() == second.get_vocab()
    assert first.backend_tokenizer.to_str() == second.backend_tokenizer.to_str()


def test_integrated_gradients_passes_see_deberta_convolution():
    """DeBERTa-v2 checkpoints with conv_kernel_size feed the embedding output to a convolution beside
    the first layer: the IG passes must replace that output, not only the first layer's input."""
    from contrastcat.capture.passes import ModelPasses

    tokenizer = tiny.make_tokenizer("deberta-v2")
    row = tiny.TINY["deberta-v2"]
    config = row.config(len(tokenizer), 32, 2, 4, tiny._ids(tokenizer, row.specials))
    config.num_labels, config.initializer_range, config.conv_kernel_size, config.conv_act = 3, 0.2, 3, "gelu"
    torch.manual_seed(1)
    import transformers

    model = transformers.AutoModelForSequenceClassification.from_config(config, attn_implementation="eager").eval()
    classifier = wrap_classifier(model, tokenizer, name="deberta-conv")
    (text,) = tokenize(tokenizer, [TEXTS[1]], 64, classifier.empty_input)
    ids = torch.tensor([list(text.ids)])
    with torch.enable_grad():
        output = model(input_ids=ids, output_hidden_states=True)
        (expected,) = torch.autograd.grad(output.logits[0, 1], [output.hidden_states[0]])
    captured = capture(classifier, [text.ids], [text.special], [1])
    (again,) = ModelPasses(classifier).embedding_gradients([captured.embeddings[0]], [list(text.special)], [1])
    assert torch.allclose(captured.embedding_gradients[0], expected[0], atol=1e-5)
    assert torch.allclose(again, expected[0], atol=1e-5)


@pytest.mark.parametrize("model_type", FAMILY_NAMES)
def test_mask_special_batches_like_one_at_a_time_or_is_refused(model_type):
    from contrastcat.errors import BadInput

    classifier = tiny_classifier(model_type)
    rows = [InputRow(line=i + 1, id=i, text=text) for i, text in enumerate(TEXTS)]
    methods = build_methods(["attcat", "att-grads", "integrated-gradients"], ig_steps=4)
    if not FAMILIES[model_type].mask_special:
        with pytest.raises(BadInput, match=f"^special tokens cannot be masked in model type '{model_type}'"):
            list(explain(classifier, rows, methods, options=ExplainSettings(mask_special=True)))
        return
    together = explain(classifier, rows, methods, options=ExplainSettings(batch_size=len(rows), mask_special=True))
    alone = explain(classifier, rows, methods, options=ExplainSettings(batch_size=1, mask_special=True))
    for batched, single in zip(together, alone):
        assert_same_map(batched, single)
