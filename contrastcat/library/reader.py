"""Reading a reference library file (its format: schema.py), verified: the format, every attribute, every checksum, and the model it was built for."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import h5py
import numpy as np
import torch

from ..errors import BadInput, LibraryMismatch
from .schema import (
    ATTRIBUTE_TYPES,
    CHECKSUM,
    FORMAT,
    REQUIRED_ATTRIBUTES,
    SCHEMA_VERSION,
    LibraryInfo,
    ReferenceEntry,
    array_checksum,
    attribute_fits,
    content_fingerprint,
    decode_attribute,
    group_path,
)


class RefLibrary:
    """A reference library opened for reading and verified; activations load lazily per class."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        if not Path(self.path).is_file():
            what = ("not a regular file" if os.path.exists(self.path)
                    else "a symbolic link to nothing" if os.path.islink(self.path) else "no such reference library file")
            raise BadInput(f"{self.path}: {what}")
        self._cache: dict[tuple[str, str], torch.Tensor] = {}
        try:
            with h5py.File(self.path, "r") as file:
                self.info = self._read_info(file)
                self._entries = {
                    group_path("contrast", int(name)): self._read_entries(group)
                    for name, group in file["classes"].items()
                }
                if "same" in self.info.pools:
                    for name, group in file["pools/same"].items():
                        self._entries[group_path("same", int(name))] = self._read_entries(group)
                if "random" in self.info.pools:
                    self._entries[group_path("random", 0)] = self._read_entries(file["pools/random"])
        except BadInput:
            raise
        except (OSError, KeyError, TypeError, ValueError, RuntimeError, AttributeError) as error:
            raise BadInput(f"{self.path}: not a readable reference library ({_first_line(error)})") from None
        classes = len(self.info.label_names)
        stray = [key for key in self._entries if key.startswith("classes/") and not 0 <= int(key.split("/")[1]) < classes]
        if stray:
            raise self._damaged(f"it holds {stray[0]} but names only {classes} classes")
        absent = [c for c in range(classes) if group_path("contrast", c) not in self._entries]
        if absent:
            raise self._damaged(f"it names {classes} classes but holds no references for class {absent[0]}")

    def _read_info(self, file: h5py.File) -> LibraryInfo:
        attrs = {key: decode_attribute(value) for key, value in file.attrs.items()}
        if attrs.get("format") != FORMAT:
            raise BadInput(f"{self.path}: not a contrastcat reference library (no format marker)")
        version = attrs.get("schema_version")
        if version == 1:
            raise BadInput(
                f"{self.path}: library schema version 1 (contrastcat 0.1) has no checksums, so it cannot be "
                "verified; rebuild it with build-refs"
            )
        if version != SCHEMA_VERSION:
            raise BadInput(
                f"{self.path}: library schema version {version} is not supported "
                f"(expected {SCHEMA_VERSION}); rebuild it with build-refs"
            )
        if not attrs.get("fingerprint"):
            raise BadInput(f"{self.path}: library has no fingerprint, so it cannot be verified; rebuild it with build-refs")
        missing = [key for key in REQUIRED_ATTRIBUTES if key not in attrs]
        if missing:
            raise BadInput(
                f"{self.path}: not a complete reference library (no root attribute {missing[0]!r}); "
                "rebuild it with build-refs"
            )
        if content_fingerprint(file) != attrs["fingerprint"]:
            raise self._damaged(f"its content does not match its fingerprint {attrs['fingerprint']}")
        values = {key: attrs[key] for key in (f.name for f in fields(LibraryInfo)) if key in attrs}
        for key, kind in ATTRIBUTE_TYPES.items():
            value = values.get(key)
            if key in ("pools", "scan_dtype", "inputs") and value is None:
                continue
            if not attribute_fits(value, kind):
                raise BadInput(f"{self.path}: root attribute {key!r} must be {kind}, got {value!r}")
            if kind in ("a count", "a positive count"):
                values[key] = int(value)
            elif kind == "a number":
                values[key] = float(value)
        values["label_names"] = tuple(json.loads(values["label_names"]))
        values["pools"] = tuple(json.loads(values.get("pools", "[]")))
        if not values["label_names"]:
            raise BadInput(f"{self.path}: root attribute 'label_names' names no class")
        return LibraryInfo(**values)

    def _damaged(self, why: str) -> BadInput:
        return BadInput(f"{self.path}: the library is damaged ({why}); rebuild it with build-refs")

    def _read_entries(self, group: h5py.Group) -> list[ReferenceEntry]:
        texts = [decode_attribute(t) for t in group["text"][()]]
        if (self.info.inputs == "pairs") != ("pair" in group):
            raise self._damaged(f"{group.name} {'lacks' if 'pair' not in group else 'holds'} the pairs' second texts")
        pairs = [decode_attribute(t) for t in group["pair"][()]] if "pair" in group else [None] * len(texts)
        sizes = {len(group[key]) for key in ("f_c", "below_gamma", "label", "source_row", "length", "token_ids")}
        if sizes != {len(texts)} or len(pairs) != len(texts):
            raise self._damaged(f"the datasets of {group.name} do not hold one entry per reference each")
        if any(not isinstance(t, str) for t in texts) or any(p is not None and not isinstance(p, str) for p in pairs):
            raise self._damaged(f"{group.name} holds a text that is not a string")
        return [
            ReferenceEntry(
                f_c=float(f),
                below_gamma=bool(b),
                label=int(label),
                source_row=int(row),
                length=int(length),
                text=text,
                token_ids=tuple(int(i) for i in ids),
                pair=pair,
            )
            for f, b, label, row, length, text, ids, pair in zip(
                group["f_c"][()],
                group["below_gamma"][()],
                group["label"][()],
                group["source_row"][()],
                group["length"][()],
                texts,
                group["token_ids"][()],
                pairs,
            )
        ]

    @property
    def fingerprint(self) -> str:
        return self.info.fingerprint

    def entries(self, target: int, pool: str = "contrast") -> list[ReferenceEntry]:
        if pool != "contrast" and pool not in self.info.pools:
            wanted = ",".join(p for p in ("same", "random") if p in self.info.pools or p == pool)
            raise BadInput(
                f"{self.path}: this library has no {pool!r} reference pool; "
                f"rebuild it with `pools` {wanted}"
            )
        return self._entries.get(group_path(pool, target), [])

    def require_pool(self, pool: str, at_least: int = 0, asked: str = "`refs_used`") -> None:
        """Fail early, before any model pass, when ``pool`` is not in this library or
        holds fewer than ``at_least`` references for some class (``asked``: the option
        that asked for them, for the message)."""
        self.entries(0, pool)
        if at_least <= 0:
            return
        targets = [0] if pool == "random" else range(len(self.info.label_names))
        sizes = {target: self.pool_size(pool, target) for target in targets}
        smallest = min(sizes, key=sizes.get)
        if sizes[smallest] < at_least:
            which = "" if pool == "random" else f" for class {self.info.label_names[smallest]!r}"
            raise BadInput(
                f"{asked} reads {at_least} references from the {pool!r} pool{which}; {self.path} holds "
                f"only {sizes[smallest]}: ask for fewer, or rebuild the library with build-refs --keep {at_least}"
                + (f" --min-refs {at_least}" if pool == "contrast" else "")
            )

    def pool_size(self, pool: str, target: int) -> int:
        return len(self.entries(target, pool))

    def check_inputs(self, pairs: bool) -> None:
        """Refuse sentence pairs against a library of single texts, and the other way round:
        the references must be inputs of the kind the model is explained on."""
        if pairs != (self.info.inputs == "pairs"):
            have, given = ("sentence pairs", "single texts") if not pairs else ("single texts", "sentence pairs")
            raise LibraryMismatch(
                f"{self.path}: the library's references are {have}, the inputs {given}: build the library "
                f"from {given} ({'build-refs --pair-field' if pairs else 'build-refs without --pair-field'})"
            )

    def check_model(self, classifier) -> None:
        """Refuse a library built for other weights, or whose shapes do not fit the model."""
        loaded = str(classifier.dtype).removeprefix("torch.")
        if loaded != self.info.model_dtype:
            raise LibraryMismatch(
                f"{self.path}: the library's activations were computed with the weights in {self.info.model_dtype}, "
                f"but the model is loaded in {loaded} here: pass `dtype` {self.info.model_dtype}, "
                "or rebuild the library with this `dtype`"
            )
        if classifier.fingerprint != self.info.model_fingerprint:
            raise LibraryMismatch(
                f"{self.path}: library was built for model {self.info.model!r} "
                f"({self.info.model_fingerprint}), not for {classifier.name!r} ({classifier.fingerprint}); "
                "rebuild it with build-refs for this model"
            )
        facts = (
            ("classes", len(self.info.label_names), classifier.num_classes),
            ("layers", self.info.num_layers, classifier.num_layers),
            ("hidden size", self.info.hidden_size, classifier.hidden_size),
        )
        for what, stored, actual in facts:
            if stored != actual:
                raise LibraryMismatch(
                    f"{self.path}: the library has {stored} {what} but the model {classifier.name!r} has {actual}; "
                    "rebuild it with build-refs for this model"
                )

    def references(
        self,
        target: int,
        count: int,
        device: torch.device,
        pool: str = "contrast",
        rows: Sequence[int] | None = None,
    ) -> torch.Tensor:
        """[K, L, T_max, n] float32 activations, zero-padded: the first ``count`` references
        of ``pool`` for ``target``, or the references at ``rows`` of that pool."""
        stacked = self._pool(pool, target, count if rows is None else None, device)
        if rows is None:
            return stacked[:count]
        return stacked[torch.as_tensor(list(rows), dtype=torch.long, device=stacked.device)]

    def _pool(self, pool: str, target: int, count: int | None, device: torch.device) -> torch.Tensor:
        """The first ``count`` (None: all) references of a pool, loaded once per device."""
        path = group_path(pool, target)
        entries = self.entries(target, pool)
        if not entries:
            raise BadInput(f"{self.path}: no references for class {target} in the {pool!r} pool")
        wanted = len(entries) if count is None else min(count, len(entries))
        cached = self._cache.get((path, str(device)))
        if cached is not None and len(cached) >= wanted:
            return cached
        self._cache[(path, str(device))] = self._load(path, entries[:wanted]).to(device)
        return self._cache[(path, str(device))]

    def _load(self, path: str, available: list[ReferenceEntry]) -> torch.Tensor:
        """[K, L, T_max, n] float32 activations of ``available`` (the first K of group ``path``),
        zero-padded, read from the file and verified."""
        length = max(e.length for e in available)
        stacked = np.zeros((len(available), self.info.num_layers, length, self.info.hidden_size), dtype=np.float32)
        try:
            with h5py.File(self.path, "r") as file:
                group = file[f"{path}/activations"]
                for i, entry in enumerate(available):
                    stacked[i, :, : entry.length] = self._verified(group[str(i)], entry.length)
        except BadInput:
            raise
        except (OSError, KeyError, ValueError, TypeError, RuntimeError, AttributeError) as error:
            raise BadInput(f"{self.path}: activations of {path} unreadable ({_first_line(error)})") from None
        return torch.from_numpy(stacked)


    def _verified(self, dataset: h5py.Dataset, length: int) -> np.ndarray:
        """One reference's activations, checked against their checksum, shape and for NaN/inf."""
        if dataset.dtype.kind != "f":
            raise self._damaged(f"{dataset.name} holds {dataset.dtype}, not floating-point activations")
        values = dataset[()]
        if dataset.attrs.get(CHECKSUM) != array_checksum(values):
            raise self._damaged(f"{dataset.name} does not match its checksum")
        expected = (self.info.num_layers, length, self.info.hidden_size)
        if values.shape != expected:
            raise self._damaged(f"{dataset.name} has shape {values.shape}, expected {expected}")
        if not np.all(np.isfinite(values)):
            raise BadInput(f"{self.path}: {dataset.name} holds NaN or infinite values; rebuild it with build-refs")
        return values


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
