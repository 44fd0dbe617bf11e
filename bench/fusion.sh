#!/usr/bin/env bash
# Runs the fusion benchmark in one session: this machine's memory bandwidth
# (bandwidth.cpp), TSL with compiled fusion kernels, with the chunk loop only and with
# --no-opt (fusion.tsl), PyTorch eager and
# TorchScript (fusion_torch.py), then prints a table. TSL_BIN=path/to/tsl skips the
# build of build/release. Timings on shared VMs vary: compare within one run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -z "${TSL_BIN:-}" ]]; then
  "$root/scripts/build" release tsl >&2
  TSL_BIN="$root/build/release/tsl"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

c++ -std=c++20 -O3 -march=native -pthread -o "$tmp/bandwidth" "$root/bench/bandwidth.cpp"
"$tmp/bandwidth" > "$tmp/results"
# Compiled kernels: compiled (or loaded from the cache) at the first run, before the
# timed ones, as a JIT's warm-up; then the chunk loop alone, for comparison.
TSL_FUSION_JIT=sync "$TSL_BIN" "$root/bench/fusion.tsl" | sed 's/^/tsl /' >> "$tmp/results"
TSL_FUSION_JIT=off "$TSL_BIN" "$root/bench/fusion.tsl" | sed 's/^/tsl-chunk-loop /' >> "$tmp/results"
"$TSL_BIN" --no-opt "$root/bench/fusion.tsl" | sed 's/^/tsl-no-opt /' >> "$tmp/results"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 "$root/bench/fusion_torch.py" >> "$tmp/results"
else
  echo "PyTorch is not installed (apt-get install python3-torch) — TSL only." >&2
fi
python3 "$root/bench/fusion_table.py" "$tmp/results"
