"""Sentence pairs through the commands: build-refs -> explain -> evaluate -> render (terminal and
HTML), on the toy pair models of both tokenizer styles (``pair_models`` in conftest)."""

from __future__ import annotations

import json

import pytest

from ..helpers import PAIR_STYLES, assert_one_line_error, assert_records_close, invoke


@pytest.fixture(scope="module")
def pair_runs(pair_models, tmp_path_factory):
    """Per style: build-refs and explain (contrastcat, attnlrp and random) of the first 40 held-out pairs
    through the CLI, once."""
    runs = {}
    for style in PAIR_STYLES:
        root = pair_models[style]["root"]
        work = tmp_path_factory.mktemp(f"pair-cli-{style}")
        inputs = work / "inputs.jsonl"
        inputs.write_text("".join(line + "\n" for line in (root / "inputs.jsonl").read_text().splitlines()[:40]))
        built = invoke(
            "build-refs", "--model", root / "model", "--data", root / "train.jsonl", "--text-field", "premise",
            "--pair-field", "hypothesis", "--min-refs", "10", "--keep", "10", "--min-tokens", "5", "-o",
            work / "refs.h5", "--json", "--quiet",
        )
        assert built.exit_code == 0, built.output
        attr = work / "attr.jsonl"
        explained = invoke(
            "explain", inputs, "--text-field", "premise", "--pair-field", "hypothesis", "--refs",
            work / "refs.h5", "--method", "contrastcat,attnlrp,random", "--refs-used", "10", "-o", attr, "--quiet",
        )
        assert explained.exit_code == 0, explained.output
        runs[style] = (root, work, attr, inputs)
    return runs


@pytest.mark.parametrize("style", PAIR_STYLES)
def test_pair_records_from_the_command(pair_runs, style):
    _, _, attr, source = pair_runs[style]
    inputs = [json.loads(line) for line in source.read_text().splitlines()]
    records = [json.loads(line) for line in attr.read_text().splitlines()]
    assert len(records) == 3 * len(inputs)
    for record, source in zip(records[::3], inputs):
        assert record["text"] == source["premise"] and record["pair"] == source["hypothesis"]
        assert {s for s in record["segments"]} == {None, 0, 1}
        for (start, end), segment, special, token in zip(
            record["offsets"], record["segments"], record["special"], record["tokens"]
        ):
            if not special:
                text = record["text"] if segment == 0 else record["pair"]
                assert text[start:end] == token.lstrip("Ġ")


@pytest.mark.parametrize("style", PAIR_STYLES)
def test_evaluate_and_render_pair_records(pair_runs, style):
    _, work, attr, _ = pair_runs[style]
    table = invoke("evaluate", attr, "--json", "--bootstrap", "0")
    assert table.exit_code == 0, table.output
    report = json.loads(table.stdout)
    assert report["methods"]["contrastcat"]["evaluated"] == 40
    # The keyword carries the prediction: deleting AttnLRP's top tokens first (the keyword, in either
    # text) costs more than deleting at random, and keeping them costs less.
    morf = {name: sum(m["morf"]["aopc"]) for name, m in report["methods"].items()}
    lerf = {name: sum(m["lerf"]["aopc"]) for name, m in report["methods"].items()}
    assert morf["attnlrp"] > morf["random"] + 1 and lerf["attnlrp"] < lerf["random"]
    shown = invoke("render", attr, "--limit", "1")
    assert shown.exit_code == 0, shown.output
    header, first, second = shown.stdout.strip().splitlines()
    assert header.startswith("inputs-0  contrastcat → ")
    assert second.startswith("‖ ") and "[" in first and "[" in second
    page = work / "page.html"
    assert invoke("render", attr, "--html", page, "--limit", "2").exit_code == 0
    text = page.read_text()
    assert text.count('class="segment pair"') == 2  # one input, two of its methods: each shows the second text
    assert 'aria-label="second text"' in text


def test_pair_field_problems_are_one_line(pair_models, pair_runs, tmp_path):
    root, work, _, _ = pair_runs["bert"]
    missing = tmp_path / "in.jsonl"
    missing.write_text('{"premise": "the good film", "hypothesis": "a dog"}\n{"premise": "a film"}\n')
    result = invoke("explain", missing, "--text-field", "premise", "--pair-field", "hypothesis", "--refs",
                    work / "refs.h5", "-o", tmp_path / "out.jsonl")
    assert_one_line_error(result, "in.jsonl:2", "missing pair field 'hypothesis'")
    assert not (tmp_path / "out.jsonl").exists()
    single = invoke("explain", root / "inputs.jsonl", "--text-field", "premise", "--refs", work / "refs.h5",
                    "--refs-used", "10", "-o", tmp_path / "out.jsonl")
    # The inputs hold their pairs, the flag was forgotten: the warning says which flag (the
    # refusal alone would send the user to rebuild the library), then the one refusal.
    warning, error = single.stderr.splitlines()
    assert single.exit_code == 2 and warning.startswith("warning: ") and "pass --pair-field hypothesis" in warning
    assert error.startswith("error: ") and "references are sentence pairs, the inputs single texts" in error
    paired_away = tmp_path / "singles.jsonl"
    paired_away.write_text("".join(json.dumps({"premise": json.loads(line)["premise"]}) + "\n"
                                   for line in (root / "inputs.jsonl").read_text().splitlines()))
    single = invoke("explain", paired_away, "--text-field", "premise", "--refs", work / "refs.h5",
                    "--refs-used", "10", "-o", tmp_path / "out.jsonl")
    assert_one_line_error(single, "references are sentence pairs, the inputs single texts")
    csv = tmp_path / "in.csv"
    csv.write_text("premise,label\nthe good film,1\n")
    no_column = invoke("explain", csv, "--text-field", "premise", "--pair-field", "hypothesis", "--refs",
                       work / "refs.h5", "-o", "-")
    assert_one_line_error(no_column, "in.csv:1", "no column 'hypothesis'")


def test_a_csv_of_pairs_is_explained_as_its_jsonl_is(pair_runs, tmp_path):
    """The CSV's 3 rows are batched alone, the JSONL's 40 together: the same records, floats
    within the batch tolerance (their 6th decimals may round apart on another CPU)."""
    _, work, attr, source = pair_runs["bert"]
    rows = [json.loads(line) for line in source.read_text().splitlines()][:3]
    csv = tmp_path / "in.csv"
    csv.write_text(
        "id,premise,hypothesis,label\n"
        + "".join(f'{r["id"]},{r["premise"]},{r["hypothesis"]},{r["label"]}\n' for r in rows)
    )
    result = invoke("explain", csv, "--text-field", "premise", "--pair-field", "hypothesis", "--refs",
                    work / "refs.h5", "--method", "contrastcat,attnlrp,random", "--refs-used", "10", "-o", "-", "--quiet")
    assert result.exit_code == 0, result.output
    expected = [json.loads(line) for line in attr.read_text().splitlines()[:9]]
    found = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r.pop("label") for r in found] == [str(e.pop("label")) for e in expected]  # a CSV's labels are text
    assert_records_close(found, expected)


def test_a_separator_typed_into_a_text_is_a_bad_line(pair_runs, tmp_path):
    """Refused before anything is written (even to standard output), or left out with --on-error skip."""
    root, work, _, _ = pair_runs["bert"]
    lines = (root / "inputs.jsonl").read_text().splitlines()[:40]
    bad = json.loads(lines[37])
    bad["premise"] += " [SEP] and more"
    lines[37] = json.dumps(bad)
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")
    common = ["--text-field", "premise", "--pair-field", "hypothesis", "--method", "attcat", "--model",
              root / "model", "--batch-size", "1"]
    stopped = invoke("explain", source, *common, "-o", "-")
    assert_one_line_error(stopped, "in.jsonl:38", "separator")
    assert stopped.stdout == ""
    skipped = invoke("explain", source, *common, "--on-error", "skip", "-o", tmp_path / "out.jsonl")
    assert skipped.exit_code == 0, skipped.output
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(records) == 39 and "in.jsonl:38" in skipped.stderr
    # build-refs names the file and line too.
    data = tmp_path / "train.jsonl"
    rows = (root / "train.jsonl").read_text().splitlines()
    broken = json.loads(rows[4])
    broken["premise"] = "[SEP] " + broken["premise"]
    data.write_text("\n".join(rows[:4] + [json.dumps(broken)] + rows[5:]) + "\n")
    built = invoke("build-refs", "--model", root / "model", "--data", data, "--text-field", "premise",
                   "--pair-field", "hypothesis", "-o", tmp_path / "refs.h5")
    assert_one_line_error(built, "train.jsonl:5", "separator")
    same = invoke("build-refs", "--model", root / "model", "--data", data, "--text-field", "premise",
                  "--pair-field", "premise", "-o", tmp_path / "refs.h5")
    assert_one_line_error(same, "the pair field 'premise' is also the text or label field")
    assert not (tmp_path / "refs.h5").exists()
