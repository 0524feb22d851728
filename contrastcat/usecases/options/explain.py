"""``contrastcat explain``'s options: an inputs file -> a records file."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ... import arguments as check
from ...attribution.targets import ALL_ACTIVE, GOLD, PRED, PREDICTED, Target
from ...errors import BadInput
from ...io.files import is_standard_output
from ...methods.options import ALL, check_options, method_names, parse_method_list
from ...spec import CommandOptions, option
from .. import options

if TYPE_CHECKING:
    from ...models import Classifier
    from ...output.shards import Shard


ON_ERROR = ("stop", "skip")


def _shard(named: str, value: Any) -> Shard | None:
    if value is None:
        return None
    from ...output.shards import Shard

    return Shard.parse(check.text(named, value), named)


def _methods(named: str, value: Any) -> tuple[str, ...]:
    """Known method names, in order, each once (``all``: every method); a typo is refused here,
    before anything is read or loaded."""
    return tuple(parse_method_list(check.names(named, value), lambda name: named))


def _max_length(named: str, value: Any) -> int | None:
    if value is not None and check.whole(value) and value < 2:
        raise BadInput(f"{named} {check.shown(value)}: an input needs at least 2 tokens")
    return check.optional_count(named, value, minimum=2)


@dataclass(frozen=True)
class ExplainOptions(CommandOptions):
    """``contrastcat explain``'s options, each written once: its flag, keyword and check. With
    neither ``library`` nor ``model``: ``./refs.h5`` and its model if it exists, else the default
    model and its cached library. ``method_options`` are the methods' own (``refs_used=10``),
    checked by the methods that define them."""

    command: ClassVar[str] = "explain"
    together: ClassVar = (options.check_pair_field_apart,)

    inputs: str = options.inputs()
    output: str = option("-", "Records (JSONL); - for stdout.", options.file_name, flags=("--output", "-o"))
    library: str | None = options.refs(
        "Reference library from build-refs (needed by contrastcat). With neither --refs nor --model: ./refs.h5 if it "
        "exists, else the embedded minilm-rt's own (built and cached on first use)."
    )
    model: str | Classifier | None = options.model(help="Default: the library's model (with no library: minilm-rt).")
    method: tuple[str, ...] = option(
        ("contrastcat",),
        "Attribution method, a comma list, or all: one record per input and method (see --list-methods).",
        _methods, flags=("--method",), shown_default="contrastcat", completes=(*method_names(), ALL),
    )
    target: Target = option(
        PREDICTED, "Class to explain: pred, gold (the input's label) or an index; for a multi-label model also "
        "all-active: each label above 0.5 (the top one where none is), one record per label and method.", Target.read,
        shown_default="pred", annotation="str | int", completes=(PRED, GOLD, ALL_ACTIVE),
    )
    text_field: str = options.text_field()
    id_field: str = options.id_field()
    label_field: str = options.label_field()
    pair_field: str | None = options.pair_field(
        "Sentence pairs (NLI, paraphrase, rerankers): the field/column of each input's second "
        "text. Both texts are scored; the library must be built with --pair-field too.",
    )
    evidence_field: str | None = options.evidence_field()
    mask_special: bool = option(
        False, "Reference-code quirk: zero special tokens in the attribution pass's mask.", check.flag, kind=bool
    )
    words: bool = option(
        False, "Also write each record's words (pieces joined, punctuation apart), with character spans, their pieces' raw "
        "scores combined (summed for a signed map, the strongest for an unsigned one) and that min-max scaled.", check.flag, kind=bool,
    )
    max_length: int | None = option(
        None, "Tokens per input, special ones included, up to the model's position limit. "
        "Default: the model's tokenizer limit. Longer texts are cut (records say so).", _max_length, kind=int,
    )
    on_error: str = option(
        "stop", "A bad input line: stop (exit 2 before anything is written) or skip "
        "(leave it out, list it at the end, exit 0).", check.one_of(ON_ERROR),
    )
    resume: bool = option(
        False, "Keep a checkpoint beside -o FILE, and continue one an interrupted run left "
        "(the result is the same as an uninterrupted run's, byte for byte).", check.flag, kind=bool,
    )
    shard: Shard | None = option(
        None, "I/N: explain only shard I (from 0) of N and write it as a part file; "
        "contrastcat merge joins the N parts into the whole run's output, byte for byte "
        "(for batch schedulers; under torchrun each process takes its shard by itself).", _shard,
        annotation="str | None",
    )
    batch_size: int = options.batch_size(16)
    device: str = options.device()
    dtype: str = options.dtype()
    forward_dtype: str = options.forward_dtype()
    quiet: bool = options.quiet()
    list_methods: bool = option(
        False, "List methods and exit.", check.flag, kind=bool, negatable=False, where="command",
        flags=("--list-methods",),
    )
    as_json: bool = options.as_json("With --list-methods: the list as JSON.")
    progress: Callable[[str, int, int | None], None] | None = options.progress()
    notify: Callable[[str], None] | None = options.notify()
    method_options: Mapping[str, object] = field(default_factory=dict, kw_only=True)

    def check_together(self) -> None:
        if self.resume and self.shard is not None:
            raise self.resume_with_shards()
        if self.resume and is_standard_output(self.output):
            raise BadInput(f"{self.named('resume')} needs {self.bare('output')}: standard output cannot be continued")

    def resume_with_shards(self) -> BadInput:
        """A checkpoint is one process's: a shard (given, or torchrun's) is rerun whole instead."""
        return BadInput(
            f"{self.named('resume')} cannot be combined with {self.bare('shard')} or torchrun: rerun the failed "
            "shard instead"
        )

    def with_methods_options(self, chosen: Mapping[str, object]) -> ExplainOptions:
        """The methods' own flags, checked here, before any model loads (``--rho banana`` is
        refused at once, as a misspelt method is)."""
        check_options(self.names, **chosen)
        return dataclasses.replace(self, method_options=dict(chosen))


