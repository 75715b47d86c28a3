#!/usr/bin/env bash
# Builds what the benchmark suite needs and runs it: asc kernels against C
# (serial, OpenMP), numpy, numba and CPython, plus the runtime's launch,
# pool, compile-cache and Python-launch costs.  Prints the table and writes
# bench/results/<date>.json, .csv and .png.  Then the numpy-style array
# functions against numpy and numba (bench/array_suite.py, its table and
# bench/results/<date>-array.json).
#
#   bash bench/run.sh            # full suite (15-20 minutes on 2 cores)
#   bash bench/run.sh --quick    # tiny sizes: checks that it builds and is right
#
# BUILD_DIR (default: build) is the CMake build folder; other arguments go
# to bench/suite.py (--help lists them); --quick and --strict also go to
# bench/array_suite.py, which --only or --case (a part of suite.py) leave
# out.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
py=${PYTHON:-python3}
# Configure every time: a build folder made before bench/CMakeLists.txt
# changed would not know the targets below.
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target asc bench_launch_latency \
  bench_pool_alloc bench_ref >/dev/null
if ! out=$(PYTHON=$py scripts/build-python.sh "$build" 2>&1); then
  echo "$out" >&2
  exit 1
fi
export PYTHONPATH=$PWD/bindings/python${PYTHONPATH:+:$PYTHONPATH}
# Kernels of the suite compile into a cache of the build, not the user's.
export ASC_CACHE_DIR=${ASC_CACHE_DIR:-$PWD/$build/bench/asc-cache}
# The rows time optimised code: no quick tier (docs/latency.md), except in
# the cold-compile rows, which run as the caller's ASC_TIER says (unset:
# the default, auto).
export ASC_BENCH_TIER=${ASC_TIER:-auto} ASC_TIER=0
"$py" bench/suite.py --build "$build" "$@"
array_args=()
for a in "$@"; do
  case $a in
    --quick|--strict) array_args+=("$a") ;;
    --only|--only=*|--case|--case=*|-h|--help) exit 0 ;;
  esac
done
# The framework plugins' rows, when torch or jax is installed
# (scripts/setup.sh --plugins).
if "$py" -c "import torch" 2>/dev/null || "$py" -c "import jax" 2>/dev/null; then
  quick=""
  for a in "$@"; do [ "$a" = --quick ] && quick=--quick; done
  "$py" bench/plugins.py $quick
fi
exec "$py" bench/array_suite.py --build "$build" "${array_args[@]}"
