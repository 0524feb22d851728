"""The library's words, without its arrays: the pools a library may store beside the contrasting
references, and how many references a class may hold. Read by build-refs' option checks,
which need neither numpy nor h5py."""

from __future__ import annotations

import os

from ..errors import BadInput

# More references per class than any library holds in memory; also HDF5's attributes' limit.
MAX_REFERENCES = 1_000_000

ABLATION_POOLS = ("same", "random")


def parse_pools(text: str, named: str = "`pools`") -> tuple[str, ...]:
    """``--pools``: a comma list of same and random, or ``none`` alone (``named``: the option as
    the caller spells it)."""
    parts = [part.strip() for part in text.split(",")]
    if parts == ["none"]:
        return ()
    if "" in parts:
        raise BadInput(f"{named} {text!r}: name same, random or both (same,random), or none for neither")
    if "none" in parts:
        raise BadInput(f"{named} {text!r}: none stands alone (it stores no pool)")
    unknown = [part for part in parts if part not in ABLATION_POOLS]
    if unknown:
        raise BadInput(f"{named}: unknown pool {unknown[0]!r} (choose from same, random, or none)")
    return tuple(dict.fromkeys(parts))  # same,same is same: one pool, said twice


def missing_library(path: str) -> str | None:
    """Why no library can be at ``path`` (nothing there, or a link to nothing); None where
    something is (whether it is a library is the reader's to say)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return "a symbolic link to nothing" if os.path.islink(path) else "no such reference library file"
    except (OSError, ValueError):  # a name too long, a loop of links: the reader says what
        return None
    return None
