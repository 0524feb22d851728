"""compare's report as people read it: the table and the recommendation, in Markdown and as one
self-contained HTML page, from the report's JSON document (nothing is computed here)."""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..evaluation.fitted import LEGEND, SIGNS
from ..evaluation.levels import level_text
from .html_page import PAGE_STYLE, POLICY


@dataclass(frozen=True)
class Cell:
    text: str
    ahead: bool = False  # a paired interval that excludes 0
    fitted: bool = False  # a heading of a column some method was fitted to (not judged by)


def table(document: dict) -> tuple[list[Cell], list[list[Cell]], list[str]]:
    """Headings, rows and the legend's sentences: the leader's values, every other method's paired
    difference from it with its interval (ahead where it excludes 0), ᶠ/ᵖ on fitted cells."""
    columns = document["columns"]
    checked = document.get("sanity_inputs") is not None
    head = [Cell("method"), Cell("s/input")] + ([Cell("ρ, model destroyed")] if checked else []) + [
        Cell(c["heading"] + (" ↑" if c["higher_is_better"] else " ↓"), fitted=not c["judged"]) for c in columns
    ]
    rows = []
    for entry in document["methods"]:
        row = [Cell(entry["method"]), Cell(f"{entry['seconds_per_input']:.3g}")]
        if checked:
            found = entry.get("sanity") or {}
            rho = found.get("rho_randomised")
            row.append(Cell("n/a" if rho is None else f"{rho:.2f}" + ("" if found.get("passes") else " ✗")))
        for column in columns:
            cell = entry["columns"].get(column["name"])
            if cell is None or cell["mean"] is None:
                row.append(Cell("n/a"))
                continue
            sign = SIGNS.get(cell["fitted"], "")
            against = cell.get("against_leader")
            if entry["method"] == document["leader"] or against is None:
                row.append(Cell(f"{cell['mean']:.3f}{sign}"))
                continue
            if against["interval"] is None:  # no bootstrap: the difference alone
                row.append(Cell(f"{against['mean']:+.3f}{sign}"))
                continue
            low, high = against["interval"]["low"], against["interval"]["high"]
            row.append(Cell(f"{against['mean']:+.3f} [{low:+.3f}, {high:+.3f}]{sign}", ahead=bool(against["excludes_zero"])))
        rows.append(row)
    measured = any((cell.get("against_leader") or {}).get("interval") is not None
                   for entry in document["methods"] for cell in entry["columns"].values())
    why = document["recommendation"].get("no_intervals") or f"{document['bootstrap']['resamples']} bootstrap resamples"
    intervals = (
        f"with its {level_text(document['bootstrap']['ci'])} bootstrap interval ({document['bootstrap']['resamples']} "
        "resamples), bold where it excludes 0" if measured else f"(no intervals: {why})"
    )
    legend = [
        f"{document['inputs']} inputs; {document['hardware']}. The leader's values, then every other method's "
        f"paired difference from {document['leader']} {intervals}. Columns in italics are not judged by: "
        "fitted by a method's own selection"
        + (", or (token F1, IOU F1) resting on a rationale threshold of their own." if _plausible(document) else ".")
        + (f" ρ, model destroyed: the Spearman correlation of a method's maps of {document['sanity_inputs']} inputs "
           "with its maps on the fully randomised model (✗: not below 0.5, the maps barely depend on the model)."
           if checked else ""),
        *(LEGEND[kind] for kind in LEGEND if any(
            cell.get("fitted") == kind for entry in document["methods"] for cell in entry["columns"].values())),
    ]
    return head, rows, legend


def _plausible(document: dict) -> bool:
    """The inputs carried evidence: plausibility's columns are in the table."""
    return any(column["name"].startswith("token_f1") for column in document["columns"])


def markdown_report(document: dict) -> str:
    """The table, its legend and the recommendation, in Markdown."""
    head, rows, legend = table(document)

    def shown(cell: Cell) -> str:
        text = cell.text.replace("|", "\\|")
        return f"*{text}*" if cell.fitted else f"**{text}**" if cell.ahead else text

    lines = ["| " + " | ".join(map(shown, head)) + " |", "|---" * len(head) + "|"]
    lines += ["| " + " | ".join(map(shown, row)) + " |" for row in rows]
    return "\n".join(lines + [""] + legend + ["", document["recommendation"]["paragraph"]])


TABLE_STYLE = """
table { border-collapse: collapse; font-size: 0.85rem; margin: 1rem 0; }
th, td { border: 1px solid #8884; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th.fitted { font-style: italic; font-weight: normal; }
td.ahead { font-weight: bold; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
.muted { opacity: 0.75; }
.wide { overflow-x: auto; max-width: 100%; }
body { padding-left: 2rem; padding-right: 2rem; } p, figure { max-width: 72rem; }
"""


def html_report(document: dict, picture: str | None, title: str = "Which explanation to trust") -> str:
    """The recommendation, the table and the cost–faithfulness picture (inline SVG, or a line
    saying why there is none) as one page: its own style, no script, no remote load."""
    head, rows, legend = table(document)
    found = document["recommendation"]

    def heading(cell: Cell) -> str:
        return f'<th class="fitted">{html.escape(cell.text)}</th>' if cell.fitted else f"<th>{html.escape(cell.text)}</th>"

    def data(cell: Cell) -> str:
        return f'<td class="ahead">{html.escape(cell.text)}</td>' if cell.ahead else f"<td>{html.escape(cell.text)}</td>"

    drawn = (
        f"<figure>{picture}<figcaption class=\"muted\">Cost against faithfulness: each method's mean on the first "
        f"column no method was fitted to; red: the leaders ({html.escape(', '.join(found['leaders']))}).</figcaption>"
        "</figure>" if picture else '<p class="muted">(no picture: matplotlib is not installed)</p>'
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}{TABLE_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p><strong>{html.escape(found['paragraph'])}</strong></p>"
        f'<div class="wide"><table><thead><tr>{"".join(map(heading, head))}</tr></thead><tbody>'
        + "".join("<tr>" + "".join(map(data, row)) + "</tr>" for row in rows)
        + "</tbody></table></div>"  # a table wider than the window scrolls in its own box
        + "".join(f'<p class="muted">{html.escape(sentence)}</p>' for sentence in legend)
        + f"{drawn}</body></html>\n"
    )
