# Prints bench/fusion.sh's table from its collected "name key value" lines.
import sys

N = 4 * 1024 * 1024
FORWARD_BYTES = 2 * N * 4  # reads x, writes y (float32)


def main(path):
    values = {}
    for line in open(path):
        parts = line.split()
        if len(parts) == 2 and not line.startswith("#"):
            values[("", parts[0])] = parts[1]
        elif len(parts) == 3:
            values[(parts[0], parts[1])] = parts[2]
    bw = float(values[("", "bandwidth_4M_gbs")])
    bound_ms = FORWARD_BYTES / (bw * 1e9) * 1000
    print(f"memory bandwidth: {bw:.1f} GB/s for 4M floats read + 4M written "
          f"({values[('', 'bandwidth_threads')]} threads), "
          f"{float(values[('', 'bandwidth_64M_gbs')]):.1f} GB/s for 64M (DRAM)")
    print(f"bandwidth bound of the forward (32 MiB moved): {bound_ms:.2f} ms")
    threads = int(values[("", "bandwidth_threads")])
    compute_ms = None
    if ("tsl", "cached_ns_per_value") in values:
        # The compiled kernel's rate on data in cache, on every thread: the time the
        # arithmetic alone takes (Eigen's exp and tanh, the divisions).
        rate = float(values[("tsl", "cached_ns_per_value")])
        compute_ms = rate * N / threads / 1e6
        print(f"compute bound of the forward (TSL's compiled code in cache, {rate:.3f} ns "
              f"per value on one thread, {threads} threads): {compute_ms:.2f} ms")
    roof_ms = max(bound_ms, compute_ms or 0)
    print(f"roofline (the larger bound): {roof_ms:.2f} ms\n")
    rows = [("TSL (compiled)", "tsl"), ("TSL chunk loop", "tsl-chunk-loop"),
            ("TSL --no-opt", "tsl-no-opt"), ("PyTorch eager", "eager"),
            ("TorchScript", "torchscript")]
    print(f"{'':16}{'forward ms':>12}{'GB/s':>8}{'x bw':>7}{'x roof':>8}{'fwd+bwd ms':>12}")
    for label, key in rows:
        if (key, "forward_ms") not in values:
            continue
        fwd = float(values[(key, "forward_ms")])
        fb = float(values[(key, "forward_backward_ms")])
        gbs = FORWARD_BYTES / (fwd / 1000) / 1e9
        print(f"{label:16}{fwd:12.2f}{gbs:8.1f}{fwd / bound_ms:7.2f}{fwd / roof_ms:8.2f}"
              f"{fb:12.2f}")
    if ("eager", "forward_ms") in values:
        tsl = float(values[("tsl", "forward_ms")])
        tsl_fb = float(values[("tsl", "forward_backward_ms")])
        eager = float(values[("eager", "forward_ms")])
        eager_fb = float(values[("eager", "forward_backward_ms")])
        print(f"\nTSL vs eager: forward {eager / tsl:.2f}x faster, "
              f"forward+backward {eager_fb / tsl_fb:.2f}x faster")
    print("targets: forward within 1.5x of the bandwidth bound, at least 2x faster than eager;")
    print("where the compute bound is the larger, no code with these numerics reaches the first")
    # The second case: h = x + bias, where(h > 0, h, h * 0.1), x [4096, 1024].
    print(f"\nbias broadcast + where mask ([4096, 1024] + [1024]; bound {bound_ms:.2f} ms):")
    print(f"{'':16}{'forward ms':>12}{'x bw':>9}{'fwd+bwd ms':>12}")
    for label, key in rows:
        if (key, "bias_forward_ms") not in values:
            continue
        fwd = float(values[(key, "bias_forward_ms")])
        fb = float(values[(key, "bias_forward_backward_ms")])
        print(f"{label:16}{fwd:12.2f}{fwd / bound_ms:9.2f}{fb:12.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
