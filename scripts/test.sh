#!/usr/bin/env bash
# The whole test suite: the normal build, an ASan+UBSan build, a TSan build,
# the installed-package consumer, the Python tests and a bounded fuzz run.
# Usage: scripts/test.sh [--quick]   (--quick: normal build only)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
quick=0
[ "${1:-}" = "--quick" ] && quick=1

# Each stage prints its name, and the time the previous one took.
suite_start=$SECONDS
stage_start=$SECONDS
stage_name=""
step() {
  [ -n "$stage_name" ] && printf '=== %s: %ds\n' "$stage_name" $((SECONDS - stage_start))
  stage_name=$*
  stage_start=$SECONDS
  printf '\n=== %s\n' "$*"
}

# Build progress, one line per tenth of the build; errors and warnings in
# full (the build log is kept in DIR/build.log).
progress() {
  awk '/^\[ *[0-9]+%\]/ { p = int(substr($0, 2, 3) / 10) * 10
                            if (p != last) { printf "  build %3d%%\n", p; last = p } ; next }
       /error|warning|Error/ { print }'
}

build() {  # build DIR [cmake args...]
  local dir=$1; shift
  cmake -S . -B "$dir" -DASC_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs" 2>&1 | tee "$dir/build.log" | progress
  return "${PIPESTATUS[0]}"
}

# The first build's private jemalloc serves the later builds (its flags
# never depend on the build type or the sanitizers): each would otherwise
# configure and build the same sources again.
je=(-DASC_JEMALLOC_BUILT="$root/build/jemalloc")

# RelWithDebInfo at -O3 (CMake's default is -O2): the Release build's -O3
# is what the library ships with, and some warnings only -O3 finds.
step "build (RelWithDebInfo at -O3, -Werror) and ctest"
build build -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O3 -g -DNDEBUG"
(cd build && ctest --output-on-failure -j"$jobs")
# No hand-written C file over 1,500 lines (scripts/check-file-sizes.sh
# lists the offenders)
scripts/check-file-sizes.sh

if command -v clang >/dev/null; then
  # ASC_CC=clang is supported (docs/cache.md): the e2e tests that use no
  # float16 (clang 14 has no _Float16 on x86) compile their kernels with it.
  step "e2e tests with kernels compiled by clang (ASC_CC=clang)"
  (cd build && ASC_CC=clang ctest --output-on-failure -j"$jobs" \
    -R '^test_e2e_(parallel|parallel_exc|parallel_sync|strides|errors|semantics)$')
fi

if [ -x scripts/test-install.sh ]; then
  step "consumer against the installed package"
  scripts/test-install.sh build
fi

if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then
  step "python tests"
  scripts/build-python.sh build
  # the framework plugins' tests run in their own stage below
  no_plugins=(--ignore=tests/python/test_plugin_torch.py
              --ignore=tests/python/test_plugin_jax.py)
  # One pytest-xdist worker a core (worksteal evens out the long tests);
  # the tests marked serial then run alone.  Both runs share one kernel
  # cache, so the second one's collection compiles nothing again.
  # ASC_TIER=0: the tests check the optimised (-O3) code, each kernel
  # built once; tests/python/test_tiered.py sets its own (docs/latency.md).
  pycache=$(mktemp -d "${TMPDIR:-/tmp}/asc-pytest-cache-XXXXXX")
  # --durations: the slowest tests in the log, to see where CI time goes
  ASC_TIER=0 ASC_CACHE_DIR=$pycache python3 -m pytest -q -n "$jobs" \
    --dist worksteal --durations=25 -m "not serial" tests/python \
    "${no_plugins[@]}"
  ASC_TIER=0 ASC_CACHE_DIR=$pycache python3 -m pytest -q -m serial \
    tests/python "${no_plugins[@]}"
  rm -rf "$pycache"

  # PyTorch and JAX come from scripts/setup.sh --plugins (.ci/run passes
  # it); here they are required, so a missing one fails the stage.
  step "framework plugins (PyTorch, JAX): tests and examples"
  ASC_REQUIRE_PLUGINS=1 python3 -m pytest -q tests/python/test_plugin_torch.py \
    tests/python/test_plugin_jax.py
  python3 examples/plugins/jax/run.py
  python3 examples/plugins/torch/run.py build
fi

step "benchmarks, quick mode (correctness of every row, tiny sizes)"
bash bench/run.sh --quick --strict
# the iterated stencils (wavefront), every implementation checked bit for bit
python3 bench/stencil.py --quick --reps 2

[ $quick = 1 ] && exit 0

step "ASan+UBSan build and ctest"
build build-asan -DASC_SANITIZE=address,undefined -DASC_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Debug "${je[@]}"
# The generated kernels are compiled with UBSan too (ASC_CFLAGS, placed
# after the default flags): undefined behaviour in emitted C (a shift past
# the width, say) aborts the test.  Their UBSan runtime is the host's.
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ASC_CFLAGS="-fsanitize=undefined -fno-sanitize-recover=undefined" \
  ctest --output-on-failure -j"$jobs")

step "TSan build and ctest"
build build-tsan -DASC_SANITIZE=thread -DASC_BUILD_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Debug "${je[@]}"
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j"$jobs" -LE no-tsan)

if command -v clang >/dev/null && ls tests/fuzz/fuzz_*.c >/dev/null 2>&1; then
  step "fuzz (bounded)"
  CC=clang build build-fuzz -DASC_FUZZ=ON -DASC_BUILD_BENCH=OFF \
    -DASC_BUILD_EXAMPLES=OFF -DBUILD_TESTING=OFF -DASC_WITH_MPI=OFF \
    -DASC_SANITIZE=address,undefined "${je[@]}"
  # Each fuzzer runs on one thread: as many run at once as there are cores,
  # each still for its full time.
  fuzz_one() {  # fuzz_one FUZZER: output in FUZZER.log, exit status in FUZZER.status
    local f=$1 name status=0
    name=$(basename "$f")
    # New inputs go to a scratch corpus; the committed one only seeds it.
    local seeds="tests/fuzz/corpus/$name" scratch="build-fuzz/corpus/$name"
    mkdir -p "$scratch"
    # A fixed seed and run count make CI's run the one verified before
    # landing; ASC_FUZZ_SEED / ASC_FUZZ_RUNS / ASC_FUZZ_SECONDS explore more.
    "$f" -seed="${ASC_FUZZ_SEED:-1}" -runs="${ASC_FUZZ_RUNS:-60000}" \
      -max_total_time="${ASC_FUZZ_SECONDS:-60}" -timeout=10 \
      -rss_limit_mb=2048 "$scratch" $( [ -d "$seeds" ] && echo "$seeds" ) \
      -print_final_stats=1 >"$f.log" 2>&1 || status=$?
    echo "$status" >"$f.status"
  }
  fuzzers=()
  for f in build-fuzz/fuzz_*; do
    [ -f "$f" ] && [ -x "$f" ] && fuzzers+=("$f")
  done
  for f in "${fuzzers[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    fuzz_one "$f" &
  done
  wait
  for f in "${fuzzers[@]}"; do
    status=$(cat "$f.status")
    echo "$(basename "$f"): $(grep -h 'stat::number_of_executed_units' "$f.log")"
    if [ "$status" != 0 ]; then
      tail -40 "$f.log"
      echo "fuzzer $(basename "$f") failed (status $status)"
      exit 1
    fi
  done
fi
step done
echo "all test stages passed in $((SECONDS - suite_start))s"
# CI stops a run at 30 minutes: say so well before it gets there
if [ $((SECONDS - suite_start)) -gt 1560 ]; then
  echo "warning: the suite took over 26 minutes; CI's limit is 30"
fi
