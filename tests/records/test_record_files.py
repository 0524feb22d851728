"""Records that evaluate and render cannot use are one line naming file and line; odd ones are counted.

Covered: token ids and targets the model cannot take, every field checked where it is read,
records of other weights named on both sides, special-only and duplicate records skipped and
counted, record text never read as markup, random settings of the wrong type, and data quoted
in an error kept on one line.
"""

from __future__ import annotations

import json

import pytest

from ..helpers import assert_one_line_error, invoke


@pytest.fixture(scope="module")
def records(toy_dir, toy_library, tmp_path_factory):
    """Real records of the toy model (random method: fast), as dicts."""
    out = tmp_path_factory.mktemp("records") / "attr.jsonl"
    result = invoke("explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "random", "-o", out, "-q")
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def write(tmp_path, records) -> str:
    path = tmp_path / "attr.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def with_second(records, **changes):
    second = {**records[1], **changes}
    return [records[0], second, *records[2:]]


@pytest.mark.parametrize(
    "token_ids, problem",
    [
        ("oov", "token id 1000000 is not in the model's vocabulary (ids 0..68)"),
        ("negative", "'token_ids' must be a list of token ids (integers, 0 or more)"),
        ("fraction", "'token_ids' must be a list of token ids (integers, 0 or more)"),
        ("string", "'token_ids' must be a list of token ids (integers, 0 or more)"),
    ],
)
def test_token_ids_the_model_cannot_take(tmp_path, records, token_ids, problem):
    ids = list(records[1]["token_ids"])
    ids[2] = {"oov": 1_000_000, "negative": -1, "fraction": 1.5, "string": "7"}[token_ids]
    path = write(tmp_path, with_second(records, token_ids=ids))
    assert_one_line_error(invoke("evaluate", path), f"{path}:2: {problem}")


@pytest.mark.parametrize(
    "target, problem",
    [("1", "'target' must be a class index"), (-1, "'target' must be a class index"),
     (7, "target 7 is not a class of the model (it has 3: 0..2)"), (True, "'target' must be a class index")],
)
def test_targets_that_are_not_classes(tmp_path, records, target, problem):
    path = write(tmp_path, with_second(records, target=target))
    assert_one_line_error(invoke("evaluate", path, "--target", "record"), f"{path}:2: {problem}")


def test_render_refuses_a_string_target(tmp_path, records):
    path = write(tmp_path, with_second(records, target="1"))
    assert_one_line_error(invoke("render", path), f"{path}:2: 'target' must be a class index")


@pytest.mark.parametrize(
    "field, value",
    [("probs", ["0.5"]), ("offsets", [[0, 10**6]]), ("special", [1]), ("truncated", "no"), ("tokens_dropped", -3),
     ("settings", {"nested": [1]}), ("library", 5), ("id", None)],
)
def test_every_field_is_checked_where_it_is_read(tmp_path, records, field, value):
    record = dict(records[1])
    if field in ("offsets", "special"):
        value = value * len(record["tokens"])
    path = write(tmp_path, with_second(records, **{field: value}))
    for command in ("render", "evaluate"):
        assert_one_line_error(invoke(command, path), f"{path}:2: '{field}' must be")


def test_other_weights_are_named_on_both_sides(tmp_path, records, toy_classifier):
    stale = "sha256:" + "0" * 32
    path = write(tmp_path, with_second(records, model_fingerprint=stale))
    result = invoke("evaluate", path, "--model", records[0]["model"])
    assert_one_line_error(
        result, f"{path}:2: record id", f"whose weights are {stale}", f"loads weights {toy_classifier.fingerprint}"
    )


def test_special_only_and_duplicate_records_are_skipped_and_counted(tmp_path, records):
    special_only = {**records[0], "id": "specials", "special": [True] * len(records[0]["tokens"])}
    path = write(tmp_path, records + [records[3], special_only])
    result = invoke("evaluate", path, "--json", "--min-tokens", "2")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)["methods"]["random"]
    assert report["evaluated"] == len(records)
    assert report["skipped_special_only"] == 1 and report["skipped_duplicates"] == 1
    assert "1 record(s) hold only special tokens" in result.stderr
    assert "1 duplicate record(s)" in result.stderr


def test_record_text_is_never_read_as_markup(tmp_path, records):
    odd = with_second(records, id="a[/]", target_name="[bold]pos[/bold]", method="m[/]")
    path = write(tmp_path, odd)
    shown = invoke("render", path, "--color", "always", "--limit", "2")
    assert shown.exit_code == 0, shown.output
    assert "a[/]" in shown.stdout and "[bold]pos[/bold]" in shown.stdout
    curves = invoke("evaluate", path, "--curves", "--min-tokens", "2", "--model", records[0]["model"])
    assert curves.exit_code == 0, curves.output
    assert "m[/]: 1 inputs evaluated" in curves.stdout


@pytest.mark.parametrize("settings", [{"seed": "x"}, {"seed": 1.5}, {"seed": True}])
def test_settings_of_the_wrong_type_cannot_be_used_again(tmp_path, records, settings):
    path = write(tmp_path, with_second(records, settings=settings))
    result = invoke("evaluate", path, "--kendall", "--min-tokens", "2", "--model", records[0]["model"])
    assert_one_line_error(result, f"{path}:2: its random settings cannot be used again", "option seed must be int")


def test_data_quoted_in_an_error_stays_on_one_line(tmp_path, records):
    path = write(tmp_path, with_second(records, model_fingerprint="sha256:a\nb\u2028c"))
    result = invoke("evaluate", path, "--model", records[0]["model"])
    assert_one_line_error(result, "sha256:a\\nb\\u2028c")


def test_settings_that_cannot_be_written_are_refused_in_one_line(tmp_path):
    """Records.save writes nothing a reader would refuse: settings with a key that is not a string,
    or a number JSON cannot write, are bad input like any other field, not a raw TypeError or
    ValueError."""
    import math

    from contrastcat.errors import BadInput
    from contrastcat.records.record import Records
    from tests.helpers import word_piece_record

    for settings in ({1: 2}, {"x": math.nan}, {"x": math.inf}):
        with pytest.raises(BadInput, match="^save: item 0: 'settings' must be an object of at most 1000"):
            Records([word_piece_record(settings=settings)]).save(str(tmp_path / "out.jsonl"))
    assert not list(tmp_path.iterdir())


def test_variants_differing_in_a_settings_type_are_told_apart():
    """1 and true (0 and false) are two settings as written, though Python finds them equal: two
    variants, not one method whose records look like duplicates."""
    from contrastcat.records.variants import MethodLabels
    from tests.helpers import word_piece_record

    labels = MethodLabels()
    base = word_piece_record(settings={"refine": True, "seed": 0})
    other = word_piece_record(settings={"refine": 1, "seed": False})
    assert labels.label(base) == "contrastcat"
    assert labels.label(other) == "contrastcat[refine=1,seed=False]"


def test_a_label_belongs_to_one_method_and_its_settings():
    """A method named like another's variant, or two libraries whose fingerprints begin alike,
    would read the same: the later is numbered, never merged with the other (evaluate dropped
    its records as duplicates and showed the other's numbers)."""
    from contrastcat.records.variants import MethodLabels
    from tests.helpers import word_piece_record

    labels = MethodLabels()
    base = word_piece_record(settings={"seed": 0})
    variant = word_piece_record(settings={"seed": 1})
    named_alike = word_piece_record(method="contrastcat[seed=1]", settings={"seed": 0})
    assert [labels.label(r) for r in (base, variant, named_alike, variant, named_alike)] == [
        "contrastcat", "contrastcat[seed=1]", "contrastcat[seed=1]#2", "contrastcat[seed=1]", "contrastcat[seed=1]#2"]
    first = word_piece_record(library="sha256:0123456789abcdefAAAA")
    second = word_piece_record(library="sha256:0123456789abcdefBBBB")
    third = word_piece_record(library="sha256:0123456789abcdefCCCC")
    labels = MethodLabels()
    assert [labels.label(r) for r in (first, second, third, second)] == [
        "contrastcat", "contrastcat[library=sha256:01234567]", "contrastcat[library=sha256:01234567]#2",
        "contrastcat[library=sha256:01234567]"]
