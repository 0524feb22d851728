"""``contrastcat build-refs``'s options: a model and its labelled data -> a library file."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...library.names import ABLATION_POOLS, MAX_REFERENCES, parse_pools
from ...spec import REQUIRED, CommandOptions, option
from .. import options

if TYPE_CHECKING:
    from ...library.build import BuildSettings


STORE_DTYPES = ("float32", "float16")


def _pools(named: str, value: Any) -> tuple[str, ...]:
    """A comma list as the command line spells it (``same,random``, ``none``), or a sequence of names."""
    if isinstance(value, str):
        return parse_pools(value, named)
    pools = tuple(check.names(named, value))
    unknown = [pool for pool in pools if pool not in ABLATION_POOLS]
    if unknown:
        raise BadInput(f"{named}: unknown pool {unknown[0]!r} (choose from {', '.join(ABLATION_POOLS)})")
    return pools


def _references(named: str, value: Any) -> int:
    return check.count(named, value, maximum=MAX_REFERENCES)


def _max_length(named: str, value: Any) -> int | None:
    return check.optional_count(named, value, minimum=2)


@dataclass(frozen=True)
class BuildRefsOptions(CommandOptions):
    """``contrastcat build-refs``'s options, each written once: its flag, keyword and check; the
    in-memory ``build_library`` takes those of the scan and the selection."""

    command: ClassVar[str] = "build-refs"

    model: str = option(REQUIRED, "Alias, hub id or local model directory.", options.file_name, flags=("--model", "-m"))
    output: str | None = option(
        None, "Library file to write (HDF5). Default: refs.h5 here, replaced only if it is a library of "
        "the same model (explain uses ./refs.h5 when given no --refs or --model).", options.path_or_none,
        flags=("--output", "-o"),
    )
    data: str | None = option(
        None, "Labelled data: a .jsonl/.csv file or a hub data set NAME[:CONFIG]. Default: the alias's.",
        options.path_or_none,
    )
    split: str | None = option(None, "Split of a hub data set. Default: the alias's (train).", check.optional_text)
    text_field: str | None = option(None, "Text column. Default: the alias's, else 'text'.", check.optional_text)
    label_field: str | None = option(None, "Label column. Default: the alias's, else 'label'.", check.optional_text)
    pair_field: str | None = option(
        None, "Sentence pairs: the column of each row's second text (a pair classifier's library).",
        check.optional_text,
    )
    keep: int = option(50, "References stored per class when enough pass gamma.", _references, kind=int)
    # A probability: above 1 every row passes.
    gamma: float = option(
        1e-3, "A reference for class c needs f_c(r) < gamma.",
        functools.partial(check.number, minimum=0.0, maximum=1.0), kind=float,
    )
    k: int = option(
        30, "K: fill each class up to this many (next-lowest f_c) when too few pass gamma.", _references, kind=int,
        flags=("--min-refs",),
    )
    strict_gamma: bool = option(False, "Refuse (exit 1) instead of filling up below gamma.", check.flag, kind=bool)
    min_tokens: int = option(10, "Skip shorter references (special tokens count).", _references, kind=int)
    max_scan: int | None = option(None, "Scan at most the first N rows.", check.optional(check.count), kind=int)
    max_length: int | None = option(
        None, "Tokens per row, up to the model's position limit. Default: the tokenizer's limit.", _max_length,
        kind=int,
    )
    store_dtype: str = option(
        "float32", "Activations on disk: float32 or float16 (half the size).", check.one_of(STORE_DTYPES)
    )
    dtype: str = options.dtype()
    forward_dtype: str = options.forward_dtype()
    pools: tuple[str, ...] = option(
        ("random",), "Pools stored beside the contrasting references: random (the default; contrastcat-plus and "
        "--reference-select random read it), same, same,random, or none (the paper's Table 3; same adds "
        "up to --keep references per class, random one pool of --keep rows in all).", _pools,
        shown_default="random", annotation="str | Sequence[str]", completes=("random", "same,random", "same", "none"),
    )
    seed: int = options.seed("Seed that draws the random pool.")
    batch_size: int = options.batch_size(32)
    as_json: bool = options.as_json("Print the summary as JSON on stdout.")
    device: str = options.device()
    quiet: bool = options.quiet()
    progress: Callable[[str, int, int | None], None] | None = options.progress()
    notify: Callable[[str], None] | None = options.notify()

    def check_together(self) -> None:
        if self.keep < self.k:
            raise BadInput(f"{self.named('keep')} ({self.keep}) must be at least {self.bare('k')} ({self.k})")

    @property
    def settings(self) -> BuildSettings:
        """What the library is built with (and says it was, in its file)."""
        from ...library.build import BuildSettings
        from ...library.select import SelectionSettings

        return BuildSettings(
            selection=SelectionSettings(gamma=self.gamma, k=self.k, keep=self.keep, min_tokens=self.min_tokens),
            batch_size=self.batch_size, dtype=self.store_dtype, strict_gamma=self.strict_gamma, pools=self.pools,
            seed=self.seed, forward_dtype=self.forward_dtype, max_length=self.max_length, named=self.names,
        )


