#!/usr/bin/env bash
# Builds the Python package in place against BUILD_DIR's libasc.so, so that
# `import asc` works from bindings/python (tests/python/conftest.py puts it
# on sys.path).  Usage: scripts/build-python.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
py=${PYTHON:-python3}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" >/dev/null
fi
cmake --build "$build" --target asc -j"$(nproc)" >/dev/null
cd bindings/python
ASC_BUILD_DIR="$build" ASC_PY_WERROR=1 "$py" setup.py -q build_ext --inplace --force
echo "build-python: asc built in bindings/python against $build/libasc.so"
