"""How many resamples an interval takes, and a level as people read it: what the commands'
``--bootstrap`` and ``--ci`` checks need, without numpy (``stats`` draws the intervals)."""

from __future__ import annotations

import math

MIN_RESAMPLES = 100
MAX_RESAMPLES = 100_000  # 10**7 on 20 records took 61 s and 3.6 GB; 10**9 ran out of memory


def fewest_resamples(level: float) -> int:
    """Resamples that put at least one mean beyond each end of a ``level`` percentile interval."""
    return math.ceil(2 / (1 - level) - 1e-9)


def fewest_resamples_ever(level: float) -> int:
    """The fewest resamples that resolve a ``level`` interval of some number of inputs: its
    expanded level is above ``level`` for any count (it tends to it), so more than
    2 / (1 − level) are needed; fewer never give an interval."""
    return math.floor(2 / (1 - level) + 1e-9) + 1


def level_text(level: float) -> str:
    """A level as a percentage, never rounded (99.9%, not 100%; 95%, not 95.0%)."""
    return f"{level * 100:.10g}%"
