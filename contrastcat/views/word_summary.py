"""What a classifier relies on across a dataset, as ``summarize`` reports it: typed, with JSON,
Markdown, a pandas frame (pandas optional) and a notebook display."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..evaluation.stats import Interval

SPLITS = ("all", "correct", "wrong")  # every input of the class; those the model got right; its errors


@dataclass(frozen=True)
class WordStat:
    """A word in the inputs of one class (and split): ``inputs`` holding it, its ``mean`` value
    there (each input's word scores divided by its largest magnitude: in [-1, 1]) with its
    bootstrap ``interval`` over inputs (None: too few inputs, or no resamples), and the share of the
    class's inputs where it is the strongest unit for the class (``top_for``) and against it."""

    word: str
    inputs: int
    mean: float
    interval: Interval | None
    top_for: float
    top_against: float

    def to_dict(self) -> dict:
        return {"word": self.word, "inputs": self.inputs, "mean": self.mean,
                "interval": None if self.interval is None else self.interval.as_dict(),
                "top_for": self.top_for, "top_against": self.top_against}


@dataclass(frozen=True)
class ClassWords:
    """One method's words for one class, over the inputs of a split: ranked by their mean value,
    words in fewer than ``min_count`` inputs left out. ``baseline``: the mean value of every word
    of these inputs (a shortcut's attribution must lie above it and above 0)."""

    method: str
    target: int
    name: str
    split: str
    inputs: int
    baseline: float
    for_class: list[WordStat]
    against: list[WordStat]

    def to_dict(self) -> dict:
        return {"method": self.method, "target": self.target, "name": self.name, "split": self.split,
                "inputs": self.inputs, "baseline": self.baseline,
                "for": [w.to_dict() for w in self.for_class], "against": [w.to_dict() for w in self.against]}


@dataclass(frozen=True)
class Example:
    """An input shown for a shortcut: its id, line, gold label, predicted class and the word's value."""

    id: Any
    line: int
    label: Any
    predicted: str
    value: float
    record: Any = field(default=None, compare=False, repr=False)  # the AttributionRecord, to render

    def to_dict(self) -> dict:
        return {"id": self.id, "line": self.line, "label": self.label, "predicted": self.predicted, "value": self.value}


@dataclass(frozen=True)
class Shortcut:
    """A candidate shortcut: a word the model predicts ``name`` with far more often than the data
    supports (``rate`` − ``support``, its ``excess`` interval above 0 at the corrected level and at
    least :data:`MIN_EXCESS`), whose attribution to the class lies above 0 and above the class's
    average word (``attribution`` with its interval)."""

    method: str
    target: int
    name: str
    word: str
    inputs: int
    rate: float
    support: float
    excess: Interval
    attribution: float
    interval: Interval | None
    examples: list[Example]

    def to_dict(self) -> dict:
        return {"method": self.method, "target": self.target, "name": self.name, "word": self.word,
                "inputs": self.inputs, "rate": self.rate, "support": self.support, "excess": self.rate - self.support,
                "excess_interval": self.excess.as_dict(), "attribution": self.attribution,
                "interval": None if self.interval is None else self.interval.as_dict(),
                "examples": [e.to_dict() for e in self.examples]}


MIN_EXCESS = 0.1  # a shortcut's prediction rate is at least 10 points above what the data supports


@dataclass(frozen=True)
class MethodInfo:
    """How one method's words were scored, and what its association compares with."""

    method: str
    rule: str  # "sum" or "max"
    signed: bool
    inputs: int
    records: int
    support: str  # "gold labels" or "base rate"
    level: float  # the corrected level of the shortcut test
    tests: int
    shortcuts_tested: bool = True  # False with no resamples: a shortcut needs its attribution's interval


@dataclass
class Summary:
    """The summary of a records file: per method, class and split its words; its candidate
    shortcuts; and the gate's hits (``problems``)."""

    source: str
    model: str
    settings: dict
    methods: list[MethodInfo]
    classes: list[ClassWords]
    shortcuts: list[Shortcut]
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "source": self.source, "model": self.model, "settings": self.settings,
            "methods": [vars(info) for info in self.methods],
            "classes": [c.to_dict() for c in self.classes],
            "shortcuts": [s.to_dict() for s in self.shortcuts],
            "problems": list(self.problems),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)

    def words(self, method: str | None = None, split: str = "all") -> list[ClassWords]:
        return [c for c in self.classes if c.split == split and (method is None or c.method == method)]

    def to_frame(self):
        """One row per (method, class, split, side, word): pandas, where installed."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_frame needs pandas (pip install pandas); to_dict() needs nothing") from None
        rows = []
        for group in self.classes:
            for side, stats in (("for", group.for_class), ("against", group.against)):
                for rank, stat in enumerate(stats, 1):
                    low, high = (None, None) if stat.interval is None else (stat.interval.low, stat.interval.high)
                    rows.append({"method": group.method, "class": group.name, "split": group.split, "side": side,
                                 "rank": rank, "word": stat.word, "inputs": stat.inputs, "mean": stat.mean,
                                 "low": low, "high": high, "top_for": stat.top_for, "top_against": stat.top_against})
        return pandas.DataFrame(rows)

    def markdown(self) -> str:
        from .summary_markup import markdown

        return markdown(self)

    def html(self) -> str:
        from .summary_markup import html_page

        return html_page(self)

    def blocks(self) -> list:
        """Rich tables and lines, in order: what ``contrastcat summarize`` prints."""
        from .summary_tables import summary_blocks

        return summary_blocks(self)

    def _repr_html_(self) -> str:
        from .summary_markup import html_body

        return html_body(self)
