"""What the CLI tests share: the in-process app, the installed script, and the one-line-error check."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from contrastcat_cli.app import app

EXE = shutil.which("contrastcat") or os.path.join(os.path.dirname(sys.executable), "contrastcat")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
runner = CliRunner()


def invoke(*args, stdin=None):
    """The real Typer app, in this process."""
    return runner.invoke(app, [str(a) for a in args], input=stdin)


def assert_one_line_error(result, *fragments, code=2):
    assert result.exit_code == code, (result.exit_code, result.output)
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def start(*args, **options) -> subprocess.Popen:
    """The installed console script in a child process, with a user's default Ctrl-C."""
    return subprocess.Popen(
        [EXE, *map(str, args)],
        stdout=options.pop("stdout", subprocess.PIPE),
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **OFFLINE, **options.pop("env", {})},
        # A shell without job control starts background jobs with SIGINT ignored, and CI may
        # run us that way; a user's Ctrl-C arrives with the default disposition.
        preexec_fn=options.pop("preexec_fn", lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)),
        **options,
    )


def wait_for(condition, process: subprocess.Popen, timeout: float = 120.0, poll: float = 0.02) -> None:
    """Poll ``condition`` while ``process`` runs; fail if it ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(poll)


def handles_signal(pid: int, signum: int) -> bool:
    """Whether the process has installed a handler for ``signum`` (Linux: SigCgt in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signum - 1)))


def lines_in(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0
