"""Resolve a model name (alias, hub id or local directory) and load it.

Loading never enables ``trust_remote_code`` and always asks for the eager
attention path, the only one that returns attention probabilities.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from dataclasses import dataclass
from collections.abc import Callable, Iterator
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForSequenceClassification, AutoTokenizer

from ..devices import resolve_device
from ..errors import BadInput, ModelUnavailable
from .adapters import Adapter, adapter_for, position_limit
from .aliases import ModelAlias, lookup_alias


@dataclass
class Classifier:
    """A loaded classifier and everything the pipeline needs to know about it."""

    model: torch.nn.Module
    tokenizer: object
    name: str  # as the user gave it (alias, hub id or path)
    source: str  # what was loaded: hub id or absolute path
    label_names: tuple[str, ...]
    fingerprint: str
    adapter: Adapter
    device: torch.device
    max_length: int  # tokens explained per input by default (the tokenizer's limit)
    position_limit: int  # the most tokens the model's position embeddings take (--max-length's ceiling)
    alias: ModelAlias | None = None

    @property
    def num_classes(self) -> int:
        return len(self.label_names)

    @property
    def num_layers(self) -> int:
        return self.adapter.num_layers

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)


def weights_fingerprint(model: torch.nn.Module) -> str:
    """Content hash of the parameters and buffers, independent of file format."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous()
        digest.update(name.encode())
        digest.update(str(flat.dtype).encode())
        digest.update(str(tuple(flat.shape)).encode())
        digest.update(flat.view(-1).view(torch.uint8).numpy().tobytes())
    return "sha256:" + digest.hexdigest()[:32]


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Keep transformers' own progress bars and notices off our stderr while loading."""
    logging = transformers.utils.logging
    verbosity = logging.get_verbosity()
    bars = logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or os.sep in name and not _is_hub_id(name)


def _is_hub_id(name: str) -> bool:
    parts = name.split("/")
    return len(parts) == 2 and all(parts) and not name.startswith((".", "/", "~"))


def _label_names(model: torch.nn.Module, alias: ModelAlias | None) -> tuple[str, ...]:
    config = model.config
    count = int(config.num_labels)
    from_config = tuple(str(config.id2label.get(i, f"LABEL_{i}")) for i in range(count))
    generic = all(label == f"LABEL_{i}" for i, label in enumerate(from_config))
    if alias and alias.label_names and generic and len(alias.label_names) == count:
        return alias.label_names
    return from_config


def resolve_source(name: str) -> tuple[str, ModelAlias | None]:
    """Map ``name`` to what ``from_pretrained`` should load."""
    alias = lookup_alias(name)
    if alias is not None:
        return alias.model_id, alias
    expanded = Path(name).expanduser()
    if expanded.is_dir():
        return str(expanded.resolve()), None
    if _looks_like_path(name) or expanded.exists():
        raise BadInput(f"model {name!r}: no such directory (give an alias, a hub id or a local model directory)")
    return name, None


def model_location(name: str) -> str | None:
    """The directory ``name`` loads from, where it is known without loading: a local
    directory, or an embedded model's cache entry (outputs must stay out of it)."""
    if not name:
        return None
    alias = lookup_alias(name)
    if alias is not None and alias.embedded:
        from ..zoo import cache

        return str(cache.entry_dir(name))
    expanded = Path(name).expanduser()
    return str(expanded) if expanded.is_dir() else None


def load_classifier(
    name: str,
    device: str | torch.device = "auto",
    progress: Callable[[str, int, int], None] | None = None,
    notify: Callable[[str], None] | None = None,
) -> Classifier:
    """Load an alias, hub id or local directory. Embedded aliases are trained on first
    use (``progress`` sees the training, ``notify`` gets one-line notices)."""
    target_device = device if isinstance(device, torch.device) else resolve_device(device)
    alias = lookup_alias(name)
    if alias is not None and alias.embedded:
        from ..zoo import load_embedded

        return load_embedded(name, target_device, progress, notify)
    source, alias = resolve_source(name)
    return load_pretrained(source, name=name, device=target_device, alias=alias)


def load_pretrained(
    source: str | Path, *, name: str, device: torch.device, alias: ModelAlias | None = None
) -> Classifier:
    """``from_pretrained`` on a hub id or a directory, with one-line errors."""
    source = str(source)
    is_local = Path(source).is_dir()
    try:
        with quiet_transformers(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch and transformers warn about odd configs on stderr
            tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=False)
            model = AutoModelForSequenceClassification.from_pretrained(
                source, trust_remote_code=False, attn_implementation="eager", dtype=torch.float32
            )
    except Exception as error:  # noqa: BLE001 - a damaged directory fails in many ways (safetensors, shapes, json)
        if is_local:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise BadInput(f"model {name!r}: cannot load {source}: {first}") from None
        if not isinstance(error, (OSError, ValueError)):
            raise
        raise ModelUnavailable(
            f"model {name!r} ({source}) is not in the local cache and the hub cannot be reached: "
            "run once with network access to cache it, or pass a local model directory"
        ) from None
    if not getattr(tokenizer, "is_fast", False):
        raise BadInput(f"model {name!r}: a fast tokenizer is needed for character offsets")
    return wrap_classifier(model, tokenizer, name=name, source=source, device=device, alias=alias)


def wrap_classifier(
    model: torch.nn.Module,
    tokenizer: object,
    *,
    name: str,
    source: str | None = None,
    device: str | torch.device = "cpu",
    alias: ModelAlias | None = None,
) -> Classifier:
    """Wrap an already loaded model (a notebook's, or a test's) as a :class:`Classifier`."""
    target_device = device if isinstance(device, torch.device) else resolve_device(device)
    if int(getattr(model.config, "num_labels", 0)) < 2:
        raise BadInput(f"model {name!r} has {model.config.num_labels} output(s): a classifier needs at least 2 classes")
    model.config._attn_implementation = "eager"
    model.eval()
    adapter = adapter_for(model)
    fingerprint = weights_fingerprint(model)
    model.to(target_device)
    positions = position_limit(model.config)
    tokenizer_limit = getattr(tokenizer, "model_max_length", positions) or positions
    return Classifier(
        model=model,
        tokenizer=tokenizer,
        name=name,
        source=source or name,
        label_names=_label_names(model, alias),
        fingerprint=fingerprint,
        adapter=adapter,
        device=target_device,
        max_length=int(min(positions, tokenizer_limit)),
        position_limit=positions,
        alias=alias,
    )
