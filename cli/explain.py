"""contrastcat explain: token attributions for each input."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from contrastcat.errors import BadInput
from contrastcat.files import check_output_path
from contrastcat.records import read_inputs, write_records
from contrastcat.refine import RHO_RULES

from .common import (
    BatchOption,
    DeviceOption,
    QuietOption,
    info,
    load_model,
    phased_progress,
    reports_errors,
)

EPILOG = """\
Examples:

\b
  contrastcat explain reviews.jsonl --refs refs.h5 -o attr.jsonl
  contrastcat explain reviews.csv --text-field review --refs refs.h5 -o - | contrastcat render -
  contrastcat explain reviews.jsonl --method attcat --model bert-sst2 -o attcat.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --method contrastcat,attcat,rollout -o all.jsonl
  contrastcat explain reviews.jsonl --refs refs.h5 --refs-used 5 --layers 3 --no-refine -o ablation.jsonl
  contrastcat explain --list-methods
"""


def _list_methods(value: bool) -> None:
    if not value:
        return
    from rich.console import Console

    from contrastcat.methods import list_methods, method_options

    table = Table(show_header=True, box=None)
    for column in ("method", "needs --refs", "options", "description"):
        table.add_column(column)
    for method in list_methods():
        options = ", ".join("--" + name.replace("_", "-") for name in method_options(method.name))
        table.add_row(method.name, "yes" if method.uses_library else "no", options or "-", method.summary)
    Console(highlight=False).print(table)
    raise typer.Exit(0)


def _model_of(library) -> str:
    """The model a library was built with: its alias, else the directory it loaded, else its hub id."""
    from contrastcat.models import lookup_alias

    if lookup_alias(library.info.model) is not None:
        return library.info.model
    source = library.info.model_source
    return source if Path(source).is_dir() else library.info.model


@reports_errors
def explain(
    input_path: Annotated[
        str | None, typer.Argument(metavar="INPUT", help="JSONL or CSV with a text field; - for stdin.")
    ] = None,
    output: Annotated[str, typer.Option("--output", "-o", help="Records (JSONL); - for stdout.")] = "-",
    refs: Annotated[str | None, typer.Option(help="Reference library from build-refs (needed by contrastcat).")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Default: the library's model.")] = None,
    method: Annotated[
        str,
        typer.Option(
            help="Attribution method, a comma list, or all: one record per input and method (see --list-methods)."
        ),
    ] = "contrastcat",
    refs_used: Annotated[int, typer.Option(min=0, help="Contrast-CAT: references per input (K); 0 is AttCAT.")] = 30,
    refine: Annotated[bool, typer.Option(help="Contrast-CAT: keep maps by deletion test (--no-refine: average all).")] = True,
    rho: Annotated[str, typer.Option(help=f"Contrast-CAT deletion threshold: {', '.join(RHO_RULES)}.")] = "mean+std",
    deletion_grid: Annotated[
        int, typer.Option(min=2, help="Contrast-CAT deletion test at round(g*T), g = linspace(0, 1, N)[1:].")
    ] = 10,
    attention: Annotated[
        bool, typer.Option(help="Contrast-CAT: weight layers by attention received (--no-attention drops alpha).")
    ] = True,
    reference_select: Annotated[
        str,
        typer.Option(
            help="Contrast-CAT references: contrast (other classes, f_c < gamma), same (the target's class) "
            "or random (random training rows, seeded); same/random need build-refs --pools."
        ),
    ] = "contrast",
    layers: Annotated[str, typer.Option(help="CAT family: all layers, or the last N.")] = "all",
    ig_steps: Annotated[int, typer.Option(min=1, help="Integrated gradients: quadrature nodes.")] = 50,
    ig_baseline: Annotated[str, typer.Option(help="Integrated gradients baseline: zero or pad.")] = "zero",
    clusters: Annotated[int, typer.Option(min=1, help="TIS: k-means clusters (masks) per input.")] = 32,
    target: Annotated[str, typer.Option(help="Class to explain: pred, gold (the input's label) or an index.")] = "pred",
    text_field: Annotated[str, typer.Option(help="Name of the text field/column.")] = "text",
    id_field: Annotated[str, typer.Option(help="Name of the id field/column (default: line number).")] = "id",
    label_field: Annotated[str, typer.Option(help="Name of the label field/column.")] = "label",
    mask_special: Annotated[
        bool, typer.Option(help="Reference-code quirk: zero special tokens in the attribution pass's mask.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of random, tis and --reference-select random.")] = 0,
    batch_size: BatchOption = 16,
    device: DeviceOption = "auto",
    quiet: QuietOption = False,
    list_methods_: Annotated[
        bool,
        typer.Option("--list-methods", is_eager=True, callback=_list_methods, help="List methods and exit."),
    ] = False,
) -> None:
    """Attribute each input's predicted (or chosen) class to its tokens; writes one JSON record per input and method."""
    # Imported here, not at the top: torch and transformers would make every --help slow.
    from contrastcat.explain import ExplainOptions, check_library, parse_target
    from contrastcat.explain import explain as run_explain
    from contrastcat.library import RefLibrary
    from contrastcat.methods import build_method, check_options, parse_method_list

    if input_path is None:
        raise BadInput("missing INPUT (a .jsonl or .csv file, or - for standard input)")
    check_output_path(output)
    names = parse_method_list(method)  # unknown names fail before any loading
    rows = read_inputs(input_path, text_field=text_field, id_field=id_field, label_field=label_field)
    options = dict(
        refs_used=refs_used,
        refine=refine,
        rho=rho,
        deletion_grid=deletion_grid,
        attention=attention,
        reference_select=reference_select,
        layers=layers,
        ig_steps=ig_steps,
        ig_baseline=ig_baseline,
        clusters=clusters,
        seed=seed,
    )
    check_options(**options)
    methods = [build_method(name, **options) for name in names]
    library = RefLibrary(refs) if refs is not None else None
    check_library(methods, library)  # before the model loads: a wrong call fails fast
    if model is None:
        if library is None:
            raise BadInput("--model is required when no --refs library is given")
        model = _model_of(library)
    classifier = load_model(model, device, quiet)
    chosen_target = parse_target(target, classifier.num_classes)
    source = "<stdin>" if input_path == "-" else input_path
    with phased_progress(quiet) as report:
        done = 0

        def advance(count: int) -> None:
            nonlocal done
            done += count
            report("explaining", done, len(rows))

        records = run_explain(
            classifier,
            rows,
            methods,
            library if any(m.uses_library for m in methods) else None,
            target=chosen_target,
            options=ExplainOptions(batch_size=batch_size, mask_special=mask_special),
            source=source,
            progress=advance,
        )
        written = write_records(output, records)
    if output != "-":
        info(f"wrote {written} record(s) to {output}", quiet)
