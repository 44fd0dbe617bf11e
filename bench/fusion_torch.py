# The fusion benchmark's expression in PyTorch eager and TorchScript (torch.jit.script),
# forward and forward+backward (torch.autograd.grad of y.sum()), best of several runs,
# on the same 4M float32 values as bench/fusion.tsl, and its second case (a bias
# broadcast with a where mask). Run by bench/fusion.sh (all) and bench/suite.py
# (`--mode eager` or `--mode torchscript`: the first case, one side per process).
import argparse
import time

import torch


def f(x: torch.Tensor, a: float, b: float) -> torch.Tensor:
    return torch.sigmoid(x * a + b) * torch.tanh(x) - x * 0.5


def leaky_bias(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    h = x + bias
    return torch.where(h > 0, h, h * 0.1)


def best_ms(fn, runs=20, warmup=5):
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1000


def forward_backward(fn, x, *args):
    y = fn(x, *args).sum()
    (gx,) = torch.autograd.grad(y, x)
    return gx


def main():
    parser = argparse.ArgumentParser(description="the fusion benchmark in PyTorch")
    parser.add_argument("--mode", choices=("eager", "torchscript"), help="only this one")
    mode = parser.parse_args().mode
    n = 4 * 1024 * 1024
    torch.manual_seed(0)
    x = torch.randn(n)
    a, b = 1.5, -0.25
    xg = x.clone().requires_grad_()
    scripted = torch.jit.script(f)
    for name, fn in (("eager", f), ("torchscript", scripted)):
        if mode is not None and name != mode:
            continue
        fwd = best_ms(lambda: fn(x, a, b))
        fwd_bwd = best_ms(lambda: forward_backward(fn, xg, a, b))
        print(f"{name} forward_ms {fwd:.3f}")
        print(f"{name} forward_backward_ms {fwd_bwd:.3f}")
    if mode is not None:
        print(f"threads {torch.get_num_threads()}")
        return
    # The bias broadcast with a where mask.
    xm = torch.randn(4096, 1024)
    bias = torch.randn(1024)
    xmg = xm.clone().requires_grad_()
    scripted = torch.jit.script(leaky_bias)
    for name, fn in (("eager", leaky_bias), ("torchscript", scripted)):
        fwd = best_ms(lambda: fn(xm, bias))
        fwd_bwd = best_ms(lambda: forward_backward(fn, xmg, bias))
        print(f"{name} bias_forward_ms {fwd:.3f}")
        print(f"{name} bias_forward_backward_ms {fwd_bwd:.3f}")
    print(f"threads {torch.get_num_threads()}")


if __name__ == "__main__":
    main()
