#!/usr/bin/env python3
"""Modules in the REPL, through a pseudo-terminal: `import m` and `from m import f`
of a module beside the session, `:reload m` after an edit (module names and names
taken by `from m import` follow), a second `import m` after an edit reloads it, `:vars`
shows the session's names but not the module's, and bad reloads are errors that keep
the session.
  tests/repl/repl_modules.py --tsl build/release/tsl"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session  # noqa: E402


def write_module(folder, value, extra=""):
    path = os.path.join(folder, "mymod.tsl")
    with open(path, "w") as f:
        f.write(f"K = {value * 10}\n\n\ndef f() -> int:\n    return {value}\n{extra}")
    # A modification time of its own for each version, however fast the edits come.
    os.utime(path, (1_000_000 + value, 1_000_000 + value))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    tsl = os.path.abspath(args.tsl)
    failures = []

    def expect(session, statement, wanted, absent=None):
        out = session.send(statement)
        if wanted not in out or (absent and absent in out):
            failures.append(f"{statement!r}: expected {wanted!r}"
                            f"{f' and no {absent!r}' if absent else ''} in:\n{out}")

    with tempfile.TemporaryDirectory() as folder:
        write_module(folder, 1)
        os.chdir(folder)
        s = Session(tsl, args.timeout)
        try:
            expect(s, "import mymod", ">>> ")
            expect(s, "from mymod import f", ">>> ")
            expect(s, "x = 5", ">>> ")
            expect(s, "print(mymod.f(), f(), mymod.K)", "1 1 10")
            write_module(folder, 2)
            expect(s, ":reload mymod", "reloaded")
            expect(s, "print(mymod.f(), f(), mymod.K)", "2 2 20")
            write_module(folder, 3)
            expect(s, "import mymod", ">>> ")
            expect(s, "print(mymod.f(), f())", "3 3")
            expect(s, ":vars", "x : int", absent="mymod.")
            expect(s, ":reload nosuch", "no module 'nosuch' was imported")
            write_module(folder, 4, extra="\nY = 1 + 'a'\n")
            expect(s, ":reload mymod", "unsupported operand types")
            expect(s, "print(x)", "5")
        finally:
            s.close()
    for f in failures:
        print("FAIL", f)
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
