#!/usr/bin/env python3
"""Line editing in the REPL (Note [Line editing]), through a pseudo-terminal with
TERM=xterm, as a user types: an arrow key recalls and edits the last line (it inserted
escape bytes before), Ctrl-A/Ctrl-E/Ctrl-K/Ctrl-U edit, TAB completes a variable, a
builtin, F.'s members, a Tensor's methods and a meta-command, a block is auto-indented
and ends at a line of only its indentation, Ctrl-C drops a half-typed line and keeps
the session, a bracketed paste of a block with blank lines runs whole, history is
written to TSL_HISTORY and read back by the next session, and TSL_HISTORY="" keeps
none.
  tests/repl/repl_line_editing.py --tsl build/release/tsl"""
import argparse
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session, plain  # noqa: E402

UP, LEFT = b"\x1b[A", b"\x1b[D"
CTRL_A, CTRL_C, CTRL_D, CTRL_E, CTRL_K, CTRL_U = b"\x01", b"\x03", b"\x04", b"\x05", b"\x0b", b"\x15"
TAB = b"\t"
PASTE, PASTED = b"\x1b[200~", b"\x1b[201~"  # what a terminal sends around a paste


class Terminal(Session):
    """The REPL with TERM=xterm, driven key by key. Keys go only once the line editor
    reads the terminal (raw mode: ICANON off): between lines the terminal is in
    canonical mode, where the line discipline turns a Ctrl-D into an end of input that
    is lost when the editor switches back to raw mode; a user types at the prompt."""

    def __init__(self, tsl, timeout, env):
        super().__init__(tsl, timeout, term="xterm", env=env, ready=b">>> ")

    def write(self, keys):
        self.wait_for_raw_mode()
        super().write(keys)

    def type(self, keys, until=b">>> "):
        """Sends keystrokes and returns what the terminal shows up to `until`."""
        mark = len(self.screen)
        self.write(keys)
        return plain(self.wait_for(until, mark))

    def run(self, keys, wanted):
        """Sends a line's keystrokes; returns the screen once `wanted` shows and a prompt
        follows it, or what it shows after the timeout (the check then fails)."""
        mark = len(self.screen)
        self.write(keys)
        try:
            self.wait_for(wanted.encode(), mark)
            at = self.screen.index(wanted.encode(), mark)
            self.wait_for(b">>> ", at)
        except RuntimeError:
            pass
        return plain(self.screen[mark:])

    def close(self):
        """Ctrl-D at the prompt; the exit status (None: still running at the timeout)."""
        return super().close(CTRL_D)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--timeout", type=float, default=30)
    args = ap.parse_args()
    tsl = os.path.abspath(args.tsl)
    failures = []

    def check(what, shown, wanted, absent=None):
        if wanted not in shown or (absent is not None and absent in shown):
            failures.append(f"{what}: expected {wanted!r}"
                            f"{f' and no {absent!r}' if absent else ''} in:\n{shown}")

    with tempfile.TemporaryDirectory() as folder:
        history = os.path.join(folder, "history")
        os.chdir(folder)
        with open(os.path.join(folder, "prog_file.tsl"), "w") as f:
            f.write("print('loaded')\n")
        t = Terminal(tsl, args.timeout, {"TSL_HISTORY": history})
        try:
            check("a statement", t.run(b"counter = 41\r", ">>> "), ">>> ")
            check("a print", t.run(b"print(counter + 1)\r", "42"), "42")
            # Up recalls the last line; Left moves into it; a character is inserted.
            check("up arrow", t.run(UP + b"\r", "42"), "42")
            check("edit a recalled line", t.run(UP + LEFT + b"0\r", "51"), "51")
            # Ctrl-A / Ctrl-K / Ctrl-E and Ctrl-U.
            check("ctrl-a ctrl-k", t.run(b"junk" + CTRL_A + CTRL_K + b"print(7)\r", "7"), "7")
            check("ctrl-u", t.run(b"garbage" + CTRL_U + b"print(8 * 11)" + CTRL_A + CTRL_E + b"\r",
                                  "88"), "88", absent="error")
            # TAB: a variable, a builtin, F.'s members (one of them written in TSL), a
            # method of a Tensor variable, a meta-command, a path after :load.
            check("tab: variable", t.run(b"print(coun" + TAB + b" * 3)\r", "123"), "123")
            check("tab: builtin", t.run(b"pri" + TAB + b"(5 * 13)\r", "65"), "65")
            t.run(b"import torch\r", ">>> ")
            t.run(b"import torch.nn.functional as F\r", ">>> ")
            check("tab: F member",
                  t.run(b"print(F.hardswi" + TAB + b"(torch.tensor([1.0])))\r", "0.6667"), "0.6667")
            # Keyword arguments inside a call (F.hardtanh is written in TSL).
            check("tab: keyword argument",
                  t.run(b"print(F.hardtanh(torch.tensor([3.0]), max_v" + TAB + b"2.0))\r",
                        "tensor([2.])"), "tensor([2.])")
            t.run(b"v = torch.tensor([1.0, -2.0])\r", ">>> ")
            check("tab: tensor method", t.run(b"print(v.ab" + TAB + b"().sum())\r", "tensor(3.)"),
                  "tensor(3.)")
            t.type(b"print(v.su" + TAB, until=b"v.su")
            t.drain()
            check("tab: several methods listed", plain(t.screen[-3000:]), "sum")
            t.run(CTRL_U + b"\r", ">>> ")
            check("tab: meta-command", t.run(b":va" + TAB + b"\r", "counter : int"), "counter : int")
            check("tab: :load path", t.run(b":load prog_fi" + TAB + b"\r", "loaded"), "loaded")
            # A block: the body is indented for the user; a line of only that
            # indentation ends it.
            t.type(b"def twice(a: int) -> int:\r", until=b"... ")
            t.type(b"return a * 2\r", until=b"... ")
            t.type(b"\r")
            check("auto-indent", t.run(b"print(twice(21) + 1000)\r", "1042"), "1042")
            # Ctrl-C drops a half-typed line; the session goes on.
            check("ctrl-c", t.run(b"print(1 +" + CTRL_C, "KeyboardInterrupt"), "KeyboardInterrupt")
            check("after ctrl-c", t.run(b"print(counter - 1)\r", "40"), "40")
            # Bracketed paste (Note [Pasting a block]): the editor asks the terminal for
            # it, and a pasted block with blank lines inside a def runs whole.
            check("bracketed paste mode on", t.screen.decode(errors="replace"), "\x1b[?2004h")
            check("a pasted def with blank lines",
                  t.run(PASTE + b"def f3(x: int) -> int:\r    y = x + 1\r\r    return y * 3\r\r"
                        b"print(f3(10) + 1)\r" + PASTED, "34"), "34", absent="Error")
            # At an auto-indented prompt the paste brings its own indentation.
            t.type(b"def g3() -> int:\r", until=b"... ")
            t.write(PASTE + b"    z = 2\r\r    return z * 50\r" + PASTED)
            t.type(b"\r")
            check("a paste at an indented prompt", t.run(b"print(g3() + 1)\r", "101"), "101")
            # A last line without its line break is left to edit; an error stops a paste.
            check("a paste's last line is editable",
                  t.run(PASTE + b"q = 5\rprint(q * " + PASTED + b"7)\r", "35"), "35")
            shown = t.run(PASTE + b"a = 1\rb = undefined_name\rprint('not ' + 'run')\r" + PASTED,
                          "were not run")
            check("an error stops a paste", shown, "1 pasted line(s) after it were not run",
                  absent="not run\n")
            # Ctrl-C during one long kernel (nothing loops to look at the flag): the
            # statement stops when the kernel returns, before its result is assigned.
            mark = len(t.screen)
            t.write(b"big = torch.ones(8000, 8000) @ torch.ones(8000, 8000)\r")
            time.sleep(0.3)
            Session.write(t, CTRL_C)
            t.wait_for(b"KeyboardInterrupt", mark)
            check("a long kernel's statement after ctrl-c",
                  t.run(b"print(big)\r", "is not defined"), "name 'big' is not defined")
            # Ctrl-C during a top-level loop stops it and keeps what it assigned, as
            # Python does (Note [Top-level assignments survive errors]).
            t.type(b"n = 0\r")
            t.type(b"while True:\r", until=b"... ")
            t.type(b"n += 1\r", until=b"... ")
            mark = len(t.screen)
            t.write(b"\r")  # the block ends and the loop runs
            time.sleep(0.5)
            Session.write(t, CTRL_C)  # the terminal is not raw while the loop runs
            t.wait_for(b"KeyboardInterrupt", mark)
            check("a loop's assignments after ctrl-c", t.run(b"print(n > 100)\r", "True"),
                  "True")
        finally:
            status = t.close()
        if status != 0:
            failures.append(f"Ctrl-D ended the session with status {status}; the screen ends "
                            f"with:\n{plain(t.screen[-800:])}")
        # libedit's format: a header line, then one line per entry with spaces as \040.
        saved = open(history).read().replace("\\040", " ") if os.path.exists(history) else ""
        check("the history file", saved, "print(twice(21) + 1000)")
        # The next session reads the history: Up recalls the last line of the first.
        t = Terminal(tsl, args.timeout, {"TSL_HISTORY": history})
        try:
            t.run(b"n = 500\r", ">>> ")
            check("history across sessions", t.run(UP + UP + b"\r", "True"), "True")
        finally:
            t.close()
        # TSL_HISTORY="" keeps no history.
        os.remove(history)
        t = Terminal(tsl, args.timeout, {"TSL_HISTORY": ""})
        try:
            check("no history", t.run(b"print(3 * 17)\r", "51"), "51")
        finally:
            t.close()
        if os.listdir(folder) != ["prog_file.tsl"]:
            failures.append(f"files left in the folder: {sorted(os.listdir(folder))}")
        # Every thread but the REPL's blocks SIGINT, the native compiler's included (a
        # fused kernel to compile starts it): the kernel hands a Ctrl-C to any thread
        # that does not block it, and one taken by a helper thread left the REPL's read
        # waiting at a `...` prompt.
        t = Terminal(tsl, args.timeout, {"TSL_HISTORY": os.path.join(folder, "history2"),
                                         "TSL_FUSION_JIT_HOT": "0",
                                         "TSL_CACHE_DIR": os.path.join(folder, "cache")})
        try:
            t.run(b"import torch\r", ">>> ")
            t.type(b"def fused(a: torch.Tensor) -> torch.Tensor:\r", until=b"... ")
            t.type(b"return (torch.tanh(a) * 2.0 + 1.0).sum()\r", until=b"... ")
            t.type(b"\r")
            t.run(b"v = torch.ones(5000)\r", ">>> ")
            for _ in range(3):
                t.run(b"s = fused(v)\r", ">>> ")
            tasks = f"/proc/{t.pid}/task"
            end = time.time() + args.timeout
            while len(os.listdir(tasks)) < 3 and time.time() < end:
                time.sleep(0.05)  # the compiler's thread starts with the first compile
            masks = []
            for tid in os.listdir(tasks):
                with open(f"{tasks}/{tid}/status") as f:
                    blocked = [line for line in f if line.startswith("SigBlk:")][0]
                masks.append(int(blocked.split()[1], 16))
            taking = sum(1 for m in masks if not m & (1 << (signal.SIGINT - 1)))
            check("threads that take SIGINT", f"{len(masks)} threads, {taking} take SIGINT",
                  f"{len(masks)} threads, 1 take SIGINT")
            if len(masks) < 3:
                failures.append(f"the native compiler's thread did not start: {len(masks)} threads")
            for i in range(4):
                t.type(b"x = (1 +\r", until=b"... ")
                check(f"ctrl-c at a continuation prompt ({i + 1})",
                      t.run(CTRL_C, "KeyboardInterrupt"), "KeyboardInterrupt")
        finally:
            t.close()

    if failures:
        print("\n\n".join(failures))
        print(f"FAIL: {len(failures)} check(s)")
        return 1
    print("ok: line editing, completion, auto-indent, Ctrl-C (a loop's state kept) and history")
    return 0


if __name__ == "__main__":
    sys.exit(main())
