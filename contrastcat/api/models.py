"""Models and libraries by name: load_model, open_library, and the embedded models."""

from __future__ import annotations

import os
from typing import Any

from .. import arguments as check
from ..errors import BadInput
from ..library import RefLibrary
from ..models import Classifier
from ..spec import InCall
from ..usecases.prepare_model import PrepareOptions, run_prepare
from .signatures import with_signature


def load_model(
    model, tokenizer=None, device: str = "auto", dtype: str = "auto", *, name: str | None = None
) -> Classifier:
    """The classifier to explain, from any of:

    - a name: an alias (``minilm-rt``, ``roberta-sst2``, ...), a hub id or a local directory, loaded
      with eager attention (embedded models are trained on first use and cached);
    - a model already in memory with its tokenizer: ``load_model(model, tokenizer)``;
    - a ``transformers`` text-classification pipeline: ``load_model(pipe)``.

    A model in memory is used as it is: not copied, moved or cast (``device`` and ``dtype`` may only
    name what it already has); each pass switches it to eager attention and eval mode and puts its
    own setting back after. ``name`` is what records call it (default: the name it was loaded
    under). Its fingerprint is of its weights now: train it further and ``explain`` refuses it
    until it is loaded again.
    """
    import torch

    from ..models.resolve import load_classifier

    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str):
        if tokenizer is not None:
            raise BadInput(
                "load_model: tokenizer goes with a model object; a name or directory brings its own "
                f"(got {check.shown(tokenizer)})"
            )
        if name is not None:
            raise BadInput("load_model: name goes with a model object; a name or directory is its own name")
        if not model.strip() or "\0" in model:
            raise BadInput(f"load_model: name must be an alias, a hub id or a model directory, got {check.shown(model)}")
    elif not _in_memory(model):
        raise BadInput(
            "load_model: model must be an alias, a hub id, a model directory, a transformers model (with its "
            f"tokenizer) or a text-classification pipeline, got {check.shown(model)}"
        )
    if not isinstance(device, (str, torch.device)):
        raise BadInput(f"load_model: device must be a string (auto, cpu, cuda:0) or a torch.device, got {check.shown(device)}")
    if not isinstance(dtype, (str, torch.dtype)):
        raise BadInput(f"load_model: dtype must be a string (auto, float32, ...) or a torch.dtype, got {check.shown(dtype)}")
    if isinstance(model, str):
        return load_classifier(model, device, dtype=dtype)
    return _borrow(model, tokenizer, device, dtype, name)


def _in_memory(model) -> bool:
    import torch

    return isinstance(model, torch.nn.Module) or _is_pipeline(model)


def _is_pipeline(value) -> bool:
    try:
        from transformers import Pipeline
    except ImportError:  # pragma: no cover - transformers is a dependency
        return False
    return isinstance(value, Pipeline)


def _check_scores(pipeline) -> None:
    """A pipeline set to turn the logits into other scores than the model's own probabilities (a
    sigmoid for a single-label classifier, a softmax for a multi-label one, or the raw logits) is
    refused: every method and test here reads the probabilities the model's config says it gives,
    which that pipeline's user never sees."""
    from ..models.loading import MULTI_LABEL

    chosen = getattr(pipeline, "_postprocess_params", {}).get("function_to_apply")
    if chosen is None:  # the pipeline's default: the config's, else what its problem_type implies
        chosen = getattr(pipeline.model.config, "function_to_apply", None)
    spelled = str(getattr(chosen, "value", chosen)).lower()
    multi_label = getattr(pipeline.model.config, "problem_type", None) == MULTI_LABEL
    expected = "sigmoid" if multi_label else "softmax"
    if chosen is not None and spelled != expected and pipeline.model.config.num_labels > 1:
        kind = "a multi-label classifier (a sigmoid per label)" if multi_label else "a single-label classifier (softmax over the classes)"
        raise BadInput(
            f"load_model: the pipeline turns the model's outputs into {spelled} scores (function_to_apply), "
            f"not {expected} probabilities: its config says it is {kind}, and it is explained as that"
        )


def _borrow(model, tokenizer, device, dtype, name) -> Classifier:
    """A model object (or a pipeline's), wrapped without copying (``models.in_memory.borrow_classifier``)."""
    import torch

    from ..models.devices import resolve_device
    from ..models.in_memory import borrow_classifier
    from ..models.precision import DTYPES, dtype_name

    if _is_pipeline(model):
        task = str(getattr(model, "task", "") or "")
        if task not in ("text-classification", "sentiment-analysis"):
            raise BadInput(f"load_model: a {task or type(model).__name__!r} pipeline is not a text classifier")
        if tokenizer is not None and tokenizer is not model.tokenizer:
            raise BadInput("load_model: a pipeline brings its own tokenizer; pass the pipeline alone")
        _check_scores(model)
        model, tokenizer = model.model, model.tokenizer
    if not hasattr(model, "config"):
        from ..models.in_memory import held_classifier

        raise BadInput(
            f"load_model: model is a {type(model).__name__}, not a transformers model (it has no config)"
            f"{held_classifier(model)}"
        )
    if tokenizer is None:
        raise BadInput("load_model: a model object needs its tokenizer: load_model(model, tokenizer)")
    if name is None:
        name = str(getattr(model, "name_or_path", "") or getattr(model.config, "_name_or_path", "") or type(model).__name__)
    name = check.text("load_model: name", name)
    if not name.strip() or any(c in name for c in "\n\r\0"):
        raise BadInput(f"load_model: name must be a name on one line, got {check.shown(name)}")
    if dtype != "auto":
        spelled = dtype_name(dtype) if isinstance(dtype, torch.dtype) else dtype
        if spelled not in DTYPES:
            raise BadInput(f"load_model: dtype must be auto, {', '.join(DTYPES)} or a torch.dtype of them, got {check.shown(dtype)}")
    parameter = next(model.parameters(), None)
    if parameter is not None:
        has = parameter.device
        wanted = has if device == "auto" else device if isinstance(device, torch.device) else resolve_device(device)
        if wanted.type != has.type or wanted.index not in (None, has.index):
            raise BadInput(
                f"load_model: the model is on {has}, not {device}: contrastcat does not move a model it is given "
                f"(move it first: model.to({str(device)!r}))"
            )
        if dtype != "auto" and str(dtype).removeprefix("torch.") != dtype_name(parameter.dtype):
            raise BadInput(
                f"load_model: the model's weights are {dtype_name(parameter.dtype)}, not {dtype}: contrastcat does "
                f"not cast a model it is given (cast it first: model.to(torch.{str(dtype).removeprefix('torch.')}))"
            )
    return borrow_classifier(model, tokenizer, name=name)


def open_library(path: str | os.PathLike) -> RefLibrary:
    """A reference library written by ``build_library`` or ``contrastcat build-refs``, verified and held
    open until closed (``library.close()``, or ``with open_library(path) as library:``)."""
    return RefLibrary(check.path("open_library: path", path))


def prepare_model(name: str, **options: Any) -> str:
    """Fine-tune the embedded model ``name`` now and cache it (``load_model`` would on first use);
    one already prepared is kept (``notify`` hears what it scored) unless ``force``. Returns its
    cache folder. ``quick``: a few steps on a few hundred rows, for tests."""
    return run_prepare(PrepareOptions.read({"name": name, **options}, InCall("prepare_model")))


with_signature(prepare_model, PrepareOptions, ("name",))
