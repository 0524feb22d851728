"""A plain run writing the output a `--resume` run is writing is refused, as a second resume
run is: before, it ignored the checkpoint's lock, both exited 0 and one output silently
replaced the other's."""

from __future__ import annotations

import fcntl

from ..helpers import assert_one_line_error, invoke


def test_a_plain_run_beside_a_resume_run_is_refused(tmp_path, toy_dir, toy_library):
    out = tmp_path / "out.jsonl"
    out.write_text("what the user had\n")
    digests = tmp_path / ".out.jsonl.contrastcat-partial.digests"  # the file a resume run holds the lock on
    command = ["explain", toy_dir / "inputs.jsonl", "--refs", toy_library.path, "--method", "attcat", "-o", out, "-q"]
    with open(digests, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a resume run is writing it
        result = invoke(*command)
        assert_one_line_error(result, f"{out}: another contrastcat run is writing it with resume")
        assert out.read_text() == "what the user had\n"
    # The lock released (the resume run ended, or was killed and left its checkpoint): a plain run goes ahead.
    assert invoke(*command).exit_code == 0 and out.read_text() != "what the user had\n"
