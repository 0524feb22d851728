"""Progress to a stderr that is no terminal (a log, CI): plain lines at a bounded rate, none in a
short run, each with the time gone and the time left of its phase."""

from __future__ import annotations

import pytest

from cli.common import EVERY_VARIABLE, PLAIN_EVERY, PlainProgress, plain_every
from contrastcat.errors import BadInput


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_nothing_in_a_short_run_then_a_line_at_most_each_interval():
    assert PLAIN_EVERY == 30.0  # the numbers below are worked for it
    clock, lines = Clock(), []
    progress = PlainProgress(lines.append, clock)
    for done in range(0, 101, 10):  # a whole phase in the run's first half minute: no line
        clock.now += 2.5
        progress("explaining with attcat (1/2)", done, 100)
    assert clock.now == 1027.5 and lines == []
    clock.now = 1030.0  # 30 s gone: the first line (nothing done of the new phase: no time left said)
    progress("evaluating with deletion (1/2)", 0, 40)
    assert lines == ["evaluating with deletion (1/2): 0/40, 0:30 elapsed"]
    clock.now = 1045.0  # within the interval: nothing
    progress("evaluating with deletion (1/2)", 10, 40)
    assert len(lines) == 1
    clock.now = 1060.0  # 20 of 40 in the phase's 30 s: 30 s left of it
    progress("evaluating with deletion (1/2)", 20, 40)
    assert lines[1] == "evaluating with deletion (1/2): 20/40, 1:00 elapsed, about 0:30 left of it"
    clock.now = 1089.0
    progress("randomising the model", 0, None)
    assert len(lines) == 2
    clock.now = 1090.0  # no count: the phase and the time alone
    progress("randomising the model", 0, None)
    assert lines[2] == "randomising the model, 1:30 elapsed"


def test_hours_are_written_as_hours():
    clock, lines = Clock(), []
    progress = PlainProgress(lines.append, clock)
    clock.now += 2 * 3600 + 5 * 60 + 7
    progress("explaining with occlusion (1/1)", 5, 5)
    assert lines == ["explaining with occlusion (1/1): 5/5, 2:05:07 elapsed"]


def test_the_interval_is_the_environments_where_it_says_one(monkeypatch):
    """A log may want fewer lines; the suite sets a day (conftest), so a test reading stderr whole
    sees none however slow the machine."""
    monkeypatch.delenv(EVERY_VARIABLE, raising=False)
    assert plain_every() == PLAIN_EVERY
    monkeypatch.setenv(EVERY_VARIABLE, "120")
    assert plain_every() == 120.0
    for bad in ("0.5", "soon", "nan", "inf", ""):
        monkeypatch.setenv(EVERY_VARIABLE, bad)
        with pytest.raises(BadInput, match=f"{EVERY_VARIABLE}=.*a number of seconds, at least 1"):
            plain_every()
    clock, lines = Clock(), []
    progress = PlainProgress(lines.append, clock, every=120.0)
    progress("explaining with attcat (1/1)", 0, 2)  # the phase begins at once
    clock.now += 119
    progress("explaining with attcat (1/1)", 1, 2)
    assert lines == []
    clock.now += 1  # one of two done in the phase's 120 s: as long again left
    progress("explaining with attcat (1/1)", 1, 2)
    assert lines == ["explaining with attcat (1/1): 1/2, 2:00 elapsed, about 2:00 left of it"]
