#!/usr/bin/env python3
"""Differential fuzzer: random programs run by TSL and by Python + PyTorch, outputs compared.

Each program (tests/fuzz/progen.py) is valid TSL and valid Python 3 with PyTorch 1.13 and
functorch. It runs once under `tsl FILE` and once under Python (in a long-lived worker
process, so torch is imported once), and the two outputs must agree: the same text once
numbers are taken out (whitespace runs count as one space, `grad_fn=<...>` names are
compared only for presence), and the same numbers within a tolerance that allows the last
printed digit and a relative 1e-5. A program on which Python fails is a generator bug and
is counted apart. Each mismatch is minimized (statements deleted while Python still runs
and the mismatch stays) and saved with both outputs.

Usage:
  difffuzz.py --tsl build/release/tsl --seed 1 --count 300         # a seeded run
  difffuzz.py --tsl ... --count 10000 --out /tmp/fuzz --jobs 2      # a long run
  difffuzz.py --tsl ... --replay FILE.py                            # one program again
  difffuzz.py --tsl ... --tsl-device cuda                           # TSL on the GPU against
                                                                    # PyTorch on the CPU
Exit status: 0 no mismatch, 1 mismatches (or over 2% of programs that Python rejects),
77 no torch here.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import progen  # noqa: E402

SKIP = 77
RTOL = 1e-5
ATOL = 1e-8
TSL_TIMEOUT_S = 60
# Arguments before the program (--tsl-device cuda: `--device cuda`), and whether TSL's
# tensors print `device='cuda:0'`, which the CPU oracle's do not.
TSL_ARGS = []
TSL_ON_CUDA = False

# The worker: reads one JSON request per line ({"src": ...}), runs the program with its
# output captured, answers {"ok": bool, "out": ..., "err": ...}.
WORKER = r'''
import contextlib, io, json, signal, sys, traceback
import torch, functorch
torch.set_num_threads(1)
def alarm(*_):
    raise TimeoutError("python timed out")
signal.signal(signal.SIGALRM, alarm)
for line in sys.stdin:
    req = json.loads(line)
    buf = io.StringIO()
    ok, err = True, ""
    torch.manual_seed(0)
    signal.alarm(req.get("timeout", 30))
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(req["src"], "prog.py", "exec"), {"__name__": "__main__"})
    except BaseException as e:
        ok, err = False, "".join(traceback.format_exception_only(type(e), e))
    finally:
        signal.alarm(0)
    sys.stdout.write(json.dumps({"ok": ok, "out": buf.getvalue(), "err": err}) + "\n")
    sys.stdout.flush()
'''


class PythonWorker:
    def __init__(self, python):
        self.python = python
        self.lock = threading.Lock()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([self.python, "-c", WORKER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)

    def run(self, src):
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.start()
            try:
                self.proc.stdin.write(json.dumps({"src": src}) + "\n")
                self.proc.stdin.flush()
                line = self.proc.stdout.readline()
            except BrokenPipeError:
                line = ""
            if not line:
                self.proc = None
                return False, "", "python worker died"
            r = json.loads(line)
            return r["ok"], r["out"], r["err"]


def run_tsl(tsl, src, workdir):
    fd, path = tempfile.mkstemp(suffix=".py", dir=workdir)
    with os.fdopen(fd, "w") as f:
        f.write(src)
    try:
        r = subprocess.run([tsl, *TSL_ARGS, path], capture_output=True, text=True,
                           timeout=TSL_TIMEOUT_S)
        out = r.stdout
        if TSL_ON_CUDA:
            out = re.sub(r",\s*device='cuda:0'", "", out)
        return r.returncode, out, r.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s" % TSL_TIMEOUT_S
    finally:
        os.unlink(path)


# ---- comparing outputs ---------------------------------------------------------------------
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w.])")


def normalize(text):
    text = re.sub(r"grad_fn=<\w+>", "grad_fn=<>", text)
    return re.sub(r"\s+", " ", text).strip()


def last_digit(tok):
    """The value of one unit in the last printed digit of a number token."""
    m = re.match(r"[-+]?(\d*)\.?(\d*)(?:[eE]([-+]?\d+))?$", tok)
    if not m:
        return 0.0
    decimals = len(m.group(2)) if "." in tok else 0
    exp = int(m.group(3)) if m.group(3) else 0
    return 10.0 ** (exp - decimals)


def numbers_close(a, b):
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    slack = max(last_digit(a), last_digit(b)) if ("." in a or "." in b or "e" in a.lower()) else 0
    return abs(x - y) <= ATOL + slack + RTOL * max(abs(x), abs(y))


def compare(t_out, p_out):
    """None when the outputs agree, else a one-line reason."""
    t, p = normalize(t_out), normalize(p_out)
    t_text, p_text = NUMBER.split(t), NUMBER.split(p)
    t_nums, p_nums = NUMBER.findall(t), NUMBER.findall(p)
    if len(t_nums) != len(p_nums) or [s.strip() for s in t_text] != [s.strip() for s in p_text]:
        # Locate the first differing line for the report.
        tl, pl = t_out.splitlines(), p_out.splitlines()
        for i in range(max(len(tl), len(pl))):
            a = tl[i] if i < len(tl) else "<end>"
            b = pl[i] if i < len(pl) else "<end>"
            if normalize(NUMBER.sub("#", a)) != normalize(NUMBER.sub("#", b)):
                return "text differs at output line %d: tsl %r, torch %r" % (i + 1, a[:200], b[:200])
        return "the outputs differ in their numbers' layout"
    for i, (a, b) in enumerate(zip(t_nums, p_nums)):
        if not numbers_close(a, b):
            return "number %d differs: tsl %s, torch %s" % (i, a, b)
    return None


# ---- one program ---------------------------------------------------------------------------
class Outcome:
    AGREE, BOTH_RAISE, MISMATCH, TSL_ERROR, TSL_CRASH, BAD_PROGRAM, LIMIT = (
        "agree", "both-raise", "mismatch", "tsl-error", "tsl-crash", "bad-program",
        "documented-limit")


# TSL errors that docs/language.md lists as deviations: counted apart, not failures.
DOCUMENTED_LIMITS = [
    "cannot differentiate through this in-place update",  # two live aliases, one updated
    "differentiating a second time through a loop nested in another loop",
    "vmap: a dict holding batched tensors is supported only where",
]


PYTORCH_SAVED_MODIFIED = ("one of the variables needed for gradient computation has been "
                          "modified by an inplace operation")


def judge(src, tsl, worker, workdir):
    """(outcome, detail) of one program."""
    ok, p_out, p_err = worker.run(src)
    if not ok:
        p_last = p_err.strip().splitlines()[-1] if p_err.strip() else "?"
        # A runtime error in both, after the same output (a leaf updated in place, say):
        # they agree. Anything else Python rejects is the generator's fault.
        if p_last.startswith("RuntimeError"):
            rc, t_out, t_err = run_tsl(tsl, src, workdir)
            if rc == 1 and compare(t_out, p_out) is None:
                return Outcome.BOTH_RAISE, p_last
            # Inside a function a transform differentiates, TSL differentiates the
            # functionalized program where PyTorch's autograd finds a saved tensor
            # modified in place (docs/language.md, deviations): TSL prints more, and
            # what both printed must agree.
            if rc == 0 and PYTORCH_SAVED_MODIFIED in p_last:
                lines = t_out.splitlines()[:len(p_out.splitlines())]
                if compare("\n".join(lines) + "\n", p_out) is None:
                    return Outcome.LIMIT, p_last
        return Outcome.BAD_PROGRAM, p_last
    rc, t_out, t_err = run_tsl(tsl, src, workdir)
    if rc < 0 or rc in (3, 124, 134, 139):
        first = (t_err.strip().splitlines() or ["?"])[0]
        return Outcome.TSL_CRASH, "exit %d: %s" % (rc, first)
    if rc != 0:
        lines = t_err.strip().splitlines() or ["?"]
        first = next((l for l in lines if "error:" in l), lines[0])
        message = re.sub(r"^\S+:\d+:\d+: ", "", first)
        if any(limit in message for limit in DOCUMENTED_LIMITS):
            return Outcome.LIMIT, message
        return Outcome.TSL_ERROR, message
    why = compare(t_out, p_out)
    return (Outcome.MISMATCH, why) if why else (Outcome.AGREE, "")


# ---- minimizing -----------------------------------------------------------------------------
def blocks(lines):
    """(start, end) line ranges of each statement with its indented body."""
    out = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip()) > indent):
            j += 1
        out.append((i, j))
    return out


def signature(outcome, detail):
    """What a minimized program must keep showing: the outcome and its reason with the
    numbers, names and line numbers taken out."""
    detail = re.sub(r"line \d+|\b[A-Za-z]+\d+\b", "#", detail)
    return outcome, NUMBER.sub("#", detail)[:60]


def minimize(src, outcome, detail, tsl, worker, workdir, budget_s=120):
    """Deletes statements (with their bodies), then single lines, then replaces simple
    statements by `pass`, while the same failure (signature) persists."""
    want = signature(outcome, detail)
    lines = src.splitlines()
    deadline = time.time() + budget_s

    def still_fails(cand):
        text = "\n".join(cand) + "\n"
        got, why = judge(text, tsl, worker, workdir)
        return signature(got, why) == want

    def fill_empty_bodies(cand):
        """A `pass` where deleting left a block header without a body."""
        out = []
        for i, line in enumerate(cand):
            out.append(line)
            if line.rstrip().endswith(":") and not line.lstrip().startswith("#"):
                indent = len(line) - len(line.lstrip())
                nxt = next((l for l in cand[i + 1:] if l.strip()), "")
                if len(nxt) - len(nxt.lstrip()) <= indent:
                    out.append(" " * (indent + 4) + "pass")
        return out

    def candidates():
        for start, end in sorted(blocks(lines), key=lambda r: r[0] - r[1]):
            if not lines[start].startswith(("import", "from")):
                yield fill_empty_bodies(lines[:start] + lines[end:])
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped and stripped != "pass" and not stripped.endswith(":") and \
                    line.startswith(" "):
                indent = len(line) - len(line.lstrip())
                yield lines[:i] + [" " * indent + "pass"] + lines[i + 1:]

    changed = True
    while changed and time.time() < deadline:
        changed = False
        for cand in candidates():
            if time.time() > deadline:
                break
            if cand != lines and still_fails(cand):
                lines = cand
                changed = True
                break
    return "\n".join(lines) + "\n"


# ---- the run ---------------------------------------------------------------------------------
def has_torch(python):
    probe = ("import importlib.util as u, sys; "
             "sys.exit(0 if u.find_spec('torch') and u.find_spec('functorch') else 1)")
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsl", default=os.path.join(HERE, "..", "..", "build", "release", "tsl"))
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--seed", type=int, default=1, help="the first program's seed")
    ap.add_argument("--count", type=int, default=100, help="how many programs")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", help="a folder for the failing programs (minimized)")
    ap.add_argument("--features", default="inplace,setitem,train,dict",
                    help="comma-separated generator features (default: inplace,setitem,train,dict)")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--replay", help="judge this one program file and print both outputs")
    ap.add_argument("--reduce", help="minimize this program file, keeping its failure")
    ap.add_argument("--show", type=int, help="print the program of this seed and exit")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--tsl-device", choices=["cpu", "cuda"], default="cpu",
                    help="run TSL's programs on this device (the oracle stays on the CPU; "
                         "random numbers are drawn on the CPU by both)")
    args = ap.parse_args()
    if args.tsl_device == "cuda":
        global TSL_ON_CUDA
        TSL_ARGS.extend(["--device", "cuda"])
        TSL_ON_CUDA = True
    features = [f for f in args.features.split(",") if f]

    if args.show is not None:
        sys.stdout.write(progen.Generator(args.show, features).program())
        return 0
    if not has_torch(args.python):
        print("SKIP: %s cannot import torch and functorch (install Debian's python3-torch)" %
              args.python)
        return SKIP
    tsl = os.path.abspath(args.tsl)
    workdir = tempfile.mkdtemp(prefix="difffuzz-")
    workers = [PythonWorker(args.python) for _ in range(args.jobs)]

    if args.reduce:
        src = open(args.reduce).read()
        outcome, detail = judge(src, tsl, workers[0], workdir)
        print("# %s: %s" % (outcome, detail))
        if outcome not in (Outcome.AGREE, Outcome.BOTH_RAISE, Outcome.LIMIT):
            sys.stdout.write(minimize(src, outcome, detail, tsl, workers[0], workdir, 600))
        return 0

    if args.replay:
        src = open(args.replay).read()
        outcome, detail = judge(src, tsl, workers[0], workdir)
        print("%s %s" % (outcome, detail))
        ok, p_out, p_err = workers[0].run(src)
        rc, t_out, t_err = run_tsl(tsl, src, workdir)
        print("--- tsl (exit %d) ---\n%s%s--- torch ---\n%s%s" % (rc, t_out, t_err, p_out, p_err))
        return 0 if outcome == Outcome.AGREE else 1

    counts = {}
    failures = []
    lock = threading.Lock()
    started = time.time()

    def one(i):
        seed = args.seed + i
        src = progen.Generator(seed, features).program()
        w = workers[i % len(workers)]
        outcome, detail = judge(src, tsl, w, workdir)
        with lock:
            counts[outcome] = counts.get(outcome, 0) + 1
        if outcome not in (Outcome.AGREE, Outcome.BOTH_RAISE, Outcome.LIMIT):
            small = src
            if outcome != Outcome.BAD_PROGRAM and not args.no_minimize:
                small = minimize(src, outcome, detail, tsl, w, workdir)
            with lock:
                failures.append((seed, outcome, detail, small))
                if not args.quiet:
                    print("seed %d: %s: %s" % (seed, outcome, detail), flush=True)
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                with open(os.path.join(args.out, "%s-%d.py" % (outcome, seed)), "w") as f:
                    f.write("# %s: %s\n%s" % (outcome, detail, small))

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one, range(args.count)))
    elapsed = time.time() - started
    summary = ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items()))
    print("%d programs (seeds %d..%d) in %.0f s: %s" % (args.count, args.seed,
                                                         args.seed + args.count - 1, elapsed, summary))
    # A program Python rejects is the generator's fault or PyTorch's (functorch 1.13
    # has a few crashes of its own): counted, and a failure only when frequent.
    bad = [f for f in failures if f[1] != Outcome.BAD_PROGRAM]
    rejected = len(failures) - len(bad)
    if bad and args.quiet:
        for seed, outcome, detail, small in bad[:5]:
            print("--- seed %d: %s: %s\n%s" % (seed, outcome, detail, small))
    if rejected > 0.02 * args.count:
        print("too many programs (%d) that Python rejects: a generator bug" % rejected)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
