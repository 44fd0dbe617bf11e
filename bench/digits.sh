#!/usr/bin/env bash
# Training time per epoch of the digits examples' models (examples/mlp_digits.tsl,
# examples/cnn_digits.tsl) in TSL (stdlib nn/losses/optim, eager tape) and in PyTorch
# eager (torch.nn, torch.optim.Adam; 1 thread and all threads, the faster counted),
# side by side, each the best of 3 alternating runs. Needs python3-sklearn for the
# data (TSL_WITH_DATA=1 scripts/setup.sh) and python3-torch for PyTorch's side.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tsl="${TSL_BIN:-$root/build/release/tsl}"
[ -n "${TSL_BIN:-}" ] || "$root/scripts/build" release tsl >&2
threads="$(nproc)"
# PyTorch on OpenBLAS where bench/run has unpacked it (build/openblas).
openblas="$( (find "$root/build/openblas" -name libblas.so.3 -path '*openblas-pthread*' 2>/dev/null ||
  true) | head -1)"
torch_env=()
[ -n "$openblas" ] && torch_env=(env "LD_LIBRARY_PATH=$(dirname "$openblas")")
value() { awk -v k="$1" '$1 == k { print $2 }'; }
best() { grep . | sort -g | head -1; }
declare -A runs
have_torch=0
/usr/bin/python3 -c 'import torch' 2>/dev/null && have_torch=1
for round in 1 2 3; do
  out="$("$tsl" --threads "$threads" "$root/bench/digits.tsl")"
  for m in mlp cnn; do runs[tsl_$m]+="$(value ${m}_epoch_ms <<< "$out")"$'\n'; done
  if ((have_torch)); then
    for t in 1 "$threads"; do
      out="$("${torch_env[@]}" /usr/bin/python3 "$root/bench/digits_torch.py" "$t")"
      for m in mlp cnn; do runs[torch_$m]+="$(value ${m}_epoch_ms <<< "$out")"$'\n'; done
    done
  fi
done
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
isa="$(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
echo "Digits models, ms per training epoch (1,437 images), best of 3 runs; $cpu ($isa), $threads threads"
echo
echo "| model | TSL | PyTorch eager | PyTorch / TSL |"
echo "|---|---|---|---|"
for m in mlp cnn; do
  t="$(best <<< "${runs[tsl_$m]}")"
  if ((have_torch)); then
    p="$(best <<< "${runs[torch_$m]}")"
    printf '| %s | %.2f | %.2f | %.2fx |\n' "$m" "$t" "$p" "$(echo "$p / $t" | bc -l)"
  else
    printf '| %s | %.2f | — | — |\n' "$m" "$t"
  fi
done
