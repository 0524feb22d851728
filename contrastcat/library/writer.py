"""Writing a reference library file (its format: schema.py): to a temporary file, checked, fingerprinted, then renamed into place; never a half-written or replaced library."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path

import h5py
import numpy as np

from ..errors import RunFailed
from ..io.files import PendingFile, output_target, write_failed
from .schema import CHECKSUM, FORMAT, SCHEMA_VERSION, LibraryInfo, ReferenceEntry, array_checksum, content_fingerprint


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
        if self.info.inputs == "pairs":
            group.create_dataset("pair", data=[e.pair or "" for e in entries], dtype=h5py.string_dtype())
        ids = group.create_dataset("token_ids", (len(entries),), dtype=h5py.vlen_dtype(np.int32))
        for i, entry in enumerate(entries):
            ids[i] = np.asarray(entry.token_ids, dtype=np.int32)
        group.create_group("activations")
        return group

    def add_activations(self, path: str, index: int, activations: np.ndarray) -> None:
        stored = activations.astype(self._np_dtype)
        if not np.all(np.isfinite(stored)):
            # float16 overflows past 65504: say so rather than store infinities.
            hint = " (too large for float16 storage)" if np.all(np.isfinite(activations)) else ""
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
        if info["inputs"] == "texts":
            del info["inputs"]  # so do libraries of single texts
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
