"""contrastcat compare on files: what it writes, what it prints, and what it refuses."""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.errors import BadInput, Interrupted
from contrastcat.records.inputs import InputRow
from contrastcat.spec import InCall
from contrastcat.usecases.compare import sample_rows
from contrastcat.usecases.options.compare import Choice, CompareOptions, parse_choices

from ..helpers import assert_one_line_error, invoke


def test_compare_writes_its_folder_and_prints_the_same_report_as_json(tmp_path, toy_dir, toy_library):
    out = tmp_path / "cmp"
    args = ("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attnlrp,attcat,random",
            "--limit", "12", "--sanity", "2", "-q")
    result = invoke(*args, "-o", out, "--markdown")
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


def test_compare_prints_the_judged_columns_compactly_and_every_one_on_request(tmp_path, toy_dir, toy_library):
    args = ("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat,attcat,random",
            "--limit", "8", "--sanity", "0", "-q", "--bootstrap", "200")
    result = invoke(*args, "-o", tmp_path / "cmp")
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "cmp" / "report.json").read_text())
    flat = " ".join(result.stdout.split())
    unjudged = [c for c in document["columns"] if not c["judged"]]
    assert unjudged and f"{len(unjudged)} column(s) the ranking does not judge by are left out: --all-columns" in flat
    assert "deletion ↑" not in result.stdout  # Contrast-CAT's own MoRF deletion column: left out
    attcat = next(e for e in document["methods"] if e["method"] == "attcat")
    cell = attcat["columns"]["mask:morf_aopc"]["against_leader"]
    half = (cell["interval"]["high"] - cell["interval"]["low"]) / 2
    lines = result.stdout.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("attcat"))
    # The difference on the first judged column, over ± half its interval (marked * where it excludes 0).
    assert lines[row].split()[2] == f"{cell['mean']:+.3f}" and lines[row + 1].split()[:2] == ["±", f"{half:.3f}"]
    assert document["recommendation"]["paragraph"] in " ".join(result.stdout.split("\n\n")[-1].split("\n"))
    every = invoke(*args, "--all-columns")
    assert every.exit_code == 0 and "deletion ↑" in every.stdout and "left out" not in every.stdout
    both = invoke(*args, "--json", "--markdown")
    assert_one_line_error(both, "--json and --markdown both print on stdout: pick one")


def test_quick_is_a_few_cheap_methods_on_a_small_sample(tmp_path, toy_dir, toy_library):
    from contrastcat.usecases.options.compare import QUICK_LIMIT, QUICK_METHODS, QUICK_WITH_LIBRARY

    inputs = str(toy_dir / "inputs.jsonl")
    chosen = CompareOptions.read({"inputs": inputs, "library": toy_library.path, "quick": True}, InCall("compare_file"))
    run = chosen.resolved()
    assert [c.method for c in run.method] == ["contrastcat-lrp", *QUICK_METHODS.split(",")]
    assert run.limit == QUICK_LIMIT == 20 and run.sanity == 0 and not run.quick
    assert QUICK_WITH_LIBRARY.startswith("contrastcat-lrp[refs_used=20,test_steps=5],")
    alone = CompareOptions.read({"inputs": inputs, "model": str(toy_dir / "model"), "quick": True},
                                InCall("compare_file")).resolved()
    assert [c.method for c in alone.method] == QUICK_METHODS.split(",")  # no library: no library method
    # Given, even at its default, it is refused: quick would override it unseen.
    for given, said in ((("--limit", "50"), "--limit"), (("--method", "attcat,random"), "--method"),
                        (("--sanity", "3"), "--sanity"), (("--sanity", "10"), "--sanity"), (("--limit", "100"), "--limit")):
        result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--quick", *given)
        assert_one_line_error(result, f"--quick chooses the methods, the sample and the sanity check itself: drop {said}")
    with pytest.raises(BadInput, match="quick chooses the methods.*drop limit"):
        CompareOptions.read({"inputs": inputs, "quick": True, "limit": 100}, InCall("compare_file"))
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--quick", "--json", "-q")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["inputs"] == 12 and document["sanity_inputs"] is None  # the toy file has 12, fewer than 20
    assert {m["method"] for m in document["methods"]} == {
        "contrastcat-lrp[refs_used=20,test_steps=5]", "attnlrp", "attcat", "gradient-norm", "occlusion", "random"}


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


def test_all_is_every_method_as_explain_takes_it():
    from contrastcat.methods import METHODS

    assert parse_choices("--method", "all") == tuple(Choice(name) for name in METHODS)
    assert parse_choices("--method", "all,attcat[layers=2]")[-1] == Choice("attcat", {"layers": "2"})


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


@pytest.mark.parametrize("where", ["report.md", "records.jsonl"])
def test_a_link_among_the_folders_files_is_refused_not_written_through(tmp_path, toy_dir, toy_library, where):
    """The user named a folder, not its four files: a link there to a file outside it is refused
    before any work, and the file it points to is left as it was (CLI and Python alike)."""
    import os

    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n")
    out = tmp_path / "cmp"
    out.mkdir()
    os.symlink(precious, out / where)
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", out,
                    "--method", "attcat,random", "--limit", "6", "--sanity", "0")
    assert_one_line_error(result, f"{out / where}: a symbolic link")
    assert precious.read_text() == "mine\n" and sorted(p.name for p in out.iterdir()) == [where]
    with pytest.raises(BadInput, match="a symbolic link"):
        contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method="attcat,random", output=out)
    # One made while the methods ran is refused when the files are put in place.
    os.unlink(out / where)
    from contrastcat.usecases import compare as use_case

    def linking(phase, done, total):
        if phase.startswith("evaluating") and not os.path.lexists(out / where):
            os.symlink(precious, out / where)

    with pytest.raises(BadInput, match="a symbolic link"):
        use_case.compare_file(CompareOptions.read(
            {"inputs": toy_dir / "inputs.jsonl", "library": toy_library.path, "method": "attcat,random",
             "output": out, "limit": 6, "sanity": 0, "progress": linking}, InCall("compare_file")))
    assert precious.read_text() == "mine\n" and sorted(p.name for p in out.iterdir()) == [where]


def test_a_link_in_the_work_folder_is_refused(tmp_path, toy_dir, toy_library):
    import os

    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n")
    (tmp_path / "cmp" / "work").mkdir(parents=True)
    os.symlink(precious, tmp_path / "cmp" / "work" / "01.jsonl")
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", tmp_path / "cmp",
                    "--resume", "--method", "attcat,random", "--limit", "6")
    assert_one_line_error(result, "01.jsonl: a symbolic link, which compare did not make")
    assert precious.read_text() == "mine\n"


def test_missing_intervals_are_given_their_true_reason_and_level(tmp_path, toy_dir, toy_library):
    """One input: no number of resamples gives an interval, and the reason says so; 12 inputs at
    99.9 %: the level as given (never "100%") and the resamples it needs. Paragraph and table
    legend alike, and the JSON says why."""
    one = tmp_path / "one.jsonl"
    one.write_text((toy_dir / "inputs.jsonl").read_text().splitlines()[0] + "\n")
    base = ("--refs", toy_library.path, "--method", "attcat,random", "--sanity", "0", "-q")
    result = invoke("compare", one, *base, "--bootstrap", "200", "--limit", "2")
    assert result.exit_code == 0, result.output
    reason = "1 input, fewer than the 6 a 95% interval needs"
    assert f"without intervals ({reason})" in result.stdout and f"(no intervals: {reason})" in result.stdout
    assert "resamples, too few" not in result.stdout
    strict = invoke("compare", toy_dir / "inputs.jsonl", *base, "--bootstrap", "5000", "--ci", "0.999", "--json")
    assert strict.exit_code == 0, strict.output
    document = json.loads(strict.stdout)
    from contrastcat.evaluation.stats import BootstrapSettings, why_no_interval

    expected = why_no_interval(BootstrapSettings(5000, 0.999), 12)
    assert expected == "12 inputs need 558359 resamples for a 99.9% interval, more than the 100000 allowed"
    assert document["recommendation"]["no_intervals"] == expected
    assert f"({expected})" in document["recommendation"]["paragraph"]
    from contrastcat.views.comparison import markdown_report

    table = markdown_report(document)
    assert "100%" not in table and f"(no intervals: {expected})" in table


def test_methods_that_make_the_same_maps_are_one_method_not_a_cheap_choice(tmp_path, toy_dir, toy_library):
    """attcat over all layers and over the last 2 of a 2-layer model are one computation: their
    maps are the same, so neither is the other's cheaper choice, whatever their times."""
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method",
                    "attcat[layers=all],attcat[layers=2],random", "--sanity", "0", "--json", "-q")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)["recommendation"]
    assert found["same_maps"] == [["attcat[layers=all]", "attcat[layers=2]"]]
    assert found["cheap"] not in ("attcat[layers=all]", "attcat[layers=2]")
    assert "attcat[layers=all] and attcat[layers=2] made the same maps on every input" in found["paragraph"]
    # Their values on every protocol are the same: a leader among them is the one given first.
    assert found["best"] in (None, "attcat[layers=all]")
    # Two names of one method and nothing else: nothing was compared, and no method is ahead.
    alone = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method",
                   "attcat,attcat[layers=2]", "--sanity", "0", "--json", "-q")
    found = json.loads(alone.stdout)["recommendation"]
    assert found["best"] is None and "most faithful" not in found["paragraph"] and found["same_maps"]


def test_a_variant_is_named_as_written(tmp_path, toy_dir, toy_library):
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method",
                    "attcat[layers=1],attnlrp[],random", "--sanity", "0", "--json", "-q", "--limit", "6")
    assert result.exit_code == 0, result.output
    assert [m["method"] for m in json.loads(result.stdout)["methods"]].count("attnlrp") == 1
    hyphen = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", tmp_path / "never",
                    "--method", "contrastcat[refs-used=99999],random")
    assert_one_line_error(hyphen, "--method contrastcat[refs-used=99999]: refs-used 99999 reads")
    found = parse_choices("--method", "contrastcat[refs-used=5],random")
    assert found[0] == Choice("contrastcat", {"refs_used": "5"}) and found[0].written == "contrastcat[refs-used=5]"


def test_a_hyphenated_option_is_reported_as_written(tmp_path, toy_dir, toy_library):
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method",
                    "contrastcat[refs-used=5],random", "--sanity", "0", "--json", "-q", "--limit", "6",
                    "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert {m["method"] for m in document["methods"]} == {"contrastcat[refs-used=5]", "random"}
    assert "refs_used" not in document["recommendation"]["paragraph"]


def test_long_values_end_in_one_short_line(tmp_path, toy_dir, toy_library):
    """A layer count of 100,000 digits is refused as text (Python reads no number that long), and a
    method followed by 50,000 brackets quotes the start of what was given, not all of it."""
    args = ("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", tmp_path / "never", "--method")
    huge = invoke(*args, f"attcat[layers={'9' * 100_000}],random")
    assert_one_line_error(huge, "--method attcat[layers=999", "layers must be all or a positive number of last layers")
    assert len(huge.stderr) < 400
    brackets = invoke(*args, "attcat" + "[" * 50_000)
    assert_one_line_error(brackets, "a '[' is never closed")
    assert len(brackets.stderr) < 200
    assert not (tmp_path / "never").exists()


def test_an_interrupt_before_any_record_says_nothing_is_kept(tmp_path, toy_dir, toy_library):
    """Ctrl-C in the first method's first window (batches of one, windows of eight): no record was
    kept, and the message says so rather than pointing at an empty work folder."""
    out = tmp_path / "cmp"

    def interrupt(phase, done, total):
        if phase.startswith("explaining with attcat") and done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted, match=r"before the first records were made: nothing is kept in .*work, and no "
                                          r"output was written"):
        contrastcat.compare_file(toy_dir / "inputs.jsonl", toy_library.path, method="attcat,random", sanity=0,
                                 batch_size=1, output=out, resume=True, progress=interrupt)
    assert not (out / "records.jsonl").exists()


def test_a_link_made_while_the_files_are_written_is_replaced_not_followed(tmp_path, toy_dir, toy_library, monkeypatch):
    """The race the checks before the writing cannot close: a link made at a file's name after its
    temporary file is made. The file is put in place by a rename onto the name, which replaces
    the link; the file it pointed to is never written."""
    import os

    from contrastcat.io import publish
    from contrastcat.output import method_store
    from contrastcat.usecases import compare as use_case

    precious = tmp_path / "precious.txt"
    precious.write_text("mine\n")
    out = tmp_path / "cmp"
    made = publish.PendingFile

    class Linking(made):
        def __init__(self, target):
            super().__init__(target)
            os.symlink(precious, target.given)  # after the check, before the rename

    monkeypatch.setattr(publish, "PendingFile", Linking)
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", out,
                    "--method", "attcat,random", "--limit", "6", "--sanity", "0", "-q")
    assert result.exit_code == 0, result.output
    assert precious.read_text() == "mine\n"
    assert all(not (out / name).is_symlink() and (out / name).stat().st_size > 0 for name in use_case.OUTPUTS)
    # A method's time in DIR/work, written the same way.
    monkeypatch.undo()
    work = tmp_path / "work"
    work.mkdir()
    os.symlink(precious, work / "01.seconds.json")
    method_store._write_in_folder(str(work / "01.seconds.json"), "{}\n", [])
    assert precious.read_text() == "mine\n" and (work / "01.seconds.json").read_text() == "{}\n"


@pytest.mark.parametrize("method, said", [
    ("attcat[layers=2\n],random", "a method is written without control characters"),
    ("attcat[layers=2,layers=all],random", "option 'layers' is given twice"),
    ("contrastcat[refs-used=3,refs_used=1],random", "option 'refs_used' is given twice"),
    ("contrastcat[REFS-USED=1],random", "has no option 'REFS-USED'"),
    ("contrastcat[refs-used=xyz],random", "option refs-used must be int, got 'xyz'"),
])
def test_a_method_written_oddly_is_refused_as_written(tmp_path, toy_dir, toy_library, method, said):
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", tmp_path / "never",
                    "--method", method)
    assert_one_line_error(result, said)
    assert not (tmp_path / "never").exists()


def test_space_around_a_variant_s_parts_is_not_part_of_its_name():
    found = parse_choices("--method", " contrastcat-lrp[ refs-used = 20 , test_steps=2, 5 ] ,random ")
    assert [choice.written for choice in found] == ["contrastcat-lrp[refs-used=20,test_steps=2,5]", "random"]


def test_standard_output_is_no_folder(tmp_path, toy_dir, toy_library):
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "-o", "-", "--method",
                    "attcat,random")
    assert_one_line_error(result, "--output -: compare writes a folder of 4 files, not standard output (--json prints")


def test_one_bad_variant_is_named_before_how_many_methods_there_are(toy_dir):
    """A lone variant with an option its method lacks: that is what is wrong, not the count."""
    result = invoke("compare", toy_dir / "inputs.jsonl", "--refs", toy_dir / "refs.h5", "--method", "attcat[nope=1]")
    assert_one_line_error(result, "--method attcat[nope=1]: method attcat has no option 'nope'")
