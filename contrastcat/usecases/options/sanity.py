"""``contrastcat sanity``'s options: records -> the model-randomisation report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .. import options


@dataclass(frozen=True)
class SanityOptions(options.MeasuringOptions, options.Resampling):
    """``contrastcat sanity``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "sanity"
    together: ClassVar = (options.check_picture_apart, options.check_resamples_resolve)

    records: str = options.records()
    model: str | None = options.model(loaded=False)
    library: str | None = options.refs("The reference library the records were made with.")
    output: str | None = options.report_output()
    plot: str | None = options.plot("Draw ρ per step (.png, .svg, .pdf; needs matplotlib).")
    as_json: bool = options.as_json("Print the JSON report on stdout instead of the table.")
    per_input: bool = options.per_input("Keep every input's ρ in the JSON report.")
    seed: int = options.seed("Seed of the re-initialisation and of the bootstrap.")
    bootstrap: int = options.bootstrap("Bootstrap resamples for each mean's interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    batch_size: int = options.batch_size(16)


