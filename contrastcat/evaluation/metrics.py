"""The measures' names and which way each is better: what the options, the gates and the
tables read (without numpy: the command line checks ``--order`` and ``--fail-under`` with them)."""

from __future__ import annotations

from dataclasses import dataclass

from ..deletion.names import LERF, MORF

ORDERS = (MORF, LERF)
TARGETS = ("pred", "gold", "record")
ERASER_BINS = (1, 5, 10, 20, 50)  # per cent of the non-special tokens (ERASER's AOPC thresholds)
ERASER_COMP = "eraser_comp"
ERASER_SUFF = "eraser_suff"
LOO_TAU = "loo_tau"


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool


# Better: MoRF AOPC higher, MoRF LOdds lower, LeRF AOPC lower, LeRF LOdds higher.
METRICS = {
    (MORF, "aopc"): Metric("MoRF AOPC", True),
    (MORF, "lodds"): Metric("MoRF LOdds", False),
    (LERF, "aopc"): Metric("LeRF AOPC", False),
    (LERF, "lodds"): Metric("LeRF LOdds", True),
}


# Mean index τ over inputs (docs/spec.md §5): lower means more class-distinct attributions.
KENDALL_METRIC = Metric("Kendall τ", False)

# One value per input (.scalars): more drop without the top tokens, less drop with only them, more
# agreement with each token's own drop.
SCALAR_METRICS = {
    ERASER_COMP: Metric("Comprehensiveness", True),
    ERASER_SUFF: Metric("Sufficiency", False),
    LOO_TAU: Metric("LOO τ", True),
}

# Plausibility against known evidence (.plausibility): each measure under both rankings of a map
# (by signed score, by magnitude), every one higher-is-better. Keys as ``<measure>_<ranking>``.
SIGNED, MAGNITUDE = "signed", "magnitude"
PLAUSIBILITY_MEASURES = {
    "precision_at_k": "P@k", "auprc": "AUPRC", "token_f1": "Token F1", "iou_f1": "IOU F1",
}
PLAUSIBILITY_KEYS = tuple(
    f"{measure}_{ranking}" for ranking in (SIGNED, MAGNITUDE) for measure in PLAUSIBILITY_MEASURES
)
# What compare judges by: the measures free of a rationale threshold (token and IOU F1 shown beside).
PLAUSIBILITY_JUDGED = tuple(key for key in PLAUSIBILITY_KEYS if key.startswith(("precision_at_k", "auprc")))
SCALAR_METRICS.update({
    f"{measure}_{ranking}": Metric(f"{name} ({ranking})", True)
    for ranking in (SIGNED, MAGNITUDE) for measure, name in PLAUSIBILITY_MEASURES.items()
})
