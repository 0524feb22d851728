"""Reference libraries: build_library (a loaded classifier), build_refs (the command), cached_library."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from .. import arguments as check
from ..io.files import check_output_path
from ..library import RefLibrary
from ..library import build_library as _build_library
from ..library.build import BuildReport, Progress
from ..library.defaults import DEFAULT_LIBRARY, DataFields, check_same_model, replaceable
from ..library.defaults import cached_library as _cached_library
from ..library.defaults import labelled as _labelled
from ..models import Classifier
from ..spec import InCall
from ..usecases.options.build_refs import BuildRefsOptions
from ..usecases.build_refs import build_refs as _build_refs
from ..usecases.checks import classifier_arg, model_directory
from .signatures import with_signature


# What building a library for a classifier in memory takes of the command's options.
IN_MEMORY = (
    "split", "text_field", "label_field", "pair_field", "k", "keep", "gamma", "min_tokens", "max_scan", "pools",
    "seed", "store_dtype", "strict_gamma", "batch_size", "forward_dtype", "max_length", "progress",
)


def build_library(
    classifier: Classifier,
    path: str | os.PathLike | None = None,
    data=None,
    labels: Sequence[int | str] | None = None,
    **options: Any,
) -> RefLibrary:
    """Pick references per class (docs/spec.md §2) and store their activations at ``path``.

    ``path`` None: ``refs.h5`` in the current directory, as ``build-refs`` without ``-o``
    (a file already there is replaced only if it is a library of the same model).

    ``data``: a ``--data`` spelling (a JSONL/CSV file, ``hub_name[:config]``,
    ``corpus:NAME``), a list of texts with ``labels``, or rows (dicts or a
    ``datasets.Dataset``) with ``text_field`` and ``label_field`` (None: ``text`` and
    ``label``, or the fields of the alias's data set). ``data`` None: the alias's own
    data set (``minilm-rt``: its Rotten Tomatoes training split). The other keyword arguments
    are ``build-refs``' options (``k`` is ``--min-refs``).

    Sentence pairs (a pair classifier's library): texts as ``(text, pair)`` tuples, or rows and
    files with the second text in ``pair_field``.
    """
    chosen = BuildRefsOptions.read(options, InCall("build_library"), only=IN_MEMORY)  # before the model's checks
    classifier = classifier_arg("build_library", classifier)
    if isinstance(data, (str, os.PathLike)):
        data = check.path("build_library: data", data)
    elif data is not None:
        check.collection("build_library: data", data, "texts or rows")
    # The same refusals as build-refs: the data, the model's files and a non-library are never replaced.
    if path is None:
        path = DEFAULT_LIBRARY
        check_output_path(path, [data if isinstance(data, str) else None, model_directory(classifier)])
        check_same_model(path, replaceable(path), classifier)
    else:
        path = check.path("build_library: path", path)
        check_output_path(path, [data if isinstance(data, str) else None, model_directory(classifier)])
    found, split_used = _labelled(classifier, data, labels, DataFields.of(chosen))
    _build_library(classifier, found, path, chosen.settings, split=split_used, progress=chosen.progress)
    return RefLibrary(path)


def build_refs(
    model: str | os.PathLike,
    output: str | os.PathLike | None = None,
    data: str | os.PathLike | None = None,
    **options: Any,
) -> BuildReport:
    """``contrastcat build-refs`` from Python: load the model named ``model``, scan ``data`` (a file,
    ``hub_name[:config]``, ``corpus:NAME``; None: the alias's own) and write the library to ``output``
    (None: ``./refs.h5``, replaced only when it holds a library of the same model). Returns what
    was selected (``report.selection``: per class, the rows stored and how many passed gamma).
    The other keyword arguments are the command's options (``k`` is ``--min-refs``)."""
    values = {"model": model, "output": output, "data": data, **options}
    return _build_refs(BuildRefsOptions.read(values, InCall("build_refs")))


def run_build_refs(options: BuildRefsOptions) -> BuildReport:
    """``contrastcat build-refs`` on options read already (the command line reads its flags so)."""
    return _build_refs(options)


def cached_library(
    classifier: Classifier,
    progress: Progress | None = None,
    build: bool = True,
    notify: Callable[[str], None] | None = None,
) -> tuple[RefLibrary, bool]:
    """(library, built now) of a model known by its alias (``minilm-rt``, ``bert-sst2``, ...): what
    ``explain`` uses with no library named. The cached one (one per weights' precision) if it is
    readable and made for these weights; else built now with ``build_library``'s defaults from
    the alias's own training data and cached (``defaults.cached_library_path``; ``notify`` hears
    of it first). With ``build=False`` (several processes at once, each of which would build its
    own, different library) a missing or unusable one is an error."""
    return _cached_library(
        classifier_arg("cached_library", classifier),
        progress=check.callback("cached_library: progress", progress),
        build=check.flag("cached_library: build", build),
        notify=check.callback("cached_library: notify", notify),
    )


# What reading a library's labelled data takes of build-refs' options.
DATA = ("split", "text_field", "label_field", "max_scan", "pair_field")


def labelled_data(classifier: Classifier, data=None, labels: Sequence[int | str] | None = None, **options: Any):
    """(texts, class ids, description, split) for a library: ``data`` as ``build_library`` takes it;
    None: the alias's own data set, whose split and fields are the defaults. Sentence pairs
    (``pair_field``, or ``(text, pair)`` tuples given) come back as ``(text, pair)`` tuples."""
    chosen = BuildRefsOptions.read(options, InCall("labelled_data"), only=DATA)
    found, split_used = _labelled(classifier_arg("labelled_data", classifier), data, labels, DataFields.of(chosen))
    return found.texts, found.labels, found.description, split_used


with_signature(build_library, BuildRefsOptions, ("classifier", "path", "data", "labels"), only=IN_MEMORY)
with_signature(build_refs, BuildRefsOptions, ("model", "output", "data"))
with_signature(labelled_data, BuildRefsOptions, ("classifier", "data", "labels"), only=DATA)
