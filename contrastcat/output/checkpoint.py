"""A checkpointed output, for ``explain --resume``.

A checkpoint is two files beside the output NAME:

- ``.NAME.contrastcat-partial``, the record file: exactly the output's bytes
  so far, one record a line, as a run without ``--resume`` writes them. When
  the run completes, this file becomes NAME.
- ``.NAME.contrastcat-partial.digests``: a header line that says how the
  records were computed (batch size, window, versions, device, threads: what
  records do not show but what changes their last digits), then one digest
  per record line: the SHA-256 of the digest before (the header's, for the
  first line) and the record.

Each record is written (and flushed) to the record file first, then its
digest. A line edited, damaged, dropped or moved after it was written breaks
the chain, and so does a digest whose record line is gone: refused, named by
the record file and line, before anything is kept. A record line a kill left
without its digest, or a last line it cut short, is computed again: both files
are cut back to the lines the digests vouch for.

When the run completes, publishing is a rename: every line is checked again,
the record file gets the output's mode (a replaced file's, else what the umask
allows) and its run's digest, is synced and renamed over NAME; then the
digests go. The record file lies beside NAME (beside a symlink's target: the
link is followed and kept), so the rename stays on one file system and needs
no second copy of the records: a full disk fails while records are written,
naming the output, with the checkpoint kept; never at the end. An output that
is not a regular file (a FIFO, a device) is written in place, by copying.
Where the file system keeps extended attributes, the output carries the digest
of its run and records (``user.contrastcat.run``), so a later ``--resume`` can
tell it holds this run's records unchanged without computing them again; an
output that holds these bytes already is left alone.

A run that is interrupted (Ctrl-C, a crash, SIGKILL) or fails leaves the
checkpoint, and the next run with ``--resume`` continues it: the lines it
keeps stay byte for byte and the rest is appended. A checkpoint made another
way (or by another format) is refused and left as it was; a digests file
without its record file is what a publish a kill interrupted leaves, or what
deleting the record file to start over leaves: it is started over. An
exclusive lock on the digests file keeps two runs off one output.

Which lines are kept is the caller's decision (:meth:`Checkpoint.keep`): it
knows what they must hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput, ContrastCatError, Interrupted, RunFailed
from ..spec import Names, backticked
from ..io.files import OutputTarget, new_file_mode, output_target, remove_stale_temporaries, write_failed

PARTIAL_SUFFIX = ".contrastcat-partial"
DIGESTS_SUFFIX = ".digests"
HEADER_KEY = "contrastcat-checkpoint"
# 1: records without digests (contrastcat 0.6 and before); 2: a header line, then each record
# with its digest on one line; 3: the records alone, their header and digests in a file beside.
FORMAT = 3
DIGEST_CHARS = 32  # hex digits of SHA-256 kept per line: 128 bits
DIGEST_LINE = DIGEST_CHARS + 1
RUN_ATTRIBUTE = "user.contrastcat.run"  # on a published output: the digest of its run and records
_CHUNK = 1 << 20
_START_OVER = "the checkpoint is left as it is: delete it to start over"


def partial_path(path: Path) -> Path:
    """The checkpoint's record file for the output ``path``. A long name is shortened (its start
    and a hash of all of it), so the checkpoint's names fit the file system beside any output
    name that fits by itself."""
    name = path.name
    raw = os.fsencode(name)
    if len(raw) > 160:
        name = os.fsdecode(raw[:120]) + "~" + hashlib.sha256(raw).hexdigest()[:12]
    return path.parent / f".{name}{PARTIAL_SUFFIX}"


def digests_path(partial: Path) -> Path:
    """The checkpoint's header and digests, beside its record file ``partial``."""
    return partial.parent / f"{partial.name}{DIGESTS_SUFFIX}"


def header_line(run: dict) -> bytes:
    return json.dumps({HEADER_KEY: FORMAT, **run}, sort_keys=True).encode()


def _chained(previous: bytes, record: bytes) -> bytes:
    return hashlib.sha256(previous + b"\n" + record).hexdigest()[:DIGEST_CHARS].encode()


def _seed(header: bytes) -> bytes:
    return hashlib.sha256(header).hexdigest()[:DIGEST_CHARS].encode()


def run_digest(run: dict, records: bytes) -> bytes:
    """What a published output's ``user.contrastcat.run`` attribute holds: its run's header and records, digested."""
    return _run_hash(run, records).encode()


def _run_hash(run: dict, records: bytes = b"", digest=None) -> str:
    digest = digest or hashlib.sha256(header_line(run) + b"\n")
    digest.update(records)
    return "sha256:" + digest.hexdigest()


def recorded_run(path: Path) -> bytes | None:
    """The run digest a published output carries; None where the file system keeps none."""
    try:
        return os.getxattr(path, RUN_ATTRIBUTE)
    except (OSError, AttributeError):
        return None


def _mark(path: Path | int, value: bytes) -> None:
    with contextlib.suppress(OSError, AttributeError):  # no extended attributes there: a later --resume recomputes
        os.setxattr(path, RUN_ATTRIBUTE, value)


@dataclass
class _Contents:
    header: dict
    header_size: int  # the digests file's header line, its newline included
    records: list[bytes]  # each record line the digests vouch for, without its newline
    ends: list[int]  # where each of those lines ends in the record file (after its newline)
    chain: list[bytes]  # the digest before the first line, then after each line


def _other_format(where: Path, version) -> BadInput:
    return BadInput(
        f"{where}:1: a checkpoint in format {version!r} (another contrastcat version); this one "
        f"continues format {FORMAT}: delete it to start over"
    )


def _without_digests(partial: Path, records: bytes) -> BadInput:
    """A record file with records and no digests beside it: an older format's checkpoint, or not a checkpoint."""
    try:
        first = json.loads(records.partition(b"\n")[0])
    except ValueError:
        first = None
    if isinstance(first, dict) and HEADER_KEY in first:
        return _other_format(partial, first[HEADER_KEY])
    return BadInput(
        f"{partial}: holds records but not their digests ({digests_path(partial).name} is missing), so "
        f"they cannot be continued; {_START_OVER}"
    )


def _read(partial: Path, records: bytes, sums: bytes) -> _Contents:
    """The checkpoint read from its record file ``partial`` (``records``) and its digests file
    (``sums``), every record line's digest checked; lines without a digest are left out."""
    digests = digests_path(partial)
    first, newline, rest = sums.partition(b"\n")
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not newline or not isinstance(header, dict) or HEADER_KEY not in header:
        raise BadInput(f"{digests}:1: not a contrastcat checkpoint's digests; delete {partial} to start over")
    if header[HEADER_KEY] != FORMAT:
        raise _other_format(digests, header[HEADER_KEY])
    lines = records.split(b"\n")[:-1]  # the last piece: empty, or cut short by a kill
    sums_lines = rest.split(b"\n")[:-1]
    contents = _Contents(header, len(first) + 1, [], [], [_seed(first)])
    position = 0
    for number, (record, digest) in enumerate(zip(lines, sums_lines), start=1):
        if digest != _chained(contents.chain[-1], record):
            raise BadInput(
                f"{partial}:{number}: changed or damaged since contrastcat wrote it (its digest in "
                f"{digests.name} does not match); {_START_OVER}"
            )
        position += len(record) + 1
        contents.records.append(record)
        contents.ends.append(position)
        contents.chain.append(digest)
    if len(sums_lines) > len(lines):  # a record is written before its digest: its line was dropped since
        number = len(lines) + 1
        raise BadInput(
            f"{partial}:{number}: missing or cut short, yet {digests.name} holds its digest (line "
            f"{number + 1}): changed since contrastcat wrote it; {_START_OVER}"
        )
    return contents


def _check_header(path: Path, header: dict, run: dict) -> None:
    for key, value in run.items():
        if header.get(key) != value:
            raise BadInput(
                f"{path}: was made with {key} {header.get(key)!r}, this run has {value!r} "
                "(its records would differ in the last digits); run with the same settings to continue "
                "it, or delete it to start over"
            )


def _check_kind(partial: Path) -> bool:
    """Whether a checkpoint file exists at ``partial``; anything there but a regular file is refused."""
    try:
        found = os.lstat(partial)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise BadInput(f"{partial}: cannot read the checkpoint ({error.strerror})") from None
    if not stat.S_ISREG(found.st_mode):
        what = (
            "a directory" if stat.S_ISDIR(found.st_mode)
            else "a symbolic link" if stat.S_ISLNK(found.st_mode)
            else "not a regular file"
        )
        raise BadInput(f"{partial}: is {what}, not a checkpoint a run can be resumed from; move it away to start over")
    return True


def _read_file(path: Path) -> bytes | None:
    """A checkpoint file's bytes; None when it is gone."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise BadInput(f"{path}: cannot read the checkpoint ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as stream:
        try:
            return stream.read()
        except OSError as error:
            raise BadInput(f"{path}: cannot read the checkpoint ({error.strerror})") from None


def _existing(partial: Path) -> tuple[bool, bool]:
    """Whether the record file and the digests file exist. A record file with records but no
    digests (an older format's checkpoint, say) is refused before anything is made beside it."""
    records, digests = _check_kind(partial), _check_kind(digests_path(partial))
    if records and not digests:
        content = _read_file(partial)
        if content:
            raise _without_digests(partial, content)
    return records, digests


def _resumable_target(path: str, inputs: Sequence[str | None]) -> OutputTarget:
    target = output_target(path, inputs)
    if target.is_stdout or target.in_place:
        raise BadInput(f"a run is resumed into a regular file of its own, not {path}")
    return target


def _held_elsewhere(descriptor: int, path: str, digests: Path) -> None:
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BadInput(f"{path}: another contrastcat run is writing it (it holds the lock on {digests.name})") from None


def check_not_resumed_elsewhere(path: str, inputs: Sequence[str | None] = ()) -> None:
    """A plain run writing ``path`` while a ``resume`` run writes it too would replace one's
    output with the other's: refuse it, as a second ``resume`` run is refused, when the
    checkpoint's lock is held. (A checkpoint no run holds, one an interrupted run left, is
    not in the way: the plain run's output is whole when published.)"""
    target = output_target(path, inputs)
    if target.is_stdout or target.in_place:
        return
    digests = digests_path(partial_path(target.path))
    try:
        descriptor = os.open(digests, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return  # no checkpoint (or none that can be read): no resume run is writing
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        raise BadInput(
            f"{path}: another contrastcat run is writing it with resume (it holds the lock on {digests.name}); "
            "wait for it, or write elsewhere"
        ) from None
    finally:
        os.close(descriptor)


def check_checkpoint(path: str, inputs: Sequence[str | None] = (), run: dict | None = None) -> tuple[Path, int | None]:
    """Before any work: the checkpoint of ``-o path`` and how many records it holds (None: there is none).
    A checkpoint that cannot be continued is refused in one line: not regular files, not a
    checkpoint, a line changed since it was written, another run writing it, or made with other
    values of ``run`` (what of the header is known before the model loads)."""
    target = _resumable_target(path, inputs)
    partial = partial_path(target.path)
    digests = digests_path(partial)
    has_records, has_digests = _existing(partial)
    if not has_digests:
        return partial, 0 if has_records else None  # an empty record file: nothing kept, nothing refused
    try:
        descriptor = os.open(digests, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return partial, 0 if has_records else None  # published or removed since
    except OSError as error:
        raise BadInput(f"{digests}: cannot read the checkpoint ({error.strerror})") from None
    with os.fdopen(descriptor, "rb") as stream:
        _held_elsewhere(descriptor, path, digests)
        try:
            sums = stream.read()
        except OSError as error:
            raise BadInput(f"{digests}: cannot read the checkpoint ({error.strerror})") from None
        records = _read_file(partial) if has_records else None
    if records is None:
        return partial, None  # digests without records: what a publish or a deleted record file leaves
    if b"\n" not in sums:
        if records:
            raise _without_digests(partial, records)
        return partial, 0  # a run killed as it began
    contents = _read(partial, records, sums)
    _check_header(partial, contents.header, run or {})
    return partial, len(contents.records)


class Checkpoint:
    """The records a run starts from, and the streams it appends to."""

    def __init__(self, target: OutputTarget, records, digests, run: dict, records_existed: bool = True) -> None:
        self.target = target
        self.path = partial_path(target.path)
        self.digests_path = digests_path(self.path)
        # Both unbuffered: a failed write leaves nothing behind to fail again.
        self._records, self._digests = records, digests
        self._run = run
        try:
            content, sums = records.read(), digests.read()
        except OSError as error:
            raise BadInput(f"{self.path}: cannot read the checkpoint ({error.strerror})") from None
        if records_existed and b"\n" not in sums and content:
            raise _without_digests(self.path, content)
        if not records_existed or b"\n" not in sums:
            # Nothing to continue: a new checkpoint, digests a publish left, or a run killed as it began.
            header = header_line(run) + b"\n"
            self._cut(self._digests, 0)
            self._cut(self._records, 0)
            self._append(self._digests, header)
            content, sums = b"", header
        contents = _read(self.path, content, sums)
        _check_header(self.path, contents.header, run)
        self._header_size = contents.header_size
        self._ends = contents.ends
        self._chain = contents.chain
        self.lines: list[bytes] = contents.records
        self.written = len(self.lines)  # complete records in the file now, each with its digest
        self.appended = 0  # records this run wrote
        self._kept = False

    def _append(self, stream, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                view = view[stream.write(view):]
        except OSError as error:
            raise write_failed(self.target, error) from None

    def _cut(self, stream, size: int) -> None:
        try:
            stream.seek(size)
            stream.truncate()
        except OSError as error:
            raise write_failed(self.target, error) from None

    def keep(self, count: int) -> None:
        """Keep the first ``count`` vouched-for records, drop everything after them (lines
        without a digest, a line cut short). The digests go first: a kill in between leaves
        record lines without digests, which are computed again, never digests without lines."""
        count = min(count, len(self.lines))
        self._cut(self._digests, self._header_size + count * DIGEST_LINE)
        self._cut(self._records, self._ends[count - 1] if count else 0)
        self.lines = self.lines[:count]
        del self._ends[count:], self._chain[count + 1 :]
        self.written = count
        self._kept = True

    def write(self, line: str) -> None:
        """Append one record, then its digest: a kill loses at most the record being written."""
        if not self._kept:
            self.keep(len(self.lines))  # lines without a digest, or cut short, go first
        record = line.encode("utf-8")
        digest = _chained(self._chain[-1], record)
        self._append(self._records, record + b"\n")
        self._append(self._digests, digest + b"\n")
        self._chain.append(digest)
        self.written += 1
        self.appended += 1

    def _verified_mark(self) -> bytes:
        """Every record line checked again against its digest, as the files are now; the
        value of the published output's run attribute."""
        records, digests = self._records.fileno(), self._digests.fileno()
        sums = _pread_all(digests)
        header, _, rest = sums.partition(b"\n")
        expected = rest.split(b"\n")
        chain, number, pending, offset = _seed(header), 0, b"", 0
        digest = hashlib.sha256(header_line(self._run) + b"\n")
        while chunk := os.pread(records, _CHUNK, offset):
            offset += len(chunk)
            digest.update(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for record in lines:
                number += 1
                chain = _chained(chain, record)
                if number > len(expected) - 1 or expected[number - 1] != chain:
                    raise RunFailed(
                        f"{self.path}:{number}: changed while this run wrote it; nothing was written to {self.target.given}"
                    )
        if pending or number != len(expected) - 1 or expected[-1]:
            raise RunFailed(
                f"{self.path}:{number + 1}: changed while this run wrote it; nothing was written to {self.target.given}"
            )
        return _run_hash(self._run, digest=digest).encode()

    def publish(self) -> None:
        """The record file becomes the output: synced, marked with the run's digest, renamed over
        it; then the digests go. An output that holds these bytes already is left alone; one that
        is not a regular file gets the records copied into it."""
        try:
            mark = self._verified_mark()
        except OSError as error:
            raise write_failed(self.target, error) from None
        output = self.target.path
        if self.target.in_place or _not_regular(output):
            self._copy_to(self.target.given)
        elif _same_bytes(self.path, output):
            _mark(output, mark)  # nothing to change: not even the file's time
        else:
            descriptor = self._records.fileno()
            with contextlib.suppress(OSError):  # the mode it replaces, or the umask's
                os.fchmod(descriptor, new_file_mode(output))
            _mark(descriptor, mark)
            try:
                os.fsync(descriptor)  # the data is on disk before the name points at it
                os.replace(self.path, output)
            except OSError as error:
                raise write_failed(self.target, error) from None
            with contextlib.suppress(OSError):
                self.digests_path.unlink()
            _sync_directory(output.parent)
            return
        self.remove()

    def _copy_to(self, given: str) -> None:
        try:
            with open(self.path, "rb") as source, open(given, "wb") as sink:
                shutil.copyfileobj(source, sink, _CHUNK)
        except OSError as error:
            raise write_failed(self.target, error) from None

    def remove(self) -> None:
        """Remove the checkpoint: the record file first (digests alone are started over)."""
        for each in (self.path, self.digests_path):
            with contextlib.suppress(OSError):
                each.unlink()


def _pread_all(descriptor: int) -> bytes:
    parts, offset = [], 0
    while chunk := os.pread(descriptor, _CHUNK, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def _not_regular(path: Path) -> bool:
    """Whether something other than a regular file or a directory is at ``path`` now (a FIFO, a device)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _sync_directory(directory: Path) -> None:
    """The rename on disk too, where the file system allows."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _same_bytes(new: Path, old: Path) -> bool:
    try:
        if not old.is_file() or os.path.getsize(old) != os.path.getsize(new):
            return False
        with open(new, "rb") as first, open(old, "rb") as second:
            while True:
                one, other = first.read(_CHUNK), second.read(_CHUNK)
                if one != other:
                    return False
                if not one:
                    return True
    except OSError:
        return False


def _open_new_or_existing(path: Path) -> tuple[int, bool]:
    """A checkpoint file opened for reading and writing, and whether this call made it."""
    _check_kind(path)
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            return os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o600), True
        except FileExistsError:
            return os.open(path, flags), False
    except OSError as error:
        raise BadInput(f"{path}: cannot open the checkpoint ({error.strerror})") from None


def _open_locked(digests: Path, path: str) -> tuple[int, bool]:
    """The digests file, opened and locked: the lock of the checkpoint. A file a run that
    published removed while this one waited for its lock is not the checkpoint: opened again."""
    for _ in range(100):
        descriptor, created = _open_new_or_existing(digests)
        try:
            _held_elsewhere(descriptor, path, digests)
            held, there = os.fstat(descriptor), os.lstat(digests)
        except FileNotFoundError:
            os.close(descriptor)
            continue
        except BaseException:
            os.close(descriptor)
            raise
        if (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino):
            return descriptor, created
        os.close(descriptor)
    raise BadInput(f"{path}: another contrastcat run keeps replacing its checkpoint {digests}")


def _count_records(partial: Path) -> int:
    """The record lines with their digests (what a kept-checkpoint message counts)."""
    try:
        lines = partial.read_bytes().count(b"\n")
        digests = digests_path(partial).read_bytes().count(b"\n") - 1
    except OSError:
        return 0
    return max(0, min(lines, digests))


def kept_note(partial: Path, records: int, named: Names = backticked) -> str:
    return f"{records} record(s) kept in {partial}: run the same command with {named('resume')} to continue"


@contextlib.contextmanager
def checkpointed_output(
    path: str, run: dict, inputs: Sequence[str | None] = (), named: Names = backticked
) -> Iterator[Checkpoint]:
    """A :class:`Checkpoint` for ``path``, made (or continued) for a run described by
    ``run``; published when the block completes, kept (and said so) when it is
    interrupted or fails after writing records."""
    target = _resumable_target(path, inputs)
    remove_stale_temporaries(target.path)
    partial = partial_path(target.path)
    digests = digests_path(partial)
    _existing(partial)  # an older format's checkpoint is refused before anything is made beside it
    digests_descriptor, made_digests = _open_locked(digests, path)
    handles = [os.fdopen(digests_descriptor, "r+b", buffering=0)]
    existed = False
    checkpoint = None
    try:
        records_descriptor, made = _open_new_or_existing(partial)
        existed = not made
        handles.append(os.fdopen(records_descriptor, "r+b", buffering=0))
        with contextlib.suppress(OSError):  # the output's mode (the file was made 0600); publishing sets it again
            os.fchmod(records_descriptor, new_file_mode(target.path))
        checkpoint = Checkpoint(target, handles[1], handles[0], run, records_existed=existed)
        yield checkpoint
        checkpoint.publish()
    except BaseException as error:
        records = checkpoint.written if checkpoint is not None else (_count_records(partial) if existed else 0)
        if records == 0 and (not existed or made_digests):
            digests.unlink(missing_ok=True)  # nothing to resume from: leave nothing behind
            if not existed:
                partial.unlink(missing_ok=True)
        _close(handles)  # unbuffered: nothing left to flush that could fail again
        if records == 0 or isinstance(error, Interrupted):
            raise
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted(f"interrupted; {kept_note(partial, records, named)}") from None
        appended = checkpoint is not None and checkpoint.appended > 0
        if isinstance(error, ContrastCatError) and (error.exit_code != BadInput.exit_code or appended):
            error.args = (f"{error}; {kept_note(partial, records, named)}",)  # the same error, saying what was kept
        raise
    else:
        _close(handles)  # the lock goes last: the checkpoint is gone by then


def _close(handles) -> None:
    for handle in handles:
        with contextlib.suppress(OSError):
            handle.close()
