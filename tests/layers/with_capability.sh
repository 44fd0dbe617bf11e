#!/bin/sh
# Runs a test binary with TSL's kernels of one CPU capability forced
# (TSL_CPU_CAPABILITY; Note [One binary for every x86-64]):
#   with_capability.sh CAPABILITY TSL_BINARY TEST_BINARY [ARGS...]
# Skips (exit 77) where this CPU cannot run the capability; fails where the forced
# capability is not the one that runs (so a test "of avx2" never runs other kernels).
capability=$1
tsl=$2
shift 2
version=$(TSL_CPU_CAPABILITY=$capability "$tsl" --version 2>/tmp/with_capability.$$)
warning=$(cat /tmp/with_capability.$$)
rm -f /tmp/with_capability.$$
kernels=$(printf '%s\n' "$version" | grep '^kernels: ')
case "$kernels" in
  "kernels: $capability ("*"TSL_CPU_CAPABILITY)") ;;
  *)
    case "$warning" in
      *"cannot run"*) echo "this CPU cannot run $capability: $warning"; exit 77 ;;
    esac
    echo "TSL_CPU_CAPABILITY=$capability did not take: '$kernels' $warning"
    exit 1
    ;;
esac
echo "$kernels"
TSL_CPU_CAPABILITY=$capability exec "$@"
