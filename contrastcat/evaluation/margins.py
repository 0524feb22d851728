"""How near is near in a recommendation: how far below the leader a cheaper method may be, how
much cheaper counts as cheaper, and when two maps are the same. Light: compare's options take
the margin's default from here, without numpy."""

from __future__ import annotations

DEFAULT_MARGIN = 0.1  # a cheaper method may fall this fraction of the way from the leader to chance below it
MARGIN_RANGE = (0.0, 0.5)  # at most halfway to chance: further is no longer near the leader
# One method is called cheaper than another only where it takes at most 1/COST_FACTOR of its time.
# Costs are measured once, on one machine: in one run, two names of one method (the same maps) took
# 0.000903 and 0.00122 s/input (1.35 times as long, a toy model), and AttnLRP and Full LRP, 1.5 %
# apart, swap places between CPUs. A factor of two is beyond what timing noise does, and below it the
# saving is too small to trade faithfulness for.
COST_FACTOR = 2.0  # the paragraph says "at most half the cost"
SAME_MAPS_TOLERANCE = 2e-6  # two maps are the same where no score differs by more (records keep 6 decimals)
