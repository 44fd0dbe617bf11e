#!/usr/bin/env python3
"""Differential test of TSL's autodiff against PyTorch + functorch.

Every tests/autodiff_torch/*.tsl program is valid TSL and valid Python 3. This runs each
one with `tsl FILE` and with a Python that has torch and functorch, pulls every number
out of both outputs in order, and compares them pairwise (relative tolerance 1e-5 plus a
tiny absolute one for values near 0). A program that is not Python (tests/stdlib: it
imports a TSL module) has a twin X.py beside X.tsl, written with PyTorch's own API
(torch.optim.Adam for `optim.adam`), which Python runs instead. Exit status: 0 all agree, 1 a failure, 77 skipped
(no Python with torch + functorch here; ctest reports that as a skip, not a failure).

Usage: run_differential.py --tsl PATH/TO/tsl [--python PY] [--file X.tsl]... [-v]
"""

import argparse
import glob
import math
import os
import re
import subprocess
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
RTOL = 1e-5
ATOL = 1e-9
TIMEOUT_S = 300
MAX_REPORTED = 5  # differing numbers shown per program

# Text that holds digits but no values of the program: dtype names, devices, grad_fn
# names (`dtype=torch.float64`, `device='cuda:0'`, `grad_fn=<MulBackward0>`).
NOISE = re.compile(r"dtype=torch\.\w+|device='[^']*'|grad_fn=<[^>]*>|requires_grad=True"
                   r"|torch\.\w+")
# A number not glued to an identifier (so `x1` or `float64` give nothing).
NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)(?![\w.])"
    r"|(?<!\w)(?:True|False)(?!\w)")


def has_torch(python):
    """True when `python` has torch and functorch installed. find_spec does not import
    them, which would cost seconds per call."""
    probe = ("import importlib.util as u, sys; "
             "sys.exit(0 if u.find_spec('torch') and u.find_spec('functorch') else 1)")
    try:
        r = subprocess.run([python, "-c", probe], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def pick_python(requested):
    """The Python to run the programs under PyTorch, or None when none has torch."""
    candidates = [requested] if requested else [sys.executable, "/usr/bin/python3"]
    for p in candidates:
        if p and has_torch(p):
            return p
    return None


def numbers(text):
    """Every number of `text` in order, each as (value, line number, token)."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = NOISE.sub(" ", line)
        for m in NUMBER.finditer(line):
            tok = m.group(0)
            value = {"True": 1.0, "False": 0.0}.get(tok)
            out.append((float(tok) if value is None else value, lineno, tok))
    return out


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= ATOL + RTOL * max(abs(a), abs(b))


def run(cmd):
    """(exit status, stdout, stderr) of cmd; a timeout counts as a failure."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s" % TIMEOUT_S
    return r.returncode, r.stdout, r.stderr


def clip(line, width=400):
    return line if len(line) <= width else line[:width] + " ..."


def line_of(text, lineno):
    lines = text.splitlines()
    return lines[lineno - 1] if 0 < lineno <= len(lines) else "<none>"


def check(path, tsl, python, verbose):
    """Runs one program both ways; returns a list of failure messages (empty: agree)."""
    name = display_name(path)
    twin = os.path.splitext(path)[0] + ".py"
    t_rc, t_out, t_err = run([tsl, path])
    p_rc, p_out, p_err = run([python, twin if os.path.isfile(twin) else path])
    fails = []
    if t_rc != 0:
        fails.append("%s: tsl exited with %d\n--- tsl stdout ---\n%s--- tsl stderr ---\n%s" %
                     (name, t_rc, t_out, t_err))
    if p_rc != 0:
        fails.append("%s: python exited with %d\n--- python stderr ---\n%s" %
                     (name, p_rc, p_err[-4000:]))
    if fails:
        return fails
    tn, pn = numbers(t_out), numbers(p_out)
    diffs = [i for i, (t, p) in enumerate(zip(tn, pn)) if not close(t[0], p[0])]
    for i in diffs[:MAX_REPORTED]:
        t, p = tn[i], pn[i]
        fails.append(
            "%s: number %d differs: tsl %s (output line %d), torch %s (output line %d)\n"
            "  tsl:   %s\n  torch: %s" %
            (name, i, t[2], t[1], p[2], p[1], clip(line_of(t_out, t[1])),
             clip(line_of(p_out, p[1]))))
    if len(diffs) > MAX_REPORTED:
        fails.append("%s: %d numbers differ in all (first %d shown)" %
                     (name, len(diffs), MAX_REPORTED))
    if len(tn) != len(pn):
        fails.append("%s: tsl printed %d numbers, torch %d\n--- tsl ---\n%s--- torch ---\n%s" %
                     (name, len(tn), len(pn), t_out, p_out))
    elif not tn:
        fails.append("%s: the program printed no numbers" % name)
    if fails and verbose:
        fails.append("--- tsl ---\n%s--- torch ---\n%s" % (t_out, p_out))
    return fails


def display_name(path):
    """A program's name in reports: relative to this folder when it is in it."""
    return os.path.relpath(path, HERE) if os.path.dirname(path) == HERE else path


def resolve(f):
    """A --file argument as given, else relative to this folder (`--file loop_fixed.tsl`)."""
    return f if os.path.exists(f) or os.path.isabs(f) else os.path.join(HERE, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsl", default=os.path.join(HERE, "..", "..", "build", "release", "tsl"),
                    help="the tsl binary (default: build/release/tsl)")
    ap.add_argument("--python", help="a Python with torch and functorch (default: this one, "
                    "else /usr/bin/python3)")
    ap.add_argument("--file", action="append", help="run only this program (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print both outputs on failure")
    args = ap.parse_args()

    python = pick_python(args.python)
    if python is None:
        print("SKIP: no python3 here can `import torch, functorch`; install Debian's "
              "python3-torch (TSL_WITH_TORCH=1 scripts/setup.sh) to run this test")
        return SKIP
    if not os.access(args.tsl, os.X_OK):
        print("error: %s is not an executable tsl binary (pass --tsl)" % args.tsl)
        return 1
    files = [resolve(f) for f in args.file] if args.file else \
        sorted(glob.glob(os.path.join(HERE, "*.tsl")))
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        print("error: no such program: %s" % ", ".join(missing))
        return 1
    failed = 0
    for f in files:
        fails = check(os.path.abspath(f), args.tsl, python, args.verbose)
        name = display_name(os.path.abspath(f))
        if fails:
            failed += 1
            print("FAIL %s" % name)
            for msg in fails:
                print(msg)
        else:
            print("ok   %s" % name)
    print("%d of %d programs agree with PyTorch" % (len(files) - failed, len(files)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
