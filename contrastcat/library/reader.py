"""Reading a reference library file (its format: schema.py), verified: the format, every attribute, every checksum, and the model it was built for."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import h5py
import numpy as np
import torch

from ..errors import BadInput, LibraryMismatch
from ..models.tokens import tokenize
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
        # Held open for the library's life: activations are read from the file verified here,
        # so a library written over the path mid-run (build-refs renames a new file into
        # place) cannot be mixed into a run that named this one's fingerprint.
        self._file: h5py.File | None = None
        try:
            self._file = h5py.File(self.path, "r")
            self._open(self._file)
        except BadInput:
            self.close()
            raise
        except (OSError, KeyError, TypeError, ValueError, RuntimeError, AttributeError) as error:
            self.close()
            raise BadInput(f"{self.path}: not a readable reference library ({_first_line(error)})") from None
        classes = len(self.info.label_names)
        stray = [key for key in self._entries if key.startswith("classes/") and not 0 <= int(key.split("/")[1]) < classes]
        if stray:
            self.close()
            raise self._damaged(f"it holds {stray[0]} but names only {classes} classes")
        absent = [c for c in range(classes) if group_path("contrast", c) not in self._entries]
        if absent:
            self.close()
            raise self._damaged(f"it names {classes} classes but holds no references for class {absent[0]}")

    def _open(self, file: h5py.File) -> None:
        """Everything but the activations, verified: the file is checked to hold its own data
        in the layout the writer makes before anything is read, so a crafted file can neither
        make the reader follow it elsewhere nor allocate what the file does not hold."""
        self._self_contained(file)
        self.info = self._read_info(file)
        self._entries = {
            group_path("contrast", int(name)): self._read_entries(group) for name, group in file["classes"].items()
        }
        if "same" in self.info.pools:
            for name, group in file["pools/same"].items():
                self._entries[group_path("same", int(name))] = self._read_entries(group)
        if "random" in self.info.pools:
            self._entries[group_path("random", 0)] = self._read_entries(file["pools/random"])
        # Each activations dataset's checksum as verified by the content fingerprint above:
        # what is read later must match these, not whatever the file says then.
        self._checksums = {
            (path, index): self._activations_declared(file, path, index, entry)
            for path, entries in self._entries.items()
            for index, entry in enumerate(entries)
        }

    def close(self) -> None:
        """Close the file (the library can no longer load activations not yet cached)."""
        if self._file is not None:
            with contextlib.suppress(Exception):
                self._file.close()
            self._file = None

    def __enter__(self) -> RefLibrary:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _self_contained(self, file: h5py.File) -> None:
        """Refuse, before reading any data, what the writer never makes and a crafted file may:
        external and soft links, virtual datasets and external storage (data in other files,
        or a way to probe them), chunked or filtered storage, a tree deeper than the layout,
        and a dataset that declares more than the file stores for it (read whole, it would
        allocate what the shape says)."""

        def walk(group: h5py.Group, where: str, depth: int) -> None:
            if depth > _DEPTH:
                raise self._damaged(f"{where} is deeper than a library's layout")
            for name in group:
                path = f"{where.rstrip('/')}/{name}"
                link = group.get(name, getlink=True)
                if isinstance(link, h5py.ExternalLink):
                    raise self._damaged(f"{path} is a link to another file; a library holds its own data")
                if isinstance(link, h5py.SoftLink):
                    raise self._damaged(f"{path} is a soft link; a library holds its own data")
                node = group[name]
                if isinstance(node, h5py.Group):
                    walk(node, path, depth + 1)
                elif isinstance(node, h5py.Dataset):
                    self._check_stored(node, path)
                else:
                    raise self._damaged(f"{path} is neither a group nor a dataset")

        walk(file, "/", 0)

    def _check_stored(self, dataset: h5py.Dataset, path: str) -> None:
        if dataset.is_virtual:
            raise self._damaged(f"{path} is a virtual dataset; a library holds its own data")
        if dataset.external:
            raise self._damaged(f"{path} is stored in another file; a library holds its own data")
        if dataset.chunks is not None or dataset.compression is not None:
            raise self._damaged(f"{path} is chunked or filtered, which the library writer never makes")
        if dataset.shape is None:
            raise self._damaged(f"{path} is an empty dataspace (no shape), which the library writer never makes")
        count = int(np.prod(dataset.shape, dtype=np.float64))
        # Fixed-size values are stored in place; strings and variable-length rows as 16-byte
        # references into the file's heap.
        item = 16 if h5py.check_vlen_dtype(dataset.dtype) is not None or dataset.dtype.kind == "O" \
            else dataset.dtype.itemsize
        stored = dataset.id.get_storage_size()
        if count * item != stored:
            raise self._damaged(f"{path} declares {dataset.shape} ({count * item} bytes) but the file stores {stored}")

    def _activations_declared(self, file: h5py.File, path: str, index: int, entry: ReferenceEntry) -> str:
        """The checksum of one reference's activations, after its declared dtype and shape are
        checked against the library's (nothing of it is read here)."""
        dataset = file[f"{path}/activations"].get(str(index))
        if not isinstance(dataset, h5py.Dataset):
            raise self._damaged(f"{path}/activations has no dataset {index}")
        if dataset.dtype != np.dtype(self.info.dtype):
            raise self._damaged(f"{dataset.name} holds {dataset.dtype}, not floating-point {self.info.dtype} activations")
        if not 1 <= entry.length <= self.info.max_length:
            raise self._damaged(f"{path} reference {index} has length {entry.length}, not 1 to {self.info.max_length}")
        expected = (self.info.num_layers, entry.length, self.info.hidden_size)
        if dataset.shape != expected:
            raise self._damaged(f"{dataset.name} has shape {dataset.shape}, expected {expected}")
        checksum = dataset.attrs.get(CHECKSUM)
        if not isinstance(checksum, str):
            raise self._damaged(f"{dataset.name} has no checksum")
        return checksum

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
        self.check_token_ids(classifier)
        self.check_tokenizer(classifier)
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

    def check_token_ids(self, classifier) -> None:
        """The references' token ids are fed to the model again (the sanity check's randomised
        copies capture them anew): an id outside its embeddings would fail deep inside."""
        rows = int(classifier.model.get_input_embeddings().num_embeddings)
        for path, entries in self._entries.items():
            for index, entry in enumerate(entries):
                if entry.token_ids and not (0 <= min(entry.token_ids) and max(entry.token_ids) < rows):
                    bad = next(i for i in entry.token_ids if not 0 <= i < rows)
                    raise LibraryMismatch(
                        f"{self.path}: reference {index} of {path} holds token id {bad}, outside the vocabulary of "
                        f"model {classifier.name!r} (0 to {rows - 1}); rebuild the library with build-refs for this model"
                    )

    def check_tokenizer(self, classifier) -> None:
        """The fingerprint names the weights, not the tokenizer: a model given in memory with
        another vocabulary would read this library's references (tokenised by the model's own)
        as other tokens than its inputs. The first reference of each class, tokenised again here,
        must give the ids stored for it."""
        for target in range(len(self.info.label_names)):
            entry = next(iter(self.entries(target)), None)
            if entry is None:
                continue
            (again,) = tokenize(classifier.tokenizer, [entry.text], self.info.max_length, classifier.empty_input,
                                None if entry.pair is None else [entry.pair])
            if again.ids != entry.token_ids:
                raise LibraryMismatch(
                    f"{self.path}: the tokenizer of {classifier.name!r} does not give the token ids stored for the "
                    f"library's references (class {self.info.label_names[target]!r}): the library was made with "
                    "another vocabulary; pass the model's own tokenizer, or rebuild the library with build-refs"
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
        zero-padded, read from the file held open and verified."""
        if self._file is None:
            raise BadInput(f"{self.path}: the library was closed; open it again to read its activations")
        length = max(e.length for e in available)
        stacked = np.zeros((len(available), self.info.num_layers, length, self.info.hidden_size), dtype=np.float32)
        try:
            group = self._file[f"{path}/activations"]
            for i, entry in enumerate(available):
                stacked[i, :, : entry.length] = self._verified(group[str(i)], self._checksums[(path, i)])
        except BadInput:
            raise
        except (OSError, KeyError, ValueError, TypeError, RuntimeError, AttributeError) as error:
            raise BadInput(f"{self.path}: activations of {path} unreadable ({_first_line(error)})") from None
        return torch.from_numpy(stacked)

    def _verified(self, dataset: h5py.Dataset, checksum: str) -> np.ndarray:
        """One reference's activations (dtype and shape checked when the library was opened),
        matched against the checksum verified then, and checked for NaN/inf."""
        values = dataset[()]
        if checksum != array_checksum(values):
            raise self._damaged(f"{dataset.name} does not match its checksum")
        if not np.all(np.isfinite(values)):
            raise BadInput(f"{self.path}: {dataset.name} holds NaN or infinite values; rebuild it with build-refs")
        return values


# The layout's deepest data: /pools/same/<c>/activations/<i> (groups at depths 0 to 4).
_DEPTH = 4


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
