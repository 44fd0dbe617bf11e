#!/usr/bin/env bash
# The installed TSL as a new user gets it: `cmake --install` into a prefix, and the
# Debian package (cpack -G DEB) unpacked; each installed tsl, run from an unrelated
# folder, finds its standard library, imports a user's module beside a script, and
# trains the MLP example's model for a step.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/project"
cat > "$work/project/helpers.tsl" <<'TSL'
import torch
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0
TSL
cat > "$work/project/main.tsl" <<'TSL'
import torch
import nn
import optim
from helpers import double
torch.manual_seed(0)
w, b = nn.linear_init(3, 2)
params = [w.requires_grad_(), b.requires_grad_()]
loss = nn.linear(double(torch.ones(4, 3)), w, b).pow(2).mean()
loss.backward()
optim.sgd_(params, optim.zeros_like(params), 1, 0.1)
print("gain", nn.calculate_gain("tanh"))
print("rows", w.shape[0])
TSL
expected=$'gain 1.6666666666666667\nrows 2'

check() {  # check NAME TSL_BINARY
  local out
  out="$(cd / && "$2" "$work/project/main.tsl")" || { echo "FAIL: $1: tsl failed"; exit 1; }
  if [ "$out" != "$expected" ]; then
    printf 'FAIL: %s printed:\n%s\nexpected:\n%s\n' "$1" "$out" "$expected"
    exit 1
  fi
  echo "ok   $1"
}

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test -f "$work/prefix/share/tsl/stdlib/nn.tsl" || { echo "FAIL: no stdlib installed"; exit 1; }
test -f "$work/prefix/share/doc/TSL/LICENSE" || { echo "FAIL: no LICENSE installed"; exit 1; }
check "cmake --install" "$work/prefix/bin/tsl"

if ! command -v cpack > /dev/null || ! command -v dpkg-deb > /dev/null; then
  echo "SKIP: no cpack or dpkg-deb here"
  exit 77
fi
(cd "$build" && cpack -G DEB -B "$work/pkg" > "$work/cpack.log") ||
  { cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
deb="$(ls "$work"/pkg/tsl_*.deb)"
# (Not `dpkg-deb -I | grep -q`: grep's early exit can kill dpkg-deb with SIGPIPE, which
# pipefail reports as a failure.)
info="$(dpkg-deb -I "$deb")"
grep -q "Depends: libc6" <<< "$info" || { echo "FAIL: no Depends in $deb:"; echo "$info"; exit 1; }
dpkg-deb -x "$deb" "$work/root"
test -f "$work/root/usr/share/tsl/stdlib/optim.tsl" || { echo "FAIL: the package has no stdlib"; exit 1; }
check "the .deb ($(basename "$deb"))" "$work/root/usr/bin/tsl"
