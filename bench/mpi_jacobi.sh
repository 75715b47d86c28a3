#!/usr/bin/env bash
# examples/mpi/jacobi2d with the halo exchange overlapped with the interior
# sweep and without (the exchange first, on the compute stream), over 1, 2
# and 4 ranks, each rank with the same slab (weak scaling: NX grows with
# the rank count).  Prints a markdown table; every rank of this machine
# shares its cores, so read the ratios, not the scaling (docs/distributed.md).
# Usage: bench/mpi_jacobi.sh [BUILD_DIR] [ROWS_PER_RANK] [NY] [ITERS]
set -euo pipefail
build=${1:-build}
rows=${2:-256}
ny=${3:-512}
iters=${4:-100}
exe=$build/examples/jacobi2d
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader
# Ranks share the cores: no spinning host waits (docs/distributed.md).
export ASC_SPIN_US=${ASC_SPIN_US:-0}
echo "| ranks | grid | overlap ms | no overlap ms | no/yes |"
echo "|---|---|---|---|---|"
for np in 1 2 4; do
  nx=$((rows * np + 2))
  best() {  # the fastest of 3 runs
    for _ in 1 2 3; do
      mpirun --oversubscribe -np $np "$exe" "$@" $nx $ny $iters |
        sed -n 's/^jacobi2d time \([0-9.]*\) ms.*/\1/p'
    done | sort -g | head -1
  }
  yes=$(best)
  no=$(best --no-overlap)
  ratio=$(awk -v a="$no" -v b="$yes" 'BEGIN { printf "%.2f", a / b }')
  echo "| $np | ${nx}x$ny | $yes | $no | $ratio |"
done
