"""The build-refs use case: a model named, its labelled data -> a library file.

Every refusal that needs no model comes first (the output is the data, a model file, or,
for the default ``./refs.h5``, a file that is no library), then the model loads, then a
default output holding another model's library is refused, then the scan.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from ..errors import BadInput, ContrastCatWarning
from ..io.files import check_output_path, is_standard_output
from ..models.loading import check_max_length
from ..models.resolve import load_classifier, model_location
from .build import BuildReport, BuildSettings, Progress, build_library
from .defaults import DEFAULT_LIBRARY, check_same_model, labelled, replaceable


def build_refs(
    model: str,
    output: str | None,
    options: BuildSettings,
    *,
    data: str | None = None,
    split: str | None = None,
    text_field: str | None = None,
    label_field: str | None = None,
    pair_field: str | None = None,
    max_scan: int | None = None,
    device: str = "auto",
    dtype: str = "auto",
    progress: Progress | None = None,
    notify: Callable[[str], None] | None = None,
) -> BuildReport:
    """Load ``model``, scan ``data`` (None: the alias's own), write the library to ``output``
    (None: ``./refs.h5``, replaced only when it holds a library of the same model)."""
    if is_standard_output(output):
        raise BadInput(f"-o {output}: a library is an HDF5 file and cannot go to standard output")
    chosen = output is None  # the default file: replaced only if it holds this model's library
    output = DEFAULT_LIBRARY if chosen else output
    check_output_path(output, [data, model_location(model)])
    existing = replaceable(output) if chosen else None  # a file that is no library: refused before the model loads
    classifier = load_classifier(model, device, progress=progress, notify=notify, dtype=dtype)
    if classifier.adapter.warning:
        warnings.warn(classifier.adapter.warning, ContrastCatWarning, stacklevel=2)
    check_same_model(output, existing, classifier)
    check_max_length(classifier, options.max_length)  # before the data loads
    found, split_used = labelled(classifier, data, None, split, text_field, label_field, max_scan, pair_field)
    return build_library(
        classifier, found.texts, found.labels, output, options, data=found.description, split=split_used,
        progress=progress, where=found.where,
    )
