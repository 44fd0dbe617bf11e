#!/usr/bin/env python3
"""How compile time grows with program size (issue 21): generated programs of size N
and 2N, each compiled and run once by `tsl` (best of --repeat), with t(2N)/t(N). Linear
compilation gives a ratio near 2; the issue's bar is 2.5.

Shapes: an if/elif chain of N branches (each a return), a function of N straight-line
statements, a chain of N calls differentiated by grad, and N lines of loops nested 24
deep.

    bench/compile_scaling.py --tsl build/release/tsl [--sizes 1000,2000,4000]
    bench/compile_scaling.py --sizes 2000,8000 --max-ratio 10   # the suite's check

--max-ratio R fails (exit 1) when a size's time over the previous one's exceeds R:
from 2,000 to 8,000, linear growth is 4 and quadratic 16, so R = 10 tells them apart
on a loaded machine (CompileScaling.LinearInProgramSize in the suite).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def elif_chain(n):
    lines = ["def f(x: int) -> int:"]
    for i in range(n):
        lines.append("    %s x == %d:" % ("if" if i == 0 else "elif", i))
        lines.append("        return %d" % i)
    lines += ["    return -1", "print(f(3))"]
    return "\n".join(lines) + "\n"


def long_function(n):
    lines = ["import torch", "def f(x: torch.Tensor) -> torch.Tensor:", "    v0 = x"]
    for i in range(1, n):
        lines.append("    v%d = torch.tanh(v%d * 0.5 + %d.0)" % (i, i - 1, i % 7))
    lines += ["    return v%d" % (n - 1), "print(f(torch.ones(2)).sum().item() > 0.0)"]
    return "\n".join(lines) + "\n"


def grad_call_chain(n):
    lines = ["import torch", "from functorch import grad",
             "def g0(x: torch.Tensor) -> torch.Tensor:", "    return torch.sin(x)"]
    for i in range(1, n):
        lines += ["def g%d(x: torch.Tensor) -> torch.Tensor:" % i,
                  "    return g%d(x) * 0.999" % (i - 1)]
    lines.append("print(grad(lambda_free)(torch.tensor(1.0)).item() != 0.0)"
                 .replace("lambda_free", "g%d" % (n - 1)))
    return "\n".join(lines) + "\n"


def nested_loops(n):
    # Nests of 24 loops (while, for, and an if between), two lines a level: a pass
    # that walks a loop's body once per enclosing loop costs 2^24 per nest.
    depth = 24
    lines = ["def f(x: int) -> int:", "    k = 0"]
    for nest in range(max(1, n // (2 * depth))):
        for level in range(depth):
            pad = "    " * (level + 1)
            head = ["while k < x:", "for i in range(x):", "if x > %d:" % nest][level % 3]
            lines += [pad + head, pad + "    k += 1"]
    lines += ["    return k", "print(f(0))"]
    return "\n".join(lines) + "\n"


SHAPES = {"elif chain": elif_chain, "long function": long_function,
          "grad of a call chain": grad_call_chain, "nested loops": nested_loops}


def seconds(tsl, text, repeat):
    with tempfile.NamedTemporaryFile("w", suffix=".tsl", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = subprocess.run([tsl, path], capture_output=True, text=True)
            best = min(best, time.perf_counter() - t0)
            if r.returncode != 0:
                sys.exit("tsl failed: " + r.stderr[:300])
        return best
    finally:
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsl", default="build/release/tsl")
    ap.add_argument("--sizes", default="1000,2000,4000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-ratio", type=float, default=None)
    args = ap.parse_args()
    failed = []
    sizes = [int(s) for s in args.sizes.split(",")]
    print("%-22s %8s %10s %8s" % ("program", "N", "seconds", "t(N)/t(N/2)"))
    for name, make in SHAPES.items():
        prev = None
        for n in sizes:
            t = seconds(args.tsl, make(n), args.repeat)
            ratio = "" if prev is None else "%.2f" % (t / prev)
            print("%-22s %8d %10.3f %8s" % (name, n, t, ratio))
            if prev is not None and args.max_ratio and t / prev > args.max_ratio:
                failed.append("%s: %.2f > %.2f at N = %d" % (name, t / prev, args.max_ratio, n))
            prev = t
    if failed:
        print("FAIL: compile time grows faster than allowed:\n  " + "\n  ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
