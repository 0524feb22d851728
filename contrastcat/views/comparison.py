"""compare's report as people read it: the table and the recommendation in Markdown (every
column, each interval whole) and in a terminal (the judged columns, each interval as ± its
half-width), from the report's JSON document (nothing is computed here). The page is
:mod:`contrastcat.views.compare_page`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..evaluation.fitted import LEGEND, SIGNS
from ..evaluation.levels import level_text


@dataclass(frozen=True)
class Cell:
    text: str
    ahead: bool = False  # a paired interval that excludes 0
    fitted: bool = False  # a heading of a column some method was fitted to (not judged by)
    spread: str = ""  # compact: "± 0.031", half the interval's width (shown after the text, or under it)


def shown_columns(document: dict, every: bool = True) -> list[dict]:
    """The report's columns, or (``every`` off) those the ranking judges by."""
    return [column for column in document["columns"] if every or column["judged"]]


def table(document: dict, compact: bool = False, columns: list[dict] | None = None, marked: str = "bold"
          ) -> tuple[list[Cell], list[list[Cell]], list[str]]:
    """Headings, rows and the legend's sentences: the leader's values, every other method's paired
    difference from it with its interval (ahead where it excludes 0, as ``marked`` says), ᶠ/ᵖ on
    fitted cells. ``compact``: each interval as ± its half-width; ``columns``: those shown (all)."""
    columns = document["columns"] if columns is None else columns
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
        row += [_cell(entry, column, document["leader"], compact) for column in columns]
        rows.append(row)
    return head, rows, _legend(document, compact, marked, columns)


Grid = tuple[list[Cell], list[list[Cell]]]


def compact_tables(document: dict, every: bool, marked: str, more: str) -> tuple[list[Grid], list[str]]:
    """The tables a reader takes in at a glance, and their legend: the judged columns (``every``:
    all), each interval as ± its half-width, ERASER's headings shortened, the perturbation columns
    and plausibility's (where the inputs carried evidence) in tables of their own, as evaluate
    prints them; ``more``: where the columns left out are."""
    columns = shown_columns(document, every)
    groups = [group for group in ([c for c in columns if ":" in c["name"]], [c for c in columns if ":" not in c["name"]])
              if group]
    grids = []
    for group in groups:
        head, rows, _ = table(document, True, group, marked)
        grids.append(([dataclasses.replace(cell, text=_short(cell.text)) for cell in head], rows))
    legend = _legend(document, True, marked, columns)
    notes = []
    if any(_short(c["heading"]) != c["heading"] for c in columns):
        notes.append("comp., suff.: ERASER comprehensiveness and sufficiency (under deletion, or [MASK]).")
    hidden = len(document["columns"]) - len(columns)
    if hidden:
        notes.append(f"{hidden} column(s) the ranking does not judge by are left out: {more}.")
    return grids, [*legend[:1], *notes, *legend[1:]]


def _short(heading: str) -> str:
    return heading.replace("comprehensiveness", "comp.").replace("sufficiency", "suff.")


def _cell(entry: dict, column: dict, leader: str, compact: bool) -> Cell:
    """One method's cell: its mean (the leader's), or its paired difference from the leader."""
    cell = entry["columns"].get(column["name"])
    if cell is None or cell["mean"] is None:
        return Cell("n/a")
    sign = SIGNS.get(cell["fitted"], "")
    against = cell.get("against_leader")
    if entry["method"] == leader or against is None:
        return Cell(f"{cell['mean']:.3f}{sign}")
    if against["interval"] is None:  # no bootstrap: the difference alone
        return Cell(f"{against['mean']:+.3f}{sign}")
    low, high = against["interval"]["low"], against["interval"]["high"]
    ahead = bool(against["excludes_zero"])
    if compact:
        half = round((high - low) / 2, 3)
        mean = round(against["mean"], 3)
        # A lopsided interval read as ± its half-width may seem to hold 0 where it does not (or the
        # other way round): there the interval itself, which never contradicts the mark.
        spread = f"± {half:.3f}" if (mean - half <= 0 <= mean + half) != ahead else f"[{_bound(low)}, {_bound(high)}]"
        return Cell(f"{against['mean']:+.3f}{sign}", ahead, spread=spread)
    return Cell(f"{against['mean']:+.3f} [{low:+.3f}, {high:+.3f}]{sign}", ahead=ahead)


def _bound(value: float) -> str:
    """An interval's end to 3 decimals; one that would read ``-0.000`` though it is not 0 in full."""
    text = f"{value:+.3f}"
    return f"{value:+.1e}" if value != 0 and float(text) == 0 else text


def _legend(document: dict, compact: bool, marked: str, columns: list[dict]) -> list[str]:
    names = {column["name"] for column in columns}
    cells = [cell for entry in document["methods"] for name, cell in entry["columns"].items() if name in names]
    measured = any((cell.get("against_leader") or {}).get("interval") is not None for cell in cells)
    boot = document["bootstrap"]
    why = document["recommendation"].get("no_intervals") or f"{boot['resamples']} bootstrap resamples"
    kind = f"{level_text(boot['ci'])} bootstrap interval ({boot['resamples']} resamples)"
    intervals = (
        (f"± half its {kind}" if compact else f"with its {kind}") + f", {marked} where it excludes 0"
        if measured else f"(no intervals: {why})"
    )
    if measured and compact:
        intervals += " (the interval itself where it is lopsided enough that ± would read otherwise)"
    checked = document.get("sanity_inputs") is not None
    unjudged = [column["heading"] for column in columns if not column["judged"]]
    return [
        f"{_inputs(document)}; {document['hardware']}. The leader's values, then every other method's "
        f"paired difference from {document['leader']} {intervals}."
        + (f" Not judged by (in italics): {'; '.join(unjudged)}: fitted by a method's own selection" if unjudged else "")
        + ((", or (token F1, IOU F1) resting on a rationale threshold of their own." if _plausible(columns) else ".")
           if unjudged else "")
        + (f" ρ, model destroyed: the Spearman correlation of a method's maps of {document['sanity_inputs']} input{'' if document['sanity_inputs'] == 1 else 's'} "
           "with its maps on the fully randomised model (✗: not below 0.5, the maps barely depend on the model)."
           if checked else ""),
        *(LEGEND[kind] for kind in LEGEND if any(cell.get("fitted") == kind for cell in cells)),
    ]


def _inputs(document: dict) -> str:
    """How many inputs were sampled, and (where fewer) evaluated, and cut to the model's length."""
    said = f"{document['inputs']} inputs"
    evaluated = document.get("evaluated", document["inputs"])
    if evaluated < document["inputs"]:
        left = document.get("left_out") or {}
        why = ", ".join(f"{count} {what.replace('_', ' ')}" for what, count in left.items() if count)
        said += f" sampled, {evaluated} evaluated" + (f" (left out: {why})" if why else "")
    if document.get("truncated"):
        said += f"; {document['truncated']} cut to the model's length"
    return said


def _plausible(columns: list[dict]) -> bool:
    """The inputs carried evidence: plausibility's threshold columns are in the table."""
    return any(column["name"].startswith("token_f1") for column in columns)


def markdown_report(document: dict) -> str:
    """The table, its legend and the recommendation, in Markdown."""
    head, rows, legend = table(document)

    def shown(cell: Cell) -> str:
        text = cell.text.replace("|", "\\|")
        return f"*{text}*" if cell.fitted else f"**{text}**" if cell.ahead else text

    lines = ["| " + " | ".join(map(shown, head)) + " |", "|---" * len(head) + "|"]
    lines += ["| " + " | ".join(map(shown, row)) + " |" for row in rows]
    return "\n".join(lines + [""] + legend + ["", document["recommendation"]["paragraph"]])


def terminal_blocks(document: dict, every: bool = False, plain: bool = False, named: str = "--all-columns") -> list:
    """What ``compare`` prints in a terminal: tables of the judged columns (``every``: all of
    them) with each interval as ± its half-width, their legend, the recommendation. ``plain``:
    where bold cannot show, a ``*`` after a difference whose interval excludes 0. ``named``: the
    option that shows every column, as the caller spells it."""
    from rich.table import Table
    from rich.text import Text

    more = f"{named} shows them (report.md holds every column, each interval whole)"
    grids, legend = compact_tables(document, every, "* after it" if plain else "bold", more)
    blocks: list = []
    for head, rows in grids:
        grid = Table(box=None if plain else _box(), show_edge=False, pad_edge=False, header_style="bold")
        cells = [[_terminal_cell(cell, plain) for cell in row] for row in rows]
        for number, cell in enumerate(head):  # a heading on two lines ("MoRF AOPC" over "[MASK] ↑"): narrow columns
            heading = cell.text.replace(", ", "\n") if ", " in cell.text else "\n".join(cell.text.rsplit(" ", 1))
            # A number is never broken: its column is at least as wide as its longest line. A
            # method's name folds, in at most 24 characters.
            widest = max((len(line) for row in cells for line in row[number].plain.splitlines()), default=1)
            grid.add_column(Text(heading if number >= 2 else cell.text, style="italic" if cell.fitted else ""),
                            justify="left" if number == 0 else "right", overflow="fold",
                            min_width=min(widest, 8) if number == 0 else widest, max_width=24 if number == 0 else None)
        for row in cells:
            grid.add_row(*row)
        blocks += [grid, Text("")]
    return [*blocks, *(Text(line) for line in legend), Text(""), Text(document["recommendation"]["paragraph"])]


def _box():
    from rich import box

    return box.SIMPLE_HEAD


def _terminal_cell(cell: Cell, plain: bool):
    """A difference over ± half its interval, on two lines (a column as narrow as a number)."""
    from rich.text import Text

    text = cell.text + (" *" if plain and cell.ahead else "  " if plain and cell.spread else "")
    shown = Text(text, style="bold" if cell.ahead and not plain else "")
    if cell.spread:
        shown.append("\n" + cell.spread + ("  " if plain else ""))
    return shown
