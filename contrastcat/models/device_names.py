"""How a device is spelt (``--device``), checked without torch: a misspelt one is refused before
the libraries of the work load."""

from __future__ import annotations

import re

from ..errors import BadInput

# ASCII digits only, and few of them: torch would take other scripts' digits, or overflow on an
# index of twenty (a RuntimeError, not an answer).
_DEVICE_PATTERN = re.compile(r"(auto|cpu|cuda(:[0-9]{1,6})?|mps)", re.ASCII)


def check_device_name(spec: str, named: str = "`device`") -> str:
    """``spec`` if it is auto, cpu, mps, cuda or cuda:N; else one line naming the option."""
    if not _DEVICE_PATTERN.fullmatch(spec):
        raise BadInput(f"{named}: expected auto, cpu, cuda or cuda:N, got {spec!r}")
    return spec
