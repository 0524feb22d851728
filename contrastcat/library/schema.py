"""The reference library file (HDF5): the one place that reads and writes it.

Layout (schema version 2), readable with plain h5py::

    /                       attributes:
        format              "contrastcat-reference-library"
        schema_version      2
        tool_version        contrastcat version that wrote it
        created             ISO 8601 UTC time
        fingerprint         sha256 of the whole content (records cite it; see below)
        model               model name as given (alias, hub id or path)
        model_source        hub id or absolute path that was loaded
        model_fingerprint   sha256 of the model weights (explain checks it)
        tokenizer           tokenizer name or path
        num_layers          L
        hidden_size         n
        label_names         JSON list of class names, index = class id
        gamma, k, keep      selection settings (docs/spec.md §2)
        min_tokens          shortest reference kept
        max_length          truncation length used
        dtype               "float32" or "float16" (activations on disk)
        data, split         where the references came from
        scanned             rows scanned
        pools               JSON list of the optional pools present
        pad_token_id        the token batches were padded with (decoders: often EOS)
        model_dtype         the weights' precision: float32, bfloat16 or float16
        scan_dtype          optional: the autocast precision f_c was scored in
                            (build-refs --forward-dtype); absent: the weights'
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
                            at the reference's own length (no padding on disk);
                            attribute sha256: checksum of its dtype, shape and bytes
    /pools/same/<c>/        optional (build-refs --pools same): for the paper's
                            Table 3 ablation, rows OF class c classified
                            correctly, highest f_c first; same datasets as above
    /pools/random/          stored by default since 0.6 (build-refs --pools none
                            leaves it out; contrastcat-plus reads it): rows drawn at
                            random (attribute seed) from the whole scanned data,
                            any class; f_c holds each row's probability of its
                            own label; same datasets as above

Integrity: ``fingerprint`` is a sha256 over every attribute (but itself) and
every dataset, taking each activations dataset by its ``sha256`` attribute.
Opening a library recomputes it (cheap: activations are not read) and each
activations dataset is checked against its own checksum, and for finite
values, when it is first read. A damaged file is refused with one line.
Version 1 (contrastcat 0.1) had no checksums and is refused: rebuild it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import h5py
import numpy as np
import torch

from ..errors import BadInput, LibraryMismatch, RunFailed
from ..io.files import PendingFile, output_target, write_failed

FORMAT = "contrastcat-reference-library"
SCHEMA_VERSION = 2
CHECKSUM = "sha256"  # attribute of every activations dataset


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
    pad_token_id: int = 0  # the token the scan's batches were padded with
    model_dtype: str = "float32"  # the weights' precision when the activations were computed
    scan_dtype: str = "same"  # autocast precision of the f_c scan; "same": the weights'


OPTIONAL_ATTRIBUTES = ("fingerprint", "pools", "scan_dtype")
REQUIRED_ATTRIBUTES = tuple(f.name for f in fields(LibraryInfo) if f.name not in OPTIONAL_ATTRIBUTES)


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


def array_checksum(array: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes, as stored."""
    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _canonical(value) -> str:
    """An attribute value as text that is the same however HDF5 hands it back."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    return json.dumps(value, sort_keys=True, default=str)


def _dataset_bytes(dataset: h5py.Dataset) -> bytes:
    values = dataset[()]
    if not isinstance(values, np.ndarray) or values.dtype != object:
        return f"{np.asarray(values).dtype.str}{np.shape(values)}".encode() + np.asarray(values).tobytes()
    parts = []  # strings and variable-length rows: each length-prefixed
    for item in values.ravel():
        data = item if isinstance(item, bytes) else item.encode() if isinstance(item, str) else np.asarray(item).tobytes()
        parts.append(len(data).to_bytes(8, "little") + data)
    return b"".join(parts)


def content_fingerprint(file: h5py.File) -> str:
    """sha256 over every attribute but ``fingerprint`` and every dataset, in name order;
    an activations dataset counts by its checksum attribute (verified when read)."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(len(label).to_bytes(4, "little") + label.encode() + len(data).to_bytes(8, "little") + data)

    for key in sorted(file.attrs):
        if key != "fingerprint":
            add(f"/@{key}", _canonical(file.attrs[key]).encode())
    names: list[str] = []
    file.visit(names.append)
    for name in sorted(names):
        node = file[name]
        for key in sorted(node.attrs):
            add(f"{name}@{key}", _canonical(node.attrs[key]).encode())
        if isinstance(node, h5py.Dataset):
            if "/activations/" in name:
                add(name, f"{node.dtype.str}{node.shape}".encode())
            else:
                add(name, _dataset_bytes(node))
        else:
            add(name, b"group")
    return "sha256:" + digest.hexdigest()[:32]


class LibraryWriter:
    """Writes a library to a temporary file; ``commit`` moves it to ``path`` complete, or not at all.

    ``inputs`` are files the run reads (its data): ``path`` may not be one of them.
    """

    def __init__(self, path: str | os.PathLike, info: LibraryInfo, inputs: Sequence[str | None] = ()) -> None:
        self.path = Path(path)
        self.info = info
        self._pending = PendingFile(output_target(str(path), inputs))
        self.temp = self._pending.temp
        self._disk = _FailedWrites(open(self.temp, "r+b", buffering=0))
        self.file = h5py.File(self._disk, "w")
        self._np_dtype = np.float16 if info.dtype == "float16" else np.float32

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write that failed on disk (a full disk) is one error naming the output, whatever
        HDF5 made of it."""
        try:
            yield
        except Exception:
            if self._disk.error is not None:
                raise write_failed(self._pending.target, self._disk.error) from None
            raise
        if self._disk.error is not None:
            raise write_failed(self._pending.target, self._disk.error)

    def add_class(self, target: int, name: str, entries: list[ReferenceEntry], candidates: int) -> h5py.Group:
        return self.add_group(group_path("contrast", target), name, entries, candidates)

    def add_group(self, path: str, name: str, entries: list[ReferenceEntry], candidates: int) -> h5py.Group:
        """One group of references (a class of the contrast pool, or of an ablation pool)."""
        with self._writing():
            return self._add_group(path, name, entries, candidates)

    def _add_group(self, path: str, name: str, entries: list[ReferenceEntry], candidates: int) -> h5py.Group:
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
        return group

    def add_activations(self, path: str, index: int, activations: np.ndarray) -> None:
        stored = activations.astype(self._np_dtype)
        if not np.all(np.isfinite(stored)):
            # float16 overflows past 65504: say so rather than store infinities.
            hint = " (too large for `dtype` float16)" if np.all(np.isfinite(activations)) else ""
            raise RunFailed(f"{self.path}: activations of reference {index} in {path} are not finite{hint}")
        with self._writing():
            dataset = self.file[f"{path}/activations"].create_dataset(str(index), data=stored)
            dataset.attrs[CHECKSUM] = array_checksum(stored)

    def set_attribute(self, path: str, key: str, value) -> None:
        with self._writing():
            self.file[path].attrs[key] = value

    def commit(self) -> str:
        """Write the root attributes and the fingerprint, close, and move the file into place."""
        info = asdict(self.info)
        info["label_names"] = json.dumps(list(self.info.label_names))
        info["pools"] = json.dumps(list(self.info.pools))
        del info["fingerprint"]
        if info["scan_dtype"] == "same":
            del info["scan_dtype"]  # libraries scanned at the weights' precision stay as before
        with self._writing():
            self.file.attrs["format"] = FORMAT
            self.file.attrs["schema_version"] = SCHEMA_VERSION
            for key, value in info.items():
                self.file.attrs[key] = value
            self.file.flush()
            fingerprint = content_fingerprint(self.file)
            self.file.attrs["fingerprint"] = fingerprint
            self.file.close()
            self._disk.close()
        self._pending.commit()
        return fingerprint

    def discard(self) -> None:
        try:
            with contextlib.suppress(Exception):  # HDF5 after a failed write: its complaint adds nothing
                self.file.close()
            self._disk.close()
        finally:
            self._pending.discard()


class _FailedWrites:
    """The temporary file as HDF5 writes it. A failed write (a full disk) is remembered and not
    passed on: HDF5 cannot close a file whose writes failed (it ends in a crash of the whole
    process), so it is let finish into the void while :class:`LibraryWriter` reports the
    failure at its next step and discards the file."""

    def __init__(self, handle) -> None:
        self._handle = handle
        self.error: OSError | None = None

    def write(self, data) -> int:
        view = memoryview(data).cast("B")
        if self.error is None:
            try:
                done = 0
                while done < len(view):  # an unbuffered write may take only part
                    done += self._handle.write(view[done:])
            except OSError as error:
                self.error = error
        return len(view)

    def truncate(self, size: int | None = None) -> int:
        if self.error is None:
            try:
                return self._handle.truncate(size)
            except OSError as error:
                self.error = error
        return size if size is not None else self._handle.tell()

    def flush(self) -> None:
        pass  # unbuffered: every write has reached the file system already

    def read(self, size: int = -1) -> bytes:
        return self._handle.read(size)

    def readinto(self, buffer) -> int:
        return self._handle.readinto(buffer)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._handle.seek(offset, whence)

    def tell(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError as error:
            self.error = self.error or error


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


# What each root attribute must hold (a signed library can still hold nonsense).
ATTRIBUTE_TYPES = {
    "model": "a string",
    "model_source": "a string",
    "model_fingerprint": "a string",
    "tokenizer": "a string",
    "num_layers": "a positive count",
    "hidden_size": "a positive count",
    "label_names": "a JSON list of distinct class names",
    "gamma": "a number",
    "k": "a count",
    "keep": "a count",
    "min_tokens": "a count",
    "max_length": "a positive count",
    "dtype": "float32 or float16",
    "data": "a string",
    "split": "a string",
    "scanned": "a count",
    "tool_version": "a string",
    "created": "a string",
    "pools": "a JSON list of distinct pool names (same, random)",
    "pad_token_id": "a count",
    "model_dtype": "float32, bfloat16 or float16",
    "scan_dtype": "same, float32, bfloat16 or float16",
}


def _attribute_fits(value, kind: str) -> bool:
    if kind == "a string":
        return isinstance(value, str)
    if kind in ("a count", "a positive count"):
        whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
        return whole and int(value) >= (1 if kind == "a positive count" else 0)
    if kind == "a number":
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        return number and math.isfinite(float(value))
    if kind == "float32 or float16":
        return value in ("float32", "float16")
    if kind == "float32, bfloat16 or float16":
        return value in ("float32", "bfloat16", "float16")
    if kind == "same, float32, bfloat16 or float16":
        return value in ("same", "float32", "bfloat16", "float16")
    if not isinstance(value, str):
        return False
    try:
        names = json.loads(value)
    except ValueError:
        return False
    allowed = (lambda n: n in ABLATION_POOL_NAMES) if kind.startswith("a JSON list of distinct pool") else bool
    return isinstance(names, list) and all(isinstance(n, str) and allowed(n) for n in names) and len(set(names)) == len(names)


ABLATION_POOL_NAMES = ("same", "random")


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
        attrs = {key: _decode(value) for key, value in file.attrs.items()}
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
            if key in ("pools", "scan_dtype") and value is None:
                continue
            if not _attribute_fits(value, kind):
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
            wanted = ",".join(p for p in ("same", "random") if p in self.info.pools or p == pool)
            raise BadInput(
                f"{self.path}: this library has no {pool!r} reference pool; "
                f"rebuild it with build-refs --pools {wanted} (build_library(pools={wanted!r}))"
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
        available = entries[:wanted]
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
        self._cache[(path, str(device))] = torch.from_numpy(stacked).to(device)
        return self._cache[(path, str(device))]


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


PROSE_MARK = "<!-- written by hand below -->"


def layout_markdown(prose: str = "") -> str:
    """docs/library-file.md: this module's docstring (the one statement of the layout), then ``prose``."""
    return (
        "# The reference library file (HDF5)\n\n"
        "Generated from `contrastcat/library/schema.py` (its docstring is the one statement of the layout); "
        "regenerate with `make docs`.\n\n```\n" + (__doc__ or "").strip("\n") + "\n```\n\n" + PROSE_MARK + "\n" + prose
    )
