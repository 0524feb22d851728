"""The explain command's method flags, generated from the methods' option definitions.

Every option a registered method defines (``contrastcat.api.choices.option_specs``)
becomes one flag with that definition's default, help and minimum; the values
reach the command as one ``method_options`` dict. A new method with an option
therefore needs nothing here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated

import typer

from contrastcat.api import choices

from .spec import completes


def _names(spec) -> str:
    """A boolean option is a pair of flags, --name/--no-name."""
    return f"{spec.flag}/--no-{spec.flag[2:]}" if spec.kind is bool else spec.flag


def with_method_options(command: Callable, after: str = "method") -> Callable:
    """``command`` with one keyword flag per method option, inserted after its ``after`` parameter."""
    specs = list(choices.option_specs().values())
    signature = inspect.signature(command, eval_str=True)  # its annotations are strings in its own module
    flags = [
        inspect.Parameter(
            spec.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=spec.default,
            annotation=Annotated[spec.kind, typer.Option(_names(spec), help=spec.help, min=spec.minimum)],
        )
        for spec in specs
    ]
    parameters = []
    for parameter in signature.parameters.values():
        if parameter.name == "method_options":
            continue
        parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
        if parameter.name == after:
            parameters += flags

    def run(**values):
        chosen = {spec.name: values.pop(spec.name) for spec in specs}
        return command(**values, method_options=chosen)

    run.__name__, run.__doc__, run.__module__ = command.__name__, command.__doc__, command.__module__
    run.__signature__ = signature.replace(parameters=parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    run.completes = {**getattr(command, "completes", {}), **completes(specs)}  # type: ignore[attr-defined]
    return run
