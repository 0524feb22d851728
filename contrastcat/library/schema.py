"""The reference library file (HDF5): its format, in one place (``reader.py`` reads it, ``writer.py`` writes it).

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
        inputs              optional: "pairs" for a sentence-pair classifier's
                            references (build-refs --pair-field); absent: texts
    /classes/<c>/           one group per target class c (decimal index)
        attributes:         name, passing (how many have f_c < gamma), candidates
        f_c                 float64 [N]   target-class probability, ascending
        below_gamma         bool    [N]
        label               int64   [N]   the reference's own (gold = predicted) class
        source_row          int64   [N]   row index in the scanned data
        length              int64   [N]   tokens, special tokens included
        text                str     [N]
        pair                str     [N]   only in a pair library: each second text
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

import hashlib
import json
import math
from dataclasses import dataclass, fields

import h5py
import numpy as np

from ..errors import BadInput

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
    inputs: str = "texts"  # "pairs": the references are sentence pairs, for a pair classifier


OPTIONAL_ATTRIBUTES = ("fingerprint", "pools", "scan_dtype", "inputs")
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
    pair: str | None = None  # a sentence pair's second text


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


def decode_attribute(value):
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
    "inputs": "texts or pairs",
}


def attribute_fits(value, kind: str) -> bool:
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
    if kind == "texts or pairs":
        return value in ("texts", "pairs")
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


PROSE_MARK = "<!-- written by hand below -->"


def layout_markdown(prose: str = "") -> str:
    """docs/library-file.md: this module's docstring (the one statement of the layout), then ``prose``."""
    return (
        "# The reference library file (HDF5)\n\n"
        "Generated from `contrastcat/library/schema.py` (its docstring is the one statement of the layout); "
        "regenerate with `make docs`.\n\n```\n" + (__doc__ or "").strip("\n") + "\n```\n\n" + PROSE_MARK + "\n" + prose
    )
