"""A command's flags, generated from its options (``contrastcat.spec``): one Typer parameter per
option the command line takes, with the option's flags, help, metavar and default. Nothing is
checked here but the type the text parses into: each value is checked once, when the public
call reads the options, and a message names the flag (``--min-tokens must ...``)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from contrastcat.api import REQUIRED, CommandOptions, Option

def _parameter(spec: Option) -> inspect.Parameter:
    kind: Any = spec.kind if spec.command_default is not None else spec.kind | None
    if spec.argument:
        info = typer.Argument(metavar=spec.metavar, help=spec.help, show_default=spec.show_default)
    else:
        flags = spec.flags
        if spec.kind is bool and spec.negatable:
            flags = (f"{spec.flag}/--no-{spec.flag[2:]}", *spec.flags[1:])
        info = typer.Option(
            *flags, help=spec.help, metavar=spec.metavar, show_default=spec.show_default, hidden=spec.hidden
        )
    default = inspect.Parameter.empty if spec.command_default is REQUIRED else spec.command_default
    return inspect.Parameter(spec.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[kind, info])


def command(options: type[CommandOptions], run: Callable[[dict[str, Any]], None], doc: str) -> Callable:
    """A Typer command taking ``options``' flags: ``run`` gets the values by option name."""

    def parsed(**values: Any) -> None:
        return run(values)

    parameters = [_parameter(spec) for spec in options.specs("command")]
    parsed.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    parsed.__annotations__ = {p.name: p.annotation for p in parameters}
    parsed.__doc__ = doc
    parsed.__name__ = options.command.replace("-", "_")
    parsed.completes = completes(options.specs("command"))  # type: ignore[attr-defined]
    return parsed


def completes(specs) -> dict[str, Any]:
    """What each option's value completes to, by its name, as declared (``Option.completes``): the
    completion scripts read it from the command (Typer keeps a command's function's attributes)."""
    return {spec.name: spec.completes for spec in specs if spec.completes is not None}


def defaulted() -> frozenset[str]:
    """The options of the running command left at their defaults (no flag given): read with the
    values, an option that overrides others can tell a flag given at its default from none."""
    try:  # Typer may run on its own copy of Click (typer._click), whose context is not click's
        from typer._click.core import ParameterSource
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context
        from click.core import ParameterSource

    context = get_current_context(silent=True)
    if context is None:  # called outside a command (a test calling the function itself)
        return frozenset()
    return frozenset(name for name in context.params if context.get_parameter_source(name) is ParameterSource.DEFAULT)
