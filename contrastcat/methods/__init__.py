"""The method registry: one entry per attribution method.

Registration is explicit (this table), so which methods exist never depends
on which modules happened to be imported.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..deletion.refine import RefineSettings
from ..errors import BadInput
from ..spec import Names, backticked
from ..scaling import minmax
from .attention import (
    AttentionGradients,
    AttentionTimesGradients,
    GenericAttention,
    GradSAM,
    RawAttention,
    Rollout,
)
from .base import AttributionMethod, Candidates, ReferenceSource, input_seed
from .cat import (
    CAT,
    REFERENCE_SELECTIONS,
    RHO_CHOICES,
    AttCAT,
    ContrastCAT,
    contrast_maps,
)
from .contrast_lrp import ContrastLRP
from .contrast_plus import ContrastCATPlus
from .gradients import IG_BASELINES, InputXGradient, IntegratedGradients
from .lrp import AttnLRP, FullLRP, PartialLRP, TransAtt
from .options import MethodOptions, OptionSpec, option
from .random import RandomScores
from .tis import TIS

# The paper's Table 1 order: activation-based, attention-based, LRP-based, then the rest.
METHODS: dict[str, type[AttributionMethod]] = {
    method.name: method
    for method in (
        ContrastCAT,
        ContrastCATPlus,
        ContrastLRP,
        AttCAT,
        CAT,
        TIS,
        RawAttention,
        Rollout,
        AttentionGradients,
        AttentionTimesGradients,
        GradSAM,
        GenericAttention,
        FullLRP,
        PartialLRP,
        TransAtt,
        AttnLRP,
        IntegratedGradients,
        InputXGradient,
        RandomScores,
    )
}


def list_methods() -> list[type[AttributionMethod]]:
    return list(METHODS.values())


def method_class(name: str) -> type[AttributionMethod]:
    try:
        return METHODS[name]
    except KeyError:
        raise BadInput(f"unknown method {name!r} (available: {', '.join(METHODS)})") from None


def method_options(name: str) -> tuple[str, ...]:
    """The option names method ``name`` takes (none for most baselines)."""
    return method_class(name).Options.names()


def build_method(name: str, named: Names | None = None, **options) -> AttributionMethod:
    """Method ``name`` with ``options``; a name it does not take is an error listing the ones it
    does. ``named``: how the caller spells an option in a message (``--refs-used``)."""
    cls = method_class(name)
    return cls(cls.Options.build(name, named, **options))


def build_methods(
    names: Sequence[str], shared: bool = False, named: Names | None = None, **options
) -> list[AttributionMethod]:
    """Several methods from one set of options: each gets the ones it takes. An option
    that no method defines is an error listing the valid ones; so is one that none of
    ``names`` takes, unless ``shared`` (the CLI's flags apply to whichever methods take them)."""
    if len(names) == 1 and not shared:
        return [build_method(names[0], named, **options)]  # its own options are the ones to list
    known = option_specs()
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise BadInput(f"no method has an option {unknown[0]!r} (options: {', '.join(known)})")
    check_options(named, **options)
    unused = sorted(set(options) - {key for name in names for key in method_options(name)})
    if unused and not shared:
        raise BadInput(f"option {unused[0]!r} is not an option of {', '.join(names)}")
    return [
        build_method(name, named, **{key: value for key, value in options.items() if key in method_options(name)})
        for name in names
    ]


def option_specs() -> dict[str, OptionSpec]:
    """Every method option by name, once: the CLI's method flags and the completions come from here.

    Methods that share an option (``layers``, ``seed``) must define it alike:
    a clash is a programming error, raised here.
    """
    found: dict[str, OptionSpec] = {}
    for cls in METHODS.values():
        for spec in cls.Options.specs():
            seen = found.setdefault(spec.name, spec)
            if (seen.kind, seen.default, seen.choices) != (spec.kind, spec.default, spec.choices):
                raise TypeError(f"option {spec.name!r} is defined two ways ({seen} and {spec})")
    return found


def check_options(named: Names | None = None, **options) -> None:
    """Refuse a bad option value even when no chosen method takes that option (the CLI's flags
    are shared by all methods): each method's options are built from the values it takes."""
    for cls in METHODS.values():
        cls.Options.build(cls.name, named, **{key: value for key, value in options.items() if key in cls.Options.names()})


def register(cls: type[AttributionMethod]) -> type[AttributionMethod]:
    """Add a method (an extension's, or a test's) to the registry; its options join the CLI's flags
    in apps built afterwards (``contrastcat_cli.app.build_app``)."""
    if cls.name in METHODS:
        raise BadInput(f"a method named {cls.name!r} is already registered")
    METHODS[cls.name] = cls
    try:
        option_specs()
    except TypeError:
        del METHODS[cls.name]
        raise
    return cls


def unregister(name: str) -> None:
    METHODS.pop(name, None)


def recorded_refinement(name: str, settings) -> RefineSettings | None:
    """How the method a record names chose among its candidate maps, read from the record's
    ``settings`` (None: it chose nothing by a deletion test — no test, one map, every map kept —
    or it is not a method of this registry, or its settings are not this version's, or the record
    was made elsewhere)."""
    cls = METHODS.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(settings, dict) or settings.get("made_elsewhere") is True:
        return None  # another tool's map under one of these names chose nothing by this test
    try:  # a record's settings also hold the run's (mask_special): a method takes only its own
        method = cls(**{key: value for key, value in settings.items() if key in cls.Options.names()})
    except (BadInput, TypeError, ValueError):
        return None
    return method.refinement if method.selects_by_deletion else None


ALL = "all"


def parse_method_list(spec: str | Sequence[str], named: Names = backticked) -> list[str]:
    """``a,b,c`` (or a list of names) -> known method names, in order, without repeats; ``all`` is
    every method. The one reading of a method list, for the CLI and the API alike."""
    parts = [part.strip() for item in ([spec] if isinstance(spec, str) else spec) for part in item.split(",")]
    parts = [part for part in parts if part]
    names = list(dict.fromkeys(name for part in parts for name in (METHODS if part == ALL else [part])))
    if not names:
        raise BadInput(f"{named('method')} needs at least one method name")
    for name in names:
        method_class(name)
    return names


__all__ = [
    "CAT",
    "IG_BASELINES",
    "METHODS",
    "REFERENCE_SELECTIONS",
    "RHO_CHOICES",
    "TIS",
    "AttCAT",
    "AttentionGradients",
    "AttentionTimesGradients",
    "AttnLRP",
    "AttributionMethod",
    "Candidates",
    "ContrastCAT",
    "ContrastCATPlus",
    "ContrastLRP",
    "FullLRP",
    "GenericAttention",
    "GradSAM",
    "InputXGradient",
    "IntegratedGradients",
    "RandomScores",
    "RawAttention",
    "ReferenceSource",
    "Rollout",
    "MethodOptions",
    "PartialLRP",
    "TransAtt",
    "OptionSpec",
    "build_method",
    "build_methods",
    "check_options",
    "contrast_maps",
    "input_seed",
    "list_methods",
    "method_class",
    "method_options",
    "option",
    "option_specs",
    "register",
    "unregister",
    "minmax",
    "parse_method_list",
]
