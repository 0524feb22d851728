"""``contrastcat evaluate``'s options: a records file -> a report, its gates and its file."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ... import arguments as check
from ...deletion.names import DELETE, PAPER, PERTURBATIONS, STEP_GRIDS
from ...errors import BadInput
from ...evaluation.bounds import Bound, parse_bounds, parse_pair, parse_tolerance
from ...evaluation.metrics import ORDERS, TARGETS
from ...spec import option
from .. import options

if TYPE_CHECKING:
    from ...evaluation.curves import EvalSettings
    from ...models import Classifier


def _tolerance(named: str, value: Any) -> float:
    """A string as the command line gives it (ASCII decimal only), or a number."""
    if isinstance(value, str):
        return parse_tolerance(named, value)
    return check.number(named, value, minimum=0)


def _bounds(named: str, value: Any) -> tuple[Bound, ...] | None:
    return None if value is None else parse_bounds(named, check.text(named, value))


@dataclass(frozen=True)
class EvaluateOptions(options.MeasuringOptions, options.Resampling):
    """``contrastcat evaluate``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "evaluate"
    together: ClassVar = (options.check_picture_apart, options.check_resamples_resolve)

    records: str = options.records()
    model: str | Classifier | None = options.model()
    orders: tuple[str, ...] = option(
        ORDERS, "Comma list of morf, lerf.", check.some_of(ORDERS), flags=("--order",), shown_default="morf,lerf"
    )
    steps: str = option(PAPER, "Step grid: paper (10..90 % of non-special tokens) or reference.", check.one_of(STEP_GRIDS))
    perturb: str = option(
        DELETE, "How a token goes, in every metric: delete, or replace by the mask, pad or unk token.",
        check.one_of(PERTURBATIONS),
    )
    target: str = option("pred", "Class whose probability drops: pred, gold or record.", check.one_of(TARGETS))
    min_tokens: int = option(10, "Skip inputs with fewer tokens (special included).", check.count, kind=int)
    limit: int | None = option(
        None, "Evaluate only the first N records (a quick look at a large file).",
        check.optional(functools.partial(check.count, maximum=sys.maxsize)),
        kind=int, metavar="N",
    )
    kendall: bool = option(
        False, "Also the Kendall-τ test against the alternative class (c+1) mod C.", check.flag, kind=bool
    )
    eraser: bool = option(
        False, "Also ERASER comprehensiveness and sufficiency (top 1, 5, 10, 20, 50 % removed / kept).", check.flag,
        kind=bool,
    )
    loo: bool = option(
        False, "Also the Kendall τ between each map and the drop of removing each token alone.", check.flag, kind=bool
    )
    library: str | None = options.refs("Reference library for --kendall with contrastcat records.")
    output: str | None = options.report_output()
    as_json: bool = options.as_json("Print the JSON report on stdout instead of tables.")
    markdown: bool = option(
        False, "Print the comparison as a GitHub Markdown table instead of tables.", check.flag, kind=bool,
        negatable=False, where="command",
    )
    curves: bool = option(
        False, "With several methods, also print each method's step table.", check.flag, kind=bool, negatable=False,
        where="command",
    )
    bootstrap: int = options.bootstrap("Bootstrap resamples of the inputs for each mean's interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    seed: int = options.seed("Seed of the bootstrap resampling.")
    compare: tuple[str, str] | None = option(
        None, "Paired difference A − B over their shared inputs, with its interval.", parse_pair, metavar="A,B",
        annotation="str | None",
    )
    per_input: bool = options.per_input("Keep every input's values in the JSON report (for --baseline).")
    fail_under: tuple[Bound, ...] | None = option(
        None, "Exit 3 when a metric is worse than its bound: 'morf.aopc=0.5,lerf.lodds=0.1' "
        "(METHOD:METRIC=VALUE for one method; metrics morf.aopc, morf.lodds, lerf.aopc, lerf.lodds, kendall.tau, "
        "eraser.comp, eraser.suff, loo.tau; with records carrying evidence, plausibility's precision_at_k.signed, "
        "auprc.magnitude, token_f1.signed, iou_f1.magnitude, ...).", _bounds, metavar="BOUNDS",
    )
    baseline: str | None = option(
        None, "Exit 3 when a metric is worse than in this earlier report (-o).", options.path_or_none, metavar="REPORT"
    )
    tolerance: float = option(
        0.01, "How much worse than --baseline a metric may be (a finite number, 0 or more).", _tolerance, metavar="T",
        shown_default="0.01",
    )
    plot: str | None = options.plot(
        "Draw the MoRF/LeRF curves, intervals as bands (.png, .svg, .pdf; needs matplotlib: pip install 'contrastcat[plot]')."
    )
    batch_size: int = options.batch_size(64)
    forward_dtype: str = options.forward_dtype()

    def check_together(self) -> None:
        if self.as_json and self.markdown:
            raise BadInput(
                f"{self.named('as_json')} and {self.bare('markdown')} both print on stdout: pick one "
                f"({self.bare('output')} writes the JSON report to a file)"
            )

    @property
    def settings(self) -> EvalSettings:
        from ...evaluation.curves import EvalSettings

        return EvalSettings(
            orders=self.orders, steps=self.steps, perturb=self.perturb, min_tokens=self.min_tokens, target=self.target,
            forward_dtype=self.forward_dtype, eraser=self.eraser, loo=self.loo,
        )


