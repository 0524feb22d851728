"""What compare shows, from a report document written by hand: the terminal table (judged columns,
each difference over ± half its interval, marked where the interval excludes 0), the forest plot,
the cost picture's highlight and its caption, and a page that fits a 1300-px window in Chromium."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from rich.console import Console

from contrastcat.views.compare_page import Pictures, _example_inputs, _shown_methods, html_report
from contrastcat.views.comparison import table, terminal_blocks
from contrastcat.views.plots import ForestRow, forest_rows, forest_svg, frontier_best, frontier_svg

LONG = "contrastcat-lrp[refs_used=20,test_steps=5]"
CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None)


def column(name: str, heading: str, higher: bool, judged: bool = True) -> dict:
    return {"name": name, "heading": heading, "higher_is_better": higher, "judged": judged}


COLUMNS = [
    column("delete:morf_aopc", "MoRF AOPC, deletion", True, judged=False),
    column("mask:morf_aopc", "MoRF AOPC, [MASK]", True),
    column("delete:lerf_aopc", "LeRF AOPC, deletion", False),
    column("delete:comprehensiveness", "comprehensiveness", True),
]


def document(columns=COLUMNS, leader=LONG, means=None) -> dict:
    """Three methods: the leader; attnlrp 0.1 below it on every column, interval [-0.15, -0.05]
    (excludes 0); random 0.02 above it, interval [-0.01, 0.05] (does not)."""
    means = means or {LONG: 0.5, "attnlrp": 0.4, "random": 0.52}
    methods = []
    for name in (LONG, "attnlrp", "random"):
        cells = {}
        for c in columns:
            cell = {"mean": means[name], "inputs": 30, "fitted": None if c["judged"] else "fitted"}
            if name == "attnlrp":
                cell["against_leader"] = {"mean": -0.1, "interval": {"low": -0.15, "high": -0.05}, "inputs": 30,
                                          "excludes_zero": True}
            elif name == "random":
                cell["against_leader"] = {"mean": 0.02, "interval": {"low": -0.01, "high": 0.05}, "inputs": 30,
                                          "excludes_zero": False}
            cells[c["name"]] = cell
        methods.append({"method": name, "seconds_per_input": {LONG: 0.1, "attnlrp": 0.02, "random": 0.005}[name],
                        "inputs_timed": 30, "columns": cells})
    return {
        "inputs": 30, "hardware": "CPU test", "model": "toy", "columns": columns, "leader": leader,
        "recommendation": {"best": None, "leaders": [LONG, "random"], "ranking": [LONG, "random", "attnlrp"],
                           "paragraph": "No clear winner.", "no_intervals": None},
        "bootstrap": {"resamples": 1000, "ci": 0.95, "seed": 0}, "sanity_inputs": None, "methods": methods,
    }


def printed(blocks, width: int, color: bool = False) -> str:
    console = Console(width=width, force_terminal=color, color_system="standard" if color else None, record=True)
    for block in blocks:
        console.print(block)
    return console.export_text()


def test_the_terminal_table_shows_the_judged_columns_compactly_and_loses_none_at_100_columns():
    shown = printed(terminal_blocks(document(), plain=True), 100)
    assert "deletion ↑" not in shown  # the fitted MoRF deletion column is left out by default …
    assert "1 column(s) the ranking does not judge by are left out: --all-columns shows them" in " ".join(shown.split())
    for heading in ("[MASK] ↑", "deletion ↓", "comp."):  # … every judged one is there
        assert heading in shown
    lines = shown.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("attnlrp"))
    # The difference, marked (its interval excludes 0), over half its interval's width: (−0.05 − −0.15) / 2.
    assert lines[row].count("-0.100 *") == 3 and lines[row + 1].split() == ["±", "0.050"] * 3
    random_row = next(i for i, line in enumerate(lines) if line.startswith("random"))
    assert lines[random_row].count("+0.020") == 3 and "*" not in lines[random_row]
    assert lines[random_row + 1].split() == ["±", "0.030"] * 3
    assert "* after it where it excludes 0" in " ".join(shown.split())
    every = printed(terminal_blocks(document(), every=True, plain=True, named="every=True"), 100)
    assert "deletion ↑" in every and "left out" not in every and "0.500ᶠ" in every


def test_in_colour_the_mark_is_bold_and_a_long_variant_name_folds_rather_than_pushing_columns_out():
    text = printed(terminal_blocks(document()), 80, color=True)
    assert "bold where it excludes 0" in text and " *" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    assert text.count("± 0.050") == 3  # no column cut off at 80 characters


def test_the_forest_plot_has_a_panel_per_judged_column_and_a_dot_per_method_but_the_leader():
    found = document()
    others = [entry for entry in found["methods"] if entry["method"] != LONG]
    judged = [c for c in COLUMNS if c["judged"]]
    for c in judged:
        assert forest_rows(c, others) == [ForestRow("attnlrp", -0.1, -0.15, -0.05, True),
                                          ForestRow("random", 0.02, -0.01, 0.05, False)]
    pytest.importorskip("matplotlib")
    svg = forest_svg(found)
    assert all(svg.count(f">{c['heading']}<") == 1 for c in judged)  # the fitted column has no panel
    assert LONG not in svg  # the reference is the dashed 0, not a row
    assert svg.count("better →") == 2 and svg.count("← better") == 1


def test_the_cost_picture_highlights_the_method_highest_on_its_axis_and_the_caption_names_it():
    found = document()  # random's mean (0.52) is above the leader's (0.50) on the plotted column
    assert frontier_best(found) == "random"
    assert frontier_best(document(means={LONG: 0.5, "attnlrp": 0.4, "random": 0.1})) == LONG
    pytest.importorskip("matplotlib")
    page = html_report(found, Pictures(forest_svg(found), frontier_svg(found)))
    assert "red: random, the highest there" in page and "mean on MoRF AOPC, [MASK]" in page
    for entry, seconds in zip(found["methods"], (0.133, 0.41, 0.778)):  # all within one decade
        entry["seconds_per_input"] = seconds
    labels = set(re.findall(r">([0-9.]+)<", frontier_svg(found)))
    assert {"0.2", "0.5"} <= labels  # the time axis still has numbers


def test_examples_are_shown_by_the_leaders_never_random_and_of_different_classes_first():
    found = document()
    assert _shown_methods(found) == [LONG, "attnlrp"]

    class Record:
        def __init__(self, predicted, size):
            self.predicted, self.special = predicted, [True] + [False] * size + [True]

    records = [Record(0, 2), Record(0, 10), Record(0, 12), Record(1, 60), Record(1, 8), Record(0, 9)]
    # Too short (2 tokens) and too long (60) are passed over; one of each class first, then in order.
    assert _example_inputs(records, 3) == [1, 2, 4]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium): no browser check")
def test_the_page_fits_a_1300_px_window_with_every_column_judged_and_evidence(tmp_path):
    pytest.importorskip("matplotlib")
    from contrastcat.usecases.compare import COLUMNS as ALL, PLAUSIBILITY_COLUMNS
    from contrastcat.evaluation.metrics import PLAUSIBILITY_JUDGED

    # The widest page there is: no method fitted to any column (all ten perturbation ones judged),
    # plausibility's eight (four judged), the sanity column, a long variant's name.
    many = [column(c.name, c.heading, c.higher_is_better) for c in ALL] + [
        column(c.name, c.heading, c.higher_is_better, c.key in PLAUSIBILITY_JUDGED) for c in PLAUSIBILITY_COLUMNS]
    found = document(many)
    found["sanity_inputs"] = 10
    for entry in found["methods"]:
        entry["sanity"] = {"rho_randomised": 0.31, "passes": True}
    page = html_report(found, Pictures(forest_svg(found), frontier_svg(found)))
    # Measured by a script the page itself never carries (its policy forbids any): the widths as a title.
    measured = page.replace("default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'").replace(
        "</body>", "<script>document.title = [document.documentElement.scrollWidth, window.innerWidth, "
        "Math.max(...Array.from(document.querySelectorAll('body > table'), t => t.getBoundingClientRect().right))].join(' ')"
        "</script></body>")
    path = tmp_path / "page.html"
    path.write_text(measured, encoding="utf-8")
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1300,900"]
    dumped = subprocess.run([*browser, "--dump-dom", path.as_uri()], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "HOME": str(tmp_path)})
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    scroll, inner, right = map(float, re.search(r"<title>([\d. ]+)</title>", dumped.stdout).group(1).split())
    assert inner == 1300 and scroll <= inner and right <= inner


def test_a_lopsided_interval_is_shown_whole_where_its_half_width_would_contradict_the_mark():
    found = document()
    for entry in found["methods"]:
        if entry["method"] == "attnlrp":  # excludes 0 by a hair: −0.129 ± 0.194 would seem to hold it
            entry["columns"]["mask:morf_aopc"]["against_leader"] = {
                "mean": -0.129, "interval": {"low": -0.387, "high": -0.0003}, "inputs": 30, "excludes_zero": True}
    head, rows, legend = table(found, compact=True, columns=[c for c in COLUMNS if c["judged"]])
    attnlrp = next(row for row in rows if row[0].text == "attnlrp")
    assert (attnlrp[2].text, attnlrp[2].spread, attnlrp[2].ahead) == ("-0.129", "[-0.387, -3.0e-04]", True)
    assert (attnlrp[3].text, attnlrp[3].spread) == ("-0.100", "± 0.050")  # symmetric: ± says the same as the mark
    assert "the interval itself where it is lopsided" in legend[0]


def test_the_legend_counts_inputs_left_out_and_cut_and_names_the_unjudged_columns():
    found = document()
    found.update(evaluated=18, left_out={"too_short": 2, "special_tokens_only": 0, "duplicates": 0}, truncated=3)
    _, _, legend = table(found, compact=True)
    assert legend[0].startswith("30 inputs sampled, 18 evaluated (left out: 2 too short); 3 cut to the model's "
                                "length; CPU test.")
    assert "Not judged by (in italics): MoRF AOPC, deletion: fitted by a method's own selection." in legend[0]


def test_two_methods_with_the_same_maps_are_not_both_the_examples():
    found = document()
    found["recommendation"].update(leaders=[LONG, "attcat[layers=2]"], ranking=[LONG, "attcat[layers=2]", "attnlrp"],
                                   same_maps=[[LONG, "attcat[layers=2]"]])
    assert _shown_methods(found) == [LONG, "attnlrp"]


def test_a_dumb_terminal_gets_the_whole_table_never_a_number_broken(monkeypatch):
    import io

    from cli.common import print_blocks, stdout_console

    monkeypatch.setenv("TERM", "dumb")
    many = [column(f"mask:c{i}", f"LeRF AOPC, [MASK] {i}", False) for i in range(12)]
    stream = io.StringIO()
    console = stdout_console(file=stream, force_terminal=True, width=80, soft_wrap=True)
    print_blocks(console, terminal_blocks(document(many), plain=console.color_system is None))
    lines = stream.getvalue().splitlines()
    assert max(map(len, lines)) > 80  # wider than the terminal: its lines wrap there, nothing is cut
    row = next(line for line in lines if line.startswith("attnlrp"))
    assert row.count("-0.100 *") == 12
