"""Comparing methods (`evaluate` with several methods' records): ranking, tables, Markdown, JSON.

The ranking is worked by hand; the CLI tests run `contrastcat evaluate` in
process on hand-written records for the trained toy model, and recompute the
expected marks from the numbers of the JSON report.
"""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from contrastcat.evaluation.comparison import BEST, SECOND, compare_methods, rank_marks
from contrastcat.evaluation.curves import Curve, MethodReport
from contrastcat.usecases.evaluate_records import mark_special_tokens
from contrastcat.evaluation.kendall import Kendall
from contrastcat.records.record import AttributionRecord
from contrastcat_cli.app import app

from ..helpers import INPUTS, write_records

NAN = float("nan")

# ---------------------------------------------------------------- rank_marks


def test_higher_is_better():
    assert rank_marks([0.3, 0.5, 0.1], higher_is_better=True) == [SECOND, BEST, None]


def test_lower_is_better():
    assert rank_marks([0.3, 0.5, 0.1], higher_is_better=False) == [SECOND, None, BEST]
    # MoRF LOdds of the README's minilm-rt table: the most negative is best.
    assert rank_marks([-2.197, -1.966, -0.583], higher_is_better=False) == [BEST, SECOND, None]


def test_ties_share_a_mark_and_the_next_value_is_second():
    assert rank_marks([0.5, 0.3, 0.5, 0.1, 0.3], True) == [BEST, SECOND, BEST, None, SECOND]
    assert rank_marks([0.2, 0.2], True) == [BEST, BEST]
    assert rank_marks([0.2, 0.2, 0.2], False) == [BEST, BEST, BEST]  # no second when all tie
    assert rank_marks([0.1, 0.4, 0.4], True) == [SECOND, BEST, BEST]


def test_decimals_tie_what_prints_the_same():
    values = [0.55555, 0.55561, 0.5]  # both print as 0.556
    assert rank_marks(values, True) == [SECOND, BEST, None]
    assert rank_marks(values, True, decimals=3) == [BEST, BEST, SECOND]
    assert rank_marks([-0.00004, 0.00004, 0.2], False, decimals=3) == [BEST, BEST, SECOND]  # -0.000 == 0.000


def test_a_single_value_is_not_marked():
    assert rank_marks([0.7], True) == [None]
    assert rank_marks([], True) == []


def test_nan_and_missing_are_never_marked():
    assert rank_marks([NAN, 0.2, None, 0.4], True) == [None, SECOND, None, BEST]
    assert rank_marks([NAN, 0.2, None, 0.4], False) == [None, BEST, None, SECOND]
    assert rank_marks([NAN, 0.2], False) == [None, None]  # one comparable value: nothing to compare
    assert rank_marks([NAN, NAN], True) == [None, None]


# ----------------------------------------------------------- compare_methods


def report(method, morf=None, lerf=None, kendall=None, evaluated=3):
    """A report whose curves have the given means (the curve is flat at the mean)."""
    curves = {}
    for order, means in (("morf", morf), ("lerf", lerf)):
        if means is not None:
            curves[order] = Curve(aopc=[means[0]] * 9, lodds=[means[1]] * 9)
    found = Kendall(tau_index=kendall, tau_scores=0.0, inputs=evaluated) if kendall is not None else None
    return MethodReport(method, evaluated, 0, curves, found)


def test_compare_methods_uses_each_metric_direction():
    reports = [
        report("a", morf=(0.55, -2.2), lerf=(-0.09, 0.10), kendall=0.02),
        report("b", morf=(0.53, -1.9), lerf=(-0.08, 0.08), kendall=0.20),
        report("c", morf=(0.18, -0.6), lerf=(0.13, -0.49), kendall=NAN),
    ]
    comparison = compare_methods(reports, ("morf", "lerf"), kendall=True)
    keys = [c.key for c in comparison.columns]
    assert keys == ["morf_aopc", "morf_lodds", "lerf_aopc", "lerf_lodds", "kendall_tau_index"]
    assert [c.metric.higher_is_better for c in comparison.columns] == [True, False, False, True, False]
    assert [r.method for r in comparison.rows] == ["a", "b", "c"]
    a, b, c = comparison.rows
    assert a.marks == dict.fromkeys(keys, BEST)
    assert b.marks == dict.fromkeys(keys, SECOND)
    assert c.marks == dict.fromkeys(keys)
    assert a.values["morf_aopc"] == pytest.approx(0.55) and a.values["lerf_lodds"] == pytest.approx(0.10)
    assert c.values["kendall_tau_index"] is None  # NaN becomes None: JSON has no NaN


def test_compare_methods_only_the_evaluated_orders_and_missing_curves():
    reports = [report("a", lerf=(0.1, -0.2)), report("b", lerf=(0.3, -0.5)), report("none", evaluated=0)]
    comparison = compare_methods(reports, ("lerf",))
    assert [c.key for c in comparison.columns] == ["lerf_aopc", "lerf_lodds"]
    assert [r.marks["lerf_aopc"] for r in comparison.rows] == [BEST, SECOND, None]
    assert comparison.rows[2].values == {"lerf_aopc": None, "lerf_lodds": None}
    document = comparison.as_dict()
    assert document["columns"][0] == {"key": "lerf_aopc", "name": "LeRF AOPC", "higher_is_better": False}
    assert document["rows"][2] == {
        "method": "none", "evaluated": 0, "values": {"lerf_aopc": None, "lerf_lodds": None},
        "marks": {"lerf_aopc": None, "lerf_lodds": None}, "intervals": {"lerf_aopc": None, "lerf_lodds": None}, "fitted": {},
    }


def test_mark_special_tokens_adds_flags_and_keeps_given_ones():
    record = AttributionRecord(
        id=1, text="", tokens=["[CLS]", "a", "[SEP]", "b"], token_ids=[2, 7, 3, 8], offsets=[[0, 0]] * 4,
        special=[False, False, False, True], scores=[0, 1, 0, 1], target=0, target_name="n", probs=[], predicted=0,
        label=None, method="m", model="", model_fingerprint="", library=None,
    )
    mark_special_tokens([record], [2, 3, 0])
    assert record.special == [True, False, True, True]


# ------------------------------------------------------------------ the CLI

RUNNER = CliRunner()


def evaluate(*args, env=None):
    result = RUNNER.invoke(app, ["evaluate", *map(str, args), "--device", "cpu", "--quiet"], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout


METHODS = ("random", "keyword", "position")  # first-appearance order, neither sorted nor grouped


@pytest.fixture(scope="module")
def three(toy_dir, tmp_path_factory):
    """Three methods' records, their Markdown comparison and their JSON report, from one run."""
    work = tmp_path_factory.mktemp("compare")
    path = write_records(toy_dir, work / "three.jsonl", METHODS)
    markdown = evaluate(path, "--markdown", "-o", work / "report.json")
    return path, json.loads((work / "report.json").read_text()), markdown


def expected_marks(document, decimals, kendall=False):
    """{column key: [mark per method]} recomputed from the per-method means of the JSON report."""
    methods = document["methods"]
    names = list(methods)
    columns = {
        "morf_aopc": (True, [methods[n]["morf"]["aopc_mean"] for n in names]),
        "morf_lodds": (False, [methods[n]["morf"]["lodds_mean"] for n in names]),
        "lerf_aopc": (False, [methods[n]["lerf"]["aopc_mean"] for n in names]),
        "lerf_lodds": (True, [methods[n]["lerf"]["lodds_mean"] for n in names]),
    }
    if kendall:
        columns["kendall_tau_index"] = (False, [methods[n]["kendall"]["tau_index"] for n in names])
    marks = {}
    for key, (higher, values) in columns.items():
        shown = [round(v, decimals) for v in values]
        ranked = sorted(set(shown), reverse=higher)
        marks[key] = [BEST if s == ranked[0] else SECOND if len(ranked) > 1 and s == ranked[1] else None for s in shown]
    return marks


def test_json_has_the_comparison_and_keeps_its_keys(three):
    _, document, _ = three
    for key in ("input", "model", "records", "steps", "step_labels", "perturb", "target", "min_tokens", "methods"):
        assert key in document
    assert list(document["methods"]) == list(METHODS)
    comparison = document["comparison"]
    assert [c["key"] for c in comparison["columns"]] == ["morf_aopc", "morf_lodds", "lerf_aopc", "lerf_lodds"]
    assert [r["method"] for r in comparison["rows"]] == list(METHODS)
    for row in comparison["rows"]:
        method = document["methods"][row["method"]]
        assert row["evaluated"] == method["evaluated"] == INPUTS
        assert row["values"]["morf_aopc"] == method["morf"]["aopc_mean"]
        assert row["values"]["lerf_lodds"] == method["lerf"]["lodds_mean"]
    expected = expected_marks(document, comparison["decimals"])
    for key, marks in expected.items():
        assert [r["marks"][key] for r in comparison["rows"]] == marks, key
    # Keywords first is what the toy model relies on: it must win MoRF AOPC.
    assert document["comparison"]["rows"][1]["marks"]["morf_aopc"] == BEST


def parse_markdown(text):
    lines = text.strip().splitlines()
    assert lines[0].startswith("| method | MoRF AOPC ↑ | MoRF LOdds ↓ | LeRF AOPC ↓ | LeRF LOdds ↑ |")
    assert lines[1].startswith("|---|")
    rows = []
    for line in lines[2:]:
        if not line.strip():  # the table ends; notes follow
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        marked = []
        for cell in cells[1:-1]:
            if cell.startswith("**"):
                marked.append((BEST, cell.strip("*")))
            elif cell.startswith("<ins>"):
                marked.append((SECOND, cell.removeprefix("<ins>").removesuffix("</ins>")))
            else:
                marked.append((None, cell))
        rows.append((cells[0], marked, int(cells[-1])))
    return lines[0], rows


def test_markdown_marks_the_right_cells(three):
    _, document, markdown = three
    _, rows = parse_markdown(markdown)
    assert markdown.rstrip().endswith("\n\n± half the 95% bootstrap interval over inputs (1000 resamples, seed 0).")
    assert [name for name, _, _ in rows] == list(METHODS)
    keys = ["morf_aopc", "morf_lodds", "lerf_aopc", "lerf_lodds"]
    fields = [("morf", "aopc_mean"), ("morf", "lodds_mean"), ("lerf", "aopc_mean"), ("lerf", "lodds_mean")]
    expected = expected_marks(document, 3)
    assert any(BEST in marks for marks in expected.values()) and any(SECOND in marks for marks in expected.values())
    for index, (name, cells, inputs) in enumerate(rows):
        assert inputs == document["methods"][name]["evaluated"]
        for key, (order, field), (mark, text) in zip(keys, fields, cells):
            assert mark == expected[key][index], (name, key)
            value, half = text.split(" ± ")  # the mean ± half its bootstrap interval
            assert float(value) == pytest.approx(document["methods"][name][order][field], abs=5e-4)
            interval = document["methods"][name]["intervals"][key]
            assert float(half) == pytest.approx((interval["high"] - interval["low"]) / 2, abs=5e-4)
            assert len(value.split(".")[1]) == 3 and len(half.split(".")[1]) == 3


def test_terminal_shows_one_comparison_table(three):
    path, document, _ = three
    out = evaluate(path)
    assert "Mean over the 9 steps (* best, † second in each column)" in out  # not a terminal: signs, not styles
    assert "10%" not in out and "skipped (too short)" not in out  # no step tables without --curves
    assert "\x1b[" not in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == list(METHODS)
    expected = expected_marks(document, 4)
    for index, row in enumerate(rows):
        cells = [c.strip() for c in row.split("│")[2:-2]]
        signs = [BEST if c.endswith("*") else SECOND if c.endswith("†") else None for c in cells]
        assert signs == [expected[key][index] for key in ("morf_aopc", "morf_lodds", "lerf_aopc", "lerf_lodds")]


def test_curves_adds_the_step_tables(three):
    path, _, _ = three
    out = evaluate(path, "--curves", "--order", "lerf")
    for name in METHODS:
        assert f"{name}: {INPUTS} inputs evaluated, 0 skipped (too short)" in out
    assert out.index(f"position: {INPUTS} inputs") < out.index("Mean over the 9 steps")
    assert "MoRF" not in out and "LeRF AOPC ↓" in out


def test_styles_survive_no_color(three):
    path, _, _ = three
    out = evaluate(path, "--order", "morf", env={"FORCE_COLOR": "1", "NO_COLOR": "1", "COLUMNS": "200"})
    assert "bold best, underlined second" in out
    assert "\x1b[1m" in out and "\x1b[4m" in out  # bold and underline are attributes, not colours
    assert " * " not in out and "†" not in out


def test_one_method_keeps_the_step_table(toy_dir, tmp_path):
    path = write_records(toy_dir, tmp_path / "one.jsonl", ("keyword",))
    out = evaluate(path, "--order", "morf")
    assert out.startswith(f"keyword: {INPUTS} inputs evaluated") and "Mean over the" not in out
    _, rows = parse_markdown(evaluate(path, "--markdown"))
    assert len(rows) == 1 and rows[0][0] == "keyword"
    assert all(mark is None for mark, _ in rows[0][1])  # nothing to be best among


def test_special_tokens_are_flagged_from_the_tokenizer(toy_dir, tmp_path):
    flagged = write_records(toy_dir, tmp_path / "flagged.jsonl", ("keyword",))
    unflagged = write_records(toy_dir, tmp_path / "unflagged.jsonl", ("keyword",), with_special=False)
    first = json.loads(evaluate(flagged, "--json", "--order", "morf"))
    second = json.loads(evaluate(unflagged, "--json", "--order", "morf"))
    assert first["methods"] == second["methods"]


def test_kendall_column(toy_dir, tmp_path):
    path = write_records(toy_dir, tmp_path / "k.jsonl", ("attcat", "random"))
    out = evaluate(path, "--kendall", "-o", tmp_path / "k.json")
    header = next(line for line in out.splitlines() if "method" in line)
    # One line, wider than 80 columns: a pipe gets the table unwrapped.
    assert [h.strip() for h in header.split("┃")[2:-1]] == [
        "MoRF AOPC ↑", "MoRF LOdds ↓", "LeRF AOPC ↓", "LeRF LOdds ↑", "Kendall τ ↓", "inputs"
    ]
    assert len(header) > 80
    document = json.loads((tmp_path / "k.json").read_text())
    comparison = document["comparison"]
    assert comparison["columns"][-1]["key"] == "kendall_tau_index"
    taus = [document["methods"][name]["kendall"]["tau_index"] for name in ("attcat", "random")]
    assert [r["values"]["kendall_tau_index"] for r in comparison["rows"]] == [
        None if math.isnan(t) else t for t in taus
    ]
    expected = expected_marks(document, comparison["decimals"], kendall=True)["kendall_tau_index"]
    assert [r["marks"]["kendall_tau_index"] for r in comparison["rows"]] == expected


def test_json_and_markdown_together_is_a_usage_error(three):
    path, _, _ = three
    result = RUNNER.invoke(app, ["evaluate", str(path), "--json", "--markdown"])
    assert result.exit_code == 2 and "pick one" in result.stderr


def test_variants_of_one_method_are_labelled_by_their_differences():
    from contrastcat.records.record import AttributionRecord
    from contrastcat.records.variants import group_by_method

    def record(method, **settings):
        return AttributionRecord(
            id=0, text="t", tokens=["a"], token_ids=[1], offsets=[[0, 1]], special=[False], scores=[1.0],
            target=0, target_name="x", probs=[1.0], predicted=0, label=None, method=method,
            model="m", model_fingerprint="", library=None, refs_kept=None, refs_total=None, settings=settings,
        )

    records = [
        record("contrastcat", refs_used=30, rho="mean+std"),
        record("attcat", layers="all"),
        record("contrastcat", refs_used=5, rho="mean+std"),
        record("contrastcat", refs_used=30, rho="mean"),
        record("contrastcat", refs_used=30, rho="mean+std"),
    ]
    groups = group_by_method(records)
    assert list(groups) == ["contrastcat", "attcat", "contrastcat[refs_used=5]", "contrastcat[rho=mean]"]
    assert [len(g) for g in groups.values()] == [2, 1, 1, 1]
