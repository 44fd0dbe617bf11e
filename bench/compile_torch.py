# The TorchScript side of the compile-latency benchmark: torch.jit.script of the
# 300-line function written by bench/gen_compile.py (a fresh copy each time, since
# scripting caches), alone and with its first call. Prints the medians in ms.
import argparse
import importlib.util
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("module", help="the module bench/gen_compile.py --py wrote")
    parser.add_argument("--copies", type=int, required=True)
    args = parser.parse_args()
    spec = importlib.util.spec_from_file_location("compile_bench_module", args.module)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    x, y = torch.randn(16, 16), torch.randn(16, 16)
    script_ms, first_call_ms = [], []
    for k in range(args.copies):
        fn = getattr(module, f"big{k}")
        t0 = time.perf_counter()
        scripted = torch.jit.script(fn)
        t1 = time.perf_counter()
        scripted(x, y)
        t2 = time.perf_counter()
        script_ms.append((t1 - t0) * 1000)
        first_call_ms.append((t2 - t0) * 1000)
    print(f"script_ms {statistics.median(script_ms):.3f}")
    print(f"script_first_call_ms {statistics.median(first_call_ms):.3f}")
    print(f"first_script_ms {script_ms[0]:.3f}")


if __name__ == "__main__":
    main()
