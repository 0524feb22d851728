"""What a run explains, by name: ``--target``'s words (the options read them without torch)."""

from __future__ import annotations

PRED = "pred"
GOLD = "gold"
ALL_ACTIVE = "all-active"  # a multi-label model: each label it predicts (above 0.5), one record each
