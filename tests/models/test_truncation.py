"""Texts longer than the model's limit: cut, and said so in every record, on stderr and in evaluate.

The model here takes 64 positions and its tokenizer stops at 16 tokens; each toy word is one
token, so the counts are worked by hand: a text of W words has W + 2 tokens ([CLS] and [SEP]).
"""

from __future__ import annotations

import json

import pytest

from contrastcat.testing import toy

from ..helpers import assert_one_line_error, invoke

WORDS = 10_000  # about 50,000 characters


@pytest.fixture(scope="module")
def short_limit_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("limit16")
    toy.make_model(seed=4).save_pretrained(directory)
    tokenizer = toy.make_tokenizer()
    tokenizer.model_max_length = 16
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture()
def source(tmp_path):
    long_text = " ".join(toy.FILLER[i % len(toy.FILLER)] for i in range(WORDS))
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"id": "long", "text": long_text}) + "\n" + json.dumps({"id": "short", "text": "a good film"}) + "\n")
    return path


def explain(tmp_path, model, source, *extra):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", source, "--model", model, "--method", "random", "-o", out, *extra)
    records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result, records


def test_records_and_stderr_say_what_was_cut(tmp_path, short_limit_model, source):
    result, (long, short) = explain(tmp_path, short_limit_model, source, "--quiet")
    assert result.exit_code == 0, result.output
    assert len(long["tokens"]) == 16 and long["truncated"] is True and long["tokens_dropped"] == WORDS + 2 - 16
    assert short["truncated"] is False and short["tokens_dropped"] == 0
    # One summary line, even with --quiet: it tells of something done to the user's data.
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("warning: 1 of 2 input(s) had more than 16 tokens")
    assert "--max-length takes up to 64" in result.stderr


def test_max_length_up_to_the_position_limit(tmp_path, short_limit_model, source):
    result, (long, short) = explain(tmp_path, short_limit_model, source, "--max-length", "64", "-q")
    assert result.exit_code == 0, result.output
    assert len(long["tokens"]) == 64 and long["tokens_dropped"] == WORDS + 2 - 64
    assert "had more than 64 tokens" in result.stderr and "--max-length takes" not in result.stderr
    too_long, _ = explain(tmp_path, short_limit_model, source, "--max-length", "65")
    assert_one_line_error(too_long, "--max-length 65: the model", "takes 2 to 64 tokens")


def test_evaluate_counts_truncated_inputs(tmp_path, short_limit_model, source):
    result, _ = explain(tmp_path, short_limit_model, source, "-q")
    assert result.exit_code == 0
    evaluated = invoke("evaluate", tmp_path / "out.jsonl", "--json", "--min-tokens", "2")
    assert evaluated.exit_code == 0, evaluated.output
    report = json.loads(evaluated.stdout)
    assert report["truncated"] == 1 and report["methods"]["random"]["truncated"] == 1
    assert "1 of 2 record(s) explain a truncated input" in evaluated.stderr
