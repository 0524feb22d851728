"""The perturbation curves as a picture (``evaluate --plot``), in the style of the paper's Figure 3.

One panel per order and metric (MoRF / LeRF × AOPC / LOdds), the step on the x
axis, one line per method with its bootstrap interval as a band. matplotlib
is an optional extra (``pip install 'contrastcat[plot]'``); without it the
command says so in one line. The file is written whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..deletion.plan import step_labels
from ..errors import BadInput
from ..evaluation.metrics import METRICS
from ..evaluation.sanity import SANITY_BOUND
from ..evaluation.levels import level_text
from ..io.files import PendingFile, output_target

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def plot_format(named: str, path: str) -> str:
    """The file format from the name's suffix, or one line naming the ones there are (``named``:
    the option as the caller spells it)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise BadInput(f"{named} {path}: the name must end in {', '.join(FORMATS)} (the picture's format)")
    return FORMATS[suffix]


def require_matplotlib() -> None:
    """Before any work: one line when the optional extra is missing."""
    _pyplot()


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: files only
        import matplotlib.pyplot as plt
    except ImportError:
        raise BadInput("a picture needs matplotlib: pip install 'contrastcat[plot]'") from None
    return plt


def plot_curves(report, path: str, inputs=()) -> None:
    """Draw ``report``'s (an :class:`EvaluationReport`) curves into ``path`` (.png, .svg or .pdf)."""
    fmt = FORMATS[Path(path).suffix.lower()]  # checked by plot_format before any work
    plt = _pyplot()
    orders = list(report.settings.orders)
    labels = step_labels(report.settings.steps)
    steps = range(len(labels))
    figure, axes = plt.subplots(len(orders), 2, figsize=(11, 3.6 * len(orders)), squeeze=False)
    # More than ten methods: twenty colours, and a dash pattern so that no two lines look alike.
    palette = plt.get_cmap("tab10" if len(report.methods) <= 10 else "tab20").colors
    dashes = ["-", "--", ":", "-."]
    styles = {
        name: (palette[i % len(palette)], dashes[(i // len(palette)) % len(dashes)])
        for i, name in enumerate(report.methods)
    }
    try:
        for row, order in enumerate(orders):
            for column, key in enumerate(("aopc", "lodds")):
                axis = axes[row][column]
                metric = METRICS[(order, key)]
                for name, method in report.methods.items():
                    curve = method.curves.get(order)
                    if curve is None:
                        continue
                    values = getattr(curve, key)
                    color, dash = styles[name]
                    axis.plot(steps, values, marker="o", markersize=3, label=name, color=color, linestyle=dash)
                    bands = method.curve_intervals.get(order, {}).get(key)
                    if bands:
                        axis.fill_between(
                            steps, [i.low for i in bands], [i.high for i in bands], color=color, alpha=0.12, linewidth=0
                        )
                axis.set_title(f"{metric.name} ({'higher' if metric.higher_is_better else 'lower'} is better)")
                axis.set_xticks(list(steps), labels)
                axis.set_xlabel("tokens removed" if report.settings.perturb == "delete" else "tokens masked")
                axis.grid(alpha=0.3)
        handles, names = axes[0][0].get_legend_handles_labels()
        columns = min(len(names), 6)
        figure.legend(handles, names, loc="lower center", ncol=columns, frameon=False)
        drawn = any(found.curve_intervals for found in report.methods.values())
        caption = f"bands: {level_text(report.bootstrap.level)} bootstrap intervals over inputs" if drawn else "no intervals"
        figure.suptitle(f"{report.model}, {report.source}: perturbation curves ({caption})", fontsize=10)
        rows_of_legend = (len(names) + columns - 1) // max(columns, 1)
        figure.tight_layout(rect=(0, (0.28 * rows_of_legend + 0.1) / figure.get_figheight(), 1, 0.97))
        _save(plt, figure, path, fmt, inputs)
    finally:
        plt.close(figure)


def _save(plt, figure, path: str, fmt: str, inputs) -> None:
    """``figure`` into ``path`` whole or not at all (never over one of ``inputs``)."""
    pending = PendingFile(output_target(path, inputs))
    try:
        # SVG text stays text (searchable, selectable), not glyph outlines.
        with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "contrastcat"}):
            figure.savefig(pending.temp, format=fmt, dpi=150, metadata=_metadata(fmt))
        pending.commit()
    except OSError as error:
        pending.discard()
        raise BadInput(f"{path}: cannot write the picture ({error.strerror or error})") from None
    except BaseException:
        pending.discard()
        raise


def _metadata(fmt: str) -> dict:
    """No creation date in the file: the same report draws the same bytes."""
    if fmt == "png":
        return {"Software": None}
    if fmt == "svg":
        return {"Date": None}
    return {"CreationDate": None}


def plot_sanity(report, path: str, inputs=()) -> None:
    """The sanity check's cascade (``sanity --plot``): Spearman ρ against the original maps per
    randomisation step, one line per method, its bootstrap interval as a band."""
    fmt = FORMATS[Path(path).suffix.lower()]  # checked by plot_format before any work
    plt = _pyplot()
    steps = ["original", *report.steps]
    many = len(report.methods) > 6  # the legend goes beside the axes, where it hides no line
    figure, axis = plt.subplots(figsize=(10.5 if many else 8, 4.2))
    palette = plt.get_cmap("tab10" if len(report.methods) <= 10 else "tab20").colors
    try:
        for index, (name, found) in enumerate(report.methods.items()):
            color = palette[index % len(palette)]
            means = [1.0, *(found.mean(step) for step in report.steps)]
            axis.plot(range(len(steps)), means, marker="o", markersize=3, label=name, color=color,
                      linestyle=["-", "--", ":", "-."][(index // len(palette)) % 4])
            bands = [report.intervals.get(name, {}).get(step) for step in report.steps]
            if all(band is not None for band in bands):
                axis.fill_between(range(1, len(steps)), [b.low for b in bands], [b.high for b in bands], color=color,
                                  alpha=0.12, linewidth=0)
        axis.axhline(SANITY_BOUND, color="grey", linewidth=0.8, linestyle="--")
        axis.set_xticks(range(len(steps)), steps, rotation=30, ha="right")
        axis.set_ylabel("Spearman ρ with the original maps")
        axis.set_xlabel("weights re-initialised, cumulatively from the top")
        axis.grid(alpha=0.3)
        if many:
            axis.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        else:
            axis.legend(fontsize=8, frameon=False, loc="upper right")
        name = Path(report.model).name or report.model  # a folder's name, not its whole path
        axis.set_title(f"{name}: model randomisation ({report.inputs} inputs; dashed: the pass bound)", fontsize=10)
        figure.tight_layout()
        _save(plt, figure, path, fmt, inputs)
    finally:
        plt.close(figure)


def frontier_svg(document: dict) -> str | None:
    """compare's cost–faithfulness picture as SVG text: each method's seconds per input (log
    scale) against its mean on :func:`frontier_column` (higher is better), the method with the
    highest mean there in red (:func:`frontier_best`, the one the caption names); None where
    matplotlib is not installed or no method has a value there."""
    try:
        plt = _pyplot()
    except BadInput:
        return None
    column = frontier_column(document)
    points = _frontier_points(document, column)
    if not points:
        return None
    best = frontier_best(document)
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for name, cost, mean in points:
        axes.scatter([cost], [mean], s=46, color="#b2182b" if name == best else "#2166ac", zorder=3)
        axes.annotate(name, (cost, mean), textcoords="offset points", xytext=(6, 4), fontsize=8)
    axes.set_xscale("log")
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    # Ticks at 1, 2 and 5 of each decade, written plainly (0.02): timings within one decade still
    # get labels, and no two labels run into each other (every minor tick labelled did).
    axes.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel("seconds per input (log scale), explaining alone")
    axes.set_ylabel(f"{column['heading']} (mean)")
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    return _inline_svg(plt, figure)


def frontier_column(document: dict) -> dict | None:
    """The column the cost picture plots: the first judged one where higher is better."""
    return next((c for c in document["columns"] if c["judged"] and c["higher_is_better"]), None)


def _frontier_points(document: dict, column: dict | None) -> list[tuple[str, float, float]]:
    points = [
        (entry["method"], entry["seconds_per_input"], entry["columns"].get(column["name"], {}).get("mean"))
        for entry in document["methods"]
    ] if column else []
    return [(name, cost, mean) for name, cost, mean in points if mean is not None and cost > 0]


def frontier_best(document: dict) -> str | None:
    """The method highest on the cost picture's axis (the first of equals, in the report's order)."""
    points = _frontier_points(document, frontier_column(document))
    return max(points, key=lambda point: point[2])[0] if points else None


def forest_svg(document: dict) -> str | None:
    """compare's paired differences as a forest plot, SVG text: a panel per judged column, each
    method's difference from the leader as a dot (filled where its interval excludes 0) with its
    interval as a line, 0 (no difference) dashed; None without matplotlib or differences."""
    try:
        plt = _pyplot()
    except BadInput:
        return None
    columns = [column for column in document["columns"] if column["judged"]]
    others = [entry for entry in document["methods"] if entry["method"] != document["leader"]]
    if not columns or not others:
        return None
    across = min(4, len(columns))
    down = -(-len(columns) // across)
    figure, panels = plt.subplots(down, across, figsize=(11.5, down * (0.3 * len(others) + 1.3)), sharey=True,
                                  squeeze=False)
    for number, axes in enumerate(panels.flat):
        if number >= len(columns):
            axes.set_visible(False)
            continue
        _forest_panel(axes, columns[number], others)
    figure.tight_layout()
    return _inline_svg(plt, figure)


@dataclass(frozen=True)
class ForestRow:
    """One method's dot in one column's panel: its difference from the leader and its interval."""

    method: str
    difference: float
    low: float | None
    high: float | None
    excludes_zero: bool


def forest_rows(column: dict, others: list[dict]) -> list[ForestRow]:
    """What a column's panel draws, a row per method in the report's order (none for a method
    without a difference there)."""
    rows = []
    for entry in others:
        against = (entry["columns"].get(column["name"]) or {}).get("against_leader")
        if against is None or against["mean"] is None:
            continue
        interval = against.get("interval") or {}
        rows.append(ForestRow(entry["method"], against["mean"], interval.get("low"), interval.get("high"),
                              bool(against.get("excludes_zero"))))
    return rows


def _forest_panel(axes, column: dict, others: list[dict]) -> None:
    """One column's panel: a row per method (the first at the top)."""
    place = {entry["method"]: len(others) - 1 - number for number, entry in enumerate(others)}
    for row in forest_rows(column, others):
        y = place[row.method]
        if row.low is not None:
            axes.plot([row.low, row.high], [y, y], color="#2166ac", linewidth=1.4, zorder=2)
        axes.plot([row.difference], [y], "o", markersize=5, color="#2166ac",
                  markerfacecolor="#2166ac" if row.excludes_zero else "white", zorder=3)
    axes.axvline(0.0, color="black", linewidth=0.8, linestyle="--", zorder=1)
    axes.set_yticks(list(place.values()), list(place), fontsize=8)
    axes.set_ylim(-0.7, len(others) - 0.3)
    axes.set_title(column["heading"], fontsize=9)
    axes.set_xlabel("better →" if column["higher_is_better"] else "← better", fontsize=8)
    axes.tick_params(axis="x", labelsize=7)
    axes.grid(True, axis="x", alpha=0.3)


def _inline_svg(plt, figure) -> str:
    """A figure as SVG text to put in a page: text as text, no date, ids the same every run."""
    import io

    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "contrastcat"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # inline in a page: no XML declaration or doctype
