"""The merge use case: the part files of a sharded explain run -> the run's records (its
options: ``options.merge``)."""

from __future__ import annotations


from ..output.shards import merge_parts
from .options.merge import MergeOptions


def run_merge(chosen: MergeOptions) -> int:
    """Join the parts into ``output`` in input order: the bytes one process writes. Nothing is
    written unless every shard is there, complete. Returns the number of records written."""
    return merge_parts(chosen.parts, chosen.output)
