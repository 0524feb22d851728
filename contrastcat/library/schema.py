"""The reference library file (HDF5): the one place that reads and writes it.

Layout (schema version 1), readable with plain h5py::

    /                       attributes:
        format              "contrastcat-reference-library"
        schema_version      1
        tool_version        contrastcat version that wrote it
        created             ISO 8601 UTC time
        fingerprint         content hash of this library (records cite it)
        model               model name as given (alias, hub id or path)
        model_source        hub id or absolute path that was loaded
        model_fingerprint   sha256 of the model weights (explain checks it)
        tokenizer           tokenizer name or path
        num_layers          L
        hidden_size         n
        label_names         JSON list of class names, index = class id
        gamma, k, keep      selection settings (SPEC §2)
        min_tokens          shortest reference kept
        max_length          truncation length used
        dtype               "float32" or "float16" (activations on disk)
        data, split         where the references came from
        scanned             rows scanned
    /classes/<c>/           one group per target class c (decimal index)
        attributes:         name, passing (how many have f_c < gamma), candidates
        f_c                 float64 [N]   target-class probability, ascending
        below_gamma         bool    [N]
        label               int64   [N]   the reference's own (gold = predicted) class
        source_row          int64   [N]   row index in the scanned data
        length              int64   [N]   tokens, special tokens included
        text                str     [N]
        token_ids           int32 vlen [N]
        activations/<i>     [L, length_i, n]  activations entering each layer,
                            at the reference's own length (no padding on disk)
    /pools/same/<c>/        optional (build-refs --pools same): for the paper's
                            Table 3 ablation, rows OF class c classified
                            correctly, highest f_c first; same datasets as above
    /pools/random/          optional (build-refs --pools random): rows drawn at
                            random (attribute seed) from the whole scanned data,
                            any class; f_c holds each row's probability of its
                            own label; same datasets as above
    root attribute pools    JSON list of the optional pools present

Old readers ignore /pools, so adding it keeps schema version 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import h5py
import numpy as np
import torch

from ..errors import BadInput, LibraryMismatch

FORMAT = "contrastcat-reference-library"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LibraryInfo:
    model: str
    model_source: str
    model_fingerprint: str
    tokenizer: str
    num_layers: int
    hidden_size: int
    label_names: tuple[str, ...]
    gamma: float
    k: int
    keep: int
    min_tokens: int
    max_length: int
    dtype: str
    data: str
    split: str
    scanned: int
    tool_version: str
    created: str
    fingerprint: str = ""
    pools: tuple[str, ...] = ()  # optional ablation pools: "same", "random"


@dataclass(frozen=True)
class ReferenceEntry:
    """One stored reference, without its activations."""

    f_c: float
    below_gamma: bool
    label: int
    source_row: int
    length: int
    text: str
    token_ids: tuple[int, ...]


class LibraryWriter:
    """Writes a library to a temporary file next to ``path``; ``commit`` renames it into place."""

    def __init__(self, path: str | os.PathLike, info: LibraryInfo) -> None:
        self.path = Path(path)
        self.info = info
        handle, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent or ".")
        os.close(handle)
        self.temp = Path(temp)
        self.file = h5py.File(self.temp, "w")
        self._digest = hashlib.sha256(info.model_fingerprint.encode())
        self._np_dtype = np.float16 if info.dtype == "float16" else np.float32

    def add_class(self, target: int, name: str, entries: list[ReferenceEntry], candidates: int) -> h5py.Group:
        return self.add_group(group_path("contrast", target), name, entries, candidates)

    def add_group(self, path: str, name: str, entries: list[ReferenceEntry], candidates: int) -> h5py.Group:
        """One group of references (a class of the contrast pool, or of an ablation pool)."""
        group = self.file.create_group(path)
        group.attrs["name"] = name
        group.attrs["passing"] = int(sum(e.below_gamma for e in entries))
        group.attrs["candidates"] = int(candidates)
        group["f_c"] = np.array([e.f_c for e in entries], dtype=np.float64)
        group["below_gamma"] = np.array([e.below_gamma for e in entries], dtype=bool)
        group["label"] = np.array([e.label for e in entries], dtype=np.int64)
        group["source_row"] = np.array([e.source_row for e in entries], dtype=np.int64)
        group["length"] = np.array([e.length for e in entries], dtype=np.int64)
        group.create_dataset("text", data=[e.text for e in entries], dtype=h5py.string_dtype())
        ids = group.create_dataset("token_ids", (len(entries),), dtype=h5py.vlen_dtype(np.int32))
        for i, entry in enumerate(entries):
            ids[i] = np.asarray(entry.token_ids, dtype=np.int32)
        group.create_group("activations")
        # Contrast classes hash as [target, ...] (as before pools existed), pools by their path.
        key = int(path.split("/")[1]) if path.startswith("classes/") else path
        self._digest.update(json.dumps([key, [(e.source_row, e.f_c) for e in entries]]).encode())
        return group

    def add_activations(self, path: str, index: int, activations: np.ndarray) -> None:
        self.file[f"{path}/activations"].create_dataset(str(index), data=activations.astype(self._np_dtype))

    def commit(self) -> str:
        """Write the root attributes, close, and move the file into place. Returns the fingerprint."""
        info = asdict(self.info)
        info["label_names"] = json.dumps(list(self.info.label_names))
        info["pools"] = json.dumps(list(self.info.pools))
        settings = {key: info[key] for key in ("gamma", "k", "keep", "min_tokens", "max_length", "dtype", "data", "split")}
        self._digest.update(json.dumps(settings, sort_keys=True).encode())
        info["fingerprint"] = "sha256:" + self._digest.hexdigest()[:32]
        self.file.attrs["format"] = FORMAT
        self.file.attrs["schema_version"] = SCHEMA_VERSION
        for key, value in info.items():
            self.file.attrs[key] = value
        self.file.close()
        os.replace(self.temp, self.path)
        return info["fingerprint"]

    def discard(self) -> None:
        try:
            self.file.close()
        finally:
            self.temp.unlink(missing_ok=True)


POOLS = ("contrast", "same", "random")


def group_path(pool: str, target: int) -> str:
    """Where the references of ``pool`` for ``target`` live in the file."""
    if pool == "contrast":
        return f"classes/{target}"
    if pool == "same":
        return f"pools/same/{target}"
    if pool == "random":
        return "pools/random"
    raise BadInput(f"unknown reference pool {pool!r} (available: {', '.join(POOLS)})")


def _decode(value):
    return value.decode() if isinstance(value, bytes) else value


class RefLibrary:
    """A reference library opened for reading; activations load lazily per class."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        if not Path(self.path).is_file():
            raise BadInput(f"{self.path}: no such reference library file")
        self._cache: dict[tuple[str, str], torch.Tensor] = {}
        try:
            with h5py.File(self.path, "r") as file:
                attrs = {key: _decode(value) for key, value in file.attrs.items()}
                if attrs.get("format") != FORMAT:
                    raise BadInput(f"{self.path}: not a contrastcat reference library (no format marker)")
                if int(attrs.get("schema_version", -1)) != SCHEMA_VERSION:
                    raise BadInput(
                        f"{self.path}: library schema version {attrs.get('schema_version')} "
                        f"is not supported (expected {SCHEMA_VERSION}); rebuild it with build-refs"
                    )
                fields = LibraryInfo.__dataclass_fields__
                values = {key: attrs[key] for key in fields if key in attrs}
                values["label_names"] = tuple(json.loads(values["label_names"]))
                values["pools"] = tuple(json.loads(values.get("pools", "[]")))
                self.info = LibraryInfo(**values)
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
        except (OSError, KeyError, TypeError, ValueError) as error:
            raise BadInput(f"{self.path}: not a readable reference library ({_first_line(error)})") from None

    @staticmethod
    def _read_entries(group: h5py.Group) -> list[ReferenceEntry]:
        texts = [_decode(t) for t in group["text"][()]]
        return [
            ReferenceEntry(
                f_c=float(f),
                below_gamma=bool(b),
                label=int(label),
                source_row=int(row),
                length=int(length),
                text=text,
                token_ids=tuple(int(i) for i in ids),
            )
            for f, b, label, row, length, text, ids in zip(
                group["f_c"][()],
                group["below_gamma"][()],
                group["label"][()],
                group["source_row"][()],
                group["length"][()],
                texts,
                group["token_ids"][()],
            )
        ]

    @property
    def fingerprint(self) -> str:
        return self.info.fingerprint

    def entries(self, target: int, pool: str = "contrast") -> list[ReferenceEntry]:
        if pool != "contrast" and pool not in self.info.pools:
            raise BadInput(
                f"{self.path}: this library has no {pool!r} reference pool; "
                f"rebuild it with build-refs --pools {pool}"
            )
        return self._entries.get(group_path(pool, target), [])

    def require_pool(self, pool: str) -> None:
        """Fail early, before any model pass, when ``pool`` is not in this library."""
        self.entries(0, pool)

    def pool_size(self, pool: str, target: int) -> int:
        return len(self.entries(target, pool))

    def check_model(self, model_fingerprint: str, model_name: str) -> None:
        if model_fingerprint != self.info.model_fingerprint:
            raise LibraryMismatch(
                f"{self.path}: library was built for model {self.info.model!r} "
                f"({self.info.model_fingerprint}), not for {model_name!r} ({model_fingerprint}); "
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
        available = entries[:wanted]
        length = max(e.length for e in available)
        stacked = np.zeros((len(available), self.info.num_layers, length, self.info.hidden_size), dtype=np.float32)
        try:
            with h5py.File(self.path, "r") as file:
                group = file[f"{path}/activations"]
                for i, entry in enumerate(available):
                    stacked[i, :, : entry.length] = group[str(i)][()]
        except (OSError, KeyError, ValueError) as error:
            raise BadInput(f"{self.path}: activations of {path} unreadable ({_first_line(error)})") from None
        self._cache[(path, str(device))] = torch.from_numpy(stacked).to(device)
        return self._cache[(path, str(device))]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
