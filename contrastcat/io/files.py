"""Where output goes, and how it gets there without damaging anything.

- ``-`` is standard output.
- A regular file, a symlink to one (the link is followed and kept) or a path
  that does not exist yet is written to a temporary file beside it and
  renamed over it when complete: the path holds the old content or the new,
  never half of either. The temporary name carries the writer's pid, so a
  later run recognises one left by a killed run and removes it.
- Anything else that exists (``/dev/null``, a FIFO, ``/dev/stdout``) is
  written in place: a rename would replace it with a regular file.
- An output that is one of the run's inputs, or an existing file its model
  directory's loading reads (weights, config, tokenizer), is refused before any work.
- A new file gets the mode the umask allows; a replaced file keeps its mode.

Write failures (a full disk, a broken device) name the output path the user
gave, never the temporary file.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..errors import BadInput, Interrupted, RunFailed

STDIO = "-"
TEMP_SUFFIX = ".contrastcat-tmp"
# The shell's own file descriptors: written through, never renamed over (an `>> log`
# would lose what it held). Any other path is judged by what it is, not by where.
STDOUT_ALIASES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")
DESCRIPTOR_DIRECTORIES = ("/dev/fd/", "/proc/self/fd/", "/dev/stderr", "/dev/stdin")


@dataclass(frozen=True)
class OutputTarget:
    given: str  # as the user wrote it: messages name this
    path: Path | None  # the file written (symlinks followed); None for standard output
    in_place: bool  # written directly, no temporary file and no rename

    @property
    def is_stdout(self) -> bool:
        return self.path is None


def is_standard_output(path: str | None) -> bool:
    """``-``, or a name of this process's standard output (``/dev/stdout``, ``/dev/fd/1``)."""
    return path is not None and (path == STDIO or os.path.abspath(path) in STDOUT_ALIASES)


def output_name(path: str) -> str:
    """An output as a message names it: "standard output" rather than ``-``."""
    return "standard output" if is_standard_output(path) else path


def output_target(path: str, inputs: Sequence[str | None] = ()) -> OutputTarget:
    """Check an output path before any work: a writable place that is none of ``inputs``."""
    try:
        return _output_target(path, inputs)
    except OSError as error:  # a name too long for the file system, a loop of links, ...
        raise BadInput(f"{path}: cannot write there ({error.strerror or error})") from None


def _output_target(path: str, inputs: Sequence[str | None]) -> OutputTarget:
    if is_standard_output(path):
        return OutputTarget(path, None, True)
    resolved = Path(os.path.realpath(path))  # follows symlinks, dangling ones too
    if resolved.is_dir() or path.endswith(("/", os.sep)):  # "out/": a folder meant, never a file named out
        raise BadInput(f"{path}: is a directory, expected an output file")
    if not resolved.parent.is_dir():
        raise BadInput(f"{path}: directory {Path(path).parent} does not exist")
    try:
        existing = os.stat(resolved)
    except OSError:
        existing = None
    in_place = (existing is not None and not stat.S_ISREG(existing.st_mode)) or os.path.abspath(path).startswith(
        DESCRIPTOR_DIRECTORIES
    )
    target = OutputTarget(path, resolved, in_place)
    for source in inputs:
        if source is None:
            continue
        if (  # existing or not: a file the loader would read next time is never created there either
            os.path.isdir(source)
            and resolved.parent == Path(os.path.realpath(source))
            and is_model_file(resolved.name)
        ):
            raise BadInput(f"{path}: is a file of {source}, which this run reads (the model); choose another output")
        if existing is not None and stat.S_ISREG(existing.st_mode) and _same_file(existing, source):
            shown = "standard input" if source == STDIO else source
            raise BadInput(f"{path}: is the input file {shown}; writing there would destroy it, choose another output")
    if not in_place:
        _probe(target)
    return target


def folder_file_target(path: str, inputs: Sequence[str | None] = ()) -> OutputTarget:
    """A file of a folder the tool fills itself (compare's): the name in the folder, never what a
    link there points to. It is put in place by a rename onto the name, which replaces a link
    made while the run worked instead of writing through it to a file elsewhere."""
    try:
        folder = Path(os.path.realpath(os.path.dirname(path) or "."))
        name = folder / os.path.basename(path)
        try:
            existing = os.lstat(name)
        except FileNotFoundError:
            existing = None
        if existing is not None and stat.S_ISDIR(existing.st_mode):
            raise BadInput(f"{path}: is a directory, expected an output file")
        for source in inputs:
            if source is not None and existing is not None and stat.S_ISREG(existing.st_mode) \
                    and _same_file(existing, source):
                raise BadInput(f"{path}: is the input file {source}; writing there would destroy it, choose another output")
        target = OutputTarget(path, name, False)
        _probe(target)
    except OSError as error:
        raise BadInput(f"{path}: cannot write there ({error.strerror or error})") from None
    return target


# What loading a model directory reads (transformers' and contrastcat's names): an output may
# sit beside them (a library next to its model is a common layout), never replace one.
MODEL_FILE_PATTERNS = (
    "config.json", "generation_config.json", "contrastcat-model.json",
    "*.safetensors", "*.safetensors.index.json", "*.bin", "*.bin.index.json", "*.pt", "*.pth", "*.ckpt",
    "tf_model.h5", "flax_model.msgpack", "*.gguf",
    "tokenizer*", "vocab.*", "merges.txt", "special_tokens_map.json", "added_tokens.json",
    "*.model", "*.tiktoken", "spiece*", "sentencepiece*", "preprocessor_config.json", "chat_template.*",
    "*.py",  # remote code, were it ever trusted
)


def is_model_file(name: str) -> bool:
    """Whether loading a model directory would read a file of this name."""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in MODEL_FILE_PATTERNS)


def check_output_path(path: str, inputs: Sequence[str | None] = ()) -> None:
    """Fail before any work when ``path`` cannot (or must not) be written."""
    output_target(path, inputs)


def _same_file(existing: os.stat_result, source: str) -> bool:
    try:
        other = os.fstat(sys.stdin.fileno()) if source == STDIO else os.stat(source)
    except (OSError, ValueError, AttributeError):  # no real stdin (a test runner), or a missing input
        return False
    return (existing.st_dev, existing.st_ino) == (other.st_dev, other.st_ino)


def _probe(target: OutputTarget) -> None:
    """Create and remove a temporary file where the output will go: permissions,
    read-only file systems and pseudo file systems all show up here, before any work."""
    try:
        handle, name = _mkstemp(target.path)
    except OSError as error:
        raise BadInput(f"{target.given}: cannot write there ({error.strerror})") from None
    os.close(handle)
    os.unlink(name)


def _temp_stem(path: Path) -> str:
    """The start of a temporary file's name for ``path``. A long name is shortened (its start
    and a hash of all of it): the pid, random part and suffix must fit the file system's
    255-byte limit beside any name that fits by itself."""
    name = path.name
    raw = os.fsencode(name)
    if len(raw) > 160:
        name = os.fsdecode(raw[:120]) + "~" + hashlib.sha256(raw).hexdigest()[:12]
    return f".{name}."


def _mkstemp(path: Path) -> tuple[int, str]:
    return tempfile.mkstemp(prefix=f"{_temp_stem(path)}{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process: not ours to judge
    return True


def stale_temporaries(path: Path) -> list[Path]:
    """Temporary files beside ``path`` left by contrastcat runs that no longer exist."""
    prefix = _temp_stem(path)
    stale = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return []
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        pid = name[len(prefix) :].split(".", 1)[0]
        if pid.isdigit() and not _pid_alive(int(pid)):
            stale.append(path.parent / name)
    return sorted(stale)


def remove_stale_temporaries(path: Path) -> int:
    removed = 0
    for each in stale_temporaries(path):
        with contextlib.suppress(OSError):
            each.unlink()
            removed += 1
    return removed


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def new_file_mode(path: Path) -> int:
    """The mode ``path`` keeps if it is a regular file now, else what the umask allows."""
    try:
        existing = os.stat(path)
        if stat.S_ISREG(existing.st_mode):
            return stat.S_IMODE(existing.st_mode)
    except OSError:
        pass
    return 0o666 & ~_umask()


def write_failed(target: OutputTarget, error: OSError) -> Exception:
    """One line naming the output the user gave (never the temporary file)."""
    if error.errno == errno.EPIPE:
        return error  # a closed pipe downstream: the CLI exits quietly
    reason = error.strerror or type(error).__name__
    if target.is_stdout:
        # What was printed before the failure is out of our hands: the same words as any
        # other command whose standard output fails, without claiming nothing got there.
        return RunFailed(f"cannot write to standard output ({reason})")
    return RunFailed(f"{target.given}: cannot write ({reason}); nothing was written there")


class PendingFile:
    """A temporary file that becomes ``target`` on :meth:`commit`, or vanishes on :meth:`discard`.

    For an in-place target (a device, a FIFO) the temporary file lives in the
    system's temporary directory and is copied into the target on commit; that
    is how a seekable format (HDF5) reaches ``/dev/null`` or a pipe.
    """

    def __init__(self, target: OutputTarget) -> None:
        if target.is_stdout:
            raise BadInput("this output cannot go to standard output")
        self.target = target
        if target.in_place:
            handle, name = tempfile.mkstemp(prefix=".contrastcat.", suffix=TEMP_SUFFIX)
        else:
            remove_stale_temporaries(target.path)
            try:
                handle, name = _mkstemp(target.path)
            except OSError as error:
                raise BadInput(f"{target.given}: cannot write there ({error.strerror})") from None
            os.fchmod(handle, new_file_mode(target.path))
        os.close(handle)
        self.temp = Path(name)

    def commit(self) -> None:
        try:
            with open(self.temp, "rb+") as stream:
                os.fsync(stream.fileno())  # the data is on disk before the name points at it
            if self.target.in_place:
                with open(self.temp, "rb") as source, open(self.target.given, "wb") as sink:
                    shutil.copyfileobj(source, sink)
                self.temp.unlink()
            else:
                os.replace(self.temp, self.target.path)
        except OSError as error:
            self.discard()
            raise write_failed(self.target, error) from None

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            self.temp.unlink()


class _Sink:
    """A text stream whose write errors name the output, not the temporary file."""

    def __init__(self, stream: TextIO, target: OutputTarget, flush_each: bool = False) -> None:
        self._stream = stream
        self._target = target
        self._flush_each = flush_each

    def write(self, text: str) -> int:
        try:
            written = self._stream.write(text)
            if self._flush_each:
                self._stream.flush()
            return written
        except OSError as error:
            raise write_failed(self._target, error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise write_failed(self._target, error) from None


@contextlib.contextmanager
def atomic_text_output(path: str, inputs: Sequence[str | None] = ()) -> Iterator[TextIO]:
    """Yield a text stream for ``path``: on success the output appears whole; on any
    error (KeyboardInterrupt included) a regular file is left as it was."""
    target = output_target(path, inputs)
    if target.is_stdout:
        # Each write reaches a pipe at once: the next program in it sees records as they are made.
        sink = _Sink(sys.stdout, target, flush_each=True)
        yield sink
        sink.flush()
        return
    if target.in_place:
        try:
            stream = open(target.given, "w", encoding="utf-8", newline="\n")
        except OSError as error:
            raise BadInput(f"{target.given}: cannot write there ({error.strerror})") from None
        with _writing(stream, target) as sink:
            yield sink
        return
    pending = PendingFile(target)
    try:
        with _writing(open(pending.temp, "w", encoding="utf-8", newline="\n"), target) as sink:
            yield sink
        pending.commit()
    except BaseException:
        pending.discard()
        raise


@contextlib.contextmanager
def _writing(stream: TextIO, target: OutputTarget) -> Iterator[TextIO]:
    """``stream`` behind a :class:`_Sink`, flushed and closed at the end; a failure of the
    last flush (a full disk shows there) is a one-line error naming the output."""
    try:
        sink = _Sink(stream, target)
        yield sink
        sink.flush()
    finally:
        try:
            stream.close()
        except OSError as error:
            raise write_failed(target, error) from None


@contextlib.contextmanager
def interrupted_after(written: str | None, pending: str | None = None, *, plural: bool = False) -> Iterator[None]:
    """Ctrl-C while ``pending`` is written (None: while what follows an output runs, its notice
    or checks), after ``written`` was (None: nothing yet): say so, rather than the usual "no
    output was written" when one output is there (new or replaced)."""
    try:
        yield
    except KeyboardInterrupt as interrupt:
        if written is None or isinstance(interrupt, Interrupted):
            raise
        rest = "" if pending is None else f", {pending} was not"
        raise Interrupted(f"interrupted; {written} {'were' if plural else 'was'} written{rest}") from None
