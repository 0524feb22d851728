"""Records that evaluate and render cannot use are one line naming file and line; odd ones are counted.

Covered: token ids and targets the model cannot take, every field checked where it is read,
records of other weights named on both sides, special-only and duplicate records skipped and
counted, record text never read as markup, random settings of the wrong type, and data quoted
in an error kept on one line.
"""

from __future__ import annotations

import dataclasses
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


@pytest.mark.parametrize("value", ["false", "0", 1, None])
def test_mask_special_of_another_type_than_true_or_false_cannot_be_used_again(tmp_path, records, value):
    """``bool("false")`` is true: the method was explained again masking the special tokens the
    record says it left alone."""
    path = write(tmp_path, with_second(records, settings={"seed": 0, "mask_special": value}))
    for command in (("evaluate", "--kendall", "--min-tokens", "2"), ("sanity",)):
        result = invoke(*command[:1], path, *command[1:], "--model", records[0]["model"])
        assert_one_line_error(result, f"{path}:2: its random settings cannot be used again",
                              f"mask_special must be true or false, got {json.dumps(value)}")  # as the file spells it


@pytest.mark.parametrize("changes, problem", [
    ({"method": "attcat", "settings": {"layers": 99, "mask_special": False}}, "layers 99: the model has 2 layers"),
])
def test_settings_this_model_cannot_run_name_the_record(tmp_path, records, changes, problem):
    """A record's settings changed by hand to ask what the model cannot do, said of its line, for
    Kendall-τ and the sanity check alike. (A record without settings, another tool's maps named by
    a method of contrastcat, is explained again with that method's defaults.)"""
    path = write(tmp_path, with_second(records, **changes))
    name = changes.get("method", "random")
    for command in (("evaluate", "--kendall", "--min-tokens", "2"), ("sanity",)):
        result = invoke(*command[:1], path, *command[1:], "--model", records[0]["model"])
        assert_one_line_error(result, f"{path}:2: its {name} settings cannot be used again ({problem})")


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


@pytest.mark.parametrize("shape", ["a method each", "settings each", "many settings each", "emoji method each",
                                   "emoji settings each"])
def test_what_the_labels_hold_is_counted_and_bounded(records, tmp_path, monkeypatch, shape):
    """The labels of a run keep the first settings of each method and each variant's label: a file
    whose every record names a method (or settings) of its own was kept whole, several times its
    bytes. What they keep is counted as it grows, never less than it takes, and past a bound the
    file is refused in one line at the record that passed it (render, evaluate)."""
    import tracemalloc

    from contrastcat.records import variants
    from contrastcat.records.variants import MethodLabels
    from tests.helpers import word_piece_record

    def record(i: int):
        if shape == "a method each":
            return word_piece_record(method=f"method {i}", settings={"seed": 0, "refine": True})
        if shape == "settings each":
            return word_piece_record(settings={"seed": i, "run": f"run {i}"})
        if shape == "emoji method each":  # a string of one character past U+FFFF takes 4 bytes a character
            return word_piece_record(method="\U0001F600" * 2000 + str(i))
        if shape == "emoji settings each":
            return word_piece_record(settings={"\U0001F600" * 900 + f"{k:03d}": "\U0001F600" * 999 + str(i % 10)
                                               for k in range(20)})
        return word_piece_record(method=f"method {i}", settings={f"k{j}": j for j in range(200)})

    # Made as a reader makes them: each string its own object, from JSON.
    made = [dataclasses.replace(record(i), settings=json.loads(json.dumps(record(i).settings))) for i in range(300)]
    labels = MethodLabels()
    tracemalloc.start()
    try:
        for r in made:
            labels.label(r)
        taken = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert taken <= labels._held, (taken, labels._held)

    if "emoji" in shape:
        return

    def own(i: int, r: dict) -> dict:
        if shape == "settings each":
            return {**r, "settings": {"seed": i, "run": f"run {i}"}}
        return {**r, "method": f"method {i}", "settings": {f"k{j}": j for j in range(200 if "many" in shape else 2)}}

    path = write(tmp_path, [own(i, records[i % len(records)]) for i in range(200)])
    assert invoke("render", path, "--color", "never").exit_code == 0
    monkeypatch.setattr(variants, "MOST_HELD", 40 * (labels._held // 300))
    for command in ("render", "evaluate"):
        result = invoke(command, path, *(("--color", "never") if command == "render" else ("--min-tokens", "1")))
        assert_one_line_error(result, f"{path}:", "more methods and variants of methods (by their settings) than one "
                              "run compares")
        line = int(result.stderr.split(f"{path}:")[1].split(":")[0])
        assert 30 <= line <= 50, line


def test_a_file_read_and_saved_again_keeps_the_fields_this_version_does_not_know(records, tmp_path):
    """Another tool's fields (or a later version's) were dropped on reading, so ``read_records``
    then ``save`` changed the user's file silently: they are kept as read, written back after
    the fields the tool knows, and compared by nothing."""
    import contrastcat

    extras = {"source": {"tool": "other", "run": [1, 2.5, None]}, "line": 7, "notes": "kept"}
    path = write(tmp_path, [{**records[0], **extras}, records[1]])
    read = contrastcat.read_records(path)
    assert read[0].extra == extras and read[1].extra is None
    assert read[0] == contrastcat.read_records(write(tmp_path, records[:1]))[0]  # what it explains is the same
    out = tmp_path / "saved.jsonl"
    read.save(str(out))
    saved = [json.loads(line) for line in out.read_text().splitlines()]
    assert saved == [{**records[0], **extras}, records[1]]
    assert list(saved[0])[-3:] == list(extras)  # after the fields the tool knows
    assert invoke("render", out, "--color", "never").exit_code == 0


def test_labels_that_read_alike_are_numbered_in_linear_time():
    """Variants whose settings print alike (1 and "1") are numbered #2, #3, ...: each tried every
    number from #2 again, so 20,000 of them took 79 s; numbered on from the last, they take well
    under a second, and each still gets a label of its own."""
    import time

    from contrastcat.records.variants import MethodLabels
    from tests.helpers import word_piece_record

    made = [word_piece_record(settings={})]
    for i in range(20_000):
        made.append(word_piece_record(settings={f"a{k}": (1 if (i >> k) & 1 else "1") for k in range(15)}))
    labels = MethodLabels()
    start = time.perf_counter()
    found = [labels.label(r) for r in made]
    took = time.perf_counter() - start
    assert len(set(found)) == len(made) and found[-1].endswith("#20000")
    assert took < 10, took


@pytest.mark.parametrize("field", ["scores", "probs", "raw_scores"])
def test_an_integer_past_a_floats_range_is_refused_in_one_line(tmp_path, field):
    """10**400 is an integer JSON reads exactly; no score can be computed with it (it was an
    OverflowError, exit 1): refused as any other number that is not finite."""
    from contrastcat.records.record import read_records

    from ..helpers import assert_bad_input, record

    values = record().to_dict()
    values[field] = [10**400] + values.get(field, values["scores"])[1:]
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps(values) + "\n")
    assert_bad_input(lambda: read_records(str(path)), f"big.jsonl:1: '{field}' must be a list of finite numbers")
    result = invoke("render", path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "finite numbers" in result.stderr
