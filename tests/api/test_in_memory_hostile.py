"""A model in memory that is not what its fingerprint says, or that would fail deep inside,
is refused in one line, at load_model or at the next call: hooks (which change what the model
computes without changing its weights), weights partly made under inference_mode, a tokenizer
grown past the embeddings after loading, a module without input embeddings. Before, hooks kept
the directory's fingerprint (evaluate accepted their records against the directory model) and
the others ended in raw exceptions."""

from __future__ import annotations

import shutil

import h5py
import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

import contrastcat
from contrastcat.library.schema import content_fingerprint

from ..helpers import assert_bad_input, assert_one_line_error, invoke

TEXTS = ["the film was a brilliant story", "a dull and boring night"]


def _loaded(toy_dir):
    model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    return model.eval(), AutoTokenizer.from_pretrained(toy_dir / "model")


def _shift(module, inputs, output):
    output.logits[:, 0] += 5.0
    return output


def _detach(module, inputs, output):
    return (output[0].detach(), *output[1:])


def test_a_hook_added_after_loading_is_refused_and_one_added_before_too(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    assert contrastcat.explain(classifier, TEXTS, method="attcat")  # transformers' own hooks are fine
    handle = model.register_forward_hook(_shift)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "explain: model", "forward hook", "_shift", "on the model itself", "handle.remove()")
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "forward hook", "_shift")
    handle.remove()
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def test_a_hook_that_detaches_a_layer_is_one_line_not_a_traceback(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    model.bert.encoder.layer[0].register_forward_hook(_detach)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "forward hook", "_detach", "on bert.encoder.layer.0")


def test_a_global_hook_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    handle = torch.nn.modules.module.register_module_forward_hook(lambda module, inputs, output: output)
    try:
        assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "forward hook", "every module")
    finally:
        handle.remove()


def test_weights_partly_made_under_inference_mode_are_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    with torch.inference_mode():
        model.classifier = torch.nn.Linear(model.config.hidden_size, model.config.num_labels)  # the last weights
    assert not next(model.parameters()).is_inference()
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "inference_mode")


def test_a_tokenizer_grown_after_loading_is_refused_at_the_next_call(toy_dir):
    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)
    tokenizer.add_tokens([f"newword{i}" for i in range(400)])
    assert_bad_input(lambda: contrastcat.explain(classifier, ["newword3 was good"], method="attcat"),
                     "explain: model", "its tokenizer has", "do not belong together")


def test_a_module_without_input_embeddings_is_refused(toy_dir):
    model, tokenizer = _loaded(toy_dir)

    class NoEmbeddings(type(model)):
        def get_input_embeddings(self):
            raise NotImplementedError

    model.__class__ = NoEmbeddings
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "has no input embeddings")


def test_library_token_ids_outside_the_vocabulary_are_refused_before_sanity(toy_dir, toy_library, tmp_path):
    crafted = tmp_path / "refs.h5"
    shutil.copyfile(toy_library.path, crafted)
    with h5py.File(crafted, "r+") as file:
        ids = file["classes/0/token_ids"][0].copy()
        ids[1] = 10**6
        file["classes/0/token_ids"][0] = ids
        file.attrs["fingerprint"] = content_fingerprint(file)
    records = tmp_path / "attr.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                  "-o", records, "-q").exit_code == 0
    for command in (["explain", toy_dir / "inputs.jsonl", "--refs", crafted, "--method", "contrastcat",
                     "-o", tmp_path / "out.jsonl", "-q"],
                    ["sanity", records, "--refs", crafted, "-q", "--bootstrap", "0"]):
        result = invoke(*command)
        assert_one_line_error(result, "reference 0 of classes/0 holds token id 1000000, outside the vocabulary")


def _shuffled_tokenizer(toy_dir, tmp_path):
    """The model's own tokenizer with its ordinary words' ids shuffled: the same size, another vocabulary."""
    import json
    import random

    from transformers import PreTrainedTokenizerFast

    own = AutoTokenizer.from_pretrained(toy_dir / "model")
    data = json.loads(own.backend_tokenizer.to_str())
    vocab = data["model"]["vocab"]
    special = set(own.all_special_tokens)
    words = [token for token in vocab if token not in special]
    ids = [vocab[token] for token in words]
    random.Random(0).shuffle(ids)
    vocab.update(zip(words, ids))
    path = tmp_path / "shuffled.json"
    path.write_text(json.dumps(data))
    return PreTrainedTokenizerFast(tokenizer_file=str(path), **{f"{k}_token": v for k, v in own.special_tokens_map.items()})


def test_records_of_another_vocabulary_are_refused_against_the_models_own(toy_dir, toy_library, tmp_path):
    """The fingerprint names the weights; the tokens a record names must be what the model's
    tokenizer calls their ids, and a library's references must tokenise to the ids it stores."""
    model, _ = _loaded(toy_dir)
    shuffled = contrastcat.load_model(model, _shuffled_tokenizer(toy_dir, tmp_path))
    assert_bad_input(lambda: contrastcat.explain(shuffled, TEXTS, toy_library, method="contrastcat"),
                     "does not give the token ids stored for the library's references")
    records = contrastcat.explain(shuffled, TEXTS, method="attcat")
    path = tmp_path / "shuffled.jsonl"
    records.save(path)
    result = invoke("evaluate", path, "--model", toy_dir / "model", "--bootstrap", "0", "--min-tokens", "1", "-q")
    assert_one_line_error(result, "the records were made with another vocabulary")
    own = contrastcat.explain(contrastcat.load_model(str(toy_dir / "model")), TEXTS, method="attcat")
    own.save(tmp_path / "own.jsonl")
    assert invoke("evaluate", tmp_path / "own.jsonl", "--model", toy_dir / "model", "--bootstrap", "0", "--min-tokens", "1",
                  "-q").exit_code == 0


def test_buffers_made_under_inference_mode_and_a_compiled_model_are_one_line(toy_dir):
    with torch.inference_mode():
        model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model", attn_implementation="eager")
    _, tokenizer = _loaded(toy_dir)
    assert_bad_input(lambda: contrastcat.load_model(model, tokenizer), "inference_mode")
    own, _ = _loaded(toy_dir)
    assert_bad_input(lambda: contrastcat.load_model(torch.compile(own), tokenizer), "torch.compile", "_orig_mod")


def test_hooks_that_pass_for_transformers_and_a_replaced_forward_are_refused(toy_dir):
    import types

    model, tokenizer = _loaded(toy_dir)
    classifier = contrastcat.load_model(model, tokenizer)

    def disguised(module, inputs, output):
        return output

    disguised.__module__ = "transformers.fake"  # the name claims transformers; the code is here
    handle = model.bert.encoder.layer[1].register_forward_hook(disguised)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"), "forward hook", "disguised")
    handle.remove()
    head = model.classifier
    head.forward = types.MethodType(lambda self, x: torch.nn.functional.linear(x, self.weight) * 0, head)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS, method="attcat"),
                     "has its forward replaced on classifier")
    del head.forward
    assert contrastcat.explain(classifier, TEXTS, method="attcat")


def test_inputs_with_a_pair_field_explained_as_single_texts_say_so(toy_dir, tmp_path):
    source = tmp_path / "pairs.jsonl"
    source.write_text('{"id": 1, "text": "a good film", "pair": "a fine plot"}\n'
                      '{"id": 2, "text": "a dull night", "pair": "a long wait"}\n')
    result = invoke("explain", source, "--model", toy_dir / "model", "--method", "attcat", "-o", tmp_path / "o.jsonl")
    assert result.exit_code == 0
    assert result.stderr.count("the inputs have a 'pair' field, but --pair-field is not given") == 1
