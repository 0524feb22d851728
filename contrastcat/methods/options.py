"""Method options: one frozen dataclass per method, the single definition of each option.

A field made with :func:`option` carries its help text, allowed values and
minimum. Validation runs once, when the dataclass is made; ``settings()``
(what records store) is derived from the fields; the CLI's flags, their help
and the shell completions are generated from the same definitions
(``contrastcat_cli``), so a new method with an option touches its own file
and the registry only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass
from typing import Any

from ..arguments import shown
from ..errors import BadInput
from ..deletion.names import MEASURES, PERTURBATIONS, RHO_NAMES, SCORE_RULES
from ..spec import Names, Option, backticked, unchecked

MAX_INTEGER = 2**32 - 1


# One option, whether a command's or a method's (:class:`contrastcat.spec.Option`): a method's
# option is made from its dataclass field (:meth:`MethodOptions.specs`), flag and completion included.
OptionSpec = Option


def option(default: Any, help: str, *, choices: tuple[str, ...] | None = None, minimum: int | None = None, why: str = "",
           completes: tuple[str, ...] | None = None):
    """A dataclass field with its CLI metadata. ``why`` ends the message for a value
    below ``minimum`` (default: "must be at least N"); ``completes``: the values the shells offer
    where they are not ``choices`` (those are offered)."""
    metadata = {"help": help, "choices": choices, "minimum": minimum, "why": why, "completes": completes or choices}
    return dataclasses.field(default=default, metadata=metadata)


def _of_type(value: Any, kind: type) -> bool:
    """isinstance, where a bool is not a number (JSON true must not pass for a count)."""
    if kind is bool:
        return isinstance(value, bool)
    if kind in (int, float):
        return isinstance(value, int if kind is int else (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


@dataclass(frozen=True)
class MethodOptions:
    """Base of every method's options. Subclasses are frozen dataclasses of :func:`option` fields.

    ``named`` (not a field: only passed to the checks) spells an option in messages as the
    caller does: ``--refs-used`` from the shell, ``refs_used`` from Python (default: in backticks)."""

    named: InitVar[Names | None] = dataclasses.field(default=None, kw_only=True)

    def __post_init__(self, named: Names | None = None) -> None:
        named = named or backticked
        self._check_types(type(self).__name__)
        for spec in self.specs():
            value = getattr(self, spec.name)
            if spec.choices is not None and value not in spec.choices:
                raise BadInput(f"{named(spec.name)} must be one of {', '.join(spec.choices)}, got {shown(value)}")
            if spec.minimum is not None and value < spec.minimum:
                why = self._why(spec.name) or f"must be at least {spec.minimum}"
                raise BadInput(f"{named(spec.name)} {why}")
            if isinstance(value, float) and not math.isfinite(value):
                raise BadInput(f"{named(spec.name)} must be a finite number, got {shown(value)}")
            if isinstance(value, int) and not isinstance(value, bool) and value > MAX_INTEGER:
                # No count or seed here means anything this large: a typo, refused before it overflows.
                raise BadInput(f"{named(spec.name)} must be at most {MAX_INTEGER}, got {shown(value)}")
        self.check(named)

    def check(self, named: Names) -> None:
        """Checks that a single field's metadata cannot say (override); ``named`` spells an option."""

    @classmethod
    def _check_values(cls, owner: str, values: dict, named: Names | None = None) -> None:
        for spec in cls.specs():
            value = values.get(spec.name, spec.default)
            if not any(_of_type(value, kind) for kind in spec.accepts):
                expected = " or ".join(kind.__name__ for kind in spec.accepts)
                name = named(spec.name) if named is not None else spec.name
                raise BadInput(f"{owner}: option {name} must be {expected}, got {shown(value)}")

    def _check_types(self, owner: str) -> None:
        self._check_values(owner, {name: getattr(self, name) for name in self.names()})

    @classmethod
    def _why(cls, name: str) -> str:
        return next(f.metadata.get("why", "") for f in dataclasses.fields(cls) if f.name == name)

    @classmethod
    def specs(cls) -> tuple[OptionSpec, ...]:
        known = {"bool": bool, "int": int, "float": float, "str": str}
        specs = []
        for f in dataclasses.fields(cls):
            accepts = tuple(known[part.strip()] for part in str(f.type).split("|"))
            specs.append(Option(
                name=f.name,
                default=f.default,
                help=f.metadata.get("help", ""),
                check=unchecked,  # the options' dataclass checks every value, with the others
                flags=("--" + f.name.replace("_", "-"),),
                kind=accepts[0],
                accepts=accepts,
                choices=f.metadata.get("choices"),
                minimum=f.metadata.get("minimum"),
                completes=f.metadata.get("completes"),
            ))
        return tuple(specs)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def typed(cls, values: Mapping[str, object], spelled: Names = str) -> dict[str, object]:
        """``values`` as this method takes them, where they were written as text (a variant's
        ``name[refs_used=20]``; the shell's flags are typed by Click from the same
        :class:`~contrastcat.spec.Option`): each read as its option's type; values of other types,
        and names the method lacks, as given (under ``spelled``'s name), for :meth:`build` to refuse."""
        specs = {spec.name: spec for spec in cls.specs()}
        found: dict[str, object] = {}
        for name, value in values.items():
            spec = specs.get(name)
            if spec is None:  # refused by build, under the name as written (``REFS-USED``)
                found[spelled(name)] = value
                continue
            if isinstance(value, str) and str not in spec.accepts:
                if spec.kind is bool and value.lower() in ("true", "false"):
                    value = value.lower() == "true"
                elif spec.kind in (int, float):
                    try:
                        value = spec.kind(value)
                    except ValueError:
                        pass
            found[name] = value
        return found

    @classmethod
    def build(cls, method: str, named: Names | None = None, **values) -> MethodOptions:
        """The options of ``method`` from keyword values; an unknown name is an error that lists
        the valid ones. ``named``: how the caller spells an option (see the class)."""
        unknown = sorted(set(values) - set(cls.names()))
        if unknown:
            valid = ", ".join(cls.names()) or "none"
            raise BadInput(f"method {method} has no option {unknown[0]!r} (its options: {valid})")
        cls._check_values(f"method {method}", values, named)
        return cls(**values, named=named)

    def settings(self) -> dict:
        """What a record's ``settings`` holds for this method (its options, as JSON values)."""
        return {name: getattr(self, name) for name in self.names()}


@dataclass(frozen=True)
class NoOptions(MethodOptions):
    """For the methods that take none."""


# --- each method's options, read by the command line and the checks without importing any method ---

IG_BASELINES = ("zero", "pad")
RHO_CHOICES = RHO_NAMES
REFERENCE_SELECTIONS = ("contrast", "same", "random", "contrast+random")
MIXED = "contrast+random"


# More digits than any layer count has: refused as text, never read as a number (Python refuses
# to read a number of over 4,300 digits, with a ValueError that is no message for a user).
LAYER_DIGITS = 9


def parse_layers(layers: str | int, named: Names = backticked) -> int | None:
    """``all`` (None) or the number of last layers to use (the paper's Figure 5A)."""
    digits = isinstance(layers, str) and layers.isascii() and layers.isdigit() and len(layers) <= LAYER_DIGITS
    if (isinstance(layers, int) and not isinstance(layers, bool)) or digits:
        if 1 <= int(layers) < 10**LAYER_DIGITS:
            return int(layers)
    elif layers == "all":
        return None
    raise BadInput(f"{named('layers')} must be all or a positive number of last layers, got {shown(layers)}")


LAYERS_HELP = "CAT family: all layers, or the last N."
LAYERS_OFFERED = ("all", "1", "2", "3")  # completed by the shells; any count of last layers is taken


@dataclass(frozen=True)
class LayeredOptions(MethodOptions):
    """Options with a ``layers`` field: checked once, recorded as "all" or a count."""

    def check(self, named: Names) -> None:
        parse_layers(self.layers, named)

    def settings(self) -> dict:
        values = super().settings()
        count = parse_layers(self.layers)
        values["layers"] = "all" if count is None else count
        return values


@dataclass(frozen=True)
class CATOptions(LayeredOptions):
    layers: str | int = option("all", LAYERS_HELP, completes=LAYERS_OFFERED)

    @property
    def layer_count(self) -> int | None:
        return parse_layers(self.layers)


@dataclass(frozen=True)
class ContrastCATOptions(LayeredOptions):
    refs_used: int = option(30, "Contrast-CAT: references per input (K); 0 is AttCAT.", minimum=0,
                            why="must be 0 (AttCAT) or more")
    refine: bool = option(True, "Contrast-CAT: keep maps by deletion test (--no-refine: average all).")
    rho: str = option("mean+std", f"Contrast-CAT deletion threshold: {', '.join(RHO_CHOICES)}.", choices=RHO_CHOICES)
    deletion_grid: int = option(10, "Contrast-CAT deletion test at round(g*T), g = linspace(0, 1, N)[1:].", minimum=2)
    attention: bool = option(True, "Contrast-CAT: weight layers by attention received (--no-attention drops alpha).")
    reference_select: str = option(
        "contrast",
        "Contrast-CAT references: contrast (other classes, f_c < gamma), same (the target's class), "
        "random (random training rows, seeded) or contrast+random (half each); same needs "
        "build-refs --pools same,random.",
        choices=REFERENCE_SELECTIONS,
    )
    layers: str | int = option("all", LAYERS_HELP, completes=LAYERS_OFFERED)
    seed: int = option(0, "Seed of random, tis and the random references (--reference-select, contrastcat-plus).")
    test_steps: str = option(
        "all",
        "Contrast-CAT: the deletion test's steps, 1-based among the grid's (e.g. 3 or 2,5): fewer forward "
        "passes, beyond the paper; all: the paper's test.",
    )

    test_measure: str = option(
        "probability",
        "Contrast-CAT deletion test's drop: probability (the paper's) or log-odds of the target, which "
        "still moves where a confident model's probability stays at 1; beyond the paper.",
        choices=MEASURES,
    )

    def check(self, named: Names) -> None:
        super().check(named)
        parse_steps(self.test_steps, self.deletion_grid, named)

    def settings(self) -> dict:
        values = super().settings()
        steps = parse_steps(self.test_steps, self.deletion_grid)
        if steps is None:  # the paper's test: records say nothing new (and match earlier ones)
            values.pop("test_steps")
        else:
            values["test_steps"] = ",".join(map(str, steps))
        if self.test_measure == "probability":  # likewise
            values.pop("test_measure")
        if not self.refine:  # no deletion test ran: its steps and measure had no effect
            values.pop("test_steps", None)
            values.pop("test_measure", None)
        return values


def parse_steps(spec: str, grid: int, named: Names = backticked) -> tuple[int, ...] | None:
    """``"all"`` (or every step named) -> None; ``"2,5"`` -> (2, 5): sorted, each once, each a step of the grid."""
    if spec == "all":
        return None
    parts = [part.strip() for part in str(spec).split(",")]
    if not all(part.isascii() and part.isdigit() for part in parts):
        raise BadInput(f"{named('test_steps')} must be all or step numbers like 2,5, got {shown(spec)}")
    # A number of thousands of digits is out of range, and Python refuses to convert it.
    steps = tuple(sorted({int(part) if len(part) <= 9 else grid for part in parts}))
    if any(not 1 <= step < grid for step in steps):
        raise BadInput(f"{named('test_steps')} must name steps 1 to {grid - 1} of the deletion grid, got {shown(spec)}")
    return None if steps == tuple(range(1, grid)) else steps  # every step named is the paper's test


@dataclass(frozen=True)
class ContrastCATPlusOptions(LayeredOptions):
    candidates: int = option(60, "contrastcat-plus: references per input, so candidate maps (K).", minimum=1)
    pool: str = option(
        "contrast+random",
        "contrastcat-plus references: contrast+random (K - K//2 contrasting, K//2 random rows), "
        "contrast, same or random; same needs build-refs --pools same,random.",
        choices=REFERENCE_SELECTIONS,
    )
    top_maps: int = option(1, "contrastcat-plus: average the N maps with the largest drop score.", minimum=1)
    refine_score: str = option(
        "morf-lerf",
        "contrastcat-plus drop score: morf-lerf (MoRF drop minus LeRF drop; twice the deletion "
        "inputs) or morf (the paper's).",
        choices=SCORE_RULES,
    )
    magnitude: bool = option(
        False, "contrastcat-plus: also try |map| of each reference as a candidate (the sign problem)."
    )
    deletion_grid: int = option(10, "Contrast-CAT deletion test at round(g*T), g = linspace(0, 1, N)[1:].", minimum=2)
    attention: bool = option(True, "Contrast-CAT: weight layers by attention received (--no-attention drops alpha).")
    layers: str | int = option("all", LAYERS_HELP, completes=LAYERS_OFFERED)
    seed: int = option(0, "Seed of random, tis and the random references (--reference-select, contrastcat-plus).")


@dataclass(frozen=True)
class IntegratedGradientsOptions(MethodOptions):
    ig_steps: int = option(50, "Integrated gradients: quadrature nodes.", minimum=1)
    ig_baseline: str = option("zero", "Integrated gradients baseline: zero or pad.", choices=IG_BASELINES)


@dataclass(frozen=True)
class RandomOptions(MethodOptions):
    seed: int = option(0, "Seed of random, tis and --reference-select random.")


@dataclass(frozen=True)
class OcclusionOptions(MethodOptions):
    occlude: str = option(
        "delete", "Occlusion: how a token is taken out: delete, or replace by mask, pad or unk (as --perturb).",
        choices=PERTURBATIONS,
    )


@dataclass(frozen=True)
class TISOptions(MethodOptions):
    clusters: int = option(32, "TIS: k-means clusters (masks) per input.", minimum=1)
    seed: int = option(0, "Seed of random, tis and --reference-select random.")




# Each method's options, by its name, in the paper's Table 1 order (``registry.METHODS`` holds the
# methods themselves, in the same order: a test holds the two equal).
METHOD_OPTIONS: dict[str, type[MethodOptions]] = {
    "contrastcat": ContrastCATOptions,
    "contrastcat-plus": ContrastCATPlusOptions,
    "contrastcat-lrp": ContrastCATOptions,
    "attcat": CATOptions,
    "cat": CATOptions,
    "tis": TISOptions,
    "rawatt": NoOptions,
    "rollout": NoOptions,
    "att-grads": NoOptions,
    "att-x-att-grads": NoOptions,
    "grad-sam": NoOptions,
    "generic-attention": NoOptions,
    "full-lrp": NoOptions,
    "partial-lrp": NoOptions,
    "transatt": NoOptions,
    "attnlrp": NoOptions,
    "integrated-gradients": IntegratedGradientsOptions,
    "input-x-gradient": NoOptions,
    "gradient-norm": NoOptions,
    "occlusion": OcclusionOptions,
    "random": RandomOptions,
}
ALL = "all"  # in a method list: every method


def method_names() -> tuple[str, ...]:
    """Every registered method, in the paper's order (``all`` in a method list means these)."""
    return tuple(METHOD_OPTIONS)


# What Captum's and inseq's users call the methods this tool has under another name (keys spelt as
# ``_spelling`` makes them): pointed to, not accepted, so that a record's method has one name.
OTHER_NAMES = {
    "saliency": ("gradient-norm", "Captum's and inseq's saliency, on the embeddings"),
    "gradientl2": ("gradient-norm", "the gradient L2 of Bastings et al."),
    "gradientxinput": ("input-x-gradient", None),
    "attention": ("rawatt", "inseq's attention"),
    "attentionrollout": ("rollout", None),
    "transformerattribution": ("transatt", "Chefer et al.'s Transformer Attribution"),
    "lrp": ("attnlrp", "LRP for transformers"),
    "featureablation": ("occlusion", "one token at a time"),
    "leaveoneout": ("occlusion", None),
}


def _spelling(name: str) -> str:
    """A method name without case, hyphens, underscores or spaces: ``Integrated_Gradients`` is integratedgradients."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def suggested_method(name: str) -> str | None:
    """The method a mistyped or foreign name most likely means (None: no good guess): the same name
    spelt otherwise (Captum's ``IntegratedGradients``, inseq's ``integrated_gradients``), another
    library's name for it, or the closest name by letters (``contrastcta``)."""
    import difflib

    spelt = _spelling(name)
    for known in METHOD_OPTIONS:
        if _spelling(known) == spelt:
            return known
    if spelt in OTHER_NAMES:
        return OTHER_NAMES[spelt][0]
    close = difflib.get_close_matches(name.lower(), METHOD_OPTIONS, n=1, cutoff=0.75)
    return close[0] if close else None


def check_method_name(name: str) -> None:
    if name not in METHOD_OPTIONS:
        guess = suggested_method(name) if isinstance(name, str) else None
        other = OTHER_NAMES.get(_spelling(name), (None, None))[1] if guess else None
        hint = "" if guess is None else f"; did you mean {guess!r}{f' ({other})' if other else ''}?"
        raise BadInput(f"unknown method {name!r}{hint} (available: {', '.join(METHOD_OPTIONS)})")


def method_options(name: str) -> tuple[str, ...]:
    """The option names method ``name`` takes (none for most baselines)."""
    check_method_name(name)
    return METHOD_OPTIONS[name].names()


def option_specs() -> dict[str, OptionSpec]:
    """Every method option by name, once: the CLI's method flags and the completions come from here.

    Methods that share an option (``layers``, ``seed``) must define it alike:
    a clash is a programming error, raised here.
    """
    found: dict[str, OptionSpec] = {}
    for options in METHOD_OPTIONS.values():
        for spec in options.specs():
            seen = found.setdefault(spec.name, spec)
            if (seen.kind, seen.default, seen.choices, seen.completes) != (spec.kind, spec.default, spec.choices,
                                                                          spec.completes):
                raise TypeError(f"option {spec.name!r} is defined two ways ({seen} and {spec})")
    return found


def check_options(named: Names | None = None, **options) -> None:
    """Refuse a bad option value even when no chosen method takes that option (the CLI's flags
    are shared by all methods): each method's options are built from the values it takes."""
    for name, cls in METHOD_OPTIONS.items():
        cls.build(name, named, **{key: value for key, value in options.items() if key in cls.names()})


def parse_method_list(spec: str | Sequence[str], named: Names = backticked) -> list[str]:
    """``a,b,c`` (or a list of names) -> known method names, in order, without repeats; ``all`` is
    every method. The one reading of a method list, for the CLI and the API alike."""
    parts = [part.strip() for item in ([spec] if isinstance(spec, str) else spec) for part in item.split(",")]
    parts = [part for part in parts if part]
    names = list(dict.fromkeys(name for part in parts for name in (METHOD_OPTIONS if part == ALL else [part])))
    if not names:
        raise BadInput(f"{named('method')} needs at least one method name")
    for name in names:
        check_method_name(name)
    return names
