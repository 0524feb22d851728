"""``contrastcat compare``'s options: the methods to compare (a variant as
``name[option=value,...]``), the sample, the folder; read and checked without any model."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ... import arguments as check
from ...errors import BadInput
from ...evaluation.margins import DEFAULT_MARGIN, MARGIN_RANGE
from ...methods.options import ALL, METHOD_OPTIONS, check_method_name, method_names
from ...spec import option
from .. import options

if TYPE_CHECKING:
    from ...models import Classifier


@dataclass(frozen=True)
class Choice:
    """A method and its own options (a variant of it is another choice)."""

    method: str
    options: Mapping[str, object] = field(default_factory=dict)
    written: str | None = field(default=None, compare=False)  # as the caller wrote it (``refs-used=5``), if in text
    spelled: Mapping[str, str] = field(default_factory=dict, compare=False)  # option -> its name as written

    def names(self, name: str) -> str:
        """An option named as the brackets spell it (``refs-used``), in a message about it."""
        return self.spelled.get(name, name)


# The paper's method, the tool's LRP variant and its cheap setting (docs/methods.md), the
# strongest of the others on the embedded models, and chance.
DEFAULT_METHODS = (
    "contrastcat,contrastcat-lrp,contrastcat-lrp[refs_used=20,test_steps=5],attnlrp,full-lrp,attcat,tis,"
    "integrated-gradients,random"
)


DEFAULT_LIMIT = 100  # inputs sampled: minutes on a 2-core CPU for a MiniLM-size model
DEFAULT_SANITY = 10  # inputs whose maps are explained again on each randomised copy of the model

# A first look in under a minute on a 2-core CPU with a MiniLM-size model: methods of one or two
# passes (occlusion: one per token), the Contrast-CAT variant of the cheap setting where a library
# is given, chance; a sample of 20, no sanity check.
QUICK_METHODS = "attnlrp,attcat,gradient-norm,occlusion,random"
QUICK_WITH_LIBRARY = "contrastcat-lrp[refs_used=20,test_steps=5]," + QUICK_METHODS
QUICK_LIMIT = 20


def parse_choices(named: str, value: Any) -> tuple[Choice, ...]:
    """``name`` or ``name[option=value,...]``, comma-separated (commas inside brackets belong to
    the variant, and a piece without ``=`` to the value before it): ``contrastcat,
    contrastcat-lrp[refs_used=20,test_steps=2,5],attnlrp``."""
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, Choice) for v in value):
        return tuple(check_choice(named, choice) for choice in value)
    texts = [value] if isinstance(value, str) else list(value) if isinstance(value, (tuple, list)) else None
    if texts is None or not all(isinstance(t, str) for t in texts):
        raise BadInput(f"{named} must be method names, got {check.shown(value)}")
    found: list[Choice] = []
    for text in texts:
        depth, start = 0, 0
        for index, char in enumerate(text + ","):
            depth += (char == "[") - (char == "]")
            if depth < 0:
                raise BadInput(f"{named} {check.shown(text)}: a ']' closes no '['")
            if char == "," and depth == 0:
                piece = text[start:index].strip()
                if piece == ALL:  # every method, in the paper's order (as explain's --method all)
                    found += [Choice(name, written=name) for name in METHOD_OPTIONS]
                elif piece:
                    found.append(_choice(named, piece))
                start = index + 1
        if depth:
            raise BadInput(f"{named} {check.shown(text)}: a '[' is never closed")
    checked = tuple(check_choice(named, choice) for choice in found)  # a misspelt one is said as such, before how many
    if len(checked) < 2:
        raise BadInput(f"{named}: compare needs at least two methods, got {len(checked)}")
    return checked


def _choice(named: str, text: str) -> Choice:
    """One method as written, ``name`` or ``name[option=value,...]``: named in the report by its
    name and each option as written (``refs-used=5``), the space around each part left out."""
    if not text.isprintable():  # a newline or a control code would split or garble the report's rows
        raise BadInput(f"{named} {check.shown(text)}: a method is written without control characters")
    name, bracket, rest = text.partition("[")
    if not bracket:
        return Choice(name.strip(), written=name.strip())
    if not rest.endswith("]"):
        raise BadInput(f"{named} {check.shown(text)}: a variant is name[option=value,...]")
    chosen: dict[str, str] = {}
    spelled: dict[str, str] = {}
    last = None
    for pair in filter(None, (p.strip() for p in rest[:-1].split(","))):
        key, equals, raw = pair.partition("=")
        if not equals and last is not None:  # a value's own comma: test_steps=2,5
            chosen[last] = f"{chosen[last]},{pair}"
            continue
        if not equals or not key.strip():
            raise BadInput(f"{named} {check.shown(text)}: {check.shown(pair)} is not option=value")
        last = key.strip().replace("-", "_")
        if last in chosen:  # the later value would win unseen
            raise BadInput(f"{named} {check.shown(text)}: option {check.shown(key.strip())} is given twice")
        chosen[last] = raw.strip()  # typed as the method's option once it is known
        spelled[last] = key.strip()
    written = f"{name.strip()}[{','.join(f'{spelled[key]}={value}' for key, value in chosen.items())}]"
    return Choice(name.strip(), dict(chosen), written if chosen else name.strip(), spelled)


@contextlib.contextmanager
def said_of(choice: Choice, named: str) -> Iterator[None]:
    """An option a choice's method does not take, or a value it refuses, said of the choice as given."""
    try:
        yield
    except BadInput as error:
        raise BadInput(f"{named} {check.cut(written(choice))}: {error}") from None


def written(choice: Choice) -> str:
    if choice.written is not None:
        return choice.written
    if not choice.options:
        return choice.method
    return f"{choice.method}[{','.join(f'{key}={value}' for key, value in choice.options.items())}]"


def typed(choice: Choice) -> dict[str, object]:
    """A variant's options as its method takes them (text in brackets read as each option's type:
    the method's own reading, :meth:`MethodOptions.typed`)."""
    return METHOD_OPTIONS[choice.method].typed(choice.options, choice.names)


def check_choice(named: str, choice: Choice) -> Choice:
    """The choice's method exists and takes its options, with values it accepts (its options alone
    are built: no method is loaded), said of the choice as written."""
    with said_of(choice, named):
        check_method_name(choice.method)
        METHOD_OPTIONS[choice.method].build(choice.method, choice.names, **typed(choice))
    return choice


DEFAULT_CHOICES = parse_choices("`method`", DEFAULT_METHODS)


@dataclass(frozen=True)
class CompareOptions(options.MeasuringOptions, options.Resampling):
    """``contrastcat compare``'s options, each written once: its flag, keyword and check."""

    command: ClassVar[str] = "compare"
    together: ClassVar = (options.check_pair_field_apart, options.check_resamples_resolve)

    inputs: str = options.inputs()
    library: str | None = options.refs("Reference library from build-refs (the library methods read it).")
    model: str | Classifier | None = options.model(help="Default: the library's model.")
    method: tuple[Choice, ...] = option(
        DEFAULT_CHOICES, "Methods to compare, a comma list; a variant as name[option=value,...]: the default is "
        "the paper's method, contrastcat-lrp and its cheap setting, the strongest others and chance (all: every method).",
        parse_choices, flags=("--method",), shown_default=DEFAULT_METHODS, annotation="str",
        completes=(*method_names(), ALL),
    )
    limit: int = option(
        DEFAULT_LIMIT, "Inputs to compare on: a sample of the file's (all of them if it has fewer), drawn with "
        "--seed, in file order.", lambda named, value: check.count(named, value, minimum=2), kind=int,
    )
    text_field: str = options.text_field()
    id_field: str = options.id_field()
    label_field: str = options.label_field()
    pair_field: str | None = options.pair_field(
        "Sentence pairs: the field/column of each input's second text (as explain).",
    )
    evidence_field: str | None = options.evidence_field()
    sanity: int = option(
        DEFAULT_SANITY, "Model randomisation on the maps of this many of the sampled inputs (0: none): a method "
        "whose maps barely change when the model is destroyed is named.",
        lambda named, value: check.count(named, value, minimum=0), kind=int,
    )
    margin: float = option(
        DEFAULT_MARGIN, "How far below the most faithful method a cheaper one may be on every protocol to be "
        "recommended instead: a fraction of the way from random to it, at the worse end of the paired interval.",
        functools.partial(check.number, minimum=MARGIN_RANGE[0], maximum=MARGIN_RANGE[1]), kind=float,
    )
    output: str | None = option(
        None, "A folder to write records.jsonl, report.json, report.md and report.html into.", options.path_or_none,
        flags=("--output", "-o"), metavar="DIR",
    )
    resume: bool = option(
        False, "Keep each method's records in -o DIR/work as they are made, and continue what an interrupted "
        "run kept there (the same records, byte for byte, as an uninterrupted run's).", check.flag, kind=bool,
    )
    quick: bool = option(
        False, f"A first look: {QUICK_LIMIT} inputs, no sanity check, and the methods {QUICK_METHODS} "
        "(with --refs, contrastcat-lrp's cheap setting first): not with --method, --limit or --sanity.",
        check.flag, kind=bool, negatable=False,
    )
    as_json: bool = options.as_json("Print the JSON report on stdout instead of the table.")
    markdown: bool = option(
        False, "Print the table as report.md holds it (GitHub Markdown, every column, each interval whole).",
        check.flag, kind=bool, negatable=False, where="command",
    )
    all_columns: bool = option(
        False, "Print every column, those the ranking does not judge by too (default: the judged ones).",
        check.flag, kind=bool, negatable=False, where="command",
    )
    seed: int = options.seed("Seed of the sample, of the methods that draw (random, tis, contrastcat) and of the bootstrap.")
    bootstrap: int = options.bootstrap("Bootstrap resamples for each paired interval: 100 to 100000, or 0 (none).")
    ci: float = options.ci()
    batch_size: int = options.batch_size(16)

    def check_together(self) -> None:
        if self.resume and self.output is None:
            raise BadInput(f"{self.named('resume')} needs {self.bare('output')} DIR: the records are kept there")
        if self.as_json and self.markdown:
            raise BadInput(f"{self.named('as_json')} and {self.bare('markdown')} both print on stdout: pick one "
                           f"({self.bare('output')} DIR writes report.json and report.md)")
        given = [name for name in ("method", "limit", "sanity") if name in self.given]
        if self.quick and given:
            raise BadInput(f"{self.named('quick')} chooses the methods, the sample and the sanity check itself: "
                           f"drop {self.bare(given[0])}, or {self.bare('quick')}")

    def resolved(self) -> CompareOptions:
        """The options as the run takes them: with ``quick``, its methods, sample and no sanity check."""
        if not self.quick:
            return self
        methods = QUICK_WITH_LIBRARY if self.library is not None else QUICK_METHODS
        return dataclasses.replace(self, method=parse_choices(self.named("method"), methods), limit=QUICK_LIMIT,
                                   sanity=0, quick=False)


