# The benchmark suite of issue 6, run by bench/run: each benchmark in TSL, PyTorch
# eager and TorchScript, each side in a process of its own (its peak RSS comes from
# wait4), then one Markdown table with the ratios, the targets and the machine.
# Timings on a shared machine vary: compare only numbers from one run.
import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
PYTHON = "/usr/bin/python3"
FUSION_BYTES = 2 * 4 * 1024 * 1024 * 4  # the fused chain reads x and writes y (float32)


class Failure(Exception):
    """A benchmark process failed: its command and what it printed."""


# ---- Processes

class Result:
    """What one benchmark process printed ("key value" lines), its wall time and peak RSS."""

    def __init__(self, text, wall_s, rss_mib):
        self.text, self.wall_s, self.rss_mib = text, wall_s, rss_mib
        self.values = {}
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2:
                self.values[parts[0]] = parts[1]
            elif len(parts) == 3:  # "eager forward_ms 1.0" (fusion_torch.py)
                self.values[parts[0] + "_" + parts[1]] = parts[2]

    def get(self, key):
        if key not in self.values:
            raise Failure(f"no '{key}' in the output:\n{self.text}")
        return float(self.values[key])


TSL_ENV = {"TSL_FUSION_JIT": "sync"}


def run(cmd, cwd=BENCH, extra_env=None):
    """Runs cmd; its stdout, wall time and peak RSS (ru_maxrss of this child alone)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(extra_env or {}))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # so Popen does not wait again
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise Failure(f"{' '.join(cmd)} exited with {proc.returncode}:\n{text}{errors}")
    return Result(text, wall, usage.ru_maxrss / 1024)


# ---- Table rows

class Row:
    """One line of the table; numbers are None where a side was not run. `judge` maps
    the three numbers to the result column, so that it can be judged again on the best
    numbers of several passes."""

    def __init__(self, name, unit, tsl, eager=None, script=None, fmt="{:.2f}",
                 target="", judge=None, rss=(None, None, None)):
        self.name, self.unit, self.fmt = name, unit, fmt
        self.tsl, self.eager, self.script = tsl, eager, script
        self.target, self.judge, self.rss = target, judge, rss

    @property
    def verdict(self):
        return "" if self.judge is None else self.judge(self.tsl, self.eager, self.script)

    def higher_is_better(self):
        return self.unit in ("GB/s", "GFLOP/s")

    def cells(self):
        def num(v):
            return "—" if v is None else self.fmt.format(v)

        def ratio(other):
            return "—" if other is None or self.tsl is None else f"{self.tsl / other:.3g}"

        rss = " / ".join("—" if m is None else f"{m:.0f}" for m in self.rss)
        return [self.name, self.unit, num(self.tsl), num(self.eager), num(self.script),
                ratio(self.eager), ratio(self.script), self.target, self.verdict, rss]


def verdict(ok):
    return "—" if ok is None else ("met" if ok else "**missed**")


def rss_of(*results):
    return tuple(None if r is None else r.rss_mib for r in results)


# ---- The benchmarks

class Suite:
    def __init__(self, args):
        self.args = args
        self.quick = ["--quick"] if args.quick else []
        self.torch = not args.tsl_only
        self.rows, self.notes, self.mismatches = [], [], []
        self.warmed = set()
        self.gemm_peak = 0.0  # the most GFLOP/s of 1024³ GEMM any side measured

    def tsl(self, *argv, warm=False):
        # Compiled fusion kernels are compiled at a group's first large run and wait
        # (TSL_FUSION_JIT=sync) rather than in the background during the timings; with
        # `warm`, one untimed run first fills the kernel cache, as a JIT's warm-up.
        cmd = [self.args.tsl, "--threads", str(self.args.threads), *argv]
        if warm and tuple(cmd) not in self.warmed:
            run(cmd, extra_env=TSL_ENV)
            self.warmed.add(tuple(cmd))
        return run(cmd, extra_env=TSL_ENV)

    def torch_run(self, script, *argv):
        return run([PYTHON, os.path.join(BENCH, script), *argv])

    def both_modes(self, script, *argv):
        """The PyTorch eager and TorchScript results of script, or (None, None)."""
        if not self.torch:
            return None, None
        return (self.torch_run(script, "--mode", "eager", *self.quick, *argv),
                self.torch_run(script, "--mode", "torchscript", *self.quick, *argv))

    def dispatch(self):
        def ns(result):
            found = re.search(r"([0-9.]+) ns per op", result.text)
            if found is None:
                raise Failure(f"no 'ns per op' in the output:\n{result.text}")
            return float(found.group(1))

        tsl = self.tsl(os.path.join(BENCH, "dispatch.tsl"))
        no_opt = self.tsl("--no-opt", os.path.join(BENCH, "dispatch.tsl"))
        eager = script = None
        if self.torch:
            script = self.torch_run("dispatch.tsl")
            eager_src = open(os.path.join(BENCH, "dispatch.tsl")).read().replace(
                "@torch.jit.script\n", "")
            with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
                f.write(eager_src)
                f.flush()
                eager = run([PYTHON, f.name])
        e, s = (ns(eager), ns(script)) if self.torch else (None, None)
        for name, r in (("1. dispatch (fused)", tsl), ("1. dispatch (`--no-opt`)", no_opt)):
            self.rows.append(Row(name, "ns/op", ns(r), e, s, fmt="{:.0f}",
                                 target="≤ 1/5 TorchScript",
                                 judge=lambda t, e, s: verdict(None if s is None else t <= s / 5),
                                 rss=rss_of(r, eager, script)))
        self.notes.append("dispatch: the fused row is what a TSL user gets (the loop body is one "
                          "FusionGroup); `--no-opt` measures the interpreter's per-op dispatch.")

    def mlp(self):
        tsl = self.tsl(os.path.join(BENCH, "mlp.tsl"), *self.quick, warm=True)
        eager, script = self.both_modes("mlp_torch.py")
        self.check_agree("MLP loss", tsl, [eager, script], ["steps", "loss"], rtol=1e-3)
        self.add_timed("2. MLP training step", "ms/step", "ms_per_step", tsl, eager, script)
        self.notes.append(f"MLP: loss after {tsl.values['steps']} steps: TSL {tsl.values['loss']}"
                          + (f", eager {eager.values['loss']}, TorchScript "
                             f"{script.values['loss']}" if eager else ""))

    def fusion(self):
        tsl = self.tsl(os.path.join(BENCH, "fusion.tsl"), warm=True)
        eager = script = None
        if self.torch:
            eager = self.torch_run("fusion_torch.py", "--mode", "eager")
            script = self.torch_run("fusion_torch.py", "--mode", "torchscript")

        def fwd(r, prefix):
            return None if r is None else r.get(prefix + "forward_ms")

        def fb(r, prefix):
            return None if r is None else r.get(prefix + "forward_backward_ms")

        def gbs(ms):
            return None if ms is None else FUSION_BYTES / (ms / 1000) / 1e9

        t, e, s = fwd(tsl, ""), fwd(eager, "eager_"), fwd(script, "torchscript_")
        self.rows.append(Row("3. fused chain 4M, forward", "ms", t, e, s,
                             target="≤ eager/2 (issue 5)",
                             judge=lambda t, e, s: verdict(None if e is None else t <= e / 2),
                             rss=rss_of(tsl, eager, script)))
        self.rows.append(Row("3. fused chain 4M, forward", "GB/s", gbs(t), gbs(e), gbs(s),
                             fmt="{:.1f}"))
        self.rows.append(Row("3. fused chain 4M, fwd+bwd", "ms", fb(tsl, ""), fb(eager, "eager_"),
                             fb(script, "torchscript_")))

    def rnn(self):
        tsl = self.tsl(os.path.join(BENCH, "rnn.tsl"), *self.quick, warm=True)
        eager, script = self.both_modes("rnn_torch.py")
        self.check_agree("RNN loss and gradient", tsl, [eager, script], ["loss", "grad_norm"],
                         rtol=1e-3)
        self.add_timed("4. tanh RNN fwd+bwd", "ms", "ms_per_run", tsl, eager, script)

    def compile_latency(self):
        reps, copies = (3, 2) if self.args.quick else (20, 10)
        with tempfile.TemporaryDirectory() as tmp:
            tsl_file, py_file = os.path.join(tmp, "big.tsl"), os.path.join(tmp, "big.py")
            run([PYTHON, os.path.join(BENCH, "gen_compile.py"), "--tsl", tsl_file, "--py",
                 py_file, "--copies", str(copies)])
            tsl = run([os.path.join(self.args.bin_dir, "compile_latency"), tsl_file, "big0",
                       str(reps)])
            script = self.torch_run("compile_torch.py", py_file, "--copies", str(copies)) \
                if self.torch else None
        s1 = None if script is None else script.get("script_ms")
        s2 = None if script is None else script.get("script_first_call_ms")
        t1, t2 = tsl.get("runnable_ms"), tsl.get("first_call_ms")
        self.rows.append(Row("5. compile 300 lines → runnable", "ms", t1, None, s1,
                             target="≤ 1/10 torch.jit.script",
                             judge=lambda t, e, s: verdict(None if s is None else t <= s / 10),
                             rss=rss_of(tsl, None, script)))
        self.rows.append(Row("5. compile 300 lines + first call", "ms", t2, None, s2,
                             target="≤ 1/10 script + call",
                             judge=lambda t, e, s: verdict(None if s is None else t <= s / 10)))
        self.notes.append(f"compile: TSL {t1:.2f} ms = parse + define {tsl.get('define_ms'):.2f} "
                          f"ms (parse alone {tsl.get('parse_ms'):.2f}) + compile, optimize and "
                          f"build Code {t1 - tsl.get('define_ms'):.2f} ms (medians of {reps} "
                          f"compiles in fresh units; the process's first "
                          f"{tsl.get('first_runnable_ms'):.1f} ms); "
                          f"TorchScript: medians of {copies} fresh copies"
                          + (f", the first {script.get('first_script_ms'):.0f} ms"
                             if script else ""))

    def startup(self):
        n_tsl, n_py = (3, 2) if self.args.quick else (20, 10)
        tsl = [self.tsl("-c", "print(1)") for _ in range(n_tsl)]
        t = statistics.median(r.wall_s for r in tsl) * 1000
        e = plain = None
        eager = []
        if self.torch:
            eager = [run([PYTHON, "-c", "import torch; print(1)"]) for _ in range(n_py)]
            plain_runs = [run([PYTHON, "-c", "print(1)"]) for _ in range(n_py)]
            e = statistics.median(r.wall_s for r in eager) * 1000
            plain = statistics.median(r.wall_s for r in plain_runs) * 1000
        self.rows.append(Row("6. start to first result", "ms", t, e, None, fmt="{:.1f}",
                             target="< 50 ms", judge=lambda t, e, s: verdict(t < 50),
                             rss=(max(r.rss_mib for r in tsl),
                                  max(r.rss_mib for r in eager) if eager else None, None)))
        self.notes.append(f"start-up: median of {n_tsl} `tsl -c \"print(1)\"` against "
                          f"`python3 -c \"import torch; print(1)\"` (eager column)"
                          + (f"; python3 without torch {plain:.1f} ms" if plain else ""))

    def gemm(self):
        runs = "3" if self.args.quick else "20"
        tsl = self.tsl(os.path.join(BENCH, "gemm.tsl"), *self.quick)
        eager, script = self.both_modes("gemm_torch.py")
        eigen = run([os.path.join(self.args.bin_dir, "gemm_peak"), runs])
        peak, how = theoretical_peak()
        g = tsl.get("gflops")
        measured = max([eigen.get("eigen_gflops")] +
                       [r.get("gflops") for r in (eager, script) if r is not None])
        self.gemm_peak = max(self.gemm_peak, measured, g or 0)
        eigen_gflops = eigen.get("eigen_gflops")

        def judge(t, e, s):
            best = max(x for x in (eigen_gflops, e, s) if x is not None)
            return f"{t / best:.0%} of measured, {t / peak:.0%} of theoretical"

        self.rows.append(Row("7. GEMM 1024³ float32", "GFLOP/s", g,
                             None if eager is None else eager.get("gflops"),
                             None if script is None else script.get("gflops"), fmt="{:.1f}",
                             target="vs peak", judge=judge,
                             rss=rss_of(tsl, eager, script)))
        self.notes.append(f"GEMM peak: measured {measured:.1f} GFLOP/s (the best of Eigen "
                          f"alone and PyTorch); Eigen alone {eigen.get('eigen_gflops'):.1f} "
                          f"GFLOP/s, best "
                          f"on {eigen.values['eigen_threads']} thread(s) (bench/gemm_peak.cpp); "
                          f"theoretical {peak:.0f} GFLOP/s ({how})")

    # ---- Helpers

    def add_timed(self, name, unit, key, tsl, eager, script):
        """A row whose target is issue 6's "at least as fast as PyTorch eager"."""
        t = tsl.get(key)
        e = None if eager is None else eager.get(key)
        s = None if script is None else script.get(key)
        self.rows.append(Row(name, unit, t, e, s, target="≤ eager",
                             judge=lambda t, e, s: verdict(None if e is None else t <= e),
                             rss=rss_of(tsl, eager, script)))

    def check_agree(self, what, tsl, others, keys, rtol):
        for other in others:
            if other is None:
                continue
            for key in keys:
                a, b = tsl.get(key), other.get(key)
                if abs(a - b) > rtol * max(abs(a), abs(b), 1e-12):
                    self.mismatches.append(f"{what}: {key} TSL {a} vs PyTorch {b}")


# The multiply-adds of the benchmarks' matrix products, times 2 (their FLOPs), from the
# shapes in bench/mlp.tsl and bench/rnn.tsl: the FLOP bound of a step is these at the
# measured GEMM peak (the products dominate; the elementwise work is memory-bound).
# MLP step, batch 64, 784 -> 256 -> 10: x @ w1.T and h @ w2.T forward; dW2, dh and dW1
# backward (no gradient for x).
MLP_FLOPS = 2 * (64 * 784 * 256 + 64 * 256 * 10 + 10 * 64 * 256 + 64 * 10 * 256
                 + 256 * 64 * 784)
# tanh RNN, 50 steps, batch 32, input 64, hidden 128: xs[i] @ wx and h @ wh forward; dWx,
# dWh and dh backward, each step.
RNN_FLOPS = 50 * 2 * (32 * 64 * 128 + 32 * 128 * 128 + 64 * 32 * 128 + 128 * 32 * 128
                      + 32 * 128 * 128)


def flop_bound_notes(rows, peak_gflops):
    """Each of the MLP and RNN rows against its FLOP bound at the measured GEMM peak."""
    notes = []
    for row in rows:
        for prefix, flops in (("2. MLP", MLP_FLOPS), ("4. tanh RNN", RNN_FLOPS)):
            if not row.name.startswith(prefix) or row.tsl is None or not peak_gflops:
                continue
            bound_ms = flops / (peak_gflops * 1e9) * 1e3
            sides = [f"TSL {row.tsl / bound_ms:.1f}x"]
            for side, v in (("eager", row.eager), ("TorchScript", row.script)):
                if v is not None:
                    sides.append(f"{side} {v / bound_ms:.1f}x")
            notes.append(f"{row.name}: {flops / 1e6:.1f} MFLOP of matrix products, a FLOP "
                         f"bound of {bound_ms:.3f} ms at the measured GEMM peak "
                         f"({peak_gflops:.0f} GFLOP/s); " + ", ".join(sides) + " the bound")
    return notes


def best_of(passes):
    """One row per benchmark with each side's best number over the passes (the least
    time, the most GB/s or GFLOP/s) and the largest peak RSS."""
    merged = []
    for rows in zip(*passes):
        first = rows[0]

        def best(values):
            values = [v for v in values if v is not None]
            if not values:
                return None
            return max(values) if first.higher_is_better() else min(values)

        rss = tuple(best_rss for best_rss in (
            max((r.rss[k] for r in rows if r.rss[k] is not None), default=None)
            for k in range(3)))
        merged.append(Row(first.name, first.unit, best(r.tsl for r in rows),
                          best(r.eager for r in rows), best(r.script for r in rows),
                          fmt=first.fmt, target=first.target, judge=first.judge, rss=rss))
    return merged


# ---- The machine

def cpu_model():
    """The model name, with family and model numbers (a VM often shows only "AMD EPYC")."""
    fields = {}
    try:
        for line in open("/proc/cpuinfo"):
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or "unknown CPU"
    return (f"{fields.get('model name', 'unknown CPU')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')})")


def cpu_flags_and_mhz():
    flags, mhz = set(), None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
            if line.startswith("cpu MHz") and mhz is None:
                mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    return flags, mhz or 0.0


def theoretical_peak():
    """float32 FMA peak of all cores: lanes x 2 FMA units x 2 flops x clock (assumed)."""
    flags, mhz = cpu_flags_and_mhz()
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    cores = os.cpu_count() or 1
    peak = cores * lanes * 2 * 2 * mhz / 1000
    isa = "AVX-512" if lanes == 16 else "AVX2" if lanes == 8 else "SSE"
    return peak, (f"{cores} cores x {lanes} {isa} lanes x 2 FMA units x 2 flops x "
                  f"{mhz / 1000:.2f} GHz nominal; a VM hides the boost clock")


def torch_version():
    """PyTorch's version and the BLAS library it loaded (Debian's build calls libblas.so.3)."""
    code = ("import torch, os\n"
            "blas = sorted({os.path.realpath(l.split()[-1]) for l in open('/proc/self/maps')\n"
            "               if 'blas' in l.split()[-1]})\n"
            "print(torch.__version__, '/'.join(blas[0].split('/')[-2:]) if blas else 'none')\n")
    try:
        out = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        return f"PyTorch {out[0]} on {out[1]}"
    except (subprocess.CalledProcessError, IndexError):
        return "PyTorch not installed"


def tsl_instruction_sets(tsl):
    """What `tsl --version` says of the CPU's x86-64 level, the build and the kernels."""
    try:
        text = subprocess.run([tsl, "--version"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown (tsl --version did not run)"
    found = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
    cpu = found.get("cpu", "unknown").rsplit(", ", 1)[-1]
    return (f"this CPU {cpu}; TSL built for {found.get('build', 'unknown')}; "
            f"kernels running: {found.get('kernels', 'unknown')}")


# ---- Output

def print_table(suite, started, load_before):
    header = ["benchmark", "unit", "TSL", "eager", "TorchScript", "TSL/eager", "TSL/TorchScript",
              "target", "result", "peak RSS MiB (TSL / eager / TS)"]
    print(f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
          f"{platform.release()}; {torch_version() if suite.torch else 'TSL only'}")
    print(f"Instruction sets: {tsl_instruction_sets(suite.args.tsl)}")
    print(f"Run: {started:%Y-%m-%d %H:%M} UTC, {suite.args.threads} thread(s) for TSL and "
          f"PyTorch{', --quick' if suite.args.quick else ''}; "
          f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in suite.rows:
        print("| " + " | ".join(row.cells()) + " |")
    print()
    print("Lower is better except GB/s and GFLOP/s. Ratios are TSL divided by the other side.")
    for note in suite.notes:
        print(f"- {note}")
    for m in suite.mismatches:
        print(f"- **MISMATCH** {m}")


def main():
    parser = argparse.ArgumentParser(description="TSL's benchmark suite against PyTorch")
    parser.add_argument("--tsl", required=True, help="the tsl binary")
    parser.add_argument("--bin-dir", required=True, help="where compile_latency and gemm_peak are")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    parser.add_argument("--tsl-only", action="store_true", help="skip PyTorch")
    parser.add_argument("--torch-lib-dir", help="a folder searched first for PyTorch's "
                        "libblas.so.3 (bench/run's OpenBLAS; TSL links no BLAS)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="passes over the suite, each side's best reported (default 3; "
                        "1 with --quick)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="threads for TSL, PyTorch and Eigen alike (default: all cores)")
    args = parser.parse_args()
    # PyTorch (OpenMP, OpenBLAS) and gemm_peak (OpenMP) read these; TSL gets --threads.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    if args.torch_lib_dir:
        paths = [args.torch_lib_dir] + os.environ.get("LD_LIBRARY_PATH", "").split(":")
        os.environ["LD_LIBRARY_PATH"] = ":".join(p for p in paths if p)
    args.tsl, args.bin_dir = os.path.abspath(args.tsl), os.path.abspath(args.bin_dir)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = os.getloadavg()[0]
    suite = Suite(args)
    steps = [suite.dispatch, suite.mlp, suite.fusion, suite.rnn, suite.compile_latency,
             suite.startup, suite.gemm]
    repeat = args.repeat or (1 if args.quick else 3)
    passes = []
    try:
        for p in range(repeat):
            suite.rows, suite.notes = [], []
            for step in steps:
                print(f"pass {p + 1} of {repeat}: running {step.__name__} ...", file=sys.stderr,
                      flush=True)
                step()
            passes.append(suite.rows)
    except Failure as e:
        print(f"bench: {e}", file=sys.stderr)
        return 1
    suite.rows = best_of(passes)
    suite.notes += flop_bound_notes(suite.rows, suite.gemm_peak)
    if repeat > 1:
        suite.notes.insert(0, f"Each number is the best of {repeat} passes over the suite; a "
                           "pass runs every benchmark in TSL and then in PyTorch, so the two "
                           "sides alternate (shared VMs swing 2x between runs). Notes are "
                           "the last pass's.")
    print_table(suite, started, load_before)
    return 1 if suite.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
