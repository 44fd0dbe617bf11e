#!/usr/bin/env python3
"""Colors on a terminal only (Note [Colors] in ir/source.h), through a pseudo-terminal:
with TERM=xterm the REPL's prompt is green and an error's location bold, `error:` red,
its message bold and the caret line green, and a script's error on a terminal is
colored alike; NO_COLOR=1 or TERM=dumb gives plain text, as does stderr on a pipe.
  tests/repl/repl_colors.py --tsl build/release/tsl"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session  # noqa: E402

PROMPT = b"\x1b[1;32m>>>\x1b[0m "  # libedit's; the plain REPL's resets after the space
RED_ERROR = b"\x1b[1;31merror:\x1b[0m"
LOCATION = b"\x1b[1mIn[1]:1:5: \x1b[0m"
CARET = b"\x1b[32m        ^~~~~~~~~~~~~~\x1b[0m"


def repl_error(tsl, timeout, term, env, colors):
    """The raw bytes of a session that makes one error, then ends."""
    s = Session(tsl, timeout, term=term, env=env, ready=None, colors=colors)
    try:
        s.wait_for(b">>>", 0, what="the first prompt")
        if term == "xterm":  # the line editor: keys once it reads the terminal raw
            s.wait_for_raw_mode()
            s.write(b"y = undefined_name\r")
        else:
            s.write(b"y = undefined_name\n")
        s.wait_for(b"not defined", 0, what="the error")
        s.drain()
        return bytes(s.screen)
    finally:
        s.close(b"\x04")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    tsl = os.path.abspath(args.tsl)
    failures = []

    def check(ok, what, data):
        if not ok:
            failures.append(f"{what}; got {data[-600:]!r}")

    colored = repl_error(tsl, args.timeout, "xterm", {}, colors=True)
    check(b"\x1b[1;32m>>>" in colored, "a green prompt", colored)
    for part in (LOCATION, RED_ERROR, b"\x1b[1mname 'undefined_name' is not defined\x1b[0m",
                 CARET):
        check(part in colored, f"the colored error part {part!r}", colored)
    for env, term, why in (({"NO_COLOR": "1"}, "xterm", "NO_COLOR=1"), ({}, "dumb", "TERM=dumb")):
        plain = repl_error(tsl, args.timeout, term, env, colors=not env)
        # (Bracketed paste mode, ESC[?2004h/l, is not a color.)
        check(re.search(rb"\x1b\[[0-9;]*m", plain) is None, f"no color codes with {why}", plain)
        check(b"In[1]:1:5: error: name 'undefined_name' is not defined" in plain,
              f"the plain error with {why}", plain)

    folder = tempfile.mkdtemp()
    script = os.path.join(folder, "bad.tsl")
    with open(script, "w") as f:
        f.write("x = 1 +\n")
    s = Session(tsl, args.timeout, term="xterm", args=(script,), ready=None, colors=True)
    try:
        s.wait_for(b"invalid syntax", 0, what="the script's error")
        s.drain()
        on_terminal = bytes(s.screen)
    finally:
        s.close()
    check(RED_ERROR in on_terminal and b"\x1b[1m" + script.encode() + b":1:8: \x1b[0m"
          in on_terminal, "a script's error colored on a terminal", on_terminal)
    piped = subprocess.run([tsl, script], capture_output=True, env=dict(os.environ,
                           TERM="xterm", NO_COLOR=""), timeout=args.timeout)
    check(b"\x1b[" not in piped.stderr and b"error: invalid syntax" in piped.stderr,
          "plain text on a pipe", piped.stderr)

    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("ok: colors on a terminal, plain with NO_COLOR, TERM=dumb and pipes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
