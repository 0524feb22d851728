"""The Python API under hostile use: the same discipline as the CLI.

Each public function is called with arbitrary values of the wrong type or range in one argument
(the others right): the answer is a one-line :class:`BadInput` naming the argument, never
another exception and never a result computed from something else. Values an argument accepts
are left out (``assume``): those would run real work, and other tests check what it gives.
Then specific cases that hostile use found, each against what a correct call gives.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import contrastcat
from contrastcat.arguments import MAX_BATCH_SIZE, MAX_SEED, whole
from contrastcat.methods import METHODS
from contrastcat.records.record import read_records

from ..helpers import assert_bad_input

HOSTILE = settings(
    max_examples=60, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

wrong = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=6)
    | st.binary(max_size=4)
    | st.lists(st.integers(-3, 3), max_size=3)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
    | st.sampled_from([object(), float("nan"), -1, 0, 10**20, "16", "", " ", "all,", ",", "same", Path("nowhere")])
)

FORWARD_DTYPES = ("same", "auto", "float32", "bfloat16", "float16")


def _count_ok(value, low=1, high=None) -> bool:
    return whole(value) and value >= low and (high is None or value <= high)


def _method_ok(value) -> bool:
    if isinstance(value, str):
        parts = [part.strip() for part in value.split(",")]
        return all(part in METHODS or part == "all" for part in parts)
    return False  # lists drawn here hold integers


def _target_ok(value) -> bool:
    return value in ("pred", "gold") or (whole(value) and 0 <= value < 3) or (
        isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 10 and int(value) < 3
    )


# What explain accepts, per argument: a value it accepts is not drawn.
EXPLAIN_ACCEPTS = {
    "classifier": lambda v: False,
    "inputs": lambda v: False,  # lists drawn here hold integers, never texts
    "library": lambda v: False,  # contrastcat needs a library: None is refused too
    "method": _method_ok,
    "target": _target_ok,
    "batch_size": lambda v: _count_ok(v, 1, MAX_BATCH_SIZE),
    "max_length": lambda v: v is None or _count_ok(v, 2, 64),
    "mask_special": lambda v: isinstance(v, bool),
    "forward_dtype": lambda v: v in FORWARD_DTYPES,
    "text_field": lambda v: v == "text",
    "id_field": lambda v: isinstance(v, str) and v != "",  # any name: ids default to the position
    "label_field": lambda v: isinstance(v, str) and v not in ("", "label"),
}


@pytest.mark.parametrize("argument", sorted(EXPLAIN_ACCEPTS))
@HOSTILE
@given(value=wrong)
def test_explain_refuses_every_wrong_argument_in_one_line(toy_classifier, toy_library, argument, value):
    assume(not EXPLAIN_ACCEPTS[argument](value))
    call = {
        "classifier": toy_classifier,
        "inputs": [{"text": "a good film", "label": 1}],
        "library": toy_library,
        "method": "contrastcat",
        "target": "pred",
        "batch_size": 4,
        "max_length": None,
        "mask_special": False,
        "forward_dtype": "same",
        "text_field": "text",
        "id_field": "id",
        "label_field": "label",
        argument: value,
    }
    classifier, inputs = call.pop("classifier"), call.pop("inputs")
    assert_bad_input(lambda: contrastcat.explain(classifier, inputs, **call))


EVALUATE_ACCEPTS = {
    "classifier": lambda v: False,
    "records": lambda v: False,
    "library": lambda v: v is None,
    "kendall": lambda v: isinstance(v, bool),
    "orders": lambda v: isinstance(v, str) and all(p.strip() in ("morf", "lerf") for p in v.split(",")),
    "steps": lambda v: v in ("paper", "reference"),
    "perturb": lambda v: v in ("delete", "mask"),
    "min_tokens": lambda v: _count_ok(v),
    "target": lambda v: v in ("pred", "gold", "record"),
    "batch_size": lambda v: _count_ok(v, 1, MAX_BATCH_SIZE),
    "forward_dtype": lambda v: v in FORWARD_DTYPES,
    "bootstrap": lambda v: whole(v) and (v == 0 or 100 <= v <= 100_000),
    "ci": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 1,
    "seed": lambda v: _count_ok(v, 0, MAX_SEED),
}


@pytest.fixture(scope="module")
def attcat_records(toy_classifier):
    return contrastcat.explain(toy_classifier, ["a good film", "the worst plot"], method="attcat")


@pytest.mark.parametrize("argument", sorted(EVALUATE_ACCEPTS))
@HOSTILE
@given(value=wrong)
def test_evaluate_refuses_every_wrong_argument_in_one_line(toy_classifier, attcat_records, argument, value):
    assume(not EVALUATE_ACCEPTS[argument](value))
    call = {"classifier": toy_classifier, "records": attcat_records, "bootstrap": 0, argument: value}
    classifier, records = call.pop("classifier"), call.pop("records")
    assert_bad_input(lambda: contrastcat.evaluate(classifier, records, **call))


RENDER_ACCEPTS = {
    "records": lambda v: isinstance(v, list) and not v,  # no records: nothing to show, and "" says so
    "threshold": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
    "words": lambda v: v is None or isinstance(v, bool),  # None: as the command, tokens where shaded
}


@pytest.mark.parametrize("argument", sorted(RENDER_ACCEPTS))
@HOSTILE
@given(value=wrong)
def test_render_refuses_every_wrong_argument_in_one_line(attcat_records, argument, value):
    assume(not RENDER_ACCEPTS[argument](value))
    call = {"records": attcat_records, argument: value}
    assert_bad_input(lambda: contrastcat.render(**call))


BUILD_ACCEPTS = {
    "classifier": lambda v: False,
    "path": lambda v: v is None or (isinstance(v, (str, os.PathLike)) and str(v) != ""),  # a name is written
    "data": lambda v: isinstance(v, (str, os.PathLike)) and str(v) != "",  # a hub name: offline, exit 1
    "k": lambda v: _count_ok(v, 1, 1_000_000),
    "keep": lambda v: _count_ok(v, 1, 1_000_000),
    "gamma": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1,
    "min_tokens": lambda v: _count_ok(v, 1, 1_000_000),
    "max_scan": lambda v: v is None or _count_ok(v),
    "pools": lambda v: v in ("random", "same", "same,random", "random,same", "none") or v == [],
    "seed": lambda v: _count_ok(v, 0, MAX_SEED),
    "store_dtype": lambda v: v in ("float32", "float16"),
    "strict_gamma": lambda v: isinstance(v, bool),
    "batch_size": lambda v: _count_ok(v, 1, MAX_BATCH_SIZE),
    "forward_dtype": lambda v: v in FORWARD_DTYPES,
    "progress": lambda v: v is None,
}


@pytest.mark.parametrize("argument", sorted(BUILD_ACCEPTS))
@HOSTILE
@given(value=wrong)
def test_build_library_refuses_every_wrong_argument_before_any_work(
    toy_classifier, toy_dir, tmp_path_factory, argument, value
):
    assume(not BUILD_ACCEPTS[argument](value))
    out = tmp_path_factory.mktemp("hostile") / "refs.h5"
    call = {"classifier": toy_classifier, "path": out, "data": str(toy_dir / "train.jsonl"), "min_tokens": 1, argument: value}
    # keep=1 and k=1 make a library of a few rows if a refusal were missing: fast, and caught below.
    call.setdefault("k", 1)
    call.setdefault("keep", 1)
    if argument == "k":
        call["keep"] = 1_000_000
    assert_bad_input(lambda: contrastcat.build_library(**call))
    assert not out.exists()


@HOSTILE
@given(value=wrong)
def test_saving_records_refuses_a_wrong_path(attcat_records, value):
    assume(not (isinstance(value, (str, os.PathLike)) and str(value)))  # a name would be written
    assert_bad_input(lambda: attcat_records.save(value), "save")


@HOSTILE
@given(value=wrong)
def test_load_and_open_refuse_wrong_arguments(value):
    assume(not isinstance(value, (str, os.PathLike)))  # a string is a name to look up (the hub is offline)
    assert_bad_input(lambda: contrastcat.load_model(value), "load_model")
    assert_bad_input(lambda: contrastcat.open_library(value), "open_library")


@HOSTILE
@given(argument=st.sampled_from(["device", "dtype"]), value=wrong)
def test_load_model_refuses_a_wrong_device_or_dtype(toy_dir, argument, value):
    assume(not (argument == "device" and value in ("auto", "cpu")))
    assume(not (argument == "dtype" and value in ("auto", "float32", "bfloat16", "float16")))
    assert_bad_input(lambda: contrastcat.load_model(str(toy_dir / "model"), **{argument: value}))


# Specific cases that hostile use found, one by one.


def test_build_library_never_writes_over_its_data_or_the_model(toy_classifier, toy_dir, tmp_path):
    """The API refuses what build-refs refuses, and touches nothing."""
    model = toy_dir / "model"
    data = tmp_path / "data.jsonl"
    data.write_bytes((toy_dir / "train.jsonl").read_bytes())
    before = {p.name: p.read_bytes() for p in model.iterdir()}
    assert_bad_input(lambda: contrastcat.build_library(toy_classifier, data, data=str(data)), "is the input file")
    assert data.read_bytes() == (toy_dir / "train.jsonl").read_bytes()
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        assert_bad_input(
            lambda: contrastcat.build_library(toy_classifier, model / name, data=str(data)),
            "which this run reads (the model)",
        )
    assert {p.name: p.read_bytes() for p in model.iterdir()} == before


def test_explain_never_returns_nothing_for_something(toy_classifier, toy_library):
    """batch_size 0, no method, and a dict for a list are refused, not an empty or wrong answer."""
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["a good film"], method="attcat", batch_size=0), "batch_size")
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["a good film"], method=[]), "method")
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, {"text": "a good film"}, method="attcat"), "mapping")
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, "a good film", method="attcat"), "one string")


def test_a_model_given_by_name_is_said_to_be_one_before_the_library_is_asked_for():
    """The options are read before the classifier, the classifier before the library: a name where
    a loaded model belongs is said to be that, not that contrastcat needs a library."""
    for call in (contrastcat.explain, contrastcat.evaluate, contrastcat.sanity):
        assert_bad_input(lambda: call("minilm-rt", ["a good film"]), "classifier is the name 'minilm-rt'; load it first")
    assert_bad_input(lambda: contrastcat.explain(None, ["a good film"]), "classifier must be")
    # A wrong option still comes first (no model check paid for it).
    assert_bad_input(lambda: contrastcat.explain("minilm-rt", ["a good film"], batch_size=0), "batch_size")


def test_explain_takes_what_the_cli_takes(toy_classifier, toy_library, toy_dir):
    """A comma list of methods, and a library given by its path: the same records as the list
    and the opened library give."""
    texts = ["a good film", "the worst plot ever"]
    by_list = contrastcat.explain(toy_classifier, texts, library=toy_library, method=["contrastcat", "attcat"])
    by_string = contrastcat.explain(toy_classifier, texts, library=str(toy_dir / "refs.h5"), method="contrastcat, attcat")
    assert [r.to_dict() for r in by_string] == [r.to_dict() for r in by_list]
    assert [r.method for r in by_list] == ["contrastcat", "attcat", "contrastcat", "attcat"]


def test_arguments_of_the_wrong_type_are_one_line(toy_classifier, attcat_records, tmp_path):
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, None, method="attcat"), "inputs")
    for method in (None, 5):
        assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["a film"], method=method), "method")
    assert_bad_input(lambda: contrastcat.explain("toy", ["a film"], method="attcat"), "contrastcat.load_model('toy')")
    for size in (-1, "16", 0, True, 10**12):
        assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["a film"], method="attcat", batch_size=size))
    assert_bad_input(lambda: contrastcat.evaluate(toy_classifier, attcat_records, batch_size=0), "batch_size")
    dicts = [r.to_dict() for r in attcat_records]
    for records in (dicts, None, dicts[0]):
        assert_bad_input(lambda: contrastcat.evaluate(toy_classifier, records), "records")
        assert_bad_input(lambda: contrastcat.render(records), "records")
    assert_bad_input(lambda: contrastcat.load_model(None), "load_model")
    nan_id = [{"text": "a good film", "id": float("nan")}]
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, nan_id, method="attcat"), "finite")
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["a film"], method="attcat", target=True), "target")
    assert_bad_input(
        lambda: contrastcat.explain(toy_classifier, ["a film"], method="attcat", mask_special="yes"), "mask_special"
    )


def test_pools_as_the_cli_spells_them(toy_classifier, toy_dir, tmp_path):
    """pools="same" is the pool same (was: the pools 's', 'a', 'm', 'e')."""
    library = contrastcat.build_library(
        toy_classifier, tmp_path / "refs.h5", data=str(toy_dir / "train.jsonl"), pools="same", k=2, keep=2, max_scan=300
    )
    assert library.info.pools == ("same",)
    assert_bad_input(
        lambda: contrastcat.build_library(toy_classifier, tmp_path / "x.h5", data=str(toy_dir / "train.jsonl"), pools="sam"),
        "unknown pool 'sam'",
    )


def test_build_library_on_data_that_cannot_give_references_is_bad_input(toy_classifier, tmp_path):
    """One class only, or rows all shorter than min_tokens: exit 2 (BadInput), before the scan."""
    one_class = [f"a good film number {i}" for i in range(20)]
    assert_bad_input(
        lambda: contrastcat.build_library(toy_classifier, tmp_path / "a.h5", one_class, [1] * 20), "at least two classes"
    )
    mixed = ["a good film", "the worst plot"] * 10
    assert_bad_input(
        lambda: contrastcat.build_library(toy_classifier, tmp_path / "b.h5", mixed, [1, 0] * 10, min_tokens=1000),
        "has 1000 tokens",
    )
    assert not list(tmp_path.iterdir())


def test_records_json_round_trip_of_a_numeric_id(toy_classifier, tmp_path):
    """A finite float id is kept and saved (NaN is refused above, since JSON cannot hold it)."""
    records = contrastcat.explain(toy_classifier, [{"text": "a good film", "id": 2.5}], method="attcat")
    records.save(str(tmp_path / "r.jsonl"))
    assert json.loads((tmp_path / "r.jsonl").read_text())["id"] == 2.5


# The use cases on files: every argument is checked before the model loads, so a wrong one is
# refused at once and nothing is written (the output's folder stays empty).
FILE_CALLS = settings(
    max_examples=20, derandomize=True, database=None, deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_callback_ok = lambda v: v is None or callable(v)  # noqa: E731
_text_in = lambda *allowed: (lambda v: v in allowed)  # noqa: E731
EXPLAIN_FILE_ACCEPTS = {
    "method": _method_ok,
    "batch_size": lambda v: _count_ok(v, 1, MAX_BATCH_SIZE),
    "resume": lambda v: isinstance(v, bool),
    "shard": lambda v: v is None,  # a text is read as I/N: every drawn one is refused by that reading
    "on_error": _text_in("stop", "skip"),
    "mask_special": lambda v: isinstance(v, bool),
    "max_length": lambda v: v is None or _count_ok(v, 2, 64),
    "dtype": _text_in("auto", "float32", "bfloat16", "float16"),
    "forward_dtype": lambda v: v in FORWARD_DTYPES,
    "progress": _callback_ok,
    "notify": _callback_ok,
    "output": lambda v: isinstance(v, (str, os.PathLike)) and str(v) not in ("", " "),
}
EVALUATE_FILE_ACCEPTS = {
    "orders": lambda v: isinstance(v, str) and all(p.strip().lower() in ("morf", "lerf") for p in v.split(",")),
    "steps": _text_in("paper", "reference"),
    "perturb": _text_in("delete", "mask"),
    "min_tokens": lambda v: _count_ok(v, 1, 1_000_000),
    "target": _text_in("pred", "gold", "record"),
    "bootstrap": lambda v: _count_ok(v, 0, 100_000),
    "ci": lambda v: isinstance(v, float) and 0 < v < 1,
    "seed": lambda v: _count_ok(v, 0, MAX_SEED),
    "kendall": lambda v: isinstance(v, bool),
    "per_input": lambda v: isinstance(v, bool),
    "compare": lambda v: v is None,  # the records hold one method: any pair names one they lack
    "fail_under": lambda v: v is None,  # a drawn text is no bound, or one of a metric not evaluated
    "batch_size": lambda v: _count_ok(v, 1, MAX_BATCH_SIZE),
    "progress": _callback_ok,
}
BUILD_REFS_ACCEPTS = {
    name: accepts for name, accepts in BUILD_ACCEPTS.items() if name not in ("classifier", "path", "data")
} | {"max_length": lambda v: v is None or _count_ok(v, 2, 64), "notify": _callback_ok}


@pytest.fixture()
def files(tmp_path, toy_dir, toy_library, attcat_records):
    records = tmp_path / "attr.jsonl"
    attcat_records.save(str(records))
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('{"text": "a good film"}\n')
    out = tmp_path / "out"
    out.mkdir()
    return {"model": str(toy_dir / "model"), "library": toy_library.path, "records": records, "inputs": inputs, "out": out}


@pytest.mark.parametrize("argument", sorted(EXPLAIN_FILE_ACCEPTS))
@FILE_CALLS
@given(value=wrong)
def test_explain_file_refuses_every_wrong_argument_before_any_work(files, argument, value):
    assume(not EXPLAIN_FILE_ACCEPTS[argument](value))
    call = {"inputs": files["inputs"], "output": files["out"] / "attr.jsonl", "library": files["library"],
            "model": files["model"], "method": "attcat", argument: value}
    assert_bad_input(lambda: contrastcat.explain_file(**call))
    assert list(files["out"].iterdir()) == []


@pytest.mark.parametrize("argument", sorted(EVALUATE_FILE_ACCEPTS))
@FILE_CALLS
@given(value=wrong)
def test_evaluate_file_refuses_every_wrong_argument_before_any_work(files, argument, value):
    assume(not EVALUATE_FILE_ACCEPTS[argument](value))
    call = {"records": files["records"], "model": files["model"], "output": files["out"] / "report.json",
            "min_tokens": 1, "bootstrap": 0, argument: value}
    assert_bad_input(lambda: contrastcat.evaluate_file(**call))
    assert list(files["out"].iterdir()) == []


@pytest.mark.parametrize("argument", sorted(BUILD_REFS_ACCEPTS))
@FILE_CALLS
@given(value=wrong)
def test_build_refs_refuses_every_wrong_argument_before_any_work(files, toy_dir, argument, value):
    assume(not BUILD_REFS_ACCEPTS[argument](value))
    call = {"model": files["model"], "output": files["out"] / "refs.h5", "data": str(toy_dir / "train.jsonl"),
            "min_tokens": 1, "k": 1, "keep": 1, argument: value}
    if argument == "k":
        call["keep"] = 1_000_000
    assert_bad_input(lambda: contrastcat.build_refs(**call))
    assert list(files["out"].iterdir()) == []


@FILE_CALLS
@given(parts=wrong, output=wrong)
def test_merge_refuses_wrong_parts_and_outputs(files, parts, output):
    assume(not (isinstance(output, (str, os.PathLike)) and str(output) not in ("", " ")) or not isinstance(parts, list))
    assert_bad_input(lambda: contrastcat.merge(parts, output if isinstance(output, (str, os.PathLike)) else output))
    assert list(files["out"].iterdir()) == []


RENDER_FILE_ACCEPTS = {
    "html": lambda v: v is None or isinstance(v, (str, os.PathLike)),  # a path is written: none is drawn
    "threshold": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
    "limit": lambda v: v is None or _count_ok(v),
    "top": lambda v: v is None or _count_ok(v),
    "words": lambda v: v is None or isinstance(v, bool),  # None: tokens when shading, words with top
    "rescale": lambda v: isinstance(v, bool),
    "color": lambda v: isinstance(v, bool),
    "compare": lambda v: v is None,  # the records hold one method: any pair names one they lack
}


@pytest.mark.parametrize("argument", sorted(RENDER_FILE_ACCEPTS))
@FILE_CALLS
@given(value=wrong)
def test_render_file_refuses_every_wrong_argument_before_any_output(files, argument, value):
    assume(not RENDER_FILE_ACCEPTS[argument](value))
    assert_bad_input(lambda: contrastcat.render_file(files["records"], **{argument: value}))
    assert list(files["out"].iterdir()) == []


@FILE_CALLS
@given(value=wrong)
def test_render_file_refuses_a_wrong_records_path(files, value):
    assume(not isinstance(value, (str, os.PathLike)) or not Path(value).is_file())
    assume(value != "-")  # standard input
    assert_bad_input(lambda: contrastcat.render_file(value))


def test_render_file_gives_what_render_prints(files, tmp_path):
    """Blocks in record order, each the record's header and its marked text; a page only where asked."""
    run = contrastcat.render_file(files["records"], words=True, rescale=False)
    blocks = list(run.blocks)
    expected = contrastcat.render(read_records(str(files["records"])), words=True, rescale=False)
    assert run.wrote is None
    assert "\n\n".join(f"{b.title}\n{b.body}" for b in blocks) + "\n" == expected
    page = tmp_path / "view.html"
    run = contrastcat.render_file(files["records"], html=page)
    assert run.wrote == str(page) and list(run.blocks) == [] and page.read_text().startswith("<!doctype html>")
    assert_bad_input(lambda: contrastcat.render_file(files["records"], html=page, top=3), "render_file: html")


@HOSTILE
@given(argument=st.sampled_from(["name", "force", "quick", "device", "progress", "notify"]), value=wrong)
def test_prepare_model_refuses_wrong_arguments_before_any_work(argument, value):
    accepts = {"force": lambda v: isinstance(v, bool), "quick": lambda v: isinstance(v, bool),
               "device": lambda v: v in ("auto", "cpu"), "progress": _callback_ok, "notify": _callback_ok,
               "name": lambda v: False}
    assume(not accepts[argument](value))
    heard = []
    call = {"name": "minilm-rt", "progress": lambda *a: heard.append(a), "notify": heard.append, argument: value}
    assert_bad_input(lambda: contrastcat.prepare_model(**call))
    assert heard == []


@HOSTILE
@given(value=wrong)
def test_report_blocks_refuses_what_is_not_a_run(value):
    assert_bad_input(lambda: contrastcat.report_blocks(value), "report_blocks: run")


def test_what_a_record_file_could_not_hold_is_refused_up_front(toy_classifier):
    """A lone surrogate, an id of more digits than JSON writes; and a limit beyond any count."""
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, ["good \ud800 film"], method="random"),
                     "item 0: field 'text' is not valid Unicode")
    assert_bad_input(lambda: contrastcat.explain(toy_classifier, [{"id": 10**4300, "text": "a good film"}], method="random"),
                     "item 0: field 'id' has more than 4300 digits")
    assert contrastcat.explain(toy_classifier, [{"id": 10**4299, "text": "a good film"}], method="random")[0].id == 10**4299


def test_render_file_limit_and_evaluate_file_plot_over_its_report(files):
    assert_bad_input(lambda: contrastcat.render_file(files["records"], limit=10**20), "render_file: limit")
    report = files["out"] / "r.png"
    assert_bad_input(
        lambda: contrastcat.evaluate_file(files["records"], files["model"], output=report, plot=report, min_tokens=1),
        "plot and output both name",
    )
    assert list(files["out"].iterdir()) == []


HUGE = 10**5000  # past the 4,300 digits Python writes: a message quoting it would fail itself


@pytest.mark.parametrize("call, argument", [
    ("compare_file", "bootstrap"), ("evaluate_file", "bootstrap"), ("sanity_file", "bootstrap"),
    ("evaluate_file", "min_tokens"), ("explain_file", "max_length"), ("explain_file", "layers"),
    ("explain_file", "refs_used"), ("compare_file", "limit"),
])
@pytest.mark.parametrize("sign", [1, -1])
def test_an_integer_too_long_to_print_is_refused_in_one_line(files, call, argument, sign):
    inputs = {"records": files["records"]} if call in ("evaluate_file", "sanity_file") else \
        {"inputs": files["inputs"], "library": files["library"]}
    extra = {"method": "attcat"} if call == "explain_file" else {}
    message = assert_bad_input(lambda: getattr(contrastcat, call)(**inputs, model=files["model"], **extra,
                                                                  **{argument: sign * HUGE}))
    assert argument in message and len(message) < 300 and "0000000000" not in message
    assert list(files["out"].iterdir()) == []
