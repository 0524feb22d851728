"""Arguments every public call takes alike: a classifier, a library, records.

Classifiers and libraries are imported where they are checked: checking records (all that
rendering a file needs) must not load torch and h5py."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import arguments as check
from ..errors import BadInput
from ..records.record import AttributionRecord, check_record

if TYPE_CHECKING:
    from ..library import RefLibrary
    from ..models import Classifier


def classifier_arg(function: str, value) -> Classifier:
    from ..models import Classifier
    from ..models.in_memory import check_unchanged

    if isinstance(value, (str, os.PathLike)):
        raise BadInput(
            f"{function}: classifier is the name {check.shown(os.fspath(value))}; load it first: "
            f"contrastcat.load_model({check.shown(os.fspath(value))})"
        )
    classifier = check.instance(f"{function}: classifier", value, Classifier, " (from contrastcat.load_model)")
    check_unchanged(classifier, function)
    return classifier


def library_arg(function: str, value) -> RefLibrary | None:
    """A library, or a path to one (opened and verified here), or None."""
    from ..library import RefLibrary

    if value is None or isinstance(value, RefLibrary):
        return value
    if isinstance(value, (str, os.PathLike)):
        return RefLibrary(check.path(f"{function}: library", value))
    raise BadInput(
        f"{function}: library must be a RefLibrary (contrastcat.open_library) or a path to one, got {check.shown(value)}"
    )


def records_arg(function: str, value) -> list[AttributionRecord]:
    items = list(check.collection(f"{function}: records", value, "records"))
    for index, item in enumerate(items):
        if not isinstance(item, AttributionRecord):
            raise BadInput(
                f"{function}: records: item {index} is {check.shown(item, 40)}, not an AttributionRecord "
                "(contrastcat.explain returns them; contrastcat.read_records reads a file of them)"
            )
        # Built or changed by hand: checked as a file's line would be (finite scores, one per token, ...).
        values = item.to_dict()
        values["token_ids"] = values["token_ids"] or None  # made elsewhere: none yet
        check_record(values, f"{function}: records: item {index}", index + 1)
    return items


def model_directory(classifier: Classifier) -> str | None:
    return classifier.source if os.path.isdir(classifier.source) else None
