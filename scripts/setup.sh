#!/usr/bin/env bash
# Installs the Debian packages TSL needs to build and test, when they are missing.
# Safe to run repeatedly: it only calls apt-get when something is absent.
set -euo pipefail

# libopenblas-serial-dev: the GEMM under matmul/linear/conv2d (cmake/blas.cmake);
# libedit-dev: line editing in the REPL; libsleef-dev: the vector math under exp, tanh, ...
# (cmake/sleef.cmake).
packages=(cmake g++ ninja-build antlr4 libantlr4-runtime-dev libeigen3-dev libgtest-dev
          zlib1g-dev default-jre-headless libopenblas-serial-dev libedit-dev
          libsleef-dev)
if [ "${TSL_WITH_TORCH:-0}" = 1 ]; then
  packages+=(python3-torch python3-numpy)
fi
# The examples' real data: scikit-learn's small data sets (digits.csv.gz, iris.csv, ...),
# which the package installs under /usr/lib/python3/dist-packages/sklearn/datasets/data;
# gnuplot (without X), which draws plot(...); Graphviz, which draws the REPL's :dot.
if [ "${TSL_WITH_DATA:-0}" = 1 ]; then
  packages+=(python3-sklearn gnuplot-nox graphviz)
fi
# clang with libFuzzer, for scripts/fuzz (the fuzz targets' long runs).
if [ "${TSL_WITH_FUZZER:-0}" = 1 ]; then
  packages+=(clang)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # A package with a virtual alternative (the JRE) counts as present when java runs.
    if [ "$p" = default-jre-headless ] && command -v java >/dev/null 2>&1; then continue; fi
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/tsl-setup.log 2>&1; then
  $sudo apt-get update >/tmp/tsl-setup.log 2>&1 || true
  $sudo apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/tsl-setup.log 2>&1 ||
    { cat /tmp/tsl-setup.log >&2; exit 1; }
fi
