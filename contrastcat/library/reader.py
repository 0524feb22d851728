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

from ..arguments import shown
from ..errors import BadInput, LibraryMismatch
from ..models.tokens import tokenize
from .names import missing_library
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
        try:
            is_file = Path(self.path).is_file()
        except OSError as error:  # a name longer than the system allows (Python 3.11 raises for it)
            raise BadInput(f"{shown(self.path)}: cannot be opened ({error.strerror})") from None
        if not is_file:
            raise BadInput(f"{self.path}: {missing_library(self.path) or 'not a regular file'}")
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

    def _open(self, file: h5py.File) -> None:
        """Everything but the activations, verified: the file is checked to hold its own data
        in the layout the writer makes before anything is read, so a crafted file can neither
        make the reader follow it elsewhere nor allocate what the file does not hold."""
        marker = file.attrs.get_id("format") if "format" in file.attrs else None
        if marker is None or marker.shape != () or decode_attribute(file.attrs["format"]) != FORMAT:
            raise BadInput(f"{self.path}: not a contrastcat reference library (no format marker)")
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
        classes = len(self.info.label_names)
        stray = [key for key in self._entries if key.startswith("classes/") and not 0 <= int(key.split("/")[1]) < classes]
        if stray:
            raise self._damaged(f"it holds {stray[0]} but names only {classes} classes")
        absent = [c for c in range(classes) if group_path("contrast", c) not in self._entries]
        if absent:
            raise self._damaged(f"it names {classes} classes but holds no references for class {absent[0]}")
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
        or a way to probe them), chunked, filtered or compact storage, a tree deeper than the
        layout, names outside it, an object linked twice (a few links to one group make the
        paths grow as a power: the walk takes each object once), attributes of more than one
        value, a dataset that declares more than the file stores for it (read whole, it would
        allocate what the shape says), and variable-length data (strings, token ids) that
        would take more bytes than the whole file holds (each element is a reference into the
        file's heap: many may name one large string)."""
        seen = {h5py.h5o.get_info(file.id).addr: "/"}
        heap = [0]  # bytes the variable-length data read so far will take
        self._single_valued(file, "/")

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
                self._in_layout(where, name, path)
                node = group[name]
                address = h5py.h5o.get_info(node.id).addr
                if address in seen:
                    raise self._damaged(f"{path} is a second link to {seen[address]}; the library writer links each object once")
                seen[address] = path
                self._single_valued(node, path)
                if isinstance(node, h5py.Group):
                    walk(node, path, depth + 1)
                elif isinstance(node, h5py.Dataset):
                    self._check_stored(file, node, path, heap)
                else:
                    raise self._damaged(f"{path} is neither a group nor a dataset")

        walk(file, "/", 0)

    def _in_layout(self, where: str, name: str, path: str) -> None:
        """Names the writer makes: /classes and /pools at the top, /pools/same and
        /pools/random under it, and class groups and activations by their index as
        ``str(index)`` writes it (``00`` or ``+2`` would be read as another class's)."""
        fixed = {"/": ("classes", "pools"), "/pools": ("same", "random")}.get(where)
        if fixed is not None and name not in fixed:
            raise self._damaged(f"{path} is not part of a library's layout")
        numbered = where in ("/classes", "/pools/same") or where.endswith("/activations")
        if numbered and not (name.isascii() and name.isdigit() and str(int(name)) == name):
            raise self._damaged(f"{path} is not named by an index as the library writer names it (0, 1, 2, ...)")

    def _single_valued(self, node: h5py.HLObject, path: str) -> None:
        for key in node.attrs:  # names only: nothing read
            shape = node.attrs.get_id(key).shape
            if shape != ():
                raise self._damaged(
                    f"{path} attribute {shown(key)} holds {shape} values; the library writer writes single values"
                )

    def _check_stored(self, file: h5py.File, dataset: h5py.Dataset, path: str, heap: list[int]) -> None:
        if dataset.is_virtual:
            raise self._damaged(f"{path} is a virtual dataset; a library holds its own data")
        if dataset.external:
            raise self._damaged(f"{path} is stored in another file; a library holds its own data")
        if dataset.chunks is not None or dataset.compression is not None:
            raise self._damaged(f"{path} is chunked or filtered, which the library writer never makes")
        if dataset.id.get_create_plist().get_layout() != h5py.h5d.CONTIGUOUS:
            raise self._damaged(f"{path} is not stored contiguously, which the library writer never makes")
        if dataset.shape is None:
            raise self._damaged(f"{path} is an empty dataspace (no shape), which the library writer never makes")
        base = _variable_length(dataset.dtype)
        if base is None and not _fixed_number(dataset.dtype):
            raise self._damaged(f"{path} holds {_described(dataset.dtype)}, which the library writer never makes")
        count = int(np.prod(dataset.shape, dtype=np.float64))
        # Fixed-size values are stored in place; strings and variable-length rows as references
        # into the file's heap: a 4-byte length, the heap collection's address, a 4-byte index.
        address_size = file.id.get_create_plist().get_sizes()[0]
        item = 8 + address_size if base is not None else dataset.dtype.itemsize
        stored = dataset.id.get_storage_size()
        if count * item != stored:
            raise self._damaged(f"{path} declares {dataset.shape} ({count * item} bytes) but the file stores {stored}")
        if base is None or count == 0:
            return
        # The lengths those references declare, read from the raw storage (HDF5 would allocate
        # them all, however many name the same heap object): together at most the file.
        size = file.id.get_filesize()
        offset = dataset.id.get_offset()
        raw = b"" if offset is None or offset + stored > size else _read_at(file.id.get_vfd_handle(), offset, stored)
        if len(raw) != stored:
            raise self._damaged(f"{path} is stored outside the file")
        lengths = np.frombuffer(raw, dtype=np.dtype({"names": ["n"], "formats": ["<u4"], "itemsize": item}))["n"]
        heap[0] += int(lengths.sum(dtype=np.uint64)) * base
        if heap[0] > size:
            raise self._damaged(
                f"{path} refers to variable-length data of {heap[0]} bytes with what precedes it, "
                f"more than the whole file ({size} bytes)"
            )

    def _activations_declared(self, file: h5py.File, path: str, index: int, entry: ReferenceEntry) -> str:
        """The checksum of one reference's activations, after its declared dtype and shape are
        checked against the library's (nothing of it is read here)."""
        dataset = file[f"{path}/activations"].get(str(index))
        if not isinstance(dataset, h5py.Dataset):
            raise self._damaged(f"{path}/activations has no dataset {index}")
        if dataset.dtype != np.dtype(self.info.dtype):
            raise self._damaged(f"{dataset.name} holds {dataset.dtype}, not floating-point {self.info.dtype} activations")
        expected = (self.info.num_layers, entry.length, self.info.hidden_size)
        if dataset.shape != expected:
            raise self._damaged(f"{dataset.name} has shape {dataset.shape}, expected {expected}")
        checksum = dataset.attrs.get(CHECKSUM)
        if not isinstance(checksum, str):
            raise self._damaged(f"{dataset.name} has no checksum")
        return checksum

    def _read_info(self, file: h5py.File) -> LibraryInfo:
        attrs = {key: decode_attribute(value) for key, value in file.attrs.items()}
        version = attrs.get("schema_version")
        if version == 1:
            raise BadInput(
                f"{self.path}: library schema version 1 (contrastcat 0.1) has no checksums, so it cannot be "
                "verified; rebuild it with build-refs"
            )
        if version != SCHEMA_VERSION:
            raise BadInput(
                f"{self.path}: library schema version {shown(version)} is not supported "
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
            raise self._damaged(f"its content does not match its fingerprint {shown(attrs['fingerprint'])}")
        values = {key: attrs[key] for key in (f.name for f in fields(LibraryInfo)) if key in attrs}
        for key, kind in ATTRIBUTE_TYPES.items():
            value = values.get(key)
            if key in ("pools", "scan_dtype", "inputs") and value is None:
                continue
            if not attribute_fits(value, kind):
                raise BadInput(f"{self.path}: root attribute {key!r} must be {kind}, got {shown(value)}")
            if kind in ("a count", "a positive count"):
                values[key] = int(value)
            elif kind == "a number":
                values[key] = float(value)
        values["label_names"] = tuple(json.loads(values["label_names"]))
        values["pools"] = tuple(json.loads(values.get("pools", "[]")))
        if not values["label_names"]:
            raise BadInput(f"{self.path}: root attribute 'label_names' names no class")
        for key in ("model", "model_source"):  # a name or a path, never megabytes
            if len(values[key]) > _MAX_NAME:
                raise self._damaged(f"root attribute {key!r} is {len(values[key])} characters long")
        if values["max_length"] > _MAX_LENGTH:
            raise self._damaged(f"root attribute 'max_length' is {values['max_length']}, more than {_MAX_LENGTH} tokens")
        return LibraryInfo(**values)

    def _damaged(self, why: str) -> BadInput:
        return BadInput(f"{self.path}: the library is damaged ({why}); rebuild it with build-refs")

    def _read_entries(self, group: h5py.Group) -> list[ReferenceEntry]:
        if (self.info.inputs == "pairs") != ("pair" in group):
            raise self._damaged(f"{group.name} {'lacks' if 'pair' not in group else 'holds'} the pairs' second texts")
        members = _MEMBERS + (("pair", "strings"),) if "pair" in group else _MEMBERS
        for key, what in members:
            dataset = group[key]
            if not isinstance(dataset, h5py.Dataset):
                raise self._damaged(f"{group.name}/{key} is not a dataset")
            if not _holds(dataset.dtype, what):
                raise self._damaged(f"{dataset.name} holds {_described(dataset.dtype)}, not {what}")
            if dataset.ndim != 1:
                raise self._damaged(f"{dataset.name} has shape {dataset.shape}, not one value per reference")
        values = {key: group[key][()] for key, _ in members}
        texts = [decode_attribute(t) for t in values["text"]]
        pairs = [decode_attribute(t) for t in values["pair"]] if "pair" in values else [None] * len(texts)
        if {len(v) for v in values.values()} != {len(texts)}:
            raise self._damaged(f"the datasets of {group.name} do not hold one entry per reference each")
        if any(not isinstance(t, str) for t in texts) or any(p is not None and not isinstance(p, str) for p in pairs):
            raise self._damaged(f"{group.name} holds a text that is not a string")
        f_c, flags, labels = values["f_c"], values["below_gamma"], values["label"]
        if not np.all((f_c >= 0) & (f_c <= 1)):  # NaN fails both
            bad = f_c[~((f_c >= 0) & (f_c <= 1))][0]
            raise self._damaged(f"{group.name}/f_c holds {bad}, not a probability from 0 to 1")
        if np.any(flags.view(np.uint8) > 1):
            raise self._damaged(f"{group.name}/below_gamma holds a value that is neither true nor false")
        classes = len(self.info.label_names)
        if np.any((labels < 0) | (labels >= classes)):
            bad = labels[(labels < 0) | (labels >= classes)][0]
            raise self._damaged(f"{group.name}/label holds {bad}, not a class index from 0 to {classes - 1}")
        self._lengths_agree(group.name, values["length"], values["token_ids"])
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
                f_c, flags, labels, values["source_row"], values["length"], texts, values["token_ids"], pairs
            )
        ]

    def _lengths_agree(self, name: str, lengths: np.ndarray, ids: np.ndarray) -> None:
        """Each reference's length is within the library's max_length and is the number of its
        token ids: its activations are read at that length, and its ids are fed to the model
        again (the sanity check's randomised copies), so the two must describe one sequence."""
        outside = np.flatnonzero((lengths < 1) | (lengths > self.info.max_length))
        if outside.size:
            index = int(outside[0])
            raise self._damaged(
                f"{name} reference {index} has length {lengths[index]}, not 1 to {self.info.max_length}"
            )
        counts = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        differ = np.flatnonzero(counts != lengths)
        if differ.size:
            index = int(differ[0])
            raise self._damaged(f"{name} reference {index} has length {lengths[index]} but {counts[index]} token ids")

    @property
    def fingerprint(self) -> str:
        return self.info.fingerprint

    def entries(self, target: int, pool: str = "contrast") -> list[ReferenceEntry]:
        if pool != "contrast" and pool not in self.info.pools:
            wanted = ",".join(p for p in ("same", "random") if p in self.info.pools or p == pool)
            raise BadInput(
                f"{self.path}: this library has no {pool!r} reference pool; "
                f"rebuild it with the reference pools {wanted}"
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
                f"but the model is loaded in {loaded} here: load it in {self.info.model_dtype}, "
                f"or rebuild the library with the model in {loaded}"
            )
        if classifier.fingerprint != self.info.model_fingerprint:
            raise LibraryMismatch(
                f"{self.path}: library was built for model {self.info.model!r} "
                f"({self.info.model_fingerprint}), not for {classifier.name!r} ({classifier.fingerprint}); "
                "rebuild it with build-refs for this model"
            )
        self.check_positions(classifier)
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

    def check_positions(self, classifier) -> None:
        """No reference longer than the model reads: build-refs cuts them to the model's positions,
        so a longer one (the library's max_length only bounds it by what the file says) is
        damage or another model's; fed to the model again it would fail deep inside."""
        limit = int(classifier.position_limit)
        for path, entries in self._entries.items():
            for index, entry in enumerate(entries):
                if entry.length > limit:
                    raise LibraryMismatch(
                        f"{self.path}: reference {index} of {path} has {entry.length} tokens, but the model "
                        f"{classifier.name!r} takes at most {limit}: the library is damaged or built for another "
                        "model; rebuild it with build-refs for this model"
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

# The most tokens a library's max_length may say (the longest position tables are a few million).
_MAX_LENGTH = 2**24
_MAX_NAME = 4096  # PATH_MAX: a model's name or directory is never longer


# A reference group's datasets, and what each must hold.
_MEMBERS = (
    ("f_c", "real numbers"),
    ("below_gamma", "booleans"),
    ("label", "integers"),
    ("source_row", "integers"),
    ("length", "integers"),
    ("text", "strings"),
    ("token_ids", "rows of integers"),
)


def _holds(dtype: np.dtype, what: str) -> bool:
    if what in ("strings", "rows of integers"):
        return _variable_length(dtype) is not None and (h5py.check_string_dtype(dtype) is not None) == (what == "strings")
    return _fixed_number(dtype) and dtype.kind in {"real numbers": "f", "booleans": "b", "integers": "iu"}[what]


def _described(dtype: np.dtype) -> str:
    string = h5py.check_string_dtype(dtype)
    if string is not None:
        return f"{'variable-length' if string.length is None else f'{string.length}-byte'} {string.encoding} strings"
    base = h5py.check_vlen_dtype(dtype)
    if base is not None:
        return f"variable-length rows of {getattr(base, '__name__', base)}"
    if h5py.check_ref_dtype(dtype) is not None:
        return "references to other objects"
    return str(dtype)


def _fixed_number(dtype: np.dtype) -> bool:
    """A plain boolean, integer or real number (no compound, array, string or complex type)."""
    return dtype.fields is None and dtype.subdtype is None and dtype.kind in "biuf"


def _variable_length(dtype: np.dtype) -> int | None:
    """The bytes per counted item of the variable-length data the writer makes (UTF-8 strings,
    rows of integers); None for anything else."""
    string = h5py.check_string_dtype(dtype)
    if string is not None:
        return 1 if string.length is None and string.encoding == "utf-8" else None
    base = h5py.check_vlen_dtype(dtype)
    if isinstance(base, np.dtype) or (isinstance(base, type) and issubclass(base, np.generic)):
        base = np.dtype(base)
        return base.itemsize if base.fields is None and base.kind in "iu" else None
    return None


def _read_at(descriptor: int, offset: int, size: int) -> bytes:
    """``size`` bytes at ``offset`` of the file HDF5 holds open (not the path again)."""
    if hasattr(os, "pread"):
        return os.pread(descriptor, size, offset)
    os.lseek(descriptor, offset, os.SEEK_SET)  # HDF5 seeks before each of its own reads there
    return os.read(descriptor, size)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
