"""contrastcat compare on files: what it writes, what it prints, and what it refuses."""

from __future__ import annotations

import json

import pytest

from contrastcat.records.inputs import InputRow
from contrastcat.usecases.compare import Choice, parse_choices, sample_rows

from ..helpers import assert_one_line_error, invoke


def test_compare_writes_its_folder_and_prints_the_same_report_as_json(tmp_path, toy_dir, toy_library):
    out = tmp_path / "cmp"
    args = ("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attnlrp,attcat,random",
            "--limit", "12", "--sanity", "2", "-q")
    result = invoke(*args, "-o", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["records.jsonl", "report.html", "report.json", "report.md"]
    page = (out / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "<script" not in page and "default-src 'none'" in page
    assert "<svg" in page  # the cost–faithfulness picture, inline (matplotlib is a test dependency)
    document = json.loads((out / "report.json").read_text())
    assert document["inputs"] == 12 and [m["method"] for m in document["methods"]][-1] == "random"
    assert len((out / "records.jsonl").read_text().splitlines()) == 3 * 12
    table = (out / "report.md").read_text()
    assert table.startswith("| method | s/input |") and document["recommendation"]["paragraph"] in table
    assert result.stdout.rstrip("\n") == table.rstrip("\n")  # the table printed is the one written
    import html

    assert html.escape(document["recommendation"]["paragraph"]) in page
    again = invoke(*args, "--json")
    assert again.exit_code == 0, again.output
    printed = json.loads(again.stdout)
    # The same inputs, methods and seeds: the same numbers (only the timings differ).
    for found in (printed, document):
        for entry in found["methods"]:
            entry.pop("seconds_per_input")
        found["recommendation"].pop("paragraph")
        found["recommendation"].pop("cheap")
        found["recommendation"].pop("cheap_of")
        found["recommendation"].pop("ranking")
    assert printed["methods"] == document["methods"] and printed["recommendation"] == document["recommendation"]


@pytest.mark.parametrize("args, said", [
    (("--method", "attnlrp"), "--method: compare needs at least two methods, got 1"),
    (("--method", "attnlrp,attcat[ig_steps=3"), "a '[' is never closed"),
    (("--method", "attnlrp,attcat[x]"), "'x' is not option=value"),
    (("--method", "attnlrp,nosuch"), "nosuch"),
    (("--method", "attnlrp,integrated-gradients[refs_used=3]"), "refs_used"),
    (("--limit", "1"), "--limit"),
    (("--method", "attnlrp,random[seed=99999999999]"), "--method random[seed=99999999999]: seed must be at most"),
    # Known only once the model is read (the toy has 2 layers): still said of the choice as written.
    (("--method", "attnlrp,attcat[layers=99]"), "--method attcat[layers=99]: layers 99: the model has 2 layers"),
    # More references than the library holds: said of the choice, not as a flag compare does not have.
    (("--method", "contrastcat[refs_used=99999],random"), "--method contrastcat[refs_used=99999]: refs_used 99999 reads"),
])
def test_bad_options_are_refused_in_one_line(tmp_path, toy_dir, toy_library, args, said):
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", tmp_path / "never", *args)
    assert_one_line_error(result, said)
    assert not (tmp_path / "never").exists()


def test_an_output_that_is_a_file_is_refused(tmp_path, toy_dir, toy_library):
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", taken,
                    "--method", "attcat,random")
    assert_one_line_error(result, f"--output {taken}: not a folder")
    assert taken.read_text() == "mine\n"


def test_variants_are_parsed_with_their_commas():
    found = parse_choices("--method", "contrastcat,contrastcat-lrp[refs_used=20,test_steps=5],attnlrp[]")
    assert found == (Choice("contrastcat"), Choice("contrastcat-lrp", {"refs_used": "20", "test_steps": "5"}),
                     Choice("attnlrp"))
    # Typed as each option is: refs_used a count, test_steps text (a step or a comma list of steps).
    from contrastcat.usecases.compare import _method

    assert {k: v for k, v in _method(found[1], seed=0).settings().items() if k in ("refs_used", "test_steps")} == \
        {"refs_used": 20, "test_steps": "5"}
    # A value's own comma (several test steps) stays with it: a piece without "=" is not an option.
    several = parse_choices("--method", "contrastcat-lrp[refs_used=4,test_steps=2,5],random")
    assert several[0] == Choice("contrastcat-lrp", {"refs_used": "4", "test_steps": "2,5"})
    assert _method(several[0], seed=0).settings()["test_steps"] == "2,5"


def test_the_sample_is_drawn_from_the_whole_file_in_its_order():
    rows = [InputRow(line=i + 1, id=i, text=f"t{i}", label=i // 50) for i in range(200)]  # sorted by label
    sample = sample_rows(iter(rows), 20, seed=3)
    assert len(sample) == 20 and [r.line for r in sample] == sorted(r.line for r in sample)
    assert {r.label for r in sample} == {0, 1, 2, 3}  # not the first 20 rows (one label)
    assert sample == sample_rows(iter(rows), 20, seed=3) != sample_rows(iter(rows), 20, seed=4)
    assert sample_rows(iter(rows[:5]), 20, seed=3) == rows[:5]


def test_a_library_method_without_a_library_is_refused_before_the_model_loads(tmp_path, toy_dir, monkeypatch):
    from contrastcat.usecases import compare as use_case

    def never(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(use_case, "classifier_for", never)
    result = invoke("compare", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--limit", "5")
    assert_one_line_error(result, "method contrastcat needs a reference library: pass --refs")
    result = invoke("compare", toy_dir / "inputs.jsonl", "--model", toy_dir / "model",
                    "--method", "attcat,integrated-gradients[ig_steps=many]")
    assert_one_line_error(result, "option ig_steps must be int, got 'many'")


def test_a_fifo_among_the_folders_files_is_refused_before_the_work(tmp_path, toy_dir, toy_library):
    """Publishing replaces the four files together with Ctrl-C held back: a FIFO there would block
    it, so it is refused first."""
    import os

    out = tmp_path / "cmp"
    out.mkdir()
    os.mkfifo(out / "report.md")
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", out,
                    "--method", "attcat,random")
    assert_one_line_error(result, "report.md: not a regular file")
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]


def test_sentence_pairs_are_compared(tmp_path, toy_dir, toy_library):
    """Pairs are tokenized for the estimate as explain tokenizes them (the paired model)."""
    rows = [json.loads(line) for line in (toy_dir / "inputs.jsonl").read_text().splitlines()][:8]
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps({"id": f"p{i}", "text": row["text"], "hyp": rows[(i + 1) % 8]["text"]}) + "\n"
                             for i, row in enumerate(rows)))
    result = invoke("compare", pairs, "--refs", toy_library.path, "--pair-field", "hyp", "--method", "attnlrp,random",
                    "--sanity", "2", "--json", "-q")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["inputs"] == 8 and [m["method"] for m in document["methods"]][-1] == "random"
