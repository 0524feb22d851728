"""A dataset's summary as the terminal shows it: per method and class a table of the words for the
class and against it, the words of its errors, then the candidate shortcuts."""

from __future__ import annotations


from ..records.spans import visible


def _number(stat) -> str:
    interval = "" if stat.interval is None else f" [{stat.interval.low:+.2f}, {stat.interval.high:+.2f}]"
    return f"{stat.mean:+.3f}{interval}"


def summary_blocks(summary) -> list:
    """Rich tables and lines, in order; every string from the records a Text, never read as markup."""
    from rich.table import Table
    from rich.text import Text

    blocks: list = []
    for info in summary.methods:
        rule = "the sum of its pieces" if info.rule == "sum" else "its strongest piece"
        blocks.append(f"{visible(info.method)}: {info.inputs} inputs; a word scores {rule}, each input's largest = 1")
        for split, title in (("all", "words for and against each class"), ("wrong", "in its errors (inputs it got wrong)")):
            groups = [g for g in summary.classes if g.method == info.method and g.split == split]
            for group in groups:
                table = Table(title=Text(f"{visible(info.method)} · {visible(group.name)} · {title} ({group.inputs} inputs)"),
                              title_justify="left")
                for column in ("for", "mean [interval]", "inputs", "top", "against", "mean [interval] ", "inputs "):
                    table.add_column(column, justify="right" if "inputs" in column or column == "top" else "left")
                for row in range(max(len(group.for_class), len(group.against))):
                    left = group.for_class[row] if row < len(group.for_class) else None
                    right = group.against[row] if row < len(group.against) else None
                    table.add_row(
                        *((Text(visible(left.word)), _number(left), str(left.inputs), f"{left.top_for:.0%}") if left else ("",) * 4),
                        *((Text(visible(right.word)), _number(right), str(right.inputs)) if right else ("",) * 3),
                    )
                if not group.for_class and not group.against:
                    table.add_row("(no word in enough inputs)", *("",) * 6)
                blocks.append(table)
        shortcuts = [s for s in summary.shortcuts if s.method == info.method]
        if not shortcuts:
            blocks.append(f"{visible(info.method)}: no candidate shortcut (against the {info.support})" if info.shortcuts_tested
                          else f"{visible(info.method)}: shortcuts not tested (no resamples: a shortcut needs its interval)")
            continue
        table = Table(title=Text(f"{visible(info.method)} · candidate shortcuts (against the {info.support})"),
                      title_justify="left")
        for column in ("word", "class", "inputs", "predicted", "supported", "excess [interval]", "attribution", "examples"):
            table.add_column(column)
        for s in shortcuts:
            table.add_row(Text(visible(s.word)), Text(visible(s.name)), str(s.inputs), f"{s.rate:.0%}", f"{s.support:.0%}",
                          f"{s.rate - s.support:+.2f} [{s.excess.low:+.2f}, {s.excess.high:+.2f}]",
                          f"{s.attribution:+.3f}", Text(", ".join(visible(e.id) for e in s.examples)))
        blocks.append(table)
    return blocks
