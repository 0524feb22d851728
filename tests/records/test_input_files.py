"""Input files read strictly: a bad line is one error naming it, or (--on-error skip) a listed skip.

Covered: malformed CSV rows (a row spanning lines is named by its first line), line-separator
characters inside a text, values that are not strict JSON (NaN, numbers too large or too long,
deep nesting, lone surrogates, a key given twice), strict JSON written for large ids, standard
input that is not UTF-8, labels and options in non-ASCII digits, and --on-error skip.
"""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.records.inputs import SKIPPED_KEPT, SkippedLines
from contrastcat_cli.explain import SHOWN_PROBLEMS

from ..helpers import assert_one_line_error, invoke


@pytest.fixture()
def refs(toy_library):
    return toy_library.path


def strict_loads(line: str):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(line, parse_constant=refuse)


def explain(tmp_path, refs, source, *extra, stdin=None):
    out = tmp_path / "out.jsonl"
    result = invoke("explain", source, "--refs", refs, "-o", out, "--quiet", "--method", "random", *extra, stdin=stdin)
    return result, out


@pytest.mark.parametrize(
    "content, problem",
    [
        # An unterminated quote must not swallow the rows after it.
        ('text,label\n"the film was good,1\nthe film was bad,0\n', "in.csv:2: a quoted field is never closed"),
        ('text,label\na fine film,1\n"a ""dull"" one" really,0\n', "in.csv:3: malformed CSV"),
        ("text,label\na fine film,1,extra\n", "in.csv:2: 3 field(s), but the header has 2"),
        ("text,label\na fine film,1\nalone\n", "in.csv:3: 1 field(s), but the header has 2"),
        ("text,text\na,b\n", "in.csv:1: column 'text' appears more than once"),
    ],
)
def test_bad_csv_rows_are_refused(tmp_path, refs, content, problem):
    source = tmp_path / "in.csv"
    source.write_text(content)
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, problem)
    assert not out.exists()


def test_csv_row_spanning_lines_is_named_by_its_first_line(tmp_path, refs):
    source = tmp_path / "in.csv"
    source.write_text('id,text\n1,"a film\nover two lines"\n2,"open quote\n')
    result, _ = explain(tmp_path, refs, source)
    assert_one_line_error(result, "in.csv:4: a quoted field is never closed")


LINE_BREAKERS = "\u2028\u2029\x85"


def test_line_separator_characters_in_text(tmp_path, refs, toy_dir):
    text = f"a good{LINE_BREAKERS}film about a dog"
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text(json.dumps({"id": "u", "text": text}, ensure_ascii=False) + "\n" + json.dumps({"text": "a dull film"}) + "\n")
    result, out = explain(tmp_path, refs, jsonl)  # raw U+2028 inside a JSON string is valid JSON
    assert result.exit_code == 0, result.output
    csv = tmp_path / "in.csv"
    csv.write_text(f'id,text\nu,"{text}"\nv,a dull film\n', encoding="utf-8")
    result, from_csv = explain(tmp_path, refs, csv)
    assert result.exit_code == 0, result.output
    for path in (out, from_csv):
        content = path.read_text(encoding="utf-8")
        assert not set(LINE_BREAKERS) & set(content)  # written escaped: any JSONL reader splits it right
        lines = content.splitlines()
        assert len(lines) == 2 and strict_loads(lines[0])["text"] == text
    # The tool reads its own output back.
    assert invoke("render", out).exit_code == 0
    evaluated = invoke("evaluate", out, "--json", "--min-tokens", "2")
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.stdout)["methods"]["random"]["evaluated"] == 2


@pytest.mark.parametrize(
    "line, problem",
    [
        ('{"id": NaN, "text": "a good film"}', "NaN is not a JSON number"),
        ('{"id": Infinity, "text": "a good film"}', "Infinity is not a JSON number"),
        ('{"id": -Infinity, "text": "a good film"}', "-Infinity is not a JSON number"),
        ('{"id": 1e400, "text": "a good film"}', "number 1e400 is too large for a double"),
        ('{"id": ' + "7" * 5000 + ', "text": "a good film"}', "a number too long to read"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"id": "x", "text": "a good \\ud800 film"}', "not valid Unicode: field 'text' holds an unpaired surrogate"),
        ('{"id": [1], "text": "a good film"}', "field 'id' must be a string or a number"),
        ('{"text": "a good film", "label": {"x": 1}}', "field 'label' must be a class index or a class name"),
    ],
)
def test_values_that_are_not_strict_json_are_refused(tmp_path, refs, line, problem):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "a fine film"}\n' + line + "\n", encoding="utf-8")
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:2: ", problem)
    assert not out.exists()


def test_records_with_huge_numbers_or_nesting_are_refused(tmp_path):
    for line, problem in (('{"id": ' + "9" * 5000 + "}", "a number too long"), ("[" * 100_000, "nested too deeply")):
        source = tmp_path / "attr.jsonl"
        source.write_text(line + "\n")
        for command in ("render", "evaluate"):
            assert_one_line_error(invoke(command, source), f"{source}:1: malformed JSON", problem)


def test_output_is_strict_json_for_large_ids(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text('{"id": 1e308, "text": "a fine film"}\n{"id": -0.0, "text": "a dull film"}\n')
    result, out = explain(tmp_path, refs, source)
    assert result.exit_code == 0, result.output
    assert [strict_loads(line)["id"] for line in out.read_text().splitlines()] == [1e308, -0.0]


def test_standard_input_that_is_not_utf8(tmp_path, refs):
    result = invoke("explain", "-", "--refs", refs, "-o", tmp_path / "o.jsonl", stdin=b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    assert_one_line_error(result, "<stdin>:2: not UTF-8 text")


MIXED = [
    '{"id": "a", "text": "a great film", "label": 1}',
    '{"id": "b", "text": ',
    '{"id": "c", "label": 0}',
    '{"id": NaN, "text": "a dull film"}',
    '{"id": "e", "text": "the dog was bad", "label": "terrible"}',
    '{"id": "f", "text": "a lovely day", "label": "positive"}',
]


def test_on_error_skip_leaves_bad_lines_out_and_lists_them(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(MIXED) + "\n")
    stopped, out = explain(tmp_path, refs, source)  # the default: stop before anything is written
    assert_one_line_error(stopped, f"{source}:2: malformed JSON")
    assert not out.exists()
    result, out = explain(tmp_path, refs, source, "--on-error", "skip", "--target", "gold")
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == ["a", "f"]
    warning = result.stderr
    assert warning.startswith("warning: skipped 4 bad input line(s) (--on-error skip): ")
    for fragment in (f"{source}:2: malformed JSON", f"{source}:3: missing text field", f"{source}:4: NaN",
                     f"{source}:5: label 'terrible' is not one of"):
        assert fragment in warning, fragment
    assert "Traceback" not in warning


def test_on_error_skip_with_nothing_usable(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(MIXED[1:4]) + "\n")
    result, out = explain(tmp_path, refs, source, "--on-error", "skip")
    assert_one_line_error(result, f"{source}: no input rows (3 bad line(s) skipped)")
    assert not out.exists()


def test_many_skipped_lines_are_counted_not_all_kept(tmp_path, refs):
    # One message a bad line, kept for millions of them, made memory grow with the bad lines
    # (about 135 bytes each) though only the first are shown: the first are kept, the rest
    # counted, and the count stays exact, across the reader and the target checks alike.
    source = tmp_path / "in.jsonl"
    with source.open("w") as stream:
        stream.write('{"text": "a great film", "label": 1}\n')
        stream.write("x\n" * 10_000)
        stream.write('{"text": "a dull film", "label": "terrible"}\n' * 5)
    run = contrastcat.explain_file(source, tmp_path / "api.jsonl", library=refs, method="random", target="gold",
                                   on_error="skip")
    assert run.records == 1 and len(run.skipped) == 10_005
    assert len(list(run.skipped)) == SKIPPED_KEPT >= SHOWN_PROBLEMS  # all the command line shows
    assert run.skipped[0] == f"{source}:2: malformed JSON (Expecting value, column 1)"
    result, out = explain(tmp_path, refs, source, "--on-error", "skip", "--target", "gold")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("warning: skipped 10005 bad input line(s) (--on-error skip): ")
    assert result.stderr.count(f"{source}:") == SHOWN_PROBLEMS
    assert f"; and {10_005 - SHOWN_PROBLEMS} more" in result.stderr


def test_skipped_lines_keep_the_first_messages_and_count_all():
    skipped = SkippedLines(kept=3)
    assert not skipped and len(skipped) == 0
    for number in range(1, 10_001):
        skipped.append(f"in.jsonl:{number}: malformed JSON")
    assert skipped and len(skipped) == 10_000 and len(skipped.messages) == 3
    assert list(skipped) == skipped[:20] == [f"in.jsonl:{n}: malformed JSON" for n in (1, 2, 3)]


@pytest.mark.parametrize("label", ["²", "--1", "٣", "𝟙"])
def test_labels_of_non_ascii_digits_are_not_class_indexes(tmp_path, refs, label):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"text": "a fine film", "label": 1}) + "\n" + json.dumps({"text": "a film", "label": label}) + "\n")
    result, out = explain(tmp_path, refs, source, "--target", "gold")
    assert_one_line_error(result, f"{source}:2: label {label!r} is not one of negative, positive, neutral")
    skipped, out = explain(tmp_path, refs, source, "--target", "gold", "--on-error", "skip")
    assert skipped.exit_code == 0 and len(out.read_text().splitlines()) == 1


@pytest.mark.parametrize("option", [("--target", "²"), ("--layers", "²"), ("--target", "٣")])
def test_options_of_non_ascii_digits_are_refused(tmp_path, refs, toy_dir, option):
    result, _ = explain(tmp_path, refs, toy_dir / "inputs.jsonl", *option)
    assert_one_line_error(result, option[0])


def test_a_key_given_twice_is_refused(tmp_path, refs):
    source = tmp_path / "in.jsonl"
    source.write_text('{"text": "a good film", "text": "a dull film"}\n')
    result, _ = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:1: key 'text' appears more than once")


def test_a_label_longer_than_any_class_name_is_refused_where_it_is_read(tmp_path, refs, toy_classifier):
    """Records carry their input's label, and readers of records refuse one past 1,000 characters
    (a reader of gold labels keeps each distinct one): explain wrote such records, which no
    command could then read (render, evaluate, merge of the shards). Refused at the input's line;
    skipped with --on-error skip; refused from objects in memory too."""
    source = tmp_path / "in.jsonl"
    rows = [{"text": "a fine film", "label": "x" * 1000}, {"text": "a film", "label": "y" * 1001}]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result, out = explain(tmp_path, refs, source)
    assert_one_line_error(result, f"{source}:2: field 'label' is 1001 characters long: a class name is at most 1000")
    assert not out.exists()
    skipped, out = explain(tmp_path, refs, source, "--on-error", "skip")
    assert skipped.exit_code == 0
    assert invoke("render", out, "--color", "never").exit_code == 0  # what was written reads back
    with pytest.raises(contrastcat.errors.BadInput, match="is 1001 characters long"):
        contrastcat.explain(toy_classifier, rows, method="random")
