"""A Ctrl-C while the console script is still importing.

Before, a signal between the interpreter's start and ``launch.main`` installing its handlers
could print the traceback of the import under way. Now the package's first lines install a
handler that says one line and exits 130. What comes before them is the interpreter's own start
(docs/cli.md, "Signals"; benchmarks/interrupt_window.py measures it).
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

# The console script's first step, stopped at the worst moment: right after the package's
# import, with the app and every library still to come.
# SIGINT as a terminal's process gets it (a CI runner may start us with it ignored, which the
# launcher respects): the default handler, then the package's import.
STARTING = """
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
sys.argv[0] = {argv0!r}
import contrastcat_cli
os.kill(os.getpid(), signal.{name})
time.sleep(30)
print("not stopped")
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
def test_a_signal_during_the_imports_is_one_line_and_130(name):
    code = STARTING.format(argv0="/usr/local/bin/contrastcat", name=name)
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (ran.returncode, ran.stderr, ran.stdout) == (130, "error: interrupted\n", "")


def test_a_program_importing_the_app_keeps_its_own_ctrl_c():
    """pytest, a notebook: importing the package changes no signal handler of theirs."""
    code = STARTING.format(argv0="my-program", name="SIGINT")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert ran.returncode == -signal.SIGINT and ran.stderr.rstrip().endswith("KeyboardInterrupt")


def test_main_takes_over_from_the_early_handler():
    import contrastcat_cli
    from contrastcat_cli import launch

    code = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
sys.argv[0] = "contrastcat"
import contrastcat_cli
from contrastcat_cli import launch
assert signal.getsignal(signal.SIGINT) is contrastcat_cli._early_stop
launch._run = lambda: print(signal.getsignal(signal.SIGINT) is launch.stop, signal.getsignal(signal.SIGTERM) is launch.stop) or 0
try:
    launch.main()
except SystemExit:
    pass
"""
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert ran.stdout.splitlines()[-1] == "True True", ran
    assert signal.getsignal(signal.SIGINT) is not contrastcat_cli._early_stop  # this process untouched
    assert launch._early_stop is contrastcat_cli._early_stop


UNFORESEEN_OSERROR = """
import sys
from contrastcat_cli import launch

def failing():
    raise OSError(5, "an error nobody foresaw")

launch._run = failing
sys.argv = ["contrastcat", "models", "list"]
launch.main()
"""


def test_an_unforeseen_os_error_is_not_blamed_on_standard_output_under_debug():
    """Without CONTRASTCAT_DEBUG an OSError reaching the entry point is read as standard output
    gone (its usual cause); with it, the traceback asked for is shown, not that guess."""
    import os

    run = lambda env: subprocess.run(  # noqa: E731
        [sys.executable, "-c", UNFORESEEN_OSERROR], capture_output=True, text=True, timeout=120,
        env={**os.environ, **env},
    )
    plain = run({})
    assert plain.returncode == 1 and "cannot write to standard output" in plain.stderr
    debug = run({"CONTRASTCAT_DEBUG": "1"})
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr and "an error nobody foresaw" in debug.stderr
    assert "cannot write to standard output" not in debug.stderr


WRAPPED_INTERRUPT = """
import sys
from dataclasses import dataclass, field
from contrastcat_cli import launch


class Landing:
    def __set_name__(self, owner, name):  # where a signal mid-import lands: Python wraps it
        raise KeyboardInterrupt


def importing():
    {body}

launch._run = importing
sys.argv = ["contrastcat", "models", "list"]
launch.main()
"""


@pytest.mark.parametrize("body", [
    "class Made:\n        landing = Landing()",  # RuntimeError from KeyboardInterrupt
    "raise ValueError('unforeseen')",
])
def test_a_signal_landing_mid_import_is_an_interrupt_not_a_traceback(body):
    """Ctrl-C while Python builds a class (a dataclass's field, mid-import) arrives as a
    RuntimeError caused by the KeyboardInterrupt: one line and 130, as every interrupt; any other
    error stays a traceback (the unforeseen is not called an interrupt)."""
    ran = subprocess.run([sys.executable, "-c", WRAPPED_INTERRUPT.format(body=body)], capture_output=True, text=True,
                         timeout=120)
    if "Landing" in body:
        assert ran.returncode == 130 and "Traceback" not in ran.stderr and len(ran.stderr.splitlines()) == 1, ran
    else:
        assert ran.returncode == 1 and "ValueError: unforeseen" in ran.stderr


def test_interrupt_within_follows_causes_and_contexts():
    from contrastcat_cli.signals import interrupt_within

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise RuntimeError("wrapped") from interrupt
    except RuntimeError as error:
        assert interrupt_within(error)
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise TypeError("during")  # noqa: B904 - a context, not a cause
    except TypeError as error:
        assert interrupt_within(error)
    assert not interrupt_within(ValueError("plain"))


def test_an_interrupt_through_code_run_from_a_string_still_exits_130_under_python_m(tmp_path):
    """An interrupt that left code run from a string (dataclasses make their methods so, mid-import)
    is marked unhandled by CPython even once handled: under ``python -m`` the interpreter would
    kill itself with SIGINT after choosing 130. A waiting parent must see 130."""
    (tmp_path / "probe_launch.py").write_text(
        "import sys\nfrom contrastcat_cli import launch\n"
        "launch._run = lambda: exec('raise KeyboardInterrupt')\n"
        "sys.argv = ['contrastcat', 'models', 'list']\nlaunch.main()\n"
    )
    ran = subprocess.run([sys.executable, "-m", "probe_launch"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 130 and ran.stderr == "error: interrupted\n", ran
