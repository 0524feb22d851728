"""Running under ``torchrun``: one process per device, each explaining its shard.

torchrun starts N copies of the command with ``RANK``, ``WORLD_SIZE`` and
``LOCAL_RANK`` set. Each copy explains shard RANK/N into a part file in a
folder beside the output; rank 0 joins the parts into the output once every
rank has said it succeeded. The processes exchange only those few words,
over gloo (it carries Python objects on any device; the records never
travel between processes, they go through the part files), so the same
code serves CPU processes and one GPU per process.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, ContrastCatError, PeerFailed
from ..io.files import is_standard_output


@dataclass(frozen=True)
class World:
    rank: int
    size: int
    local_rank: int

    @property
    def leader(self) -> bool:
        return self.rank == 0


def torchrun_world(environ=os.environ) -> World | None:
    """The world torchrun started this process in; None for a plain run (or a world of one)."""
    if "RANK" not in environ or "WORLD_SIZE" not in environ:
        return None
    try:
        world = World(int(environ["RANK"]), int(environ["WORLD_SIZE"]), int(environ.get("LOCAL_RANK", "0")))
    except ValueError:
        raise BadInput("RANK, WORLD_SIZE and LOCAL_RANK must be integers (torchrun sets them)") from None
    return world if world.size > 1 else None


def torchrun_follower(environ=os.environ) -> bool:
    """Whether this is a torchrun process other than rank 0, which leaves speaking to rank 0.
    Never raises: it decides who prints an error, even one about these variables."""
    try:
        world = torchrun_world(environ)
    except BadInput:
        return False
    return world is not None and not world.leader


def rank_device(device: str, world: World) -> str:
    """One GPU per process: ``auto`` or ``cuda`` becomes this rank's local GPU when there is one."""
    import torch

    if device in ("auto", "cuda") and torch.cuda.is_available():
        return f"cuda:{world.local_rank % torch.cuda.device_count()}"
    return device


@contextlib.contextmanager
def process_group(world: World) -> Iterator[None]:
    import datetime

    import torch.distributed as dist

    dist.init_process_group("gloo", rank=world.rank, world_size=world.size, timeout=datetime.timedelta(hours=6))
    try:
        yield
    finally:
        dist.destroy_process_group()


def broadcast(value, world: World):
    """Rank 0's ``value``, on every rank."""
    import torch.distributed as dist

    box = [value if world.leader else None]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather(value, world: World) -> list:
    """Every rank's ``value``, on every rank, in rank order."""
    import torch.distributed as dist

    found = [None] * world.size
    dist.all_gather_object(found, value)
    return found


def parts_folder(output: str, world: World) -> Path:
    """A folder for the part files, made by rank 0 beside the output (the same file system,
    so the finished output is one rename away); a temporary folder when it goes to stdout."""
    made = None
    if world.leader:
        where = Path(tempfile.gettempdir()) if is_standard_output(output) else Path(output).resolve().parent
        made = tempfile.mkdtemp(prefix=f".{Path(output).name if not is_standard_output(output) else 'stdout'}.parts-", dir=where)
    return Path(broadcast(made, world))


def remove_parts(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def sharded_output(world: World, output: str, make_part: Callable[[str], dict], merge: Callable[[list[str]], int]) -> list[dict]:
    """Every rank writes its part with ``make_part(path)`` (which returns a small summary);
    when all succeeded, rank 0 joins them with ``merge(paths)``. Returns every rank's summary.

    A failure anywhere leaves no output: the failing rank raises its own error, the others
    raise :class:`PeerFailed` with its message, and the part folder is removed.
    """
    with process_group(world):
        folder = parts_folder(output, world)
        try:
            paths = [str(folder / f"part-{rank}.jsonl") for rank in range(world.size)]
            mine: ContrastCatError | None = None
            try:
                outcome = {"error": None, **make_part(paths[world.rank])}
            except ContrastCatError as error:
                mine, outcome = error, {"error": [error.exit_code, str(error)]}
            outcomes = gather(outcome, world)
            if mine is not None:
                raise mine
            failed = next(((rank, o["error"]) for rank, o in enumerate(outcomes) if o["error"]), None)
            if failed is not None:
                rank, (code, message) = failed
                raise PeerFailed(f"process {rank} of {world.size} failed, no output was written: {message}", code)
            joined: ContrastCatError | None = None
            if world.leader:
                try:
                    merge(paths)
                except ContrastCatError as error:
                    joined = error
            # Every rank waits for the join: the folder goes only after it, and a failed join fails all.
            (result, *_) = gather([joined.exit_code, str(joined)] if joined else None, world)
            if joined is not None:
                raise joined
            if result is not None:
                raise PeerFailed(f"joining the parts failed: {result[1]}", result[0])
            return outcomes
        finally:
            if world.leader:
                remove_parts(folder)
