#!/usr/bin/env python3
"""The float32 transcendental kernels against the correctly rounded result, on every CPU
capability this machine runs (Note [One binary for every x86-64]).

Usage: transcendental_ulp.py --tsl TSL [--capabilities default,avx2,avx512] [--bound F=N ...]

For each function, TSL computes f(x) on a grid of float32 inputs (linspace over the
range where the function is interesting, and a log-spaced sweep of magnitudes), with each
capability forced in turn. The reference is f computed in long double (x87 80-bit,
error far below float32's half ulp) rounded to float32. Reports, per function and
capability, the largest distance in ulps from the reference and between capabilities,
and fails where a distance exceeds the function's bound (default 1 ulp).
"""
import argparse
import os
import warnings
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    # CMake may have found another python3 first (pyenv's); Debian's has python3-numpy.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.access("/usr/bin/python3", os.X_OK):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("numpy is not installed (apt-get install python3-numpy); skipping")
    sys.exit(77)

N = 20001

# name: (TSL expression of x, reference on long doubles, linspace range, log sweep?)
FUNCTIONS = {
    "exp": ("torch.exp(x)", np.exp, (-104.0, 89.0), False),
    "expm1": ("torch.expm1(x)", np.expm1, (-20.0, 20.0), True),
    "log": ("torch.log(x)", np.log, (1e-3, 100.0), True),
    "log1p": ("torch.log1p(x)", np.log1p, (-0.999, 100.0), True),
    "sin": ("torch.sin(x)", np.sin, (-100.0, 100.0), True),
    "cos": ("torch.cos(x)", np.cos, (-100.0, 100.0), True),
    "tanh": ("torch.tanh(x)", np.tanh, (-10.0, 10.0), True),
    # Where exp(-x) overflows float32 (x < -88.72), sigmoid is 1 / (1 + inf) = 0, as
    # PyTorch's kernel computes it, not the denormal the formula's value would round to.
    "sigmoid": ("torch.sigmoid(x)", lambda v: np.where(v < -88.72, 0, 1 / (1 + np.exp(-v))),
                (-30.0, 30.0), True),
    "reciprocal": ("torch.reciprocal(x)", lambda v: 1 / v, (-100.0, 100.0), True),
}


def program():
    lines = []
    for name, (expr, _, (lo, hi), log_sweep) in FUNCTIONS.items():
        lines.append(f"x = torch.linspace({lo!r}, {hi!r}, {N})")
        if log_sweep:
            # magnitudes 1e-30 .. 1e+30 of both signs (inputs outside a function's domain
            # give NaN in both, which counts as agreement)
            lines.append(f"m = torch.pow(10.0, torch.linspace(-30.0, 30.0, {N}))")
            lines.append("x = torch.cat([x, m, -m])")
        lines.append(f"print('{name}')")
        lines.append("print(x.tolist())")
        lines.append(f"print(({expr}).tolist())")
    return "import torch\n" + "\n".join(lines) + "\n"


def parse(text):
    out = {}
    lines = text.splitlines()
    for i in range(0, len(lines), 3):
        name = lines[i].strip()
        def floats(s):
            s = s.strip()[1:-1]
            return np.array([float(v) for v in s.split(",")], dtype=np.float64)
        out[name] = (floats(lines[i + 1]).astype(np.float32), floats(lines[i + 2]).astype(np.float32))
    return out


def ordered(a):
    """float32 bits as integers in the order of the values (-0 and +0 one apart)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulps(a, b):
    d = np.abs(ordered(a) - ordered(b))
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    d = np.where(both_nan, 0, d)
    return np.where(one_nan, np.iinfo(np.int64).max, d)


def run(tsl, capability, path):
    env = dict(os.environ, TSL_CPU_CAPABILITY=capability)
    version = subprocess.run([tsl, "--version"], env=env, capture_output=True, text=True)
    kernels = [l for l in version.stdout.splitlines() if l.startswith("kernels: ")]
    if not kernels or not kernels[0].startswith(f"kernels: {capability} ("):
        return None
    r = subprocess.run([tsl, path], env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"tsl failed with {capability}: {r.stderr}")
    return parse(r.stdout)


def main():
    # The references overflow to inf and take logs of negatives as the functions do.
    warnings.simplefilter("ignore", RuntimeWarning)
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--capabilities", default="default,avx2,avx512")
    ap.add_argument("--bound", action="append", default=[],
                    help="F=N: function F may be N ulps from the reference (default 1)")
    args = ap.parse_args()
    bounds = {name: 1 for name in FUNCTIONS}
    for b in args.bound:
        name, n = b.split("=")
        bounds[name] = int(n)
    path = f"/tmp/transcendental_ulp_{os.getpid()}.tsl"
    with open(path, "w") as f:
        f.write(program())
    results = {}
    try:
        for c in args.capabilities.split(","):
            r = run(args.tsl, c, path)
            if r is None:
                print(f"{c}: not run (this CPU or build cannot)")
            else:
                results[c] = r
    finally:
        os.unlink(path)
    if not results:
        print("no capability ran")
        return 77
    ok = True
    print(f"{'function':<11} " + " ".join(f"{c + ' ulps':>12}" for c in results) +
          f" {'across':>8} bound")
    for name, (_, ref_fn, _, _) in FUNCTIONS.items():
        row, firsts = [], None
        worst = {}
        for c, r in results.items():
            x, y = r[name]
            ref = ref_fn(x.astype(np.longdouble)).astype(np.float32)
            # Beyond float32's range the reference overflows to inf, as f does.
            d = ulps(y, ref)
            worst[c] = int(d.max())
            row.append(worst[c])
            if worst[c] > bounds[name]:
                ok = False
                i = int(d.argmax())
                print(f"  {name} on {c}: {worst[c]} ulps at x = {x[i]!r}: {y[i]!r}, "
                      f"correctly rounded {ref[i]!r}")
        ys = [r[name][1] for r in results.values()]
        across = max(int(ulps(a, ys[0]).max()) for a in ys)
        print(f"{name:<11} " + " ".join(f"{v:>12}" for v in row) + f" {across:>8} {bounds[name]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
