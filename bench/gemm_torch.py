# The 1024^3 float32 GEMM of bench/gemm.tsl in PyTorch: torch.mm eager, or inside a
# torch.jit.script function; best of several runs, GFLOP/s.
import time

import torch

import torch_common


def mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.mm(x, y)


def main():
    args = torch_common.parse_args("1024^3 float32 GEMM in PyTorch")
    runs = 3 if args.quick else 20
    n = 1024
    torch.manual_seed(0)
    x = torch.randn(n, n)
    y = torch.randn(n, n)
    fn = torch.jit.script(mm) if args.mode == "torchscript" else mm
    z = fn(x, y)  # warm up (TorchScript's profiling run)
    z = fn(x, y)
    # Debian's generic BLAS takes over a second per product: stop after ~3 s.
    best = float("inf")
    start = time.perf_counter()
    for r in range(runs):
        t0 = time.perf_counter()
        z = fn(x, y)
        best = min(best, time.perf_counter() - t0)
        if r >= 1 and time.perf_counter() - start > 3.0:
            break
    print(f"ms {best * 1000:.4f}")
    print(f"gflops {2.0 * n ** 3 / best / 1e9:.2f}")
    print(f"check {z[0, 0].item():.4f}")
    torch_common.print_threads()


if __name__ == "__main__":
    main()
