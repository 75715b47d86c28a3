#!/usr/bin/env bash
# examples/mpi/jacobi2d with the halo exchange overlapped with the interior
# sweep and without (the exchange first, on the compute stream), over 1, 2
# and 4 ranks, each rank with the same slab (weak scaling: NX grows with
# the rank count).  The two variants run alternately, RUNS times each, and
# the table gives the median of each (and the per-pair ratios' range):
# on a shared machine a best-of-N or a single run measures the load.
# Prints a markdown table; every rank of this machine shares its cores,
# so read the ratios, not the scaling (docs/distributed.md).
# Usage: bench/mpi_jacobi.sh [BUILD_DIR] [ROWS_PER_RANK] [NY] [ITERS] [RUNS] [NPS]
set -euo pipefail
build=${1:-build}
rows=${2:-256}
ny=${3:-512}
iters=${4:-100}
runs=${5:-5}
nps=${6:-"1 2 4"}
exe=$build/examples/jacobi2d
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
# Ranks share the cores: no spinning host waits (docs/distributed.md).
export ASC_SPIN_US=${ASC_SPIN_US:-0}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| ranks | grid | overlap ms | no overlap ms | no/yes (median) | no/yes per pair |"
echo "|---|---|---|---|---|---|"
for np in $nps; do
  nx=$((rows * np + 2))
  one() {
    mpirun --oversubscribe -np "$np" "$exe" "$@" $nx $ny $iters |
      sed -n 's/^jacobi2d time \([0-9.]*\) ms.*/\1/p'
  }
  one >/dev/null   # compiles the kernels' specialisations once
  yes=() no=() ratios=()
  for ((i = 0; i < runs; i++)); do
    y=$(one)
    n=$(one --no-overlap)
    yes+=("$y") no+=("$n")
    ratios+=("$(awk -v a="$n" -v b="$y" 'BEGIN { printf "%.2f", a / b }')")
  done
  my=$(printf '%s\n' "${yes[@]}" | median)
  mn=$(printf '%s\n' "${no[@]}" | median)
  lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
  hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
  ratio=$(awk -v a="$mn" -v b="$my" 'BEGIN { printf "%.2f", a / b }')
  echo "| $np | ${nx}x$ny | $my | $mn | $ratio | $lo-$hi |"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
