"""The deletion kernel's words, without its arithmetic: what the options of every command and
method take (``--perturb``, ``--steps``, ``rho``, the test's measure and score). Read by the
option checks and the command line's help and completions, which need no numpy."""

from __future__ import annotations

MORF = "morf"
LERF = "lerf"
DELETE = "delete"
MASK = "mask"
PAD = "pad"
UNK = "unk"
# How a perturbed token goes: removed, or replaced by the tokenizer's mask, pad or unknown token.
PERTURBATIONS = (DELETE, MASK, PAD, UNK)

PAPER = "paper"
REFERENCE = "reference"
STEP_GRIDS = (PAPER, REFERENCE)

# The deletion test's threshold on the maps' scores (``refine.RHO_RULES`` computes each).
RHO_NAMES = ("mean+std", "mean", "mean-std")

# How a map's deletion test is scored. "morf" is the paper's S(I_R): the mean drop of
# the target probability as its top tokens go. "morf-lerf" (beyond the paper) also
# deletes its *least* relevant tokens first and subtracts that mean drop, so a map
# that ranks some evidence last (where LeRF finds it) scores lower; it costs a
# second set of deletion inputs.
SCORE_RULES = ("morf", "morf-lerf")

# What a step's drop measures. "probability" is the paper's: p_c(x) - p_c(step). "log-odds" (beyond
# the paper) is the drop of log p_c - log(1 - p_c): on a confident model p_c stays at about
# 1 until most of the evidence is gone, so the first steps of every map score about 0 and only the
# last ones (where any ranking has deleted the evidence) separate the maps; log-odds still moves.
MEASURES = ("probability", "log-odds")
