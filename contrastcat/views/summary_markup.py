"""A dataset's summary as Markdown and as one self-contained HTML page: per method and class, bars
for the words that speak for the class (red) and against it (blue), the errors' words, and the
candidate shortcuts with their example inputs shaded as ``render`` shades them. Every string from
the records is escaped and its control characters shown (:func:`~contrastcat.records.spans.visible`)."""

from __future__ import annotations

import html

from ..records.markup import STYLE, input_block
from ..records.spans import visible
from ..evaluation.stats import Interval

BODY_STYLE = "body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }"
# Scoped to .contrastcat: a notebook shows the block among its own cells.
SUMMARY_STYLE = """
.contrastcat .classes { display: grid; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); gap: 1rem 2rem; }
.contrastcat table.words { border-collapse: collapse; width: 100%; font-size: .9rem; }
.contrastcat table.words td { padding: .1rem .3rem; vertical-align: middle; }
.contrastcat td.word { text-align: right; white-space: nowrap; max-width: 12rem; overflow: hidden; text-overflow: ellipsis; }
.contrastcat td.barcell { width: 55%; }
.contrastcat .wbar { height: .8rem; border-radius: .15rem; }
.contrastcat .wbar.for { background: rgb(var(--heat)); }
.contrastcat .wbar.against { background: rgb(var(--cold)); }
.contrastcat td.num { font-variant-numeric: tabular-nums; white-space: nowrap; color: var(--muted); }
.contrastcat h2 { margin-top: 2rem; } .contrastcat h3 { margin: 1rem 0 .3rem; }
"""


def _number(value: float, interval: Interval | None) -> str:
    shown = f"{value:+.3f}"
    return shown if interval is None else f"{shown} [{interval.low:+.3f}, {interval.high:+.3f}]"


def _rows(stats, side: str, largest: float) -> str:
    rows = []
    for stat in stats:
        width = 100 * abs(stat.mean) / largest if largest > 0 else 0
        rows.append(
            f'<tr><td class="word">{html.escape(visible(stat.word))}</td>'
            f'<td class="barcell"><div class="wbar {side}" style="width:{width:.1f}%" '
            f'title="{html.escape(_number(stat.mean, stat.interval))}"></div></td>'
            f'<td class="num">{html.escape(_number(stat.mean, stat.interval))} · {stat.inputs} inputs</td></tr>'
        )
    return "".join(rows)


def _class_block(group) -> str:
    largest = max([abs(s.mean) for s in group.for_class + group.against] or [0.0])
    parts = [f"<h3>{html.escape(visible(group.name))} <span class='muted'>({group.split}: {group.inputs} inputs)</span></h3>"]
    if group.for_class:
        parts.append(f'<table class="words" aria-label="words for the class">{_rows(group.for_class, "for", largest)}</table>')
    if group.against:
        parts.append(f'<p class="muted">against it</p><table class="words" aria-label="words against the class">'
                     f'{_rows(group.against, "against", largest)}</table>')
    if not group.for_class and not group.against:
        parts.append('<p class="muted">no word in enough inputs</p>')
    return f"<div>{''.join(parts)}</div>"


def _shortcut_block(shortcut) -> str:
    head = (
        f"<h3>{html.escape(visible(shortcut.word))} → {html.escape(visible(shortcut.name))} "
        f"<span class='muted'>({html.escape(visible(shortcut.method))}): predicted as it in {shortcut.rate:.0%} of "
        f"{shortcut.inputs} inputs holding it, the data supports {shortcut.support:.0%} "
        f"(excess {shortcut.rate - shortcut.support:+.2f} [{shortcut.excess.low:+.2f}, {shortcut.excess.high:+.2f}]); "
        f"attribution {_number(shortcut.attribution, shortcut.interval)}</span></h3>"
    )
    examples = "".join(input_block([e.record]) for e in shortcut.examples if e.record is not None)
    return head + examples


def html_body(summary) -> str:
    """The summary as a block a notebook shows (and the page wraps)."""
    parts = [f"<p class='muted'>{html.escape(visible(summary.source))}: model {html.escape(visible(summary.model))}</p>"]
    for info in summary.methods:
        parts.append(
            f"<h2>{html.escape(visible(info.method))}</h2><p class='muted'>{info.inputs} inputs; a word's value: "
            f"{'the sum of its pieces' if info.rule == 'sum' else 'its strongest piece'}, divided by each input's "
            f"largest, mean over the inputs holding it (bootstrap interval); shortcuts against the {info.support}</p>"
        )
        for split in ("all", "wrong"):
            groups = [g for g in summary.classes if g.method == info.method and g.split == split]
            if groups:
                title = "Every input, by class" if split == "all" else "Its errors (inputs it got wrong), by the class explained"
                parts.append(f"<h3>{title}</h3><div class='classes'>{''.join(_class_block(g) for g in groups)}</div>")
        shortcuts = [s for s in summary.shortcuts if s.method == info.method]
        none = "none found" if info.shortcuts_tested else "not tested: no resamples, and a shortcut needs its interval"
        parts.append("<h3>Candidate shortcuts</h3>" + ("".join(_shortcut_block(s) for s in shortcuts) or
                                                        f"<p class='muted'>{none}</p>"))
    if summary.problems:
        parts.append("<h2>Gate</h2><ul>" + "".join(f"<li>{html.escape(visible(p))}</li>" for p in summary.problems) + "</ul>")
    return f'<style>{STYLE}{SUMMARY_STYLE}</style><div class="contrastcat">{"".join(parts)}</div>'


def html_page(summary) -> str:
    title = html.escape(visible(f"contrastcat summary: {summary.source}"))
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<style>{BODY_STYLE}</style></head><body>{html_body(summary)}</body></html>\n"
    )


_MARKDOWN = {ord(c): "\\" + c for c in "\\`*_[]<>|#"} | {ord("&"): "&amp;"}


def _cell(text) -> str:
    """A string from the records as Markdown shows it, not as markup: every character Markdown (or
    the HTML it may hold) reads escaped."""
    return visible(text).translate(_MARKDOWN)


def markdown(summary) -> str:
    """The summary as GitHub Markdown tables: a table per method, class and split, then the shortcuts."""
    lines = []
    for group in summary.classes:
        lines += [f"### {_cell(group.method)}: {_cell(group.name)} ({group.split}, {group.inputs} inputs)", "",
                  "| side | word | inputs | mean [interval] | top for | top against |", "|---|---|---:|---|---:|---:|"]
        for side, stats in (("for", group.for_class), ("against", group.against)):
            lines += [f"| {side} | {_cell(s.word)} | {s.inputs} | {_number(s.mean, s.interval)} | {s.top_for:.0%} | "
                      f"{s.top_against:.0%} |" for s in stats]
        lines.append("")
    lines += ["### Candidate shortcuts", ""]
    if not summary.shortcuts:
        tested = all(info.shortcuts_tested for info in summary.methods)
        lines.append("None found." if tested else "Not tested: no resamples, and a shortcut needs its interval.")
    else:
        lines += ["| method | class | word | inputs | predicted | supported | excess [interval] | attribution |",
                  "|---|---|---|---:|---:|---:|---|---|"]
        lines += [f"| {_cell(s.method)} | {_cell(s.name)} | {_cell(s.word)} | {s.inputs} | {s.rate:.0%} | {s.support:.0%} | "
                  f"{s.rate - s.support:+.2f} [{s.excess.low:+.2f}, {s.excess.high:+.2f}] | "
                  f"{_number(s.attribution, s.interval)} |" for s in summary.shortcuts]
    return "\n".join(lines) + "\n"
