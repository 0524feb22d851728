"""Model resolution and loading: aliases, local directories, offline hub ids, adapters."""

from __future__ import annotations

import pytest
import torch

from contrastcat.capture.core import capture
from contrastcat.errors import BadInput, ModelUnavailable
from contrastcat.models import loading, weights_fingerprint, wrap_classifier
from contrastcat.models.aliases import ALIASES
from contrastcat.models.resolve import load_classifier, resolve_source
from contrastcat.testing import toy


def test_aliases_resolve_to_their_hub_ids_and_data():
    assert resolve_source("bert-sst2")[0] == "textattack/bert-base-uncased-SST-2"
    assert ALIASES["bert-amazon"].data.text_field == "content"
    assert ALIASES["bert-sst2"].data.spec == "nyu-mll/glue:sst2"
    assert ALIASES["bert-imdb"].label_names == ("negative", "positive")
    assert resolve_source("distilbert-sst2")[0] == "distilbert/distilbert-base-uncased-finetuned-sst-2-english"
    assert resolve_source("roberta-sst2")[0] == "textattack/roberta-base-SST-2"
    assert resolve_source("gpt2-sst2")[0] == "PavanNeerudu/gpt2-finetuned-sst2"
    assert ALIASES["gpt2-sst2"].data.spec == "nyu-mll/glue:sst2"


def test_missing_local_directory_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no such directory"):
        load_classifier(str(tmp_path / "nope"), "cpu")


def test_offline_hub_id_is_one_clear_error():
    with pytest.raises(ModelUnavailable) as caught:
        load_classifier("some-org/not-cached-model", "cpu")
    message = str(caught.value)
    assert "\n" not in message and "some-org/not-cached-model" in message and "local model directory" in message


@pytest.mark.parametrize("alias", ["roberta-sst2", "gpt2-sst2", "distilbert-sst2"])
def test_hub_aliases_offline_fail_in_one_line(alias):
    with pytest.raises(ModelUnavailable) as caught:
        load_classifier(alias, "cpu")
    message = str(caught.value)
    assert "\n" not in message and ALIASES[alias].model_id in message and "is not in the local cache" in message


def test_never_trusts_remote_code(monkeypatch, toy_dir):
    seen = []
    original = loading.AutoModelForSequenceClassification.from_pretrained

    def spy(*args, **kwargs):
        seen.append(kwargs.get("trust_remote_code"))
        return original(*args, **kwargs)

    monkeypatch.setattr(loading.AutoModelForSequenceClassification, "from_pretrained", spy)
    load_classifier(str(toy_dir / "model"), "cpu")
    assert seen == [False]


def test_local_directory_loads_with_eager_attention(toy_classifier):
    assert toy_classifier.model.config._attn_implementation == "eager"
    assert toy_classifier.label_names == toy.LABELS
    assert toy_classifier.num_layers == toy_classifier.model.config.num_hidden_layers == 2


def test_fingerprint_follows_the_weights():
    first = toy.make_model(seed=1)
    same = toy.make_model(seed=1)
    other = toy.make_model(seed=2)
    assert weights_fingerprint(first) == weights_fingerprint(same) != weights_fingerprint(other)


def test_distilbert_layers_and_capture():
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=80, dim=32, n_layers=3, n_heads=4, hidden_dim=64, num_labels=2)
    classifier = wrap_classifier(DistilBertForSequenceClassification(config), toy.make_tokenizer(), name="distil")
    assert classifier.num_layers == config.num_hidden_layers == 3
    ids = [2, 10, 11, 12, 3]
    captured = capture(classifier, [ids], [[True, False, False, False, True]], [1])
    assert captured.activations.shape == (1, 3, 5, 32)
    assert captured.attention_received.shape == (1, 3, 5)
    # Query-averaged attention received sums to 1 over keys: each query row sums to 1.
    assert torch.allclose(captured.attention_received.sum(-1), torch.ones(1, 3))


def test_hooks_are_removed_after_an_error(toy_classifier, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    def hooks():  # transformers keeps hooks of its own on some modules: compare, do not expect none
        return {
            name: (tuple(module._forward_hooks), tuple(module._forward_pre_hooks))
            for name, module in toy_classifier.model.named_modules()
        }

    layers = toy_classifier.adapter.layers
    capture(toy_classifier, [[2, 10, 3]], [[True, False, True]], [None])  # transformers adds its own on first use
    before = hooks()
    monkeypatch.setattr(layers[1], "forward", explode)
    with pytest.raises(RuntimeError, match="boom"):
        capture(toy_classifier, [[2, 10, 3]], [[True, False, True]], [None])
    # Every hook capture registers is gone: the layers', the word embeddings', any other.
    assert hooks() == before
    assert all(not layer._forward_pre_hooks for layer in layers)


def test_capture_works_with_frozen_weights(toy_classifier):
    from contrastcat.testing import toy as toy_module

    model = toy_module.make_model(seed=4).requires_grad_(False)
    classifier = wrap_classifier(model, toy_module.make_tokenizer(), name="frozen")
    captured = capture(classifier, [[2, 10, 11, 3]], [[True, False, False, True]], [0])
    assert captured.gradients.abs().sum() > 0
