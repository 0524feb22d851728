"""Bad input: one line naming the file (and line) and the problem, exit 2, no output left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from ..helpers import EXE, assert_one_line_error, invoke


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


def explain(tmp_path, refs, source, *extra):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", source, "--refs", refs, "-o", out, "--quiet", *extra)
    return result, out


def no_output_left(tmp_path, out):
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl")]


def test_malformed_json_line(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "the film was good"}\n{"text": "oops",\n')
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:2:", "malformed JSON")
    no_output_left(tmp_path, out)


@pytest.mark.parametrize(
    "line, problem",
    [('{"id": 1, "review": "good"}',
      "missing text field 'text' (its fields: id, review; --text-field names another)"), ('{"text": "   "}', "field 'text' is empty"), ('[1, 2]', "expected a JSON object"),
     ('{"text": 5}', "is not a string")],
)
def test_missing_or_empty_text(tmp_path, refs, line, problem):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "the film was good"}\n\n' + line + "\n")
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:3:", problem)
    no_output_left(tmp_path, out)


def test_csv_without_the_column(tmp_path, refs):
    source = tmp_path / "in.csv"
    source.write_text("review,label\ngood film,1\n")
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:1:", "no column 'text'", "review, label", "--text-field")
    no_output_left(tmp_path, out)


def test_missing_file(tmp_path, refs):
    result, out = explain(tmp_path, refs, tmp_path / "nope.jsonl")
    assert_one_line_error(result, "nope.jsonl: no such file")
    no_output_left(tmp_path, out)


def test_missing_library(tmp_path, toy_dir):
    result, out = explain(tmp_path, tmp_path / "none.h5", toy_dir / "inputs.jsonl")
    assert_one_line_error(result, "none.h5: no such reference library file")
    no_output_left(tmp_path, out)


@pytest.mark.parametrize("kind", ["text", "truncated"])
def test_bad_library(tmp_path, toy_dir, refs, kind):
    bad = tmp_path / "bad.h5"
    if kind == "text":
        bad.write_text("this is not HDF5\n")
    else:
        data = open(refs, "rb").read()
        bad.write_bytes(data[: len(data) // 3])
    result, out = explain(tmp_path, bad, toy_dir / "inputs.jsonl")
    assert_one_line_error(result, f"{bad}: not a")
    no_output_left(tmp_path, out)


def test_unknown_method(tmp_path, toy_dir, refs):
    result, out = explain(tmp_path, refs, toy_dir / "inputs.jsonl", "--method", "shap")
    assert_one_line_error(result, "unknown method 'shap'", "contrastcat", "attcat")
    no_output_left(tmp_path, out)


def test_library_of_another_model(tmp_path, toy_dir, refs):
    other = tmp_path / "other-model"
    from contrastcat.testing import toy

    model = toy.make_model(seed=9)
    model.save_pretrained(other)
    toy.make_tokenizer().save_pretrained(other)
    result, out = explain(tmp_path, refs, toy_dir / "inputs.jsonl", "--model", other)
    assert_one_line_error(result, f"{refs}: library was built for model", "rebuild it")
    no_output_left(tmp_path, out)


def test_gold_target_without_label(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "a good film", "label": 1}\n{"text": "a dull film"}\n')
    result, out = explain(tmp_path, refs, source, "--target", "gold")
    assert_one_line_error(result, f"{source}:2:", "needs a label")
    no_output_left(tmp_path, out)


def test_unknown_label_name(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "a good film", "label": "great"}\n')
    result, out = explain(tmp_path, refs, source, "--target", "gold")
    assert_one_line_error(result, f"{source}:1:", "'great' is not one of negative, positive, neutral")


@pytest.mark.parametrize(
    "content, problem",
    [('{"id": 1, "text": "x"}\n', "missing scores, target, tokens"),
     ('{"id": 1, "text": "x", "tokens": ["a"], "scores": [0.1, 0.2], "target": 0}\n', "same length"),
     ("not json\n", "malformed JSON")],
)
def test_render_and_evaluate_reject_bad_records(tmp_path, content, problem):
    source = tmp_path / "attr.jsonl"
    source.write_text(content)
    for command in ("render", "evaluate"):
        result = invoke(command, source)
        assert_one_line_error(result, f"{source}:1:", problem)


def test_evaluate_report_not_written_on_bad_input(tmp_path):
    source = tmp_path / "attr.jsonl"
    source.write_text("{}\n")
    result = invoke("evaluate", source, "-o", tmp_path / "report.json")
    assert result.exit_code == 2
    assert not (tmp_path / "report.json").exists()


def test_bad_option_values(tmp_path, toy_dir, refs):
    result, _ = explain(tmp_path, refs, toy_dir / "inputs.jsonl", "--target", "7")
    assert_one_line_error(result, "--target 7: the model has 3 classes")
    result = invoke("evaluate", tmp_path / "x.jsonl", "--order", "sideways")
    assert_one_line_error(result, "--order")
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "--device", "tpu")
    assert_one_line_error(result, "--device")
    # An index past torch's integers, or in another script's digits: the same one line, not torch's error.
    for spelt in ("cuda:" + "9" * 20, "cuda:\u0663", "cuda:-1", " cuda"):
        result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "--device", spelt)
        assert_one_line_error(result, f"--device: expected auto, cpu, cuda or cuda:N, got {spelt!r}")


def test_a_layer_count_too_long_to_read_is_one_line(tmp_path, toy_dir, refs):
    """Python reads no integer of over 4,300 digits: a count that long is refused as text, from the
    shell (--layers) and from Python (an int of 5,001 digits), with the value cut short."""
    import contrastcat
    from contrastcat.errors import BadInput

    for given in ("9" * 5000, "0"):
        result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "--method", "attcat", "--layers", given)
        assert_one_line_error(result, "--layers must be all or a positive number of last layers, got '")
        assert len(result.stderr) < 200
    for method in ("attcat", "contrastcat"):
        with pytest.raises(BadInput, match="layers must be at most 4294967295, got a whole number of about 5001 digits"):
            contrastcat.explain_file(toy_dir / "inputs.jsonl", refs, method=method, layers=10**5000)


def test_a_long_usage_error_is_cut_to_one_bounded_line(toy_dir, monkeypatch, capsys):
    """The console script's own path (the launcher says a usage error in one line): a misspelt
    option of 50,000 characters is said by its start and end, not all of it."""
    from contrastcat_cli import launch

    monkeypatch.setattr("sys.argv", ["contrastcat", "explain", str(toy_dir / "inputs.jsonl"), "--" + "x" * 50_000])
    assert launch._run() == 2
    said = capsys.readouterr().err
    assert said.startswith("error: No such option: --xxx") and said.count("\n") == 1 and len(said) < 2100
    assert " characters left out) … xxx" in said and said.endswith("xxx\n")


def test_output_directory_missing(tmp_path, toy_dir, refs):
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", refs, "-o", tmp_path / "no" / "out.jsonl")
    assert_one_line_error(result, "does not exist")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_explain_leaves_no_partial_output(tmp_path, toy_dir, refs, signum):
    from contrastcat.testing import toy

    source = tmp_path / "many.jsonl"
    with open(source, "w") as stream:
        for example in toy.make_examples(3000, seed=11):
            stream.write(json.dumps({"text": example.text}) + "\n")
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [EXE, "explain", str(source), "--refs", str(refs), "-o", str(out), "--batch-size", "4"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
        # A shell without job control starts background jobs with SIGINT ignored, and CI may
        # run us that way; a user's Ctrl-C arrives with the default disposition.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl")]:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the run: the temporary output is open and being written
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=180)  # generous: CI machines can be heavily loaded
    assert process.returncode == 130
    assert "interrupted" in stderr and "Traceback" not in stderr
    no_output_left(tmp_path, out)


def test_explain_without_an_input_says_what_is_missing():
    """The second hostile pass: not the API's 'must be a file name ..., got None'."""
    assert_one_line_error(invoke("explain", "--method", "random"), "missing INPUT: a JSONL or CSV file")


def test_a_gamma_above_one_is_refused(toy_dir, tmp_path):
    """f_c is a probability: a gamma above 1 would let every row pass as a confident reference."""
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "--gamma", "2",
                    "-o", tmp_path / "refs.h5")
    assert_one_line_error(result, "--gamma must be")
    assert not (tmp_path / "refs.h5").exists()
