"""The build-refs use case: a model named, its labelled data -> a library file.

Every refusal that needs no model comes first (the output is the data, a model file, or,
for the default ``./refs.h5``, a file that is no library), then the model loads, then a
default output holding another model's library is refused, then the scan.
"""

from __future__ import annotations

import warnings

from ..errors import BadInput, ContrastCatWarning
from ..io.files import check_output_path, is_standard_output
from ..library.build import BuildReport, build_library
from ..library.defaults import DEFAULT_LIBRARY, DataFields, check_same_model, labelled, replaceable
from ..models.loading import check_max_length
from ..models.resolve import load_classifier, model_location
from .options.build_refs import BuildRefsOptions


def build_refs(chosen: BuildRefsOptions) -> BuildReport:
    """Load the model, scan the data (None: the alias's own), write the library to the output
    (None: ``./refs.h5``, replaced only when it holds a library of the same model)."""
    output = chosen.output
    if is_standard_output(output):
        raise BadInput(f"{chosen.named('output')} {output}: a library is an HDF5 file and cannot go to standard output")
    default = output is None  # the default file: replaced only if it holds this model's library
    output = DEFAULT_LIBRARY if default else output
    check_output_path(output, [chosen.data, model_location(chosen.model)])
    existing = replaceable(output) if default else None  # a file that is no library: refused before the model loads
    progress, notify = chosen.progress, chosen.notify
    classifier = load_classifier(chosen.model, chosen.device, progress=progress, notify=notify, dtype=chosen.dtype)
    if classifier.adapter.warning:
        warnings.warn(classifier.adapter.warning, ContrastCatWarning, stacklevel=2)
    check_same_model(output, existing, classifier)
    check_max_length(classifier, chosen.max_length, chosen.named("max_length"))  # before the data loads
    found, split_used = labelled(classifier, chosen.data, None, DataFields.of(chosen))
    return build_library(classifier, found, output, chosen.settings, split=split_used, progress=progress)
