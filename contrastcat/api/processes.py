"""Which process of a torchrun job this is, for callers that print (rank 0 speaks for all)."""

from __future__ import annotations

from ..output.distributed import torchrun_follower as _torchrun_follower


def torchrun_follower() -> bool:
    """Whether this process is one torchrun started other than rank 0: it leaves speaking
    (progress, notices, the summary, errors) to rank 0. Never raises."""
    return _torchrun_follower()
