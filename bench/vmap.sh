#!/usr/bin/env bash
# Per-sample gradients, vmap(grad(loss)) of a small MLP over 64 samples, in TSL and in
# functorch, one after the other in this session (timings on shared VMs vary: compare
# within one run). Both print ms per call and the same checksum.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tsl="${TSL_BIN:-$root/build/release/tsl}"
[ -n "${TSL_BIN:-}" ] || "$root/scripts/build" release tsl >&2
threads="${OMP_NUM_THREADS:-$(nproc)}"
echo "TSL (vmap(grad(loss)), --threads $threads):"
"$tsl" --threads "$threads" "$root/bench/vmap_grad.tsl" "$@" | sed 's/^/  /'
if /usr/bin/python3 -c 'import torch, functorch' 2>/dev/null; then
  echo "functorch (vmap(grad(loss))):"
  OMP_NUM_THREADS="$threads" /usr/bin/python3 "$root/bench/vmap_grad_torch.py" "$@" 2>/dev/null |
    sed 's/^/  /'
else
  echo "PyTorch with functorch is not installed (apt-get install python3-torch): TSL only."
fi
