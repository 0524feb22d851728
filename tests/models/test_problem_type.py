"""A model whose config says it is no classifier (a regression) is refused in one line, from a
directory and in memory: every method's target and every deletion test reads the classifier's
probabilities, which a regression never computes. A multi-label classifier is explained with a
sigmoid per label (tests/models/test_multi_label.py); before, nothing read ``problem_type`` and
such models were explained with softmax probabilities and exit 0."""

from __future__ import annotations

import json
import shutil

import pytest
from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

import contrastcat
from contrastcat.errors import BadInput

from ..helpers import assert_one_line_error, invoke


def _with_problem(toy_dir, tmp_path, problem):
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    config = json.loads((model / "config.json").read_text())
    config["problem_type"] = problem
    (model / "config.json").write_text(json.dumps(config))
    return model


@pytest.mark.parametrize(("problem", "said"), [("regression", "a regression model"), ("ranking", "no problem type transformers knows")])
def test_a_directory_model_that_is_no_classifier_is_refused(toy_dir, tmp_path, problem, said):
    model = _with_problem(toy_dir, tmp_path, problem)
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "attcat", "-o", out, "-q")
    assert_one_line_error(result, f"problem_type={problem!r}", said, "explains classifiers only")
    assert not out.exists()
    assert invoke("build-refs", toy_dir / "inputs.jsonl", "--model", model, "-o", tmp_path / "r.h5", "-q").exit_code == 2


def test_a_single_label_model_says_so_and_is_explained(toy_dir, tmp_path):
    model = _with_problem(toy_dir, tmp_path, "single_label_classification")
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "rawatt", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    assert out.read_text().count("\n") > 0


def test_a_model_in_memory_is_read_as_its_config_says(toy_dir):
    model = AutoModelForSequenceClassification.from_pretrained(toy_dir / "model")
    tokenizer = AutoTokenizer.from_pretrained(toy_dir / "model")
    assert not contrastcat.load_model(model, tokenizer).multi_label  # silent: single-label, as transformers reads it
    model.config.problem_type = "multi_label_classification"
    assert contrastcat.load_model(model, tokenizer).multi_label
    model.config.problem_type = "regression"
    with pytest.raises(BadInput, match="problem_type='regression', a regression model.*classifiers only"):
        contrastcat.load_model(model, tokenizer)


@pytest.mark.parametrize(
    ("family", "head", "said"),
    [
        ("bert", "AutoModelForTokenClassification", "a token classifier"),
        # A Llama token classifier's head is named as a sequence classifier's (``score``): loaded
        # as one it would fit, and be explained as what it is not.
        ("llama", "AutoModelForTokenClassification", "a token classifier"),
        ("bert", "AutoModelForQuestionAnswering", "an extractive question-answering model"),
        ("gpt2", "AutoModelForCausalLM", "a text generator"),
    ],
)
def test_a_model_of_another_task_is_refused_naming_it(tmp_path, family, head, said):
    """From a directory (the class config.json names) and in memory (the model's class), one line
    saying what the model is and what is explained, instead of "no trained classification head"
    or, worse, an explanation."""
    other, tokenizer, result = _explained_as(tmp_path, family, head)
    assert_one_line_error(result, f"config.json names {type(other).__name__}, {said}", "sequence classifiers only")
    with pytest.raises(BadInput, match=f"it is {type(other).__name__}, {said}.*sequence classifiers only"):
        contrastcat.load_model(other, tokenizer)


@pytest.mark.parametrize(
    ("head", "said"),
    [("AutoModelForMaskedLM", "a masked language model"), ("AutoModel", "a base model (no classification head)")],
)
def test_a_checkpoint_without_a_head_is_named(tmp_path, head, said):
    other, _, result = _explained_as(tmp_path, "bert", head)
    assert_one_line_error(result, f"config.json names {type(other).__name__}, {said}")


def _explained_as(tmp_path, family: str, head: str):
    """A tiny model of ``family`` with the ``head`` of another task (a transformers Auto class),
    saved, and what explain says of it: (model, tokenizer, result)."""
    import transformers

    from contrastcat.testing import tiny

    model, tokenizer = tiny.build(family, seed=0)
    other = getattr(transformers, head).from_config(model.config)
    directory = tmp_path / "model"
    other.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"text": "a good film"}\n')
    return other, tokenizer, invoke("explain", inputs, "--model", directory, "--method", "rawatt", "-q")


def test_architectures_given_as_one_string_is_one_class(toy_dir, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(toy_dir / "model", model)
    config = json.loads((model / "config.json").read_text())
    config["architectures"] = config["architectures"][0]  # "BertForSequenceClassification", not its letters
    (model / "config.json").write_text(json.dumps(config))
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "rawatt", "-q")
    try:
        AutoConfig.from_pretrained(model)
    except Exception:  # noqa: BLE001 - transformers 5.17 refuses the file itself (5.24 reads it)
        # Then one line that says which field and why (it said only "Validation error for field
        # 'architectures':", the reason being on the next line of transformers' message).
        assert_one_line_error(result, "config.json", "architectures", "expected a list, got str")
        return
    assert result.exit_code == 0, result.output


def test_a_config_that_cannot_be_read_as_written_is_one_line(toy_dir, tmp_path):
    """problem_type is read from config.json before transformers reads the file: arrays nested past
    Python's limit raised RecursionError there (exit 1, a bare exception from load_model), and a
    long value was repeated whole in the message."""
    deep = tmp_path / "deep"
    shutil.copytree(toy_dir / "model", deep)
    (deep / "config.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    out = tmp_path / "out.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", deep, "--method", "rawatt", "-o", out, "-q")
    assert_one_line_error(result, "config.json")
    assert not out.exists()
    with pytest.raises(BadInput, match="config.json"):
        contrastcat.load_model(str(deep))
    # Its twin, read before the tokenizer loads (a tokenizer declaring code of its own is refused).
    nested = tmp_path / "nested"
    shutil.copytree(toy_dir / "model", nested)
    (nested / "tokenizer_config.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", nested, "--method", "rawatt", "-o", out, "-q")
    assert_one_line_error(result, "tokenizer")
    assert not out.exists()
    long = _with_problem(toy_dir, tmp_path / "long", "x" * 100_000)
    result = invoke("explain", toy_dir / "inputs.jsonl", "--model", long, "--method", "rawatt", "-q")
    assert_one_line_error(result, "problem_type='xxxxx", "...,", "no problem type transformers knows")
    assert len(result.stderr) < 1_000
