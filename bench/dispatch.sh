#!/usr/bin/env bash
# Runs the dispatch benchmark in TSL, TorchScript and PyTorch eager, one after the
# other in this session (timings on shared VMs vary: compare within one run).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/build" release tsl >&2
echo -n "TSL:         "; "$root/build/release/tsl" "$root/bench/dispatch.tsl"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo -n "TorchScript: "; /usr/bin/python3 "$root/bench/dispatch.tsl"
  echo -n "eager:       "; sed 's/^@torch.jit.script$//' "$root/bench/dispatch.tsl" | /usr/bin/python3 -
else
  echo "PyTorch is not installed (apt-get install python3-torch) — TSL only."
fi
