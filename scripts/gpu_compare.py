#!/usr/bin/env python3
"""Runs .tsl programs with `tsl FILE` and `tsl --device cuda FILE` and compares what they
print: the same text once `, device='cuda:0'` suffixes are dropped, numbers within a
relative 1e-4 (float32 sums and GPU math differ in the last bits). Programs whose CPU run
fails, or that read files, are compared all the same: both runs must fail alike.
Prints one line per program that differs and a summary."""
import argparse
import os
import re
import shutil
import subprocess
import sys

NUM = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?|nan|-?inf")


def run(tsl, args, path):
    try:
        p = subprocess.run([tsl] + args + [path], capture_output=True, text=True, timeout=60,
                           cwd=os.path.dirname(path) or ".")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timeout"


def backtrace(tsl, path):
    """The stack of a crashing `tsl --device cuda` run, from cuda-gdb (which also debugs
    host code) where the machine has it."""
    gdb = shutil.which("cuda-gdb") or shutil.which("gdb")
    if not gdb:
        return "  (no debugger here)"
    try:
        p = subprocess.run([gdb, "-batch", "-ex", "run", "-ex", "bt 25", "--args", tsl, "--device",
                            "cuda", path], capture_output=True, text=True, timeout=120,
                           cwd=os.path.dirname(path))
    except subprocess.TimeoutExpired:
        return "  (the debugger timed out)"
    frames = [l for l in p.stdout.splitlines() if l.startswith("#") or "signal" in l.lower()]
    return "\n".join("  " + l[:200] for l in frames[:30])


def normalize(text):
    # Without the device suffix, and with runs of whitespace as one space: the longer
    # suffix of a CUDA tensor wraps its printed line elsewhere, as PyTorch's does.
    text = text.replace(",\n       device='cuda:0'", "").replace(", device='cuda:0'", "")
    text = text.replace("device(type='cuda', index=0)", "device(type='cpu')")
    return " ".join(text.split())


def same(a, b):
    ta, tb = NUM.split(a), NUM.split(b)
    if ta != tb:
        return False
    na, nb = NUM.findall(a), NUM.findall(b)
    for x, y in zip(na, nb):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if abs(fx - fy) > 1e-4 * max(1.0, abs(fx)):
            return False
    return len(na) == len(nb)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    tsl = os.path.abspath(args.tsl)
    files = []
    for d in args.dirs:
        for dirpath, _, names in os.walk(d):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".tsl")]
    counts = {"same": 0, "differs": 0, "cuda-error": 0}
    missing = {}
    for f in sorted(files):
        rc, out, err = run(tsl, [], os.path.abspath(f))
        grc, gout, gerr = run(tsl, ["--device", "cuda"], os.path.abspath(f))
        if rc == grc and same(normalize(out), normalize(gout)):
            counts["same"] += 1
            continue
        if grc < 0 and grc != -1:
            counts["crash"] = counts.get("crash", 0) + 1
            print(f"CRASH {f}: signal {-grc}")
            print(backtrace(tsl, os.path.abspath(f)))
            continue
        if grc != 0 and rc == 0:
            counts["cuda-error"] += 1
            lines = gerr.strip().splitlines() or ["?"]
            # The message: the line after a traceback, else the first.
            first = next((l for l in lines if "error:" in l), lines[0])
            m = re.search(r"`([a-zA-Z_0-9.]+)` has no CUDA kernel", gerr)
            if m:
                missing[m.group(1)] = missing.get(m.group(1), 0) + 1
            print(f"cuda-error {f}: {first[:200]}")
        else:
            counts["differs"] += 1
            ol, gl = out.splitlines(), gout.splitlines()
            for i, (x, y) in enumerate(zip(ol, gl)):
                if not same(normalize(x), normalize(y)):
                    print(f"differs {f}: line {i + 1}: cpu {x[:120]!r} cuda {y[:120]!r}")
                    break
            else:
                print(f"differs {f}: rc {rc} vs {grc}; {len(ol)} vs {len(gl)} lines; "
                      f"{(gerr.strip().splitlines() or [''])[0][:160]}")
    print("summary:", counts, "of", len(files))
    if missing:
        print("ops without a CUDA kernel (programs stopped by each):",
              ", ".join(f"{k} {v}" for k, v in sorted(missing.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
