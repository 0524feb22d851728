"""What the commands use when the user names no file: the card's two commands work as written.

    contrastcat build-refs --model minilm-rt          # writes ./refs.h5
    contrastcat explain input.jsonl -o attr.jsonl     # uses ./refs.h5 and its model

- ``build-refs`` without ``-o`` writes :data:`DEFAULT_LIBRARY` in the current
  directory. A file already there is replaced only when it is a library of the
  same model (by name, loaded source or weights); anything else (another
  model's library, a file that is no library) is refused: ``-o`` says to
  replace it.
- ``explain`` without ``--refs`` and ``--model`` uses ``./refs.h5`` and the
  model it was built for; with no ``./refs.h5``, the embedded
  :data:`DEFAULT_MODEL` and its library, built with ``build-refs``' defaults
  from the model's own training data on first use and cached beside the
  models (rebuilt when the model or the library format changes; any alias
  has such a library, ``api.cached_library``).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import arguments
from ..errors import BadInput, ContrastCatError
from ..spec import Names, backticked
from ..io.files import check_output_path
from ..models import Classifier
from ..models.aliases import lookup_alias
from ..models.precision import dtype_name
from ..records.data import LabelledData, load_labelled
from ..records.inputs import InputFields, rows_from_objects
from ..records.labels import resolve_label
from .build import BuildSettings, Progress, build_library
from .reader import RefLibrary
from .schema import LibraryInfo

DEFAULT_LIBRARY = "refs.h5"
DEFAULT_MODEL = "minilm-rt"


ADVICE = "build-refs without -o replaces only a library of the same model: pass -o to choose the file"


def replaceable(path: str | os.PathLike) -> LibraryInfo | None:
    """Before any work (the model not loaded yet): what ``path``, the default output, holds.
    None when nothing is there; a file that is no usable library is refused."""
    if not os.path.lexists(path):
        return None
    try:
        return RefLibrary(path).info
    except ContrastCatError as error:
        why = str(error).removeprefix(f"{path}: ")
        raise BadInput(f"{path}: exists and is not a usable reference library ({why}); {ADVICE}") from None


def check_same_model(path: str | os.PathLike, info: LibraryInfo | None, classifier: Classifier) -> None:
    """Refuse to replace the library ``info`` at ``path`` unless it was built for ``classifier``'s
    model: the same weights, the same source (a hub id, an absolute directory) or the same
    alias (an embedded model trained again replaces its library). Other names are not
    compared: ``./model`` in two directories is two models."""
    if info is None or classifier.fingerprint == info.model_fingerprint or classifier.source == info.model_source:
        return
    if lookup_alias(classifier.name) is not None and classifier.name == info.model:
        return
    raise BadInput(
        f"{path}: holds a library built for model {info.model!r} ({info.model_source}), not {classifier.name!r} "
        f"({classifier.source}); {ADVICE} (-o {path} replaces it)"
    )


def cached_library_path(name: str, weights: str = "float32") -> Path:
    """Where the default library of the model alias ``name`` with weights in ``weights`` is
    cached (see ``api.cached_library``): one file per precision, so runs at two ``--dtype``
    do not rebuild each other's."""
    from ..models.zoo import cache

    suffix = "" if weights == "float32" else f"-{weights}"
    return cache.cache_root() / "libraries" / f"{name}{suffix}.h5"


def unnamed_sources() -> tuple[str | None, str | None]:
    """(library, model) for explain when the user names neither: ``./refs.h5`` (its model
    comes from it) if it exists, else the default embedded model (its library: the cached one)."""
    return (DEFAULT_LIBRARY, None) if os.path.lexists(DEFAULT_LIBRARY) else (None, DEFAULT_MODEL)


def cached_library(
    classifier: Classifier,
    progress: Progress | None = None,
    build: bool = True,
    notify: Callable[[str], None] | None = None,
    named: Names = backticked,
) -> tuple[RefLibrary, bool]:
    """:func:`contrastcat.api.cached_library` (documented there), its arguments checked;
    ``named`` spells an option as the caller does."""
    if lookup_alias(classifier.name) is None:
        raise BadInput(f"model {classifier.name!r} is not an alias, so it has no default library: use build_library")
    path = cached_library_path(classifier.name, dtype_name(classifier.dtype))
    why = "it is not built yet"
    if os.path.lexists(path):
        try:
            library = RefLibrary(path)
            library.check_model(classifier)
            return library, False
        except ContrastCatError as error:  # the cache's own file: an older format, another training, damage
            why = f"it cannot be used ({error})"
    if not build:
        raise BadInput(
            f"the default library of {classifier.name} is needed, but {why}: build it with one plain explain "
            f"run first (no torchrun, no {named('shard')}), or pass {named('library')}"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInput(f"{path.parent}: cannot hold the cached library ({error.strerror})") from None
    check_output_path(str(path))  # before the scan: a place that cannot be written fails now
    if notify:
        notify(f"building the default library of {classifier.name} from its training data (once; cached in {path})")
    found, split = labelled(classifier)
    build_library(classifier, found, path, BuildSettings(), split=split, progress=progress)
    return RefLibrary(path), True


@dataclass(frozen=True)
class DataFields:
    """How labelled data is read: its split and fields (None: the alias's data set's, else
    ``train``, ``text``, ``label``), at most ``max_scan`` rows, a pair's second text in ``pair_field``."""

    split: str | None = None
    text_field: str | None = None
    label_field: str | None = None
    max_scan: int | None = None
    pair_field: str | None = None

    @classmethod
    def of(cls, options) -> DataFields:
        """The fields of build-refs' options (or any options object holding them)."""
        return cls(*(getattr(options, f.name) for f in dataclasses.fields(cls)))


def labelled(
    classifier: Classifier, data=None, labels: Sequence[int | str] | None = None, fields: DataFields = DataFields(),
) -> tuple[LabelledData, str]:
    """(the labelled rows with where each was read, the split used): :func:`contrastcat.api.labelled_data`
    (documented there) returns their texts, labels, description and split."""
    split, text_field, label_field = fields.split, fields.text_field, fields.label_field
    max_scan, pair_field = fields.max_scan, fields.pair_field
    if data is None or isinstance(data, (str, os.PathLike)):
        alias = lookup_alias(classifier.name)
        source = alias.data if alias is not None and data is None else None
        if data is None and source is None:
            raise BadInput(f"data is required: model {classifier.name!r} has no default data set")
        found = load_labelled(
            str(data) if data is not None else source.spec,
            classifier.label_names,
            split=split or (source.split if source else "train"),
            fields=InputFields(text=text_field or (source.text_field if source else "text"),
                               label=label_field or (source.label_field if source else "label"), pair=pair_field),
            max_scan=max_scan,
        )
        return found, split or (source.split if source else "")
    text_field, label_field = text_field or "text", label_field or "label"
    items = list(arguments.collection("data", data, "texts or rows"))
    if labels is not None:
        labels = list(arguments.collection("labels", labels, "labels"))
        if len(labels) != len(items):
            raise BadInput(f"{len(items)} texts but {len(labels)} labels")
        pairs = [isinstance(item, tuple) for item in items]
        if any(pairs):
            if not all(pairs):
                odd = pairs.index(not pairs[0])
                raise BadInput(f"data: item {odd}: sentence pairs and single texts mixed (item 0 is "
                               f"{'a pair' if pairs[0] else 'a single text'}): a library holds one kind")
            pair_field = pair_field or next(k for k in ("pair", "second text") if k not in (text_field, label_field))
        items = [_labelled_item(i, item, label, text_field, label_field, pair_field) for i, (item, label) in enumerate(zip(items, labels))]
    rows = rows_from_objects(items, InputFields(text_field, "id", label_field, pair_field), source="data")
    if any(row.label is None for row in rows):
        missing = next(i for i, row in enumerate(rows) if row.label is None)
        raise BadInput(f"data: item {missing}: no label ({label_field!r})")
    resolved = [resolve_label(row.label, classifier.label_names, f"data: item {row.line - 1}") for row in rows]
    texts = [row.text if row.pair is None else (row.text, row.pair) for row in rows][:max_scan]
    where = [f"data: item {row.line - 1}" for row in rows][: len(texts)]
    return LabelledData(texts, resolved[: len(texts)], "python objects", where), split or ""


def _labelled_item(index: int, item, label, text_field: str, label_field: str, pair_field: str | None) -> dict:
    """A text or a (text, pair) tuple given beside its label, as a row."""
    if isinstance(item, tuple):
        if len(item) != 2:
            raise BadInput(f"data: item {index}: a sentence pair is a (text, pair) tuple of two strings, got {len(item)} items")
        return {text_field: item[0], pair_field: item[1], label_field: label}
    return {text_field: item, label_field: label}  # anything else: rows_from_objects says what is wrong
