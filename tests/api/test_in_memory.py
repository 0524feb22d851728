"""contrastcat.load_model on a model already in memory: (model, tokenizer) and a pipeline.

The records must be those of the same weights loaded from their directory, the model must be
the caller's own object (not a copy), and its attention setting and training mode must be as
the caller left them after every call.
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

import contrastcat
from contrastcat.errors import BadInput
from contrastcat.testing import tiny

from ..helpers import assert_bad_input

TEXTS = ["the film was a brilliant story", "a dull and boring night", "the dog in the house"]
METHODS = ["contrastcat", "attcat", "integrated-gradients", "rollout", "attnlrp"]


def _from_directory(directory, attention="sdpa", training=True):
    """The caller's own model: loaded as a notebook would, with another attention implementation."""
    model = AutoModelForSequenceClassification.from_pretrained(directory, attn_implementation=attention)
    model.train(training)
    return model, AutoTokenizer.from_pretrained(directory)


@pytest.fixture(scope="module")
def directory_records(toy_dir, toy_library):
    classifier = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    return classifier, contrastcat.explain(classifier, TEXTS, toy_library, METHODS, ig_steps=8)


def test_a_model_and_its_tokenizer_give_the_directorys_records(toy_dir, toy_library, directory_records):
    loaded, expected = directory_records
    model, tokenizer = _from_directory(toy_dir / "model")
    classifier = contrastcat.load_model(model, tokenizer)
    assert classifier.model is model  # not a copy
    assert classifier.name == str(toy_dir / "model") and classifier.fingerprint == loaded.fingerprint
    records = contrastcat.explain(classifier, TEXTS, toy_library, METHODS, ig_steps=8)
    assert [r.to_dict() for r in records] == [r.to_dict() for r in expected]
    # As the caller left it: sdpa attention, training mode, every module.
    assert model.config._attn_implementation == "sdpa"
    assert model.training and all(module.training for module in model.modules())
    report = contrastcat.evaluate(classifier, records, bootstrap=0, min_tokens=3)
    assert report.table() == contrastcat.evaluate(loaded, expected, bootstrap=0, min_tokens=3).table()
    assert model.config._attn_implementation == "sdpa" and model.training


def test_a_pipeline_gives_the_directorys_records(toy_dir, toy_library, directory_records):
    _, expected = directory_records
    model, tokenizer = _from_directory(toy_dir / "model", attention="eager", training=False)
    model.config._attn_implementation = "sdpa"
    # device: a pipeline moves the model to a GPU where there is one; the directory's records are the CPU's.
    classifier = contrastcat.load_model(pipeline("text-classification", model=model, tokenizer=tokenizer, device="cpu"))
    assert classifier.model is model
    records = contrastcat.explain(classifier, TEXTS, toy_library, METHODS, ig_steps=8)
    assert [r.to_dict() for r in records] == [r.to_dict() for r in expected]
    assert model.config._attn_implementation == "sdpa" and not model.training


@pytest.mark.parametrize("function", ["sigmoid", "none"])
def test_a_pipeline_set_to_other_scores_than_softmax_is_refused(toy_dir, function):
    """A pipeline that shows sigmoid scores (multi-label use) or raw logits was explained with
    softmax probabilities it never shows; one set to softmax is taken."""
    model, tokenizer = _from_directory(toy_dir / "model", attention="eager", training=False)
    shown = pipeline("text-classification", model=model, tokenizer=tokenizer, function_to_apply=function, top_k=None)
    with pytest.raises(BadInput, match=f"^load_model: the pipeline turns the model's outputs into {function} scores"):
        contrastcat.load_model(shown)
    softmax = pipeline("text-classification", model=model, tokenizer=tokenizer, function_to_apply="softmax")
    assert contrastcat.load_model(softmax).model is model


def test_a_pair_model_in_memory(pair_models):
    root = pair_models["bert"]["root"]
    model, tokenizer = _from_directory(root / "model")
    examples = pair_models["bert"]["held_out"][:4]
    inputs = [(e.text, e.pair) for e in examples]
    borrowed = contrastcat.explain(contrastcat.load_model(model, tokenizer), inputs, method="attcat")
    loaded = contrastcat.explain(contrastcat.load_model(str(root / "model"), device="cpu"), inputs, method="attcat")
    assert [r.to_dict() for r in borrowed] == [r.to_dict() for r in loaded]


def test_weights_changed_after_loading_are_refused(toy_dir):
    model, tokenizer = _from_directory(toy_dir / "model", training=False)
    classifier = contrastcat.load_model(model, tokenizer, name="mine")
    assert contrastcat.explain(classifier, TEXTS[:1], method="attcat")[0].model == "mine"
    saved = model.classifier.bias.detach().clone()
    with torch.no_grad():
        model.classifier.bias.add_(0.5)  # one optimizer step, say
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS[:1], method="attcat"),
                     "explain", "weights of model 'mine' changed", "again with contrastcat.load_model(model, tokenizer)")
    with torch.no_grad():
        model.classifier.bias.copy_(saved)  # put back: the same weights again
    assert contrastcat.explain(classifier, TEXTS[:1], method="attcat")
    first = float(model.classifier.weight.data[0, 0])
    model.classifier.weight.data[0, 0] += 1.0  # through .data: no version counter moves
    assert_bad_input(lambda: contrastcat.evaluate(classifier, []), "evaluate", "changed since")
    model.classifier.weight.data[0, 0] = first
    rows = model.bert.embeddings.word_embeddings.weight.data
    rows[[5, 6]] = rows[[6, 5]]  # two tokens' embeddings swapped: the same values, moved
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS[:1], method="attcat"), "changed since")
    rows[[5, 6]] = rows[[6, 5]]
    assert contrastcat.explain(classifier, TEXTS[:1], method="attcat")


def test_a_classifier_loaded_by_name_is_refused_once_its_weights_change(toy_dir):
    classifier = contrastcat.load_model(str(toy_dir / "model"), device="cpu")
    assert contrastcat.explain(classifier, TEXTS[:1], method="attcat")
    saved = classifier.model.classifier.bias.detach().clone()
    with torch.no_grad():
        classifier.model.classifier.bias.mul_(2.0)
    assert_bad_input(lambda: contrastcat.explain(classifier, TEXTS[:1], method="attcat"),
                     "explain", "changed since it was loaded", "again with contrastcat.load_model")
    with torch.no_grad():
        classifier.model.classifier.bias.copy_(saved)
    assert contrastcat.explain(classifier, TEXTS[:1], method="attcat")


def test_the_callers_own_module_modes_are_kept(toy_dir):
    """A model training with one dropout switched off: each module keeps its own flag."""
    model, tokenizer = _from_directory(toy_dir / "model", training=True)
    model.bert.embeddings.dropout.eval()
    before = {name: module.training for name, module in model.named_modules()}
    classifier = contrastcat.load_model(model, tokenizer)
    contrastcat.explain(classifier, TEXTS[:2], method="attcat")
    assert {name: module.training for name, module in model.named_modules()} == before
    assert not model.bert.embeddings.dropout.training and model.bert.encoder.layer[0].attention.self.dropout.training


@pytest.mark.parametrize(
    "call,fragment",
    [
        (lambda m, t: contrastcat.load_model(m), "needs its tokenizer"),
        (lambda m, t: contrastcat.load_model(m, t, dtype="bfloat16"), "does not cast"),
        (lambda m, t: contrastcat.load_model(m, t, device="meta"), "device"),
        (lambda m, t: contrastcat.load_model("minilm-rt", t), "tokenizer goes with a model object"),
        (lambda m, t: contrastcat.load_model(m, t, name=""), "name"),
        (lambda m, t: contrastcat.load_model(m.bert, t), "not a sequence classifier"),
        (lambda m, t: contrastcat.load_model(torch.nn.Linear(2, 2), t), "not a transformers model"),
        (lambda m, t: contrastcat.load_model(pipeline("feature-extraction", model=m.bert, tokenizer=t)), "not a text classifier"),
        (lambda m, t: contrastcat.load_model(m, "bert-base-uncased"), "fast tokenizer"),
        (lambda m, t: contrastcat.load_model(m, t, dtype="banana"), "dtype must be auto, float32"),
        (lambda m, t: contrastcat.load_model(m, t, name="a\nb"), "a name on one line"),
        (lambda m, t: contrastcat.load_model(m.double(), t), "float64 weights"),
        (lambda m, t: contrastcat.load_model(m, tiny.make_tokenizer("roberta")), "do not belong together"),
        (lambda m, t: contrastcat.load_model(m.to("meta"), t), "weights on the meta device (not loaded, or offloaded by accelerate"),
    ],
)
def test_bad_in_memory_models_are_one_line(toy_dir, call, fragment):
    model, tokenizer = _from_directory(toy_dir / "model", training=False)
    assert_bad_input(lambda: call(model, tokenizer), "load_model" if "tokenizer goes" in fragment else "", fragment)
    assert model.config._attn_implementation == "sdpa"


def test_a_model_made_under_inference_mode_is_refused():
    from contrastcat.testing import toy

    with torch.inference_mode():
        model = toy.make_model(0)  # its weights are inference tensors: no version counter, no autograd
    assert_bad_input(lambda: contrastcat.load_model(model, toy.make_tokenizer()), "inference_mode")



def test_the_file_calls_take_a_model_in_memory(toy_dir, toy_library, tmp_path):
    """explain_file (with resume) and evaluate_file (with a gate) on a borrowed model: the bytes and the
    report of the same calls naming the directory."""
    model, tokenizer = _from_directory(toy_dir / "model")
    classifier = contrastcat.load_model(model, tokenizer)
    by_name, borrowed = tmp_path / "by-name.jsonl", tmp_path / "borrowed.jsonl"
    common = {"library": toy_library.path, "method": "contrastcat,attcat"}
    # device="cpu": where the borrowed model is (by name, "auto" would take a GPU where there is one).
    contrastcat.explain_file(toy_dir / "inputs.jsonl", by_name, model=toy_dir / "model", device="cpu", **common)
    run = contrastcat.explain_file(toy_dir / "inputs.jsonl", borrowed, model=classifier, resume=True, **common)
    assert run.records == 24 and borrowed.read_bytes() == by_name.read_bytes()
    reports = [
        contrastcat.evaluate_file(path, model=model_, bootstrap=0, min_tokens=3, fail_under="morf.aopc=0.01", **where)
        for path, model_, where in ((by_name, None, {"device": "cpu"}), (borrowed, classifier, {}))
    ]
    documents = [dict(report.document, input=None) for report in reports]  # "input": the file's name
    assert reports[1].passed and documents[1] == documents[0]
    assert model.config._attn_implementation == "sdpa" and model.training
    assert_bad_input(
        lambda: contrastcat.explain_file(toy_dir / "inputs.jsonl", borrowed, model=classifier, device="cpu", **common),
        "`device` goes with a model name",
    )


def test_a_large_weight_hashed_in_slices_sees_a_write_in_any_slice():
    """A weight larger than a hashed slice (8 MB) is read by several threads, slice by slice: a
    write through .data in its first, a middle or its last slice is seen, and the value put
    back gives the signature loaded."""
    from contrastcat.models.borrowed import HASHED_SLICE, weight_signature

    layer = torch.nn.Embedding(3 * HASHED_SLICE // (4 * 64) + 5, 64)  # float32: 3 slices and a part
    values = layer.weight.data.view(-1)
    assert values.numel() * 4 > 3 * HASHED_SLICE
    loaded = weight_signature(layer)
    assert weight_signature(layer) == loaded and "+" in loaded[0][3]
    for position in (0, HASHED_SLICE // 4 + 7, values.numel() - 1):
        kept = values[position].clone()
        values[position] += 0.5
        assert weight_signature(layer) != loaded, position
        values[position] = kept
        assert weight_signature(layer) == loaded


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_the_weights_signature_sees_every_write_in_each_precision(dtype):
    """The checksum of a CPU weight is of its bytes, in whatever precision it is held: a write
    through .data (no version moves), a transpose (the same values, moved) and the value put
    back are each told apart."""
    from contrastcat.models.borrowed import weight_signature

    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 4).to(dtype)
    loaded = weight_signature(layer)
    assert weight_signature(layer) == loaded
    first = layer.weight.data[1, 2].clone()
    layer.weight.data[1, 2] += 1.0
    assert weight_signature(layer) != loaded
    layer.weight.data[1, 2] = first
    assert weight_signature(layer) == loaded
    layer.weight.data = layer.weight.data.t().contiguous()  # new storage too; the checksum alone:
    assert [entry[3] for entry in weight_signature(layer)] != [entry[3] for entry in loaded]
