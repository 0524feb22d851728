"""A record made elsewhere that shares its method's name with the tool's own records has one
label from the scan before any work to the report: the label the table shows is the one
`--compare` takes. Before, the scan labelled it ``attcat`` (so the label shown was refused) and
evaluation ``attcat[made_elsewhere=True]`` (so the other failed after all the work). The label
says what tells the two apart, where they were made, not every setting the other tool's record
lacks (``attcat[layers=None,made_elsewhere=True,mask_special=None]``), whichever comes first."""

from __future__ import annotations

import json

from ..helpers import invoke


def _mixed(toy_dir, tmp_path, spans: str, own_first: bool = True, *options: str):
    """attcat's records of the toy inputs and the same maps as another tool exports them (no token
    ids; each word by its ``spans``, "offsets" or "tokens"), in one file, the tool's first or last."""
    own = tmp_path / "own.jsonl"
    assert invoke("explain", toy_dir / "inputs.jsonl", "--model", toy_dir / "model", "--method", "attcat",
                  *options, "-o", own, "-q").exit_code == 0
    records = [json.loads(line) for line in own.read_text().splitlines()]
    elsewhere = "".join(json.dumps({
        "id": r["id"], "text": r["text"], spans: [o for o, s in zip(r[spans], r["special"]) if not s],
        "scores": [v for v, s in zip(r["scores"], r["special"]) if not s], "target": r["target"], "method": "attcat",
    }) + "\n" for r in records)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(own.read_text() + elsewhere if own_first else elsewhere + own.read_text())
    return mixed


def test_the_label_the_table_shows_is_the_one_compare_takes(toy_dir, toy_library, tmp_path):
    mixed = _mixed(toy_dir, tmp_path, "offsets")
    table = invoke("evaluate", mixed, "--model", toy_dir / "model", "--bootstrap", "0", "-q")
    assert table.exit_code == 0, table.output
    label = "attcat[made_elsewhere=True]"  # what differs from the own records
    assert label in table.stdout and "=None" not in table.stdout
    report = tmp_path / "report.json"
    compared = invoke("evaluate", mixed, "--model", toy_dir / "model", "--bootstrap", "0", "-q",
                      "--compare", f"attcat,{label}", "-o", report)
    assert compared.exit_code == 0, compared.output
    document = json.loads(report.read_text())
    assert label in json.dumps(document["comparison"]) if "comparison" in document else label in report.read_text()
    # The same maps aligned to the same tokens: the comparison says they do not differ.
    assert "attcat" in compared.stdout


def test_the_tool_s_records_after_another_tool_s_are_told_apart_by_that_alone(toy_dir, tmp_path):
    mixed = _mixed(toy_dir, tmp_path, "tokens", False, "--layers", "1")
    report = tmp_path / "report.json"
    result = invoke("evaluate", mixed, "--model", toy_dir / "model", "--bootstrap", "0", "-q", "-o", report,
                    "--compare", "attcat,attcat[made_elsewhere=False]")
    assert result.exit_code == 0, result.output
    assert list(json.loads(report.read_text())["methods"]) == ["attcat", "attcat[made_elsewhere=False]"]


def test_render_labels_records_made_elsewhere_as_evaluate_does(toy_dir, tmp_path):
    """render reads records made elsewhere before any model aligns them: the same label as
    evaluate's, which its --compare takes."""
    mixed = _mixed(toy_dir, tmp_path, "tokens")
    shown = invoke("render", mixed, "--color", "never", "--compare", "attcat,attcat[made_elsewhere=True]")
    assert shown.exit_code == 0, shown.output
    assert "attcat[made_elsewhere=True] →" in shown.stdout and "=None" not in shown.stdout
