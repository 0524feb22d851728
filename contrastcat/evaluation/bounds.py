"""What ``--fail-under``, ``--tolerance`` and ``--compare`` say, read: the bounds on metrics and the
pair of methods (``gates`` holds a report against them). Light: the options read them before
any work, without numpy."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..arguments import shown
from ..errors import BadInput
from .metrics import KENDALL_METRIC, METRICS, SCALAR_METRICS, Metric

# What --fail-under names: morf.aopc -> the comparison's column morf_aopc.
GATE_NAMES = {
    **{f"{order}.{key}": (f"{order}_{key}", metric) for (order, key), metric in METRICS.items()},
    "kendall.tau": ("kendall_tau_index", KENDALL_METRIC),
    # eraser.comp, loo.tau, precision_at_k.signed, auprc.magnitude
    **{".".join(key.rsplit("_", 1)): (key, metric) for key, metric in SCALAR_METRICS.items()},
}


@dataclass(frozen=True)
class Bound:
    method: str | None  # None: every method in the report
    key: str  # column key
    metric: Metric
    value: float

    def violated_by(self, value: float) -> bool:
        return value < self.value if self.metric.higher_is_better else value > self.value


def split_list(spec: str) -> list[str]:
    """Split at commas outside brackets: a variant label ``contrastcat[refs_used=5,rho=mean]`` stays whole."""
    parts, depth, current = [], 0, ""
    for character in spec:
        depth += {"[": 1, "]": -1}.get(character, 0)
        if character == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += character
    return [part.strip() for part in [*parts, current]]


# A plain ASCII decimal. Python's float() also takes "0_05" (5.0), "٠٫٥" and "inf": a typo in a
# gate must not become another bound, or switch the gate off.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_decimal(text: str, where: str) -> float:
    """``text`` as a finite number written in ASCII decimal (``0.05``, ``-1``, ``5e-2``), else BadInput."""
    value = float(text) if _DECIMAL.fullmatch(text) else math.nan
    if not math.isfinite(value):
        cut = text if len(text) <= 40 else text[:37] + "..."
        raise BadInput(f"{where} {cut!r} is not a finite number written in ASCII decimal (like 0.05)")
    return value


def parse_pair(named: str, compare: str | None) -> tuple[str, str] | None:
    """``"A,B"`` -> (A, B): two different methods (evaluate and render read it alike); ``named``
    is the option as the caller spells it, for the error."""
    if compare is None:
        return None
    if not isinstance(compare, str):
        raise BadInput(f"{named} must be a string, A,B; got {shown(compare)}")
    names = split_list(compare)
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise BadInput(f"{named} takes two different methods, A,B; got {compare!r}")
    return names[0], names[1]


def parse_tolerance(named: str, text: str) -> float:
    """``--tolerance``: a finite number of at least 0, written in ASCII decimal; ``named`` is the
    option as the caller spells it."""
    value = parse_decimal(text.strip(), named)
    if value < 0:
        raise BadInput(f"{named} must be 0 or more, got {text!r}")
    return value


def parse_bounds(named: str, spec: str) -> tuple[Bound, ...]:
    """``morf.aopc=0.5,lerf.lodds=0.1``; ``contrastcat:morf.aopc=0.55`` for one method only;
    ``named`` is the option as the caller spells it."""
    bounds = []
    for part in split_list(spec):
        if not part:
            continue
        name, equals, number = part.rpartition("=")
        method, _, name = name.rpartition(":") if ":" in name else ("", "", name)
        if not equals or name.strip().lower() not in GATE_NAMES:
            raise BadInput(
                f"{named}: {part!r} is not METRIC=VALUE or METHOD:METRIC=VALUE "
                f"(metrics: {', '.join(GATE_NAMES)})"
            )
        value = parse_decimal(number.strip(), f"{named}: {part!r}:")
        key, metric = GATE_NAMES[name.strip().lower()]
        bound = Bound(method.strip() or None, key, metric, value)
        twice = next((b for b in bounds if (b.method, b.key) == (bound.method, bound.key)), None)
        if twice is not None:  # which one would hold is a guess the user should not have to make
            where = f"{bound.method}:" if bound.method else ""
            raise BadInput(
                f"{named}: {where}{name.strip().lower()} is bounded twice ({twice.value:g} and {value:g}): give it once"
            )
        bounds.append(bound)
    if not bounds:
        raise BadInput(f"{named} needs at least one METRIC=VALUE")
    return tuple(bounds)
