"""Intervals over inputs, paired differences, and exit code 3 for CI gates.

Values are checked against independent computations: the bootstrap of two
values worked out by hand, paired differences recomputed from the report's own
per-input values, a method compared with itself.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from contrastcat import __version__
from contrastcat.evaluation.levels import fewest_resamples, fewest_resamples_ever, level_text
from contrastcat.evaluation.stats import (
    BootstrapSettings,
    bootstrap_means,
    expanded_level,
    fewest_inputs,
    mean_interval,
    paired_difference,
    percentile_interval,
    resolvable_level,
    student_t,
    why_no_interval,
)
from contrastcat.views.tables import compare_lines
from contrastcat_cli.app import app

from ..helpers import write_records

RUNNER = CliRunner()
METHODS = ("keyword", "random", "position")


def run(*args):
    return RUNNER.invoke(app, ["evaluate", *map(str, args), "--device", "cpu", "--quiet"])


@pytest.fixture(scope="module")
def records(toy_dir, tmp_path_factory):
    return write_records(toy_dir, tmp_path_factory.mktemp("gates") / "three.jsonl", METHODS)


@pytest.fixture(scope="module")
def baseline(records, tmp_path_factory):
    path = tmp_path_factory.mktemp("baseline") / "report.json"
    result = run(records, "--per-input", "-o", path)
    assert result.exit_code == 0, result.output
    return path


# ------------------------------------------------------------------ the statistics


def test_two_values_bootstrap_to_the_interval_worked_out_by_hand():
    """Means of two draws from {0, 1}: 0 (1/4), 0.5 (1/2), 1 (1/4); the middle 40 % is all 0.5.
    Expanded for n = 2 (t with 1 degree of freedom at 40 %: tan(0.2π) = 0.72654; times √2 =
    1.02748, whose central normal probability is 0.6958), the percentiles are 15.2 % and 84.8 %:
    0 and 1."""
    settings = BootstrapSettings(resamples=4000, level=0.4, seed=3)
    means = bootstrap_means([0.0, 1.0], settings)
    (plain,) = percentile_interval(means, 0.4)
    assert (plain.low, plain.high) == (0.5, 0.5)
    assert expanded_level(0.4, 2) == pytest.approx(0.6958, abs=1e-4)
    expanded = mean_interval([0.0, 1.0], settings)
    assert (expanded.low, expanded.high) == (0.0, 1.0)


@pytest.mark.parametrize(("level", "dof", "table"), [
    (0.95, 1, 12.706), (0.95, 2, 4.303), (0.95, 5, 2.571), (0.95, 10, 2.228), (0.95, 30, 2.042),
    (0.99, 7, 3.499), (0.99, 20, 2.845), (0.9, 3, 2.353), (0.95, 120, 1.980), (0.95, 500, 1.965),
])
def test_student_t_quantiles_are_the_published_ones(level, dof, table):
    assert student_t(level, dof) == pytest.approx(table, abs=6e-4)


def test_the_expanded_interval_excludes_0_about_as_often_as_its_level_allows():
    """No true difference (normal noise, 8 inputs, 300 trials): a 95% plain percentile interval
    excluded 0 in 47 of them (16%), the expanded one in 25 (8%; over 1,000 trials 12% and 6%,
    docs/cli.md)."""
    rng = np.random.default_rng(5)
    settings = BootstrapSettings(resamples=1000, level=0.95, seed=0)
    samples = [rng.standard_normal(8) for _ in range(300)]
    plain = sum(not percentile_interval(bootstrap_means(x, settings), 0.95)[0].contains(0) for x in samples)
    expanded = sum(not mean_interval(x, settings).contains(0) for x in samples)
    assert plain / 300 > 0.12 and expanded / 300 < 0.1, (plain, expanded)


@pytest.mark.parametrize(("level", "fewest"), [(0.4, 2), (0.5, 2), (0.8, 4), (0.9, 5), (0.95, 6), (0.99, 8)])
def test_an_interval_needs_as_many_inputs_as_a_sign_test_at_its_level(level, fewest):
    """n inputs of one sign are evidence at a level only when 2 · 0.5ⁿ ≤ 1 − level; with fewer,
    a percentile interval is about their min and max and would "exclude 0" on a coin's say-so."""
    settings = BootstrapSettings(resamples=20_000, level=level, seed=0)  # enough to resolve every end here
    assert fewest_inputs(level) == fewest
    assert mean_interval(np.linspace(0.1, 0.2, fewest - 1), settings) is None
    assert mean_interval(np.linspace(0.1, 0.2, fewest), settings) is not None
    short = {f"k{i}": 1.0 + i for i in range(fewest - 1)}
    found = paired_difference(short, dict.fromkeys(short, 0.0), settings)
    assert (found.interval, found.excludes_zero) == (None, None)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_intervals_are_reproducible_and_contain_the_mean(seed):
    values = np.random.default_rng(seed).normal(0.3, 0.2, size=40)
    settings = BootstrapSettings(resamples=500, level=0.9, seed=seed)
    first, again = mean_interval(values, settings), mean_interval(values, settings)
    assert first == again
    assert first.contains(float(values.mean())) and first.high > first.low
    assert mean_interval(values, BootstrapSettings(500, 0.9, seed + 10)) != first


def test_a_paired_difference_of_a_method_with_itself_is_zero_with_zero_width():
    values = {f"k{i}": float(v) for i, v in enumerate(np.random.default_rng(0).random(25))}
    found = paired_difference(values, dict(values), BootstrapSettings(200, 0.95, 0))
    assert found.mean == 0.0 and (found.interval.low, found.interval.high) == (0.0, 0.0)
    assert found.inputs == 25 and found.excludes_zero is False


def test_a_paired_difference_uses_only_the_shared_inputs():
    a = {"x": 1.0, "y": 3.0, "z": 10.0}
    b = {"x": 0.5, "y": 1.0, "w": 7.0}
    found = paired_difference(a, b, BootstrapSettings(100, 0.95, 0))
    assert found.inputs == 2 and found.mean == pytest.approx((0.5 + 2.0) / 2)


def test_one_input_has_no_interval_and_excludes_nothing():
    """A single input resampled is itself every time: no interval (it once gave [m, m], and a
    paired difference over one shared input said "excludes 0")."""
    settings = BootstrapSettings(100, 0.95, 0)
    assert mean_interval([0.7], settings) is None
    assert mean_interval([0.7, float("nan")], settings) is None  # one finite value
    found = paired_difference({"x": 0.2, "y": 0.4}, {"x": 0.9, "z": 0.1}, settings)
    assert (found.inputs, found.interval, found.excludes_zero) == (1, None, None)
    assert found.mean == pytest.approx(-0.7)


# ------------------------------------------------------------------ evaluate's report and table


def test_the_report_carries_intervals_settings_and_per_input_values(baseline):
    document = json.loads(baseline.read_text())
    assert document["schema"] == "contrastcat/evaluate-report" and document["schema_version"] == 2
    assert document["tool"] == {"name": "contrastcat", "version": __version__}
    assert document["bootstrap"] == {"resamples": 1000, "ci": 0.95, "seed": 0}
    for name in METHODS:
        method = document["methods"][name]
        per_input = method["per_input"]["morf"]
        assert len(per_input["keys"]) == len(per_input["aopc"]) == method["evaluated"]
        assert np.mean(per_input["aopc"]) == pytest.approx(method["morf"]["aopc_mean"])
        interval = method["intervals"]["morf_aopc"]
        assert interval["low"] <= method["morf"]["aopc_mean"] <= interval["high"]
        assert len(method["curve_intervals"]["lerf"]["lodds"]) == 9
        for (low, high), mean in zip(method["curve_intervals"]["morf"]["aopc"], method["morf"]["aopc"]):
            assert low <= mean <= high


def test_intervals_follow_the_seed(records):
    once, twice, other = (json.loads(run(records, "--json", "--seed", s).stdout) for s in ("7", "7", "8"))
    key = lambda d: [d["methods"][m]["intervals"] for m in METHODS]  # noqa: E731
    assert key(once) == key(twice) and key(once) != key(other)
    assert all(not d["methods"]["keyword"]["intervals"] for d in [json.loads(run(records, "--json", "--bootstrap", "0").stdout)])


def test_compare_a_method_with_another_never_with_itself(records):
    # One reading of A,B for evaluate and render: the same method twice is a typo, not a comparison.
    _one_line(run(records, "--compare", "keyword,keyword"), 2,
              "--compare takes two different methods, A,B; got 'keyword,keyword'")
    document = json.loads(run(records, "--json", "--per-input", "--compare", "keyword,random").stdout)
    found = document["compare"]["differences"]["morf_aopc"]
    a, b = (document["methods"][m]["per_input"]["morf"] for m in ("keyword", "random"))
    pairs = dict(zip(b["keys"], b["aopc"]))
    expected = np.mean([value - pairs[key] for key, value in zip(a["keys"], a["aopc"])])
    assert found["mean"] == pytest.approx(expected) and found["inputs"] == len(a["keys"])
    assert found["interval"]["low"] <= found["mean"] <= found["interval"]["high"]
    assert found["excludes_zero"] == (found["interval"]["low"] > 0 or found["interval"]["high"] < 0)
    printed = run(records, "--compare", "keyword,random").stdout
    assert "keyword − random, paired over the inputs both evaluated:" in printed
    assert "MoRF AOPC: " in printed and "0" in printed


def test_the_table_shows_mean_plus_minus_half_the_interval(records):
    document = json.loads(run(records, "--json").stdout)
    printed = run(records).stdout
    row = next(line for line in printed.splitlines() if line.startswith("│ keyword"))
    interval = document["methods"]["keyword"]["intervals"]["morf_aopc"]
    half = (interval["high"] - interval["low"]) / 2
    assert f"{document['methods']['keyword']['morf']['aopc_mean']:.4f} ± {half:.4f}" in row
    assert "± half the 95% bootstrap interval over inputs (1000 resamples, seed 0)." in printed


def test_compare_names_a_missing_method_before_any_work(records):
    result = run(records, "--compare", "keyword,nosuch")
    assert result.exit_code == 2 and "--compare: no method 'nosuch'" in result.stderr


# ------------------------------------------------------------------ gates


def _one_line(result, code, *fragments):
    assert result.exit_code == code, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def test_fail_under_exits_3_naming_method_metric_value_and_bound(records, baseline):
    document = json.loads(baseline.read_text())
    keyword = document["methods"]["keyword"]["morf"]["aopc_mean"]
    passing = run(records, "--fail-under", f"keyword:morf.aopc={keyword - 0.01:.4f}")
    assert passing.exit_code == 0, passing.output
    failing = run(records, "--fail-under", f"keyword:morf.aopc={keyword + 0.01:.4f}")
    _one_line(failing, 3, f"keyword: MoRF AOPC {keyword:.4f} is below the bound {keyword + 0.01:.4f}".rstrip("0"))
    assert "│ keyword" in failing.stdout  # the table is still printed
    # A lower-is-better metric fails above its bound; a bound for all methods names the first.
    lerf = document["methods"]["random"]["lerf"]["aopc_mean"]
    above = run(records, "--fail-under", f"random:lerf.aopc={lerf - 0.01:.4f}")
    _one_line(above, 3, "random: LeRF AOPC", "is above the bound")
    # Several failures: each on its own line (none hidden behind "and 2 more"), then the error.
    every = run(records, "--fail-under", "morf.aopc=2")
    assert every.exit_code == 3, every.output
    lines = every.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["gate failed"] * 3 + ["error"], every.stderr
    assert sorted(line.split(": ")[1] for line in lines[:3]) == ["keyword", "position", "random"]
    assert all("MoRF AOPC" in line and "is below the bound 2" in line for line in lines[:3])
    assert lines[3] == "error: 3 gates failed (each above)"


@pytest.mark.parametrize("spec", ["morf=0.5", "morf.aopc", "morf.aopc=high", "morf.aopc=nan", ","])
def test_a_bad_bound_is_refused_before_any_work(records, spec):
    _one_line(run(records, "--fail-under", spec), 2, "--fail-under")


def test_a_report_written_today_is_read_back_as_a_baseline(records, baseline, toy_dir, tmp_path):
    assert run(records, "--baseline", baseline).exit_code == 0
    # keyword's scores replaced by another method's: its MoRF AOPC drops below the baseline's.
    worse = tmp_path / "worse.jsonl"
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    position = {r["id"]: r["scores"] for r in lines if r["method"] == "position"}
    worse.write_text("".join(
        json.dumps({**r, "scores": position[r["id"]]} if r["method"] == "keyword" else r) + "\n" for r in lines
    ))
    result = run(worse, "--baseline", baseline, "--tolerance", "0.001")
    # every regression on its own line: MoRF AOPC and LOdds and LeRF AOPC and LOdds of keyword
    assert result.exit_code == 3 and result.stderr.splitlines()[-1] == "error: 4 gates failed (each above)"
    first = result.stderr.splitlines()[0]
    for fragment in ("gate failed: keyword: MoRF AOPC", "the baseline's", "tolerance 0.001", "paired difference", "inputs"):
        assert fragment in first, (fragment, result.stderr)
    assert run(worse, "--baseline", baseline, "--tolerance", "5").exit_code == 0


def test_a_baseline_of_another_protocol_or_not_a_report_is_refused(records, baseline, tmp_path):
    _one_line(run(records, "--baseline", baseline, "--steps", "reference"), 2, "the baseline was evaluated with steps")
    junk = tmp_path / "junk.json"
    junk.write_text('{"methods": {}}')
    _one_line(run(records, "--baseline", junk), 2, f"{junk}: not an evaluate report")
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**json.loads(baseline.read_text()), "schema_version": 1}))
    _one_line(run(records, "--baseline", old), 2, "schema version 1")
    _one_line(run(records, "--baseline", tmp_path / "missing.json"), 2, "cannot read the baseline report")


# ------------------------------------------------------------------ pictures


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_plot_writes_the_curves_in_the_format_its_name_says(records, tmp_path, suffix, magic):
    path = tmp_path / f"curves{suffix}"
    result = run(records, "--plot", path)
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(magic)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_the_svg_names_every_method_and_panel_and_is_the_same_twice(records, tmp_path):
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run(records, "--plot", first).exit_code == 0 and run(records, "--plot", second).exit_code == 0
    text = first.read_text()
    for name in (*METHODS, "MoRF AOPC", "MoRF LOdds", "LeRF AOPC", "LeRF LOdds", "bootstrap intervals"):
        assert name in text, name
    assert first.read_bytes() == second.read_bytes()
    # one curve per method and panel: four panels
    assert text.count("<path") > 4 * len(METHODS)


def test_a_plot_with_no_known_format_or_without_matplotlib_fails_before_any_work(records, tmp_path, monkeypatch):
    _one_line(run(records, "--plot", tmp_path / "curves.gif"), 2, "must end in .png, .svg, .pdf")
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    _one_line(run(records, "--plot", tmp_path / "curves.png"), 2, "pip install 'contrastcat[plot]'")
    assert not (tmp_path / "curves.png").exists()


# ------------------------------------------------------------------ review findings: refused before any work


def _variant_file(records, path, variant_first: bool):
    """The records plus a variant of 'keyword' (other settings, position's scores); either one first."""
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    position = {r["id"]: r["scores"] for r in lines if r["method"] == "position"}
    base = [r for r in lines if r["method"] == "keyword"]
    variant = [{**r, "scores": position[r["id"]], "settings": {"x": 1, "y": 2}} for r in base]
    path.write_text("".join(json.dumps(r) + "\n" for r in (variant + base if variant_first else base + variant)))
    return path


def test_a_baseline_pairs_methods_by_settings_not_by_label_order(records, tmp_path):
    first = _variant_file(records, tmp_path / "a.jsonl", variant_first=False)
    again = _variant_file(records, tmp_path / "b.jsonl", variant_first=True)  # the labels swap here
    report = tmp_path / "a.json"
    assert run(first, "--order", "morf", "--per-input", "-o", report).exit_code == 0
    labels = [row["method"] for row in json.loads(report.read_text())["comparison"]["rows"]]
    assert labels == ["keyword", "keyword[x=1,y=2]"]
    result = run(again, "--order", "morf", "--baseline", report, "--tolerance", "0")
    assert result.exit_code == 0, result.output
    # a variant label with commas can be named
    compared = run(first, "--order", "morf", "--json", "--compare", "keyword,keyword[x=1,y=2]")
    assert compared.exit_code == 0, compared.output
    bound = run(first, "--order", "morf", "--fail-under", "keyword[x=1,y=2]:morf.aopc=-5")
    assert bound.exit_code == 0, bound.output


def test_what_a_baseline_or_a_gate_cannot_use_is_refused_before_any_work(records, baseline, tmp_path):
    _one_line(run(records, "--order", "morf", "--baseline", baseline), 2, "evaluated with orders ['morf', 'lerf']")
    other_model = tmp_path / "other.json"
    other_model.write_text(json.dumps({**json.loads(baseline.read_text()), "model_fingerprint": "sha256:0"}))
    _one_line(run(records, "--baseline", other_model), 2, "evaluated with model_fingerprint 'sha256:0'")
    document = json.loads(baseline.read_text())
    document["comparison"]["rows"][0]["values"]["morf_aopc"] = "high"
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(document))
    _one_line(run(records, "--baseline", damaged), 2, "damaged report")
    listed = tmp_path / "listed.json"
    listed.write_text(json.dumps({**json.loads(baseline.read_text()), "comparison": []}))
    _one_line(run(records, "--baseline", listed), 2, "damaged report")
    _one_line(run(records, "--seed", "-1"), 2, "--seed must be a whole number of at least 0")
    _one_line(run(records, "--bootstrap", "5"), 2, "100 to 100000 resamples")
    _one_line(run(records, "--fail-under", "nosuch:morf.aopc=0"), 2, "names method 'nosuch'")
    _one_line(run(records, "--fail-under", "kendall.tau=0.5"), 2, "Kendall τ is not evaluated")
    _one_line(run(records, "--order", "morf", "--fail-under", "lerf.aopc=0.5"), 2, "LeRF AOPC is not evaluated")


def test_too_few_inputs_print_no_interval_and_no_footnote_for_one(records, tmp_path):
    """Two inputs whose differences share a sign: no interval, "no interval" in the comparison,
    and no "± half the interval" line under a table that shows none."""
    lines = records.read_text().splitlines()
    two = tmp_path / "two.jsonl"
    ids = []
    for line in lines:
        if json.loads(line)["id"] not in ids:
            ids.append(json.loads(line)["id"])
    two.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] in ids[:2]))
    result = run(two, "--compare", "keyword,random")
    assert result.exit_code == 0, result.output
    assert "no interval" in result.stdout and "excludes 0" not in result.stdout
    assert "bootstrap interval" not in result.stdout and " ± " not in result.stdout


def test_the_same_input_under_new_ids_is_warned_of(records, tmp_path):
    """Three inputs each written twice under new ids are 6 inputs to the means and intervals:
    evaluated, and a warning per method says so (the ids differ, so they are no duplicates)."""
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    first = list(dict.fromkeys(r["id"] for r in lines))[:3]
    copies = [dict(r, id=f"{r['id']}-copy{c}") for r in lines if r["id"] in first for c in range(2)]
    path = tmp_path / "copies.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in copies))
    result = RUNNER.invoke(app, ["evaluate", str(path), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    for name in METHODS:
        assert f"{name}: 3 of its 6 inputs repeat the tokens of another under another id" in result.stderr
    plain = RUNNER.invoke(app, ["evaluate", str(records), "--device", "cpu"])
    assert plain.exit_code == 0 and "repeat the tokens" not in plain.stderr


def test_an_interval_end_that_rounds_to_zero_keeps_its_sign():
    document = {
        "comparison": {"columns": [{"key": "morf_aopc", "name": "MoRF AOPC"}]},
        "compare": {"first": "a", "second": "b", "differences": {"morf_aopc": {
            "mean": 0.5, "interval": {"low": 4e-05, "high": 0.9889}, "inputs": 6, "excludes_zero": True}}},
    }
    (line,) = compare_lines(document, 4)[1:]
    assert line == "  MoRF AOPC: +0.5000 [+4.0e-05, +0.9889], excludes 0 (6 inputs)"


def test_an_end_no_resampled_mean_lies_beyond_is_no_interval(records):
    """A 99.9% interval of 31 inputs expands to about 99.98%: at 1,000 resamples its ends would
    be the smallest and largest mean drawn. None is given; 100,000 resamples resolve it. A level
    that no number of inputs lets the resamples resolve is refused before any work."""
    values = np.random.default_rng(0).normal(size=31)
    assert mean_interval(values, BootstrapSettings(1000, 0.999, 0)) is None
    assert mean_interval(values, BootstrapSettings(100_000, 0.999, 0)) is not None
    refused = run(records, "--ci", "0.99", "--bootstrap", "200")  # 2 / (1 - 0.99): no count of inputs gets one
    assert refused.exit_code == 2
    assert ("--bootstrap 200 resamples cannot resolve a 99% interval of any number of inputs: it needs at least 201"
            in refused.stderr)
    assert fewest_resamples_ever(0.99) == 201 and fewest_resamples_ever(0.9801) == 101
    assert all(resolvable_level(BootstrapSettings(fewest_resamples_ever(c) - 1, c, 0), n) is None
               for c in (0.98, 0.99, 0.999) for n in (10, 1000, 10**6))


def test_a_level_is_printed_as_it_was_asked_and_a_missing_interval_says_why(records, tmp_path):
    """99.9% is not "100%"; intervals asked for but not drawn (too few inputs, or too few
    resamples for these inputs at the expanded level) say why under the table, in the terminal,
    the Markdown and the notebook's HTML alike."""
    assert [level_text(c) for c in (0.95, 0.975, 0.999, 0.5)] == ["95%", "97.5%", "99.9%", "50%"]
    lines = records.read_text().splitlines()
    ids = list(dict.fromkeys(json.loads(line)["id"] for line in lines))
    six = tmp_path / "six.jsonl"
    six.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] in ids[:6]))
    needed = fewest_resamples(expanded_level(0.95, 6))  # 412
    result = run(six, "--bootstrap", str(needed - 1))
    assert result.exit_code == 0, result.output
    note = f"No interval for {', '.join(METHODS)}: 6 inputs need at least {needed} resamples for a 95% interval"
    assert note in " ".join(result.stdout.split()) and " ± " not in result.stdout
    markdown = run(six, "--bootstrap", str(needed - 1), "--markdown")
    assert note in markdown.stdout
    drawn = run(six, "--bootstrap", str(needed), "--ci", "0.95")
    assert "No interval" not in drawn.stdout and " ± " in drawn.stdout
    five = tmp_path / "five.jsonl"
    five.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] in ids[:5]))
    few = run(five)
    assert "5 inputs, fewer than the 6 a 95% interval needs" in " ".join(few.stdout.split())
    odd = run(records, "--ci", "0.965", "--bootstrap", "20000")
    assert "± half the 96.5% bootstrap interval" in " ".join(odd.stdout.split())


def test_a_cell_that_rounds_to_zero_but_excludes_zero_is_printed_in_full():
    from contrastcat.evaluation.report_markup import number
    from contrastcat.evaluation.stats import Interval

    assert number(-0.000406, 3, Interval(-0.000703, -0.000242)) == "-4.1e-04 ± 2.3e-04"
    assert number(-0.000406, 3, Interval(-0.0007, 0.0002)) == "0.000 ± 0.000"  # holds 0: rounding says it
    assert number(0.5561, 3, Interval(0.5, 0.6)) == "0.556 ± 0.050"


def test_a_column_of_fewer_inputs_says_why_it_has_no_interval(records, tmp_path):
    """Leave-one-out τ is undefined for a map of equal scores: a method whose τ column has too
    few inputs for an interval, while its other columns have one, is told of under the table;
    and a note never asks for more resamples than --bootstrap allows."""
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    ids = list(dict.fromkeys(r["id"] for r in lines))
    for record in lines:
        if record["method"] == METHODS[0] and record["id"] in ids[:2]:
            record["scores"] = [0.5] * len(record["scores"])
    flat = tmp_path / "flat.jsonl"
    flat.write_text("".join(json.dumps(r) + "\n" for r in lines))
    result = run(flat, "--loo", "--min-tokens", "1")
    assert result.exit_code == 0, result.output
    printed = " ".join(result.stdout.split())
    assert f"No interval for {METHODS[0]} LOO τ: 4 inputs, fewer than the 6 a 95% interval needs." in printed
    why = why_no_interval(BootstrapSettings(100_000, 0.999, 0), 12)
    assert why == "12 inputs need 558359 resamples for a 99.9% interval, more than the 100000 allowed"
