"""The fitted mark: a cell is marked where the method chose its maps by that very test.

Contrast-CAT keeps the maps whose MoRF deletion drop is largest, so its MoRF cells under deletion
are fitted (ᶠ) and comprehensiveness under deletion partly (ᵖ); contrastcat-plus scoring
morf-lerf fits the LeRF cells too, and sufficiency partly. Nothing else is marked: not AttCAT,
not Contrast-CAT without refinement, and nothing under masking.
"""

from __future__ import annotations

import json

import pytest

import contrastcat
from contrastcat.evaluation.fitted import FITTED, PARTLY, fitted_cells

from ..helpers import invoke

ORDERS = ("morf", "lerf")
MORF_FIT = {"morf_aopc": FITTED, "morf_lodds": FITTED, "eraser_comp": PARTLY}
BOTH_FIT = {**MORF_FIT, "lerf_aopc": FITTED, "lerf_lodds": FITTED, "eraser_suff": PARTLY}
# A test at some of the grid's fractions, or of the log-odds: the same perturbation and order, not the same test.
MORF_PARTLY = {"morf_aopc": PARTLY, "morf_lodds": PARTLY, "eraser_comp": PARTLY}


@pytest.mark.parametrize(("name", "settings", "perturb", "orders", "expected"), [
    ("contrastcat", {"refine": True, "deletion_grid": 10, "mask_special": False}, "delete", ORDERS, MORF_FIT),
    ("contrastcat", {"refine": True}, "delete", ("lerf",), {"eraser_comp": PARTLY}),
    ("contrastcat", {}, "delete", ORDERS, {}),  # says nothing of how it was made: no claim either way
    ("contrastcat", {"test_steps": "5"}, "delete", ORDERS, MORF_PARTLY),  # one fraction of the sweep
    ("contrastcat", {"test_steps": "2,5,8"}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat", {"test_measure": "log-odds"}, "delete", ORDERS, MORF_PARTLY),
    # Another grid is other fractions: 2 deletes every token at once (the one fraction --test-steps 9
    # keeps of the paper's grid), 3 half and then every token, 20 a finer sweep.
    ("contrastcat", {"deletion_grid": 2}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat", {"test_steps": "9"}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat", {"deletion_grid": 3}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat", {"deletion_grid": 5}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat", {"deletion_grid": 20}, "delete", ORDERS, MORF_PARTLY),
    ("contrastcat-plus", {"refine_score": "morf-lerf", "deletion_grid": 4}, "delete", ORDERS,
     {**MORF_PARTLY, "lerf_aopc": PARTLY, "lerf_lodds": PARTLY, "eraser_suff": PARTLY}),
    ("contrastcat", {"refine": False}, "delete", ORDERS, {}),
    ("contrastcat", {"refine": True}, "mask", ORDERS, {}),
    ("contrastcat", {"refine": True}, "pad", ORDERS, {}),
    ("contrastcat-plus", {"refine_score": "morf-lerf"}, "delete", ORDERS, BOTH_FIT),
    ("contrastcat-plus", {"refine_score": "morf"}, "delete", ORDERS, MORF_FIT),
    ("attcat", {"layers": "all"}, "delete", ORDERS, {}),
    ("random", {"seed": 0}, "delete", ORDERS, {}),
    ("my-tool", {}, "delete", ORDERS, {}),  # another tool's records: nothing is known of them
    ("contrastcat", {"refs_used": "many"}, "delete", ORDERS, {}),  # settings this version cannot read
    ("contrastcat", None, "delete", ORDERS, {}),
    ("contrastcat", {"refs_used": 0}, "delete", ORDERS, {}),  # AttCAT exactly: one map, nothing chosen
    ("contrastcat-plus", {"candidates": 2, "top_maps": 5, "magnitude": False}, "delete", ORDERS, {}),  # all kept
    ("contrastcat-plus", {"candidates": 2, "top_maps": 3, "magnitude": True}, "delete", ORDERS, BOTH_FIT),  # 4 maps
    ("contrastcat", {"made_elsewhere": True}, "delete", ORDERS, {}),  # another tool's map under this name
    # Occlusion's map is the leave-one-out drop itself: fitted to that column under its own perturbation.
    ("occlusion", {"occlude": "delete", "mask_special": False}, "delete", ORDERS, {"loo_tau": FITTED}),
    ("occlusion", {"occlude": "mask"}, "mask", ORDERS, {"loo_tau": FITTED}),
    ("occlusion", {"occlude": "mask"}, "delete", ORDERS, {}),
    ("occlusion", {"occlude": "delete", "made_elsewhere": True}, "delete", ORDERS, {}),
    ("gradient-norm", {"mask_special": False}, "delete", ORDERS, {}),
])
def test_which_cells_each_selection_fits(name, settings, perturb, orders, expected):
    assert fitted_cells(name, settings, perturb, orders) == expected


@pytest.fixture(scope="module")
def records_file(toy_classifier, toy_library, toy_dir, tmp_path_factory):
    texts = [json.loads(line)["text"] for line in (toy_dir / "inputs.jsonl").read_text().splitlines()[:6]]
    records = contrastcat.explain(
        toy_classifier, texts, toy_library, method="contrastcat,contrastcat-plus,attcat",
        refs_used=10, candidates=10, refine_score="morf-lerf",
    )
    plain = contrastcat.explain(toy_classifier, texts, toy_library, method="contrastcat", refs_used=10, refine=False)
    folder = tmp_path_factory.mktemp("fitted")
    records.save(folder / "refined.jsonl")
    plain.save(folder / "plain.jsonl")
    path = folder / "attr.jsonl"
    path.write_text((folder / "refined.jsonl").read_text() + (folder / "plain.jsonl").read_text())
    return path


def marked(markdown: str, sign: str) -> dict[str, list[str]]:
    """Per row of a Markdown table, the headers of the cells carrying ``sign``."""
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    headers = [cell.strip() for cell in lines[0].strip("|").split("|")]
    found = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        found[cells[0]] = [headers[i] for i, cell in enumerate(cells) if cell.endswith(sign)]
    return found


def test_the_report_and_every_table_mark_exactly_the_fitted_cells(records_file, toy_dir):
    model = str(toy_dir / "model")
    result = invoke("evaluate", str(records_file), "--model", model, "--eraser", "--loo", "--markdown", "--quiet")
    assert result.exit_code == 0, result.output
    fitted, partly = marked(result.stdout, "ᶠ"), marked(result.stdout, "ᵖ")
    plain_label = next(label for label in fitted if label.startswith("contrastcat[") or label == "contrastcat#2")
    assert fitted == {
        "contrastcat": ["MoRF AOPC ↑", "MoRF LOdds ↓"],
        "contrastcat-plus": ["MoRF AOPC ↑", "MoRF LOdds ↓", "LeRF AOPC ↓", "LeRF LOdds ↑"],
        "attcat": [], plain_label: [],
    }
    assert partly == {
        "contrastcat": ["Comprehensiveness ↑"], "contrastcat-plus": ["Comprehensiveness ↑", "Sufficiency ↓"],
        "attcat": [], plain_label: [],
    }
    assert "ᶠ fitted: the method chose its maps by this very test" in result.stdout
    report = invoke("evaluate", str(records_file), "--model", model, "--eraser", "--json", "--quiet")
    rows = {row["method"]: row["fitted"] for row in json.loads(report.stdout)["comparison"]["rows"]}
    assert rows["contrastcat"] == {"morf_aopc": "fitted", "morf_lodds": "fitted", "eraser_comp": "partly"}
    assert rows["attcat"] == {} and rows[plain_label] == {}
    terminal = invoke("evaluate", str(records_file), "--model", model, "--quiet")
    assert terminal.exit_code == 0 and terminal.stdout.count("ᶠ") == 2 + 4 + 1  # cells, and the legend once
    masked = invoke("evaluate", str(records_file), "--model", model, "--eraser", "--perturb", "mask", "--markdown", "--quiet")
    assert "ᶠ" not in masked.stdout and "ᵖ" not in masked.stdout


def test_no_refine_records_no_test_options():
    """--no-refine runs no deletion test: its steps and measure had no effect and are not
    recorded (they would split one variant in two)."""
    from contrastcat.methods import build_method

    plain = build_method("contrastcat", refine=False).settings()
    asked = build_method("contrastcat", refine=False, test_steps="3", test_measure="log-odds").settings()
    assert asked == plain and "test_steps" not in asked and "test_measure" not in asked
    refined = build_method("contrastcat", test_steps="3", test_measure="log-odds").settings()
    assert refined["test_steps"] == "3" and refined["test_measure"] == "log-odds"


@pytest.mark.parametrize("mode", ["delete", "mask"])
def test_occlusions_map_is_leave_one_outs_own_drops(toy_classifier, toy_dir, mode):
    """Two code paths, one quantity: the method's map and evaluate's leave-one-out drops agree (τ
    about 1: drops within evaluate's tie of 1e-6 count as tied there, not in the map), and the
    cell is marked fitted under the same perturbation, not under another."""
    texts = [json.loads(line)["text"] for line in (toy_dir / "inputs.jsonl").read_text().splitlines()]
    records = contrastcat.explain(toy_classifier, texts, method="occlusion", occlude=mode)
    same = contrastcat.evaluate(toy_classifier, records, loo=True, perturb=mode, bootstrap=0, min_tokens=1)
    (row,) = same.comparison().rows
    assert row.values["loo_tau"] > 0.98 and row.fitted == {"loo_tau": FITTED}
    other = contrastcat.evaluate(toy_classifier, records, loo=True, perturb="pad", bootstrap=0, min_tokens=1)
    (row,) = other.comparison().rows
    assert row.fitted == {}
    # Maps of another class than the one evaluate scores: not its drops, not fitted; scored for
    # the records' own class (target="record"), fitted again.
    elsewhere = contrastcat.explain(toy_classifier, texts, method="occlusion", occlude=mode, target=2)
    assert any(r.target != r.predicted for r in elsewhere)
    (row,) = contrastcat.evaluate(toy_classifier, elsewhere, loo=True, perturb=mode, bootstrap=0,
                                  min_tokens=1).comparison().rows
    assert row.fitted == {}
    (row,) = contrastcat.evaluate(toy_classifier, elsewhere, loo=True, perturb=mode, bootstrap=0, min_tokens=1,
                                  target="record").comparison().rows
    assert row.fitted == {"loo_tau": FITTED} and row.values["loo_tau"] > 0.98
