#!/bin/bash
# What the tracing hooks cost while tracing is off, as instructions per
# launch: bench/launch_count under valgrind (cachegrind, instruction
# counts only: deterministic, unlike times on a shared machine) in the
# normal build and in one with the hooks compiled out
# (-DASC_TRACE_HOOKS=OFF), at two launch counts, so that start-up cancels:
#   per launch = (I(2N) - I(N)) / N.
# Usage: bench/trace_off_cost.sh [build-dir] [N]   (default build, 20000)
# Threads that wait loop a varying number of times under valgrind, so
# counts move by some tens of instructions per launch from run to run:
# run it more than once.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
N=${2:-20000}
OFF=$B-trace-off
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
cmake --build "$B" --target bench_launch_count -j2 >/dev/null
# The same build type and C flags as $B: only the hooks may differ.
type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt")
cflags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$B/CMakeCache.txt")
cmake -S . -B "$OFF" -DCMAKE_BUILD_TYPE="$type" -DCMAKE_C_FLAGS="$cflags" \
  -DASC_TRACE_HOOKS=OFF -DASC_BUILD_EXAMPLES=OFF -DASC_WITH_MPI=OFF >/dev/null
cmake --build "$OFF" --target bench_launch_count -j2 >/dev/null
irefs() { # build n
  ASC_SPIN_US=0 valgrind --tool=cachegrind --cache-sim=no \
    --cachegrind-out-file=/dev/null "$1/bench/launch_count" "$2" 2>&1 |
    awk '/I *refs:/ { gsub(",", "", $4); print $4 }'
}
per_launch() { # build
  local a b
  a=$(irefs "$1" "$N")
  b=$(irefs "$1" $((2 * N)))
  echo $(( (b - a) / N ))
}
on=$(per_launch "$B")
off=$(per_launch "$OFF")
echo "instructions_per_launch hooks_in=$on hooks_compiled_out=$off"
awk -v on="$on" -v off="$off" 'BEGIN {
  printf "trace_off_overhead=%.2f%% (%d instructions per launch)\n",
         100 * (on - off) / off, on - off }'
