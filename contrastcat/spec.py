"""Command options, each defined once: the flag, the keyword argument and its check.

A command's options are one frozen dataclass whose fields are made with :func:`option`: the
field's name is the Python keyword, its metadata holds the help, the flags, the metavar and
the check. From that one definition

- the command line gets its flags (``contrastcat_cli``: a Typer parameter per field),
- the public call gets its keyword arguments (``read`` with :class:`InCall`) and its
  signature (:func:`signature`, for ``help()`` and notebooks),
- the use case gets a typed object whose every value was checked once, when it was read.

A check takes the option's name as the caller spells it (``evaluate_file: min_tokens`` from
Python, ``--min-tokens`` from the shell) and the value, and returns the value to use or raises
:class:`BadInput` naming it that way: nothing rewrites a message afterwards.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from .errors import BadInput

Check = Callable[[str, Any], Any]
# An option's name -> as the caller spells it later in a message (``min_tokens``, ``--min-tokens``):
# what a use case passes down to the code whose messages name an option.
Names = Callable[[str], str]


def backticked(name: str) -> str:
    """The :data:`Names` of code called without options: ```min_tokens```."""
    return f"`{name}`"


SAME = object()  # the command line's default is the call's
# What an option's value is, for the shells' completion: a file or folder name. A tuple of values
# completes those; None, free text. A check may say it (its ``completes``: ``arguments.one_of``'s
# values, ``arguments.path``'s PATH), so an option declared with it needs no word more.
PATH = "path"
REQUIRED = object()  # no default: the call's positional argument, the command line's argument


def unchecked(named: str, value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Option:
    """One option as the command line, the call and the docs see it."""

    name: str  # the keyword argument, and the field of the options object
    default: Any
    help: str
    check: Check
    flags: tuple[str, ...]  # the first is how the command line names it in a message
    kind: type  # what the command line parses the text into: str, int, float or bool
    metavar: str | None = None
    negatable: bool = True  # a bool as --x/--no-x; False: --x alone, off unless given
    where: str = "both"  # "both", "command" (the shell's alone: how it prints) or "call"
    shown_default: Any = SAME  # the default as the command line spells it (a list as "a,b")
    argument: bool = False  # the command line's positional argument (never a flag)
    show_default: bool = True
    hidden: bool = False  # left out of the command's --help (an option for tests)
    # A check made once every option was read and checked together (whether a file named exists):
    # what is wrong with the options themselves is said first.
    after: Check | None = None
    annotation: Any = inspect.Parameter.empty  # the call's type (default: the field's), for its signature
    completes: tuple[str, ...] | str | None = None  # PATH, the values the shells offer, or None (free text)
    # A method's option (methods.options): the types the call may pass, the values it allows and
    # the least number; its options' dataclass checks them, so its ``check`` passes values on.
    accepts: tuple[type, ...] = ()
    choices: tuple[str, ...] | None = None
    minimum: int | None = None

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def command_default(self) -> Any:
        return self.default if self.shown_default is SAME else self.shown_default


def option(
    default: Any,
    help: str,
    check: Check = unchecked,
    *,
    flags: tuple[str, ...] = (),
    kind: type = str,
    **more: Any,
) -> Any:
    """A dataclass field that is an option. ``flags`` default to ``--name-with-dashes``; ``more``:
    ``metavar``, ``negatable``, ``where``, ``shown_default``, ``argument``, ``show_default``, ``hidden``,
    ``after``, ``completes``."""
    unknown = set(more) - {f.name for f in dataclasses.fields(Option)}
    if unknown:
        raise TypeError(f"option() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    metadata = {"help": help, "check": check, "flags": flags, "kind": kind, **more}
    return dataclasses.field(default=default, metadata=metadata)


class Caller:
    """How the one who passed the values names an option in a message."""

    def named(self, spec: Option) -> str:
        """The option where a message begins with it: ``evaluate_file: plot``, ``--plot``."""
        raise NotImplementedError

    def bare(self, spec: Option) -> str:
        """The option later in a message: ``plot``, ``--plot``."""
        raise NotImplementedError

    def unknown(self, name: str, known: tuple[str, ...]) -> str:
        raise NotImplementedError

    def spelled(self, name: str) -> str:
        """Any keyword name, as this caller spells an option: a method's options have no spec
        here, and are spelled as every option is (``refs_used``, ``--refs-used``)."""
        raise NotImplementedError


# What load_model takes; a function given a classifier points a caller who passes them there.
LOADING = ("device", "dtype", "model")


@dataclass(frozen=True)
class InCall(Caller):
    """A Python call: ``evaluate_file: min_tokens``."""

    function: str

    def named(self, spec: Option) -> str:
        return f"{self.function}: {spec.name}"

    def bare(self, spec: Option) -> str:
        return spec.name

    def unknown(self, name: str, known: tuple[str, ...]) -> str:
        if name in LOADING:  # a function given a classifier: the model was loaded already
            call = "contrastcat.load_model(name)" if name == "model" else f"contrastcat.load_model(name, {name}=...)"
            return (f"{self.function}: {name} is chosen where the model is loaded, not here: {call}, "
                    "then pass the classifier it returns")
        return f"{self.function}() got an unexpected keyword argument {name!r} (its options: {', '.join(known)})"

    def spelled(self, name: str) -> str:
        return name


@dataclass(frozen=True)
class OnCommandLine(Caller):
    """The shell: ``--min-tokens`` (the positional argument by its metavar)."""

    def named(self, spec: Option) -> str:
        return spec.metavar if spec.argument and spec.metavar else spec.flag

    def bare(self, spec: Option) -> str:
        return self.named(spec)

    def unknown(self, name: str, known: tuple[str, ...]) -> str:
        return f"no such option: {name}"

    def spelled(self, name: str) -> str:
        return "--" + name.replace("_", "-")


Options = TypeVar("Options", bound="CommandOptions")
# A long call's ``progress(phase, done, total)``: ``total`` None where the amount is not known.
Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True)
class CommandOptions:
    """Base of a command's options. ``read`` is the one place their values are checked; the
    options keep who passed them (``caller``), so a later message names an option as they do."""

    command: ClassVar[str] = ""  # the command's name, for messages
    # Checks of options several commands share, made together once each was read (the picture and
    # the report apart, resamples enough for the level, ...), before the command's own check_together.
    together: ClassVar[tuple[Callable[[Any], None], ...]] = ()
    caller: Caller = dataclasses.field(default=OnCommandLine(), repr=False, compare=False, kw_only=True)
    # The options the caller gave (a keyword passed; a flag on the command line), not left to their
    # default: an option that overrides others (compare's quick) refuses them given, even at their default.
    given: frozenset[str] = dataclasses.field(default=frozenset(), repr=False, compare=False, kw_only=True)

    @classmethod
    def specs(cls, where: str | None = None) -> tuple[Option, ...]:
        """Those the command line (``"command"``) or the call (``"call"``) takes; None: every one.
        A command's own options first, then those it shares with others (a base class's)."""
        found = []
        own = {name for klass in cls.__mro__ if klass.__dict__.get("command") for name in klass.__dict__.get(
            "__annotations__", {})}
        ordered = sorted(dataclasses.fields(cls), key=lambda f: f.name not in own)  # stable: each group in its order
        for f in ordered:
            if "check" not in f.metadata:
                continue
            meta = dict(f.metadata)
            flags = meta.pop("flags") or ("--" + f.name.replace("_", "-"),)
            meta.setdefault("annotation", f.type)  # what the call passes, where the field keeps it parsed
            if meta.get("completes") is None:  # said by its check where not by the option
                meta["completes"] = getattr(meta["check"], "completes", None)
            spec = Option(name=f.name, default=f.default, flags=tuple(flags), **meta)
            if where is None or spec.where in (where, "both"):
                found.append(spec)
        return tuple(found)

    @classmethod
    def read(
        cls: type[Options], values: Mapping[str, Any], caller: Caller, where: str = "call", only: tuple[str, ...] = (),
        defaulted: frozenset[str] = frozenset(),
    ) -> Options:
        """The options from ``values`` (by keyword; what is missing takes its default), each
        checked once and named in ``caller``'s terms; then :meth:`check_together`. ``only``: the
        options a call takes, where it takes fewer than the command; ``defaulted``: those in
        ``values`` the caller did not give (the command line's defaults)."""
        specs = tuple(spec for spec in cls.specs(where) if not only or spec.name in only)
        known = tuple(spec.name for spec in specs)
        for name in values:
            if name not in known:
                raise BadInput(caller.unknown(name, known))
        # What was not passed keeps its default, which is already the value to use.
        checked = {name: spec.check(caller.named(spec), values[name]) for spec in specs if (name := spec.name) in values}
        options = cls(**checked, caller=caller, given=frozenset(name for name in values if name not in defaulted))
        for check in cls.together:
            check(options)
        options.check_together()
        for spec in specs:
            value = getattr(options, spec.name)
            if spec.after is not None and value is not None and value is not REQUIRED:  # missing: said where it is needed
                spec.after(caller.named(spec), value)
        return options

    def check_together(self) -> None:
        """What one option cannot say alone (two outputs naming one file, flags that exclude each other)."""

    @classmethod
    def spec(cls, name: str) -> Option:
        return next(spec for spec in cls.specs() if spec.name == name)

    def named(self, name: str) -> str:
        """Option ``name`` as the caller spells it, where a message begins with it."""
        return self.caller.named(self.spec(name))

    def bare(self, name: str) -> str:
        """Option ``name`` as the caller spells it, later in a message."""
        return self.caller.bare(self.spec(name))

    def names(self, name: str) -> str:
        """The :data:`Names` a use case passes down: any option (a method's too) as the caller
        spells it, so code below the options names them that way and no message is rewritten."""
        known = {spec.name: spec for spec in self.specs()}
        return self.caller.bare(known[name]) if name in known else self.caller.spelled(name)


def signature(
    options: type[CommandOptions], positional: tuple[str, ...] = (), only: tuple[str, ...] = ()
) -> inspect.Signature:
    """The call's signature from the options (``help()``, notebooks' hints): ``positional`` first,
    in that order, then the others (or ``only`` those) by keyword."""
    specs = {spec.name: spec for spec in options.specs("call") if not only or spec.name in only}
    parameters = []
    for name in [*positional, *(name for name in specs if name not in positional)]:
        spec = specs[name]
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if name in positional else inspect.Parameter.KEYWORD_ONLY
        default = inspect.Parameter.empty if spec.default is REQUIRED else spec.default
        parameters.append(inspect.Parameter(name, kind, default=default, annotation=spec.annotation))
    return inspect.Signature(parameters)
