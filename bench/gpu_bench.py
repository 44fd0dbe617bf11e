#!/usr/bin/env python3
"""GPU benchmarks of the CUDA backend (issue 18), TSL and PyTorch CUDA side by side in
one run on the same GPU (scripts/gpu-check runs it there; PyTorch is that machine's).
Each TSL number is timed inside a TSL program with time.perf_counter() around a loop
that ends by reading a value (.item()), which waits for the GPU; every iteration
depends on the last (or on the loop index), since the optimizer hoists loop-invariant
work out of a loop; PyTorch's the same way
with torch.cuda.synchronize(). Prints one Markdown table.
  bench/gpu_bench.py --tsl PATH [--only NAME] [--emit DIR]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

def mlp_program(batch, inputs, hidden):
    """One SGD step of a 2-layer MLP (relu, cross-entropy) with grad_and_value."""
    return f"""
import torch
import time
import torch.nn.functional as F
from typing import Tuple
from functorch import grad_and_value
def loss(w1, b1, w2, b2, x, t):
    h = F.relu(F.linear(x, w1, b1))
    return F.cross_entropy(F.linear(h, w2, b2), t)
def train(w1, b1, w2, b2, x, t, n: int) -> Tuple[float, float]:
    g, v = grad_and_value(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, t)
    s = v.item()
    t0 = time.perf_counter()
    for i in range(n):
        g, v = grad_and_value(loss, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, t)
        w1 = w1 - 0.01 * g[0]
        b1 = b1 - 0.01 * g[1]
        w2 = w2 - 0.01 * g[2]
        b2 = b2 - 0.01 * g[3]
    s = v.item()
    return (time.perf_counter() - t0) / n, s
torch.manual_seed(0)
x = torch.randn({batch}, {inputs}, device='cuda')
t = torch.randint(0, 10, ({batch},), device='cuda')
w1 = torch.randn({hidden}, {inputs}, device='cuda') * 0.05
b1 = torch.zeros({hidden}, device='cuda')
w2 = torch.randn(10, {hidden}, device='cuda') * 0.05
b2 = torch.zeros(10, device='cuda')
r, s = train(w1, b1, w2, b2, x, t, 50)
print(r, s)
"""


def mlp_torch(batch, inputs, hidden):
    def make(torch):
        import torch.nn.functional as F
        x = torch.randn(batch, inputs, device="cuda")
        t = torch.randint(0, 10, (batch,), device="cuda")
        params = [(torch.randn(hidden, inputs, device="cuda") * 0.05).requires_grad_(),
                  torch.zeros(hidden, device="cuda", requires_grad=True),
                  (torch.randn(10, hidden, device="cuda") * 0.05).requires_grad_(),
                  torch.zeros(10, device="cuda", requires_grad=True)]

        def step():
            w1, b1, w2, b2 = params
            loss = F.cross_entropy(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), t)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= 0.01 * g
        return step, ()
    return make


BENCHES = {
    "MLP step 64x784-256-10": (mlp_program(64, 784, 256), mlp_torch(64, 784, 256), None),
    "MLP step 512x4096-4096-10": (mlp_program(512, 4096, 4096), mlp_torch(512, 4096, 4096),
                                  ("flop", 6 * 512 * (4096 * 4096 + 4096 * 10))),
    # name: (TSL program, PyTorch function, what one iteration moves or computes)
    "gemm 4096^3 float32": (
        """
import torch
import time
from typing import Tuple
def run(a, b, n: int) -> Tuple[float, float]:
    c = a @ b
    s = c[0, 0].item()
    t0 = time.perf_counter()
    for i in range(n):
        # Alternating operands: a loop-invariant product would be hoisted out.
        c = a @ b
        t = a
        a = b
        b = t
    s = c[0, 0].item()
    return (time.perf_counter() - t0) / n, s
a = torch.randn(4096, 4096, device='cuda')
b = torch.randn(4096, 4096, device='cuda')
t, s = run(a, b, 20)
print(t, s)
""",
        lambda torch: (lambda a, b: a @ b, (torch.randn(4096, 4096, device="cuda"),
                                           torch.randn(4096, 4096, device="cuda"))),
        ("flop", 2 * 4096 ** 3)),
    "add [1] (launch overhead)": (
        """
import torch
import time
from typing import Tuple
def run(x, n: int) -> Tuple[float, float]:
    y = x + 1.0
    s = y.item()
    t0 = time.perf_counter()
    for i in range(n):
        y = y + 1.0
    s = y.item()
    return (time.perf_counter() - t0) / n, s
x = torch.zeros(1, device='cuda')
t, s = run(x, 2000)
print(t, s)
""",
        lambda torch: (lambda x: x + 1.0, (torch.zeros(1, device="cuda"),)),
        None),
    "copy 64M float32 (x * 2.0)": (
        """
import torch
import time
from typing import Tuple
def run(x, n: int) -> Tuple[float, float]:
    y = x * 2.0
    s = y[0].item()
    t0 = time.perf_counter()
    for i in range(n):
        y = y * 2.0
    s = y[0].item()
    return (time.perf_counter() - t0) / n, s
x = torch.ones(67108864, device='cuda')
t, s = run(x, 20)
print(t, s)
""",
        lambda torch: (lambda x: x * 2.0, (torch.ones(67108864, device="cuda"),)),
        ("byte", 2 * 4 * 67108864)),
    "chain tanh(x*2+1)*x 64M float32 (fused)": (
        """
import torch
import time
from typing import Tuple
def f(x):
    return torch.tanh(x * 2.0 + 1.0) * x
def run(x, n: int) -> Tuple[float, float]:
    y = f(x)
    s = y[0].item()
    t0 = time.perf_counter()
    for i in range(n):
        y = f(y)
    s = y[0].item()
    return (time.perf_counter() - t0) / n, s
x = torch.ones(67108864, device='cuda')
t, s = run(x, 10)
print(t, s)
""",
        lambda torch: (lambda x: torch.tanh(x * 2.0 + 1.0) * x,
                       (torch.ones(67108864, device="cuda"),)),
        ("byte", 2 * 4 * 67108864)),
    "sum 64M float32": (
        """
import torch
import time
from typing import Tuple
def run(x, n: int) -> Tuple[float, float]:
    y = x.sum()
    s = y.item()
    t0 = time.perf_counter()
    for i in range(n):
        y = x[i:].sum()
    s = y.item()
    return (time.perf_counter() - t0) / n, s
x = torch.ones(67108864, device='cuda')
t, s = run(x, 20)
print(t, s)
""",
        lambda torch: (lambda x: x.sum(), (torch.ones(67108864, device="cuda"),)),
        ("byte", 4 * 67108864)),
}


def time_tsl(tsl, program):
    with tempfile.NamedTemporaryFile("w", suffix=".tsl", delete=False) as f:
        f.write(program)
        path = f.name
    try:
        # TSL_FUSION_JIT=sync: a fused group's CUDA kernel is compiled (or loaded from the
        # cache) at its first run, the untimed one, rather than in the background during
        # the timed loop (Note [Fused kernels on CUDA]).
        p = subprocess.run([tsl, path], capture_output=True, text=True, timeout=180,
                           env=dict(os.environ, TSL_FUSION_JIT="sync"))
    finally:
        os.unlink(path)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1][:100]
    # "seconds value": the value read at the end is printed so that the loop is live
    # (the optimizer removes work whose result nobody uses).
    return float(p.stdout.strip().splitlines()[-1].split()[0]), ""


def time_torch(make, n=20):
    import torch
    fn, args = make(torch)
    fn(*args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


def rate(unit, seconds):
    if not unit or not seconds:
        return ""
    kind, amount = unit
    if kind == "flop":
        return f"{amount / seconds / 1e12:.1f} TFLOP/s"
    return f"{amount / seconds / 1e9:.0f} GB/s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tsl", required=True)
    ap.add_argument("--only")
    ap.add_argument("--emit", metavar="DIR",
                    help="write each benchmark's TSL program to DIR (for a profiler) and stop")
    args = ap.parse_args()
    if args.emit:
        os.makedirs(args.emit, exist_ok=True)
        for name, (program, _, _) in BENCHES.items():
            if args.only and args.only not in name:
                continue
            slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
            with open(os.path.join(args.emit, slug + ".tsl"), "w") as f:
                f.write(program)
        return 0
    try:
        import torch
        device = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001
        print("PyTorch with CUDA is needed:", e)
        return 1
    print(f"device: {device}; PyTorch {torch.__version__}")
    print("| benchmark | TSL | PyTorch | TSL / PyTorch |")
    print("| --- | --- | --- | --- |")
    for name, (program, make, unit) in BENCHES.items():
        if args.only and args.only not in name:
            continue
        t, err = time_tsl(args.tsl, program)
        pt = time_torch(make)
        if t is None:
            print(f"| {name} | error: {err} | {pt * 1e6:.1f} us {rate(unit, pt)} | |")
            continue
        print(f"| {name} | {t * 1e6:.1f} us {rate(unit, t)} | {pt * 1e6:.1f} us {rate(unit, pt)} "
              f"| {t / pt:.2f}x |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
