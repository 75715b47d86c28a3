#!/usr/bin/env bash
# Installs everything libasc needs on Debian 12, from Debian's packages and
# PyPI.  Idempotent: a second run installs nothing.  Run as root (or with
# sudo available).
#
# Usage: scripts/setup.sh [--plugins]
#   --plugins  also installs PyTorch and JAX from PyPI for the framework
#              plugins' tests, examples and benchmarks (docs/plugins.md).
#              torch's Linux wheel brings about 3 GB of CUDA libraries, so
#              the quick start leaves it out; .ci/run passes it.
set -euo pipefail

plugins=0
for arg in "$@"; do
  case $arg in
    --plugins) plugins=1 ;;
    *) echo "usage: scripts/setup.sh [--plugins]" >&2; exit 2 ;;
  esac
done

pkgs=(build-essential gcc g++ clang libclang-rt-14-dev cmake make pkg-config
      libhwloc-dev hwloc libuv1-dev libcmocka-dev dpkg-dev
      libxxhash-dev libomp-14-dev python3 python3-dev python3-pip
      gnuplot-nox libopenmpi-dev openmpi-bin libsleef-dev
      libopenblas0-pthread)
# libopenblas0-pthread: the BLAS that `@` in kernels calls, dlopen()ed at
# run time and set to one thread per call (Debian's sequential build,
# libopenblas0-serial, is not safe to call from two threads at once);
# libasc builds and runs without it (docs/decisions.md).

sudo=""
if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# jemalloc's source, from Debian's source package: libasc builds a private,
# prefixed copy of it (cmake/jemalloc.cmake, docs/decisions.md).  Kept
# outside the repository, in /var/cache/libasc (ASC_JEMALLOC_CACHE).
jcache=${ASC_JEMALLOC_CACHE:-/var/cache/libasc}
if ! ls "$jcache"/jemalloc-*/configure >/dev/null 2>&1; then
  if ! apt-get source --print-uris jemalloc >/dev/null 2>&1; then
    # No deb-src line yet: add one for the mirrors the deb lines use.
    echo "setup: adding deb-src entries for the configured Debian mirrors"
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && grep -q '^Types:.*\bdeb\b' "$f" || continue
      case "$f" in *libasc-deb-src.sources) continue ;; esac
      sed -n 's/^Types:.*\bdeb\b.*/Types: deb-src/;p' "$f"
      echo
    done | $sudo tee /etc/apt/sources.list.d/libasc-deb-src.sources >/dev/null
    if [ -f /etc/apt/sources.list ]; then
      grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
        $sudo tee /etc/apt/sources.list.d/libasc-deb-src.list >/dev/null
    fi
    $sudo apt-get update -qq
  fi
  echo "setup: fetching jemalloc's Debian source into $jcache"
  $sudo mkdir -p "$jcache"
  (cd "$jcache" && $sudo apt-get source -qq jemalloc >/dev/null 2>&1) || {
    echo "setup: apt-get source jemalloc failed (is a deb-src line reachable?)" >&2
    exit 1
  }
fi

# Python tools for the bindings, their tests and the benchmarks.  The
# python3 on PATH is the one the bindings are built for.
py=${PYTHON:-python3}
need_py=()
for m in numpy pytest wheel; do
  "$py" -c "import $m" 2>/dev/null || need_py+=("$m")
done
# pytest-xdist: scripts/test.sh runs the Python tests over all the cores
"$py" -c "import xdist" 2>/dev/null || need_py+=("pytest-xdist")
if [ ${#need_py[@]} -gt 0 ]; then
  echo "setup: pip installing ${need_py[*]}"
  "$py" -m pip install -q --disable-pip-version-check "${need_py[@]}" ||
    "$py" -m pip install -q --break-system-packages "${need_py[@]}"
fi

# asc.distributed (libasc_mpi from Python) takes mpi4py communicators.
# Built from source so that it uses the Open MPI installed above (a binary
# wheel may carry another MPI).
if ! "$py" -c "import mpi4py" 2>/dev/null; then
  echo "setup: pip installing mpi4py (built against Open MPI)"
  "$py" -m pip install -q --disable-pip-version-check --no-binary mpi4py mpi4py ||
    "$py" -m pip install -q --break-system-packages --no-binary mpi4py mpi4py
fi

# Optional references and chart of the benchmark suite (bench/run.sh):
# numba (@njit rows), threadpoolctl (BLAS thread count), matplotlib (the
# PNG; gnuplot draws it without), scipy (numba's `@` and np.dot call its
# BLAS; NPBench's spmv inputs, bench/npbench.py).  The suite reports what
# is missing, so a failure here does not fail the setup.
need_bench=()
for m in numba threadpoolctl matplotlib scipy; do
  "$py" -c "import $m" 2>/dev/null || need_bench+=("$m")
done
if [ ${#need_bench[@]} -gt 0 ]; then
  echo "setup: pip installing ${need_bench[*]} (benchmarks only)"
  "$py" -m pip install -q --disable-pip-version-check "${need_bench[@]}" ||
    "$py" -m pip install -q --break-system-packages "${need_bench[@]}" ||
    echo "setup: could not install ${need_bench[*]}; bench/run.sh runs without them"
fi
# The framework plugins' stage of scripts/test.sh (docs/plugins.md): torch
# (torch.library.custom_op, torch.compile) and jax/jaxlib (jax.ffi and the
# XLA FFI C headers it ships).  A failure here fails the setup: that stage
# needs them.
if [ $plugins = 1 ]; then
  need_plugins=()
  "$py" -c "import torch" 2>/dev/null || need_plugins+=("torch>=2.5")
  "$py" -c "import jax, jaxlib" 2>/dev/null || need_plugins+=("jax>=0.5" "jaxlib>=0.5")
  if [ ${#need_plugins[@]} -gt 0 ]; then
    echo "setup: pip installing ${need_plugins[*]} (framework plugins)"
    "$py" -m pip install -q --disable-pip-version-check "${need_plugins[@]}" ||
      "$py" -m pip install -q --break-system-packages "${need_plugins[@]}"
  fi
fi
echo "setup: ok"
