"""The pseudo-terminal plumbing of the REPL tests (repl_soak.py, repl_tape.py,
repl_modules.py, repl_line_editing.py): `tsl` on a pty with a TERM and environment of
the test's choosing, bytes written to it, its output read into a transcript and waited
on for a pattern with a timeout, and an end that gives the exit status.
  s = Session(tsl, timeout)            # TERM=dumb; waits for the first ">>> "
  out = s.send("print(1 + 1)")         # one statement, answered by a prompt
  s.close()                            # kills it; close(b"\\x04") sends Ctrl-D first"""
import os
import pty
import re
import select
import signal
import termios
import time

PROMPT = b">>> "
MORE = b"... "
# The output so far ends with a prompt (the REPL waits for a line), or a primary one.
AT_PROMPT = re.compile(rb"(?:>>> |\.\.\. )\Z")
AT_PRIMARY = re.compile(rb">>> \Z")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


def plain(data):
    """Terminal output as text: escape sequences and carriage returns removed."""
    return ANSI.sub(b"", data).decode(errors="replace")


class Session:
    """A program (by default the REPL, `tsl`) on a pseudo-terminal. Everything it writes
    is kept in `self.screen`; offsets into it mark where a wait starts."""

    def __init__(self, program, timeout, term="dumb", env=None, args=(), ready=AT_PRIMARY,
                 colors=False):
        self.timeout = timeout
        self.screen = bytearray()
        self.eof = False  # the program closed the terminal (it exited)
        self.status = None  # its exit status, once reaped
        self.fd = None
        environ = dict(os.environ, **(env or {}))
        environ["TERM"] = term
        # Plain text unless a test asks for colors (Note [Colors] in ir/source.h).
        if not colors:
            environ["NO_COLOR"] = "1"
        else:
            environ.pop("NO_COLOR", None)
        self.pid, fd = pty.fork()
        if self.pid == 0:
            try:
                os.execve(program, [program, *args], environ)
            except BaseException as e:  # shown on the terminal, then the child ends
                os.write(2, f"cannot run {program}: {e}\n".encode(errors="replace"))
            os._exit(127)
        self.fd = fd
        if ready is not None:
            try:
                self.wait_for(ready, 0, what="first prompt")
            except BaseException:
                Session.close(self)  # a kill, whatever a subclass's close sends
                raise

    def write(self, data):
        os.write(self.fd, data)

    def read(self, wait):
        """Reads what the program writes within `wait` seconds into the transcript and
        returns it (b"" when nothing came or at the end of its output)."""
        if self.eof:
            time.sleep(wait)
            return b""
        if not select.select([self.fd], [], [], wait)[0]:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the program's side of the terminal is closed
            data = b""
        if not data:
            self.eof = True
        self.screen += data
        return data

    def wait_for(self, pattern, since=None, timeout=None, what=None):
        """Reads until `pattern` (bytes: a substring; a compiled bytes regex: searched)
        shows in the output from offset `since` on (by default, the end of what was read
        so far); returns that output. RuntimeError if the program exits first or nothing
        matches within `timeout` (by default the session's)."""
        start = len(self.screen) if since is None else since
        timeout = self.timeout if timeout is None else timeout
        end = time.time() + timeout
        while True:
            seen = bytes(self.screen[start:])
            if (pattern in seen) if isinstance(pattern, bytes) else pattern.search(seen):
                return seen
            if self.eof:
                raise RuntimeError(f"the program exited{self._exit_note()} while waiting for "
                                   f"{what or repr(pattern)}; {self.tail()}")
            left = end - time.time()
            if left <= 0:
                raise RuntimeError(f"no {what or repr(pattern)} within {timeout} s "
                                   f"(a hang?); {self.tail()}")
            self.read(min(0.1, left))

    def drain(self, settle=0.3, quiet=0.1):
        """Waits `settle` seconds, then reads until nothing more comes for `quiet` s;
        returns what was read."""
        mark = len(self.screen)
        time.sleep(settle)
        while self.read(quiet):
            pass
        return bytes(self.screen[mark:])

    def wait_for_raw_mode(self):
        """Waits (at most the timeout, reading meanwhile) until the program reads the
        terminal in raw mode (ICANON off), as a line editor does at its prompt."""
        end = time.time() + self.timeout
        while time.time() < end:
            if not termios.tcgetattr(self.fd)[3] & termios.ICANON:
                return
            self.read(0.01)
            if self.eof:
                return

    def tail(self, n=800):
        return f"the output ends with:\n{plain(self.screen[-n:])}"

    def _exit_note(self):
        """Reaps the program if it exits within a second; its status as a note."""
        end = time.time() + 1.0
        while self.status is None and time.time() < end:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
            else:
                time.sleep(0.01)
        return "" if self.status is None else f" (status {self.status})"

    def close(self, keys=None):
        """Ends the session and returns the exit status (os.waitstatus_to_exitcode: -9
        for a kill). With `keys` (e.g. Ctrl-D) they are sent first and the program has
        the timeout to exit, the terminal read meanwhile so that it never blocks writing;
        None if it was still running then and had to be killed. Without, it is killed."""
        if self.fd is None:
            return self.status
        try:
            if self.status is None and keys is not None:
                try:
                    self.write(keys)
                except OSError:  # the program is gone already: its status tells
                    pass
                end = time.time() + self.timeout
                while time.time() < end:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                    if pid:
                        self.status = os.waitstatus_to_exitcode(status)
                        return self.status
                    self.read(0.05)
            if self.status is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.status = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
                if keys is not None:
                    return None
            return self.status
        finally:
            os.close(self.fd)
            self.fd = None

    def send(self, statement):
        """Sends one REPL statement (its lines, and the blank line that ends a block)
        and returns the answer up to the next prompt. An incomplete one (an open
        bracket) gets blank lines, then Ctrl-C, as a user would."""
        mark = len(self.screen)
        for line in statement.split("\n"):
            self._line(line.encode() + b"\n", AT_PROMPT)
        for _ in range(3):
            if self.screen.endswith(PROMPT):
                break
            self._line(b"\n", AT_PROMPT)
        if not self.screen.endswith(PROMPT):
            self._line(b"\x03", AT_PRIMARY)
        return bytes(self.screen[mark:]).decode(errors="replace")

    def _line(self, data, until):
        mark = len(self.screen)
        self.write(data)
        self.wait_for(until, mark, what="prompt")
