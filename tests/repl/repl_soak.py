#!/usr/bin/env python3
"""The REPL soak test (issue 21): feeds `tsl`'s REPL, through a pseudo-terminal, a
long seeded stream of statements, valid and invalid (syntax errors, unknown names,
shape and type errors, failed allocations, raises, meta-commands, functions defined
and redefined, loops, transforms), and checks that
  - the session survives every one (no exit, no hang: each answers within --timeout),
  - values set at the start are intact at the end,
  - the resident memory grows by at most --max-growth-mb over the run.
On failure it prints the seed and the last statements sent.
  tests/repl/repl_soak.py --tsl build/release/tsl [--count 10000] [--seed 1]"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pty_session import Session  # noqa: E402


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def statements(rng, count):
    """A seeded stream of REPL statements; roughly a third fail."""
    tensors = [f"v{i}" for i in range(12)]
    fns = []
    for i in range(count):
        a, b = rng.randint(1, 6), rng.randint(1, 6)
        t, u = rng.choice(tensors), rng.choice(tensors)
        k = rng.randrange(18)
        if k == 0:
            yield f"{t} = torch.randn({a}, {b})"
        elif k == 1:
            yield f"{t} = {u} + {rng.choice(tensors)} * {rng.uniform(-2, 2):.3f}"
        elif k == 2:
            yield f"print(({t} * 2.0).sum().item())"
        elif k == 3:
            yield f"m = {t} @ {u}.t()"
        elif k == 4:
            yield f"print(undefined_{i})"
        elif k == 5:
            yield rng.choice(["x = (1 +", "def", ")))", "for in range(3):", "x = [1, 2",
                              "if x == :", "1 = x", "x = 'unterminated", "@@", "return 5"])
        elif k == 6:
            name = f"g{rng.randrange(6)}"
            body = rng.choice(["torch.tanh(t) * 2.0", "t.sum() + 1.0", "t @ t.t()",
                               "torch.relu(t - 0.5).sum()", "t[0] * t[-1]"])
            fns.append(name)
            yield f"def {name}(t):\n    return {body}\n"
        elif k == 7 and fns:
            yield f"print({rng.choice(fns)}({t}))"
        elif k == 8:
            yield "for i in range(3):\n    acc = acc + i\n"
        elif k == 9:
            yield rng.choice([":vars", ":help", ":help :grad", ":time 1 + 1", ":graph g0",
                              ":grad g1", ":code g2", ":nosuchcommand"])
        elif k == 10:
            yield "torch.zeros(100000, 100000, 100000)"
        elif k == 11:
            yield f"print({t}[{rng.randint(-8, 8)}])"
        elif k == 12:
            yield f"n = {a} * {b} // {rng.randint(0, 3)}"
        elif k == 13:
            yield f"raise ValueError('soak {i}')"
        elif k == 14 and fns:
            yield f"print(grad({rng.choice(fns)})({t}))"
        elif k == 15:
            yield f"while n > 0:\n    n = n - 1\n"
        elif k == 16:
            yield f"s = str({a}) + 'x' * {b}"
        else:
            yield f"print({t}.shape, {t}.dtype)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--max-growth-mb", type=float, default=20.0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    s = Session(os.path.abspath(args.tsl), args.timeout)
    setup = ["import torch", "from functorch import grad", "sentinel = 12345",
             "kept = torch.arange(5.0)", "acc = 0", "n = 3"] + \
            [f"v{i} = torch.randn(3, 3)" for i in range(12)]
    sent = []
    started = time.time()
    try:
        for st in setup:
            s.send(st)
        baseline = None
        for i, st in enumerate(statements(rng, args.count)):
            sent.append(st)
            s.send(st)
            if i == min(200, args.count // 10):
                baseline = rss_kb(s.pid)
        end = s.send("print(sentinel, kept.sum().item(), kept.tolist())")
        final = rss_kb(s.pid)
    except RuntimeError as e:
        print(f"FAIL (seed {args.seed}, statement {len(sent)}): {e}")
        for st in sent[-5:]:
            print("  sent:", st.replace("\n", "\\n"))
        s.close()
        return 1
    s.close()
    if "12345 10.0 [0.0, 1.0, 2.0, 3.0, 4.0]" not in end:
        print(f"FAIL (seed {args.seed}): the values set at the start changed: {end!r}")
        return 1
    growth = (final - (baseline or final)) / 1024
    print(f"{args.count} statements in {time.time() - started:.1f} s; RSS {baseline} kB after "
          f"warm-up, {final} kB at the end (+{growth:.1f} MB)")
    if growth > args.max_growth_mb:
        print(f"FAIL: the REPL's memory grew by {growth:.1f} MB (limit {args.max_growth_mb})")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
