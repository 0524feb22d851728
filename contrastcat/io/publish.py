"""Several files written as one: each made whole in a temporary file first, then all put in place
with Ctrl-C held back for those few renames, so a folder holds one run's files, never two runs'
mixed."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from .. import arguments as check
from ..errors import BadInput, Interrupted
from .files import PendingFile, folder_file_target


@contextlib.contextmanager
def held_back() -> Iterator[list[int]]:
    """Ctrl-C and SIGTERM noted, not acted on, while the block runs (Python handles signals in
    its main thread; elsewhere there is no handler to replace, and nothing is held back)."""
    caught: list[int] = []
    previous = {}
    try:
        for number in (signal.SIGINT, signal.SIGTERM):
            previous[number] = signal.signal(number, lambda signum, frame: caught.append(signum))
    except ValueError:  # not the main thread
        pass
    try:
        yield caught
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)


def publish(files: Mapping[str, str], contents: Mapping[str, Iterable[str]], inputs: Sequence[str | None],
            own_file: Callable[[str], None] = lambda path: None) -> None:
    """Each file written to a temporary one first, then all of them put in place with Ctrl-C held
    back (a few renames): a folder holds one comparison's files, never two runs' mixed; an
    interrupt while the temporaries are written leaves the old files as they were. ``own_file``
    checks each name first (a link made meanwhile, a FIFO), as the caller refuses them."""
    pending: dict[str, PendingFile] = {}
    for path in files.values():  # again: a link may have been made while the work ran
        own_file(path)
    try:
        for name, lines in contents.items():
            # Put in place by a rename onto the name in the folder: a link made from here on is
            # replaced, never written through.
            pending[name] = PendingFile(folder_file_target(files[name], inputs))
            with open(pending[name].temp, "w", encoding="utf-8", newline="\n") as stream:
                for line in lines:
                    stream.write(line)
        with held_back() as caught:
            for name in list(pending):
                pending.pop(name).commit()
        if caught:  # the Ctrl-C held back while the files were put in place
            raise Interrupted(f"interrupted; {check.listed(list(files.values()))} were written")
    except OSError as error:
        raise BadInput(f"{error.filename or files[next(iter(contents))]}: cannot write there ({error.strerror})") from None
    finally:
        for left in pending.values():
            left.discard()
