"""The explain use case on files from Python: plain, resumed after an interrupt, sharded and merged.

``contrastcat.explain_file`` is what ``contrastcat explain`` runs; here it is called as a
notebook would, and its files are checked against the in-memory ``contrastcat.explain`` of
the same rows (another path through the library) and against each other.
"""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.errors import BadInput, Interrupted
from contrastcat.methods import METHODS
from contrastcat.testing import toy

WINDOW = 2 * 8  # batch_size 2, 8 batches a window: 45 inputs make 3 windows, the last one short


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """The inputs, written once for the module (no test changes them; outputs go to each test's tmp_path)."""
    path = tmp_path_factory.mktemp("source") / "in.jsonl"
    with open(path, "w") as stream:
        for index, example in enumerate(toy.make_examples(45, seed=61)):
            stream.write(json.dumps({"id": f"x{index}", "text": example.text}) + "\n")
    return path


@pytest.fixture(scope="module")
def plain(tmp_path_factory, source, toy_library, toy_dir):
    """One uninterrupted run's output, and what it returned: made once, the reference of three tests."""
    output = tmp_path_factory.mktemp("plain") / "plain.jsonl"
    run = contrastcat.explain_file(source, output, library=toy_library.path, model=toy_dir / "model", batch_size=2)
    return output, run


def test_a_file_run_writes_what_the_in_memory_explain_returns(source, plain, toy_library, toy_dir):
    output, run = plain
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    classifier = contrastcat.load_model(str(toy_dir / "model"))  # on the device the file run chose (a GPU's, if any)
    expected = contrastcat.explain(classifier, rows, library=toy_library, batch_size=2)
    written = [json.loads(line) for line in output.read_text().splitlines()]
    # The model as named differs (a directory here, the loaded classifier's name there); the rest is the same.
    assert [{**r, "model": ""} for r in written] == [{**r.to_dict(), "model": ""} for r in expected]
    assert (run.records, run.kept, run.inputs, run.truncated, run.skipped, run.origin) == (45, 0, 45, 0, None, "")


def test_shards_from_python_merge_into_the_plain_run(tmp_path, source, plain, toy_library, toy_dir):
    parts = []
    for index in range(3):
        part = tmp_path / f"part{index}.jsonl"
        run = contrastcat.explain_file(
            source, part, library=toy_library.path, model=toy_dir / "model", batch_size=2, shard=f"{index}/3"
        )
        assert run.shard.index == index and run.records == (WINDOW if index < 2 else 45 - 2 * WINDOW)
        parts.append(part)
    merged = tmp_path / "merged.jsonl"
    assert contrastcat.merge(reversed(parts), merged) == 45
    assert merged.read_bytes() == plain[0].read_bytes()


def test_an_interrupted_run_resumed_from_python_equals_the_plain_run(tmp_path, source, plain, toy_library, toy_dir):
    output = tmp_path / "resumed.jsonl"
    common = dict(library=toy_library.path, model=toy_dir / "model", batch_size=2, resume=True)

    def interrupt_after_two_windows(phase, done, total):
        if phase == "explaining" and done >= 2 * WINDOW:
            raise KeyboardInterrupt

    with pytest.raises((KeyboardInterrupt, Interrupted)):
        contrastcat.explain_file(source, output, progress=interrupt_after_two_windows, **common)
    assert not output.exists()
    run = contrastcat.explain_file(source, output, **common)
    # The second window was computed but not yet written when the interrupt came: the first is kept.
    assert run.kept == WINDOW and run.records == 45 - WINDOW and run.origin == "checkpoint"
    assert output.read_bytes() == plain[0].read_bytes()
    again = contrastcat.explain_file(source, output, **common)
    assert (again.origin, again.kept, again.records) == ("output", 45, 0)


def test_the_api_and_the_cli_read_a_method_list_alike(tmp_path, source, toy_library, toy_classifier, toy_dir):
    texts = ["the film was great", "a dull and boring plot"]
    by_string = contrastcat.explain(toy_classifier, texts, library=toy_library, method="contrastcat, attcat")
    by_list = contrastcat.explain(toy_classifier, texts, library=toy_library, method=["contrastcat", "attcat"])
    assert [r.method for r in by_string] == ["contrastcat", "attcat"] * 2
    assert by_string == by_list
    # Every method on each input: a few inputs read the method list as well as 45 would.
    few = tmp_path / "few.jsonl"
    few.write_text("".join(source.read_text().splitlines(keepends=True)[:3]))
    run = contrastcat.explain_file(
        few, tmp_path / "two.jsonl", library=toy_library.path, model=toy_dir / "model", method="all,attcat"
    )
    assert run.per_input == len(METHODS) and run.records == 3 * len(METHODS)


def test_bad_lines_are_skipped_and_listed_when_asked(tmp_path, toy_library, toy_dir):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "the film was great"}\n{"text": ""}\nnot json\n{"text": "a dull plot"}\n')
    common = dict(library=toy_library.path, model=toy_dir / "model", method="attcat")
    with pytest.raises(BadInput, match=r"in\.jsonl:2: "):
        contrastcat.explain_file(source, tmp_path / "out.jsonl", **common)
    assert not (tmp_path / "out.jsonl").exists()
    run = contrastcat.explain_file(source, tmp_path / "out.jsonl", on_error="skip", **common)
    assert run.records == 2 and [line.split(":")[1] for line in run.skipped] == ["2", "3"]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"shard": "2/2"}, "shard"),
        ({"resume": True, "shard": "0/2"}, "^explain_file: resume cannot be combined with shard "),
        ({"on_error": "ignore"}, "^explain_file: on_error must be one of stop, skip, got 'ignore'$"),
        ({"batch_size": 0}, "batch_size"),
        ({"resume": "yes"}, "resume"),
        ({"method": []}, "method"),
    ],
)
def test_wrong_arguments_are_one_line_before_any_work(tmp_path, source, toy_library, toy_dir, arguments, fragment):
    output = tmp_path / "out.jsonl"
    with pytest.raises(BadInput, match=fragment) as raised:
        contrastcat.explain_file(source, output, library=toy_library.path, model=toy_dir / "model", **arguments)
    assert "\n" not in str(raised.value) and not output.exists()


def test_an_api_error_names_the_parameter_and_the_command_names_its_flag(tmp_path, toy_dir):
    from ..helpers import assert_one_line_error, invoke

    common = dict(data=toy_dir / "train.jsonl", gamma=float("inf"))
    with pytest.raises(BadInput) as raised:
        contrastcat.build_refs(toy_dir / "model", tmp_path / "refs.h5", min_tokens=3, **common)
    api_message = str(raised.value)
    assert api_message.startswith("build_refs: gamma ")
    result = invoke("build-refs", "--model", toy_dir / "model", "--data", toy_dir / "train.jsonl", "--gamma", "1e400",
                    "-o", tmp_path / "refs.h5")
    assert_one_line_error(result)
    assert result.stderr == "error: --gamma " + api_message.removeprefix("build_refs: gamma ") + "\n"
    with pytest.raises(BadInput, match=r"^build_refs: k "):
        contrastcat.build_refs(toy_dir / "model", tmp_path / "refs.h5", k=0, data=toy_dir / "train.jsonl")
    assert not (tmp_path / "refs.h5").exists()
