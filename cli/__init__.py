"""The ``contrastcat`` command line (installed as the ``contrastcat_cli`` package).

The first thing the console script runs is this package's import: a Ctrl-C or SIGTERM from here
until ``launch.main`` installs its own handlers ends the process with one line and exit 130
(nothing has been read or written yet), not a traceback of the import under way. Before this
point the interpreter itself is starting; docs/cli.md says how long that window is.
"""

import os as _os
import sys as _sys

# The interpreter's own signal module: the ``signal`` package wraps it in enums, which take
# milliseconds to build, a window in which a Ctrl-C would still print a traceback.
import _signal


def _early_stop(signum, frame):  # pragma: no cover - exercised by tests/cli/test_signals_early.py in a child
    _os.write(2, b"error: interrupted\n")
    _os._exit(130)


def _starting_the_command() -> bool:
    """The console script (or ``python -m``) starting, not a program importing the app (a test)."""
    first = _sys.argv[0] if _sys.argv else ""
    return _os.path.basename(first) == "contrastcat" or first == "-m"


if _starting_the_command():
    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:  # not when the shell made us ignore it
        _signal.signal(_signal.SIGINT, _early_stop)
    if _signal.getsignal(_signal.SIGTERM) == _signal.SIG_DFL:
        _signal.signal(_signal.SIGTERM, _early_stop)
