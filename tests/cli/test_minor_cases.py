"""Small things a hostile user found, each one line or the right words now: a step number of
thousands of digits (was a ValueError, exit 1), "(p = nan)" on the page for records made
elsewhere, a numpy overflow warning with a source path for scores of ±1e308."""

from __future__ import annotations

import json
import warnings

from contrastcat.evaluation.kendall import kendall_tau_b
from contrastcat.evaluation.scalars import loo_tau

from ..helpers import assert_one_line_error, invoke


def test_a_step_number_of_thousands_of_digits_is_one_line(toy_dir, toy_library, tmp_path):
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                    "--test-steps", "9" * 5000, "-o", tmp_path / "out.jsonl", "-q")
    assert_one_line_error(result, "--test-steps must name steps 1 to", "...")
    assert len(result.stderr) < 300 and not (tmp_path / "out.jsonl").exists()


def test_the_page_names_the_class_without_a_probability_it_does_not_have(tmp_path):
    path = tmp_path / "elsewhere.jsonl"
    path.write_text(json.dumps({"text": "a good film", "offsets": [[0, 1], [2, 6], [7, 11]],
                                "scores": [0.1, 0.9, 0.2], "target": 1}) + "\n")
    page = tmp_path / "page.html"
    assert invoke("render", path, "--html", page).exit_code == 0
    assert "nan" not in page.read_text() and "→ 1</h3>" in page.read_text()


def test_scores_of_plus_and_minus_1e308_give_tau_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kendall_tau_b([1e308, -1e308, 0.0, 5.0], [3.0, 1.0, 2.0, 2.5]) == 1.0
        assert loo_tau([1e308, -1e308, 1.0], [False] * 3, [-1e308, 1e308, 0.0]) == -1.0


def test_records_asking_for_more_references_than_the_library_holds_are_refused(toy_dir, toy_library, tmp_path):
    """Explained again (sanity, evaluate --kendall) as they were made: a record that asks for more
    references than the library holds is refused, not explained again with fewer."""
    made = tmp_path / "attr.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                  "-o", made, "-q").exit_code == 0
    records = [json.loads(line) for line in made.read_text().splitlines()][:3]
    for record in records:
        record["settings"]["refs_used"] = 5000
    asking = tmp_path / "asking.jsonl"
    asking.write_text("".join(json.dumps(r) + "\n" for r in records))
    for command in (["sanity", asking, "--refs", toy_library.path, "--bootstrap", "0", "-q"],
                    ["evaluate", asking, "--refs", toy_library.path, "--kendall", "--bootstrap", "0", "-q"]):
        assert_one_line_error(invoke(*command), "reads 5000 references", "holds only")


def test_records_without_their_library_name_the_flag_to_give_it(toy_dir, toy_library, tmp_path):
    """Contrast-CAT records whose ``library`` is null, explained again without one: the refusal
    names --refs, as the command line spells it (not the Python keyword)."""
    made = tmp_path / "attr.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                  "-o", made, "-q").exit_code == 0
    records = [json.loads(line) for line in made.read_text().splitlines()][:3]
    for record in records:
        record["library"] = None
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = invoke("evaluate", bare, "--model", toy_dir / "model", "--kendall", "--min-tokens", "1", "--bootstrap", "0", "-q")
    assert_one_line_error(result, "explained again: pass --refs")


def test_sanity_headers_show_variant_labels(toy_dir, toy_library, tmp_path):
    """A variant's label (``contrastcat[refs_used=5]``) is text, not Rich markup that swallows it."""
    parts = []
    for refs in ("10", "5"):
        out = tmp_path / f"r{refs}.jsonl"
        assert invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "contrastcat",
                      "--refs-used", refs, "-o", out, "-q").exit_code == 0
        parts.append("".join(out.read_text().splitlines(keepends=True)[:3]))
    both = tmp_path / "both.jsonl"
    both.write_text("".join(parts))
    result = invoke("sanity", both, "--refs", toy_library.path, "--bootstrap", "0", "-q")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "randomised up to" in line)
    assert "contrastcat[refs_used=5]" in header, result.stdout


def test_a_progress_bar_leaves_standard_output_alone(monkeypatch):
    """While a bar shows on a terminal's stderr, records written to standard output (-o - > file)
    reach the file: Rich would otherwise point sys.stdout at the bar's console."""
    import sys

    from contrastcat_cli.common import phased_progress

    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    before = sys.stdout
    with phased_progress(quiet=False) as report:
        report("explaining", 0, 2)
        assert sys.stdout is before
    assert sys.stdout is before


def test_a_group_without_its_command_shows_its_help(monkeypatch, capsys):
    from contrastcat_cli import launch

    monkeypatch.setattr("sys.argv", ["contrastcat", "models"])
    assert launch._run() == 2
    said = capsys.readouterr().err
    assert said.startswith("Usage: ") and " models [OPTIONS] COMMAND" in said and "error:" not in said
    assert "prepare" in said


def test_records_bound_for_a_terminal_get_a_hint(toy_dir, tmp_path, monkeypatch):
    """Thousands of JSON lines fill a terminal: explain without -o says where they could go instead
    (on stderr; the records still come), and says nothing where stdout is a pipe or -q is given."""
    import contrastcat_cli.explain as explain_command

    model = toy_dir / "model"
    args = ("explain", toy_dir / "inputs.jsonl", "--model", model, "--method", "random")
    piped = invoke(*args)
    assert piped.exit_code == 0 and "this terminal" not in piped.stderr, piped.output
    monkeypatch.setattr(explain_command, "_terminal", lambda: True)
    shown = invoke(*args)
    assert shown.exit_code == 0 and shown.stdout == piped.stdout
    assert "the records go to this terminal as JSON lines: -o FILE keeps them" in shown.stderr
    assert "this terminal" not in invoke(*args, "-q").stderr
    assert "this terminal" not in invoke(*args, "-o", tmp_path / "out.jsonl").stderr
    asked = invoke(*args, "-o", "-")  # standard output named: the user meant it
    assert asked.exit_code == 0 and asked.stdout == piped.stdout and "this terminal" not in asked.stderr


def test_an_output_name_ending_in_a_slash_is_a_folder_not_a_file(toy_dir, tmp_path):
    records = tmp_path / "r.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "random",
                  "-o", records, "-q").exit_code == 0
    result = invoke("render", records, "-o", f"{tmp_path}/newdir/")
    assert_one_line_error(result, "newdir/: is a directory, expected an output file")
    assert not (tmp_path / "newdir").exists()
