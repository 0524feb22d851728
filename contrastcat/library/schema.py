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
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
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
        group = self.file.create_group(f"classes/{target}")
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
        self._digest.update(json.dumps([target, [(e.source_row, e.f_c) for e in entries]]).encode())
        return group

    def add_activations(self, target: int, index: int, activations: np.ndarray) -> None:
        self.file[f"classes/{target}/activations"].create_dataset(
            str(index), data=activations.astype(self._np_dtype)
        )

    def commit(self) -> str:
        """Write the root attributes, close, and move the file into place. Returns the fingerprint."""
        info = asdict(self.info)
        info["label_names"] = json.dumps(list(self.info.label_names))
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


def _decode(value):
    return value.decode() if isinstance(value, bytes) else value


class RefLibrary:
    """A reference library opened for reading; activations load lazily per class."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = str(path)
        if not Path(self.path).is_file():
            raise BadInput(f"{self.path}: no such reference library file")
        self._cache: dict[tuple[int, int, str], torch.Tensor] = {}
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
                self.info = LibraryInfo(**values)
                self._entries = {
                    int(name): self._read_entries(group) for name, group in file["classes"].items()
                }
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

    def entries(self, target: int) -> list[ReferenceEntry]:
        return self._entries.get(target, [])

    def check_model(self, model_fingerprint: str, model_name: str) -> None:
        if model_fingerprint != self.info.model_fingerprint:
            raise LibraryMismatch(
                f"{self.path}: library was built for model {self.info.model!r} "
                f"({self.info.model_fingerprint}), not for {model_name!r} ({model_fingerprint}); "
                "rebuild it with build-refs for this model"
            )

    def references(self, target: int, count: int, device: torch.device) -> torch.Tensor:
        """[K, L, T_max, n] float32 activations of the first ``count`` references, zero-padded."""
        key = (target, count, str(device))
        if key not in self._cache:
            available = self.entries(target)[:count]
            if not available:
                raise BadInput(f"{self.path}: no references for class {target}")
            length = max(e.length for e in available)
            stacked = np.zeros(
                (len(available), self.info.num_layers, length, self.info.hidden_size), dtype=np.float32
            )
            try:
                with h5py.File(self.path, "r") as file:
                    group = file[f"classes/{target}/activations"]
                    for i, entry in enumerate(available):
                        stacked[i, :, : entry.length] = group[str(i)][()]
            except (OSError, KeyError, ValueError) as error:
                raise BadInput(f"{self.path}: activations of class {target} unreadable ({_first_line(error)})") from None
            self._cache[key] = torch.from_numpy(stacked).to(device)
        return self._cache[key]


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
