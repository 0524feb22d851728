"""compare's report as one self-contained page: the recommendation, the judged columns in a table
that fits a laptop's window, the paired differences as a forest plot, the cost–faithfulness
picture, a few inputs as the leading methods explain them, and every column in full below. Made
from the report's JSON document and the records (nothing is computed here)."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records.markup import STYLE, input_block, kinds_shown, legends
from ..records.spans import visible
from ..records.view import VIEW
from .comparison import Cell, compact_tables, table
from .html_page import PAGE_STYLE, POLICY
from .plots import frontier_best, frontier_column

TABLE_STYLE = """
table { border-collapse: collapse; font-size: 0.8rem; margin: 1rem 0; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.45rem; text-align: right; vertical-align: top; }
th { vertical-align: bottom; font-weight: 600; }
th:first-child, td:first-child { text-align: left; }
td:first-child { max-width: 12rem; overflow-wrap: anywhere; }
th.fitted { font-style: italic; font-weight: normal; }
td.ahead { font-weight: bold; }
td .spread { display: block; font-size: 0.8em; color: var(--muted); font-weight: normal; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
details { margin: 1.5rem 0; } summary { cursor: pointer; } section > h2 { font-size: 1.05rem; }
.wide { overflow-x: auto; max-width: 100%; }
"""


@dataclass(frozen=True)
class Pictures:
    """The page's two pictures as inline SVG (None: matplotlib is missing, or nothing to draw)."""

    forest: str | None = None
    frontier: str | None = None


def html_report(document: dict, pictures: Pictures = Pictures(), examples: str = "",
                title: str = "Which explanation to trust") -> str:
    """The page: no script, no remote load (a Content-Security-Policy forbids both)."""
    found = document["recommendation"]
    grids, legend = compact_tables(document, False, "bold", "the full table below has them")
    full_head, full_rows, _ = table(document)
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}{STYLE}{TABLE_STYLE}</style></head>"
        f'<body class="contrastcat"><h1>{html.escape(title)}</h1>'
        f"<p><strong>{html.escape(found['paragraph'])}</strong></p>"
        + "".join(_table_html(head, rows) for head, rows in grids)
        + "".join(f'<p class="muted">{html.escape(sentence)}</p>' for sentence in legend)
        + _figures(document, pictures)
        + examples
        + "<details><summary>Every column, each interval whole (as report.md)</summary>"
        + f'<div class="wide">{_table_html(full_head, full_rows)}</div></details>'
        + "</body></html>\n"
    )


def _table_html(head: list[Cell], rows: list[list[Cell]]) -> str:
    def heading(cell: Cell) -> str:
        return f'<th class="fitted">{html.escape(cell.text)}</th>' if cell.fitted else f"<th>{html.escape(cell.text)}</th>"

    def data(cell: Cell) -> str:
        spread = f'<span class="spread">{html.escape(cell.spread)}</span>' if cell.spread else ""
        kind = ' class="ahead"' if cell.ahead else ""
        return f"<td{kind}>{html.escape(cell.text)}{spread}</td>"

    return (f"<table><thead><tr>{''.join(map(heading, head))}</tr></thead><tbody>"
            + "".join("<tr>" + "".join(map(data, row)) + "</tr>" for row in rows) + "</tbody></table>")


def _figures(document: dict, pictures: Pictures) -> str:
    """The forest plot and the cost picture with their captions, or a line saying why not."""
    if pictures.forest is None and pictures.frontier is None:
        return '<p class="muted">(no pictures: matplotlib is not installed)</p>'
    boot = document["bootstrap"]
    parts = []
    if pictures.forest is not None:
        parts.append(
            f"<figure>{pictures.forest}<figcaption class=\"muted\">Each method's paired difference from "
            f"{html.escape(document['leader'])} on each judged column, with its {boot['ci'] * 100:g}% bootstrap "
            "interval where there is one: a filled dot where the interval excludes 0 (the dashed line: no "
            "difference).</figcaption></figure>"
        )
    column, best = frontier_column(document), frontier_best(document)
    if pictures.frontier is not None and column is not None and best is not None:
        parts.append(
            f"<figure>{pictures.frontier}<figcaption class=\"muted\">Cost against faithfulness: each method's "
            f"mean on {html.escape(column['heading'])} (the first judged column where higher is better); red: "
            f"{html.escape(best)}, the highest there.</figcaption></figure>"
        )
    return "".join(parts)


def examples_html(records: Sequence, label: Callable, document: dict, count: int = 3) -> str:
    """A few inputs as the leading methods explain them (``records``: one list per method of the
    report, in its order of ``label``; ``label``: a record's name in the report), rendered as
    ``render --html`` renders them: the leaders (or the first two ranked), never ``random``;
    inputs of different predicted classes first, each short enough to read at a glance."""
    names = _shown_methods(document)
    by_name = {label(found[0]): found for found in records if found}
    lists = [by_name[name] for name in names if name in by_name]
    if not lists:
        return ""
    chosen = _example_inputs(lists[0], count)
    groups = [[found[index] for found in lists] for index in chosen]
    kinds = kinds_shown(groups, VIEW.signed)
    blocks = "".join(input_block(group, VIEW.shown_words(), VIEW.rescale, label, VIEW.signed) for group in groups)
    said = " and ".join(html.escape(visible(name)) for name in names if name in by_name)
    verb = "explain" if len(lists) > 1 else "explains"
    return (f"<section><h2>{len(groups)} of the inputs, as {said} {verb} them</h2>"
            f"{legends(kinds)}{blocks}</section>")


def _shown_methods(document: dict) -> list[str]:
    """The leaders (else the first ranked), never random, never two that made the same maps."""
    found = document["recommendation"]
    twins = {name: set(group) for group in found.get("same_maps", []) for name in group}
    shown: list[str] = []
    for name in [*found["leaders"], *found["ranking"]]:
        if name != "random" and name not in shown and not any(name in twins.get(other, ()) for other in shown):
            shown.append(name)
    return shown[:2]


def _example_inputs(records: Sequence, count: int) -> list[int]:
    """Positions of up to ``count`` inputs: of 4 to 40 tokens where there are such, one of each
    predicted class first, in sample order."""
    sizes = [sum(not flag for flag in record.special) for record in records]
    readable = [index for index, size in enumerate(sizes) if 4 <= size <= 40] or list(range(len(records)))
    chosen: list[int] = []
    classes: set[int] = set()
    for index in readable:
        if records[index].predicted not in classes and len(chosen) < count:
            chosen.append(index)
            classes.add(records[index].predicted)
    chosen += [index for index in readable if index not in chosen][:count - len(chosen)]
    return sorted(chosen)
