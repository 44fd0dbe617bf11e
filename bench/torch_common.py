# Shared by the PyTorch sides of the benchmark suite (bench/*_torch.py): the command
# line (--mode eager|torchscript, --quick) and the timing rule the TSL sides use too
# (best of several blocks, each the mean of its runs).
import argparse
import os
import time

import torch


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mode", choices=("eager", "torchscript"), default="eager")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    # As many threads as TSL gets: bench/suite.py sets OMP_NUM_THREADS (without it,
    # Debian's build starts with one thread on the 2-vCPU VM).
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1)))
    return args


def best_block_ms(fn, blocks, block_runs, warmup, budget_s=15.0):
    """Runs fn warmup times, then blocks x block_runs times; the best block's mean.

    Debian's PyTorch uses the generic reference BLAS, so a run can take a second or
    more: blocks shrink to about budget_s / blocks seconds each (one run at least).
    budget_s=None keeps the counts (the MLP's loss depends on the number of steps).
    """
    t0 = time.perf_counter()
    for _ in range(warmup):
        fn()
    per_run = (time.perf_counter() - t0) / max(warmup, 1)
    if budget_s is not None:
        block_runs = max(1, min(block_runs, int(budget_s / blocks / max(per_run, 1e-9))))
    best = float("inf")
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(block_runs):
            fn()
        best = min(best, (time.perf_counter() - t0) / block_runs)
    return best * 1000


def print_threads():
    print(f"threads {torch.get_num_threads()}")
