"""The method registry: one entry per attribution method, the classes themselves.

Registration is explicit (this table), so which methods exist never depends on which modules
happened to be imported. Each method's options are also listed, without the method, in
``options.METHOD_OPTIONS``: the command line's flags and the option checks read that table
and import no method (a test holds the two equal; :func:`register` adds to both).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..deletion.refine import RefineSettings
from ..errors import BadInput
from ..spec import Names
from .attention import (
    AttentionGradients,
    AttentionTimesGradients,
    GenericAttention,
    GradSAM,
    RawAttention,
    Rollout,
)
from .base import AttributionMethod
from .cat import CAT, AttCAT, ContrastCAT
from .contrast_lrp import ContrastLRP
from .contrast_plus import ContrastCATPlus
from .gradients import GradientNorm, InputXGradient, IntegratedGradients
from .lrp import AttnLRP, FullLRP, PartialLRP, TransAtt
from .occlusion import Occlusion
from .options import METHOD_OPTIONS, check_method_name, check_options, method_options, option_specs
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
        GradientNorm,
        Occlusion,
        RandomScores,
    )
}


def list_methods() -> list[type[AttributionMethod]]:
    return list(METHODS.values())


def method_class(name: str) -> type[AttributionMethod]:
    check_method_name(name)
    return METHODS[name]


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


def register(cls: type[AttributionMethod]) -> type[AttributionMethod]:
    """Add a method (an extension's, or a test's) to the registry; its options join the CLI's flags
    in apps built afterwards (``contrastcat_cli.app.build_app``)."""
    if cls.name in METHODS:
        raise BadInput(f"a method named {cls.name!r} is already registered")
    METHODS[cls.name] = cls
    METHOD_OPTIONS[cls.name] = cls.Options
    try:
        option_specs()
    except TypeError:
        unregister(cls.name)
        raise
    return cls


def unregister(name: str) -> None:
    METHODS.pop(name, None)
    METHOD_OPTIONS.pop(name, None)


def recorded_method(name: str, settings) -> AttributionMethod | None:
    """The method a record names, with the options its ``settings`` hold (None: not a method of
    this registry, settings not this version's, or a record made elsewhere under its name)."""
    cls = METHODS.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(settings, dict) or settings.get("made_elsewhere") is True:
        return None  # another tool's map under one of these names chose nothing by this test
    try:  # a record's settings also hold the run's (mask_special): a method takes only its own
        return cls(**{key: value for key, value in settings.items() if key in cls.Options.names()})
    except (BadInput, TypeError, ValueError):
        return None


def recorded_refinement(name: str, settings) -> RefineSettings | None:
    """How the method a record names chose among its candidate maps, read from the record's
    ``settings`` (None: it chose nothing by a deletion test — no test, one map, every map kept —
    or it is not a method of this registry, or its settings are not this version's, or the record
    was made elsewhere)."""
    method = recorded_method(name, settings)
    return method.refinement if method is not None and method.selects_by_deletion else None
