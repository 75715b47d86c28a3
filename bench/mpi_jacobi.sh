#!/usr/bin/env bash
# examples/mpi/jacobi2d with the halo exchange overlapped with the interior
# sweep and without (the exchange first, on the compute stream), over 1, 2
# and 4 ranks, each rank with the same slab (weak scaling: NX grows with
# the rank count).  The two variants run alternately, RUNS times each, and
# the table gives the median of each (and the per-pair ratios' range):
# on a shared machine a best-of-N or a single run measures the load.
# Prints a markdown table; every rank of this machine shares its cores,
# so read the ratios, not the scaling (docs/distributed.md).  The cpu
# columns are the medians of the CPU time all ranks' threads used in the
# timed loop (user + system): against wall time x cores, how much of the
# machine the run had.
# Usage: bench/mpi_jacobi.sh [BUILD_DIR] [ROWS_PER_RANK] [NY] [ITERS] [RUNS] [NPS]
# Environment: VADER_COPY (Open MPI's shared-memory single-copy mechanism:
# none, the default here, copies through shared buffers; cma copies once,
# with process_vm_readv), MPIRUN_FLAGS (say, --bind-to none).
set -euo pipefail
build=${1:-build}
rows=${2:-256}
ny=${3:-512}
iters=${4:-100}
runs=${5:-5}
nps=${6:-"1 2 4"}
exe=$build/examples/jacobi2d
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${VADER_COPY:-none}
export OMPI_MCA_btl=self,vader
read -r -a mpirun_flags <<< "${MPIRUN_FLAGS:-}"
# Ranks share the cores: no spinning host waits (docs/distributed.md).
export ASC_SPIN_US=${ASC_SPIN_US:-0}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "single copy: $OMPI_MCA_btl_vader_single_copy_mechanism;" \
  "mpirun flags: ${MPIRUN_FLAGS:-none}"
echo "| ranks | grid | overlap ms | no overlap ms | no/yes (median) | no/yes per pair | overlap cpu ms | no overlap cpu ms |"
echo "|---|---|---|---|---|---|---|---|"
for np in $nps; do
  nx=$((rows * np + 2))
  # Prints "wall_ms cpu_ms".
  one() {
    mpirun --oversubscribe ${mpirun_flags[@]+"${mpirun_flags[@]}"} \
      -np "$np" "$exe" "$@" $nx $ny $iters |
      awk '/^jacobi2d time/ { t = $3 } /^jacobi2d cpu/ { c = $3 }
           END { print t, c }'
  }
  one >/dev/null   # compiles the kernels' specialisations once
  yes=() no=() ratios=() cy=() cn=()
  for ((i = 0; i < runs; i++)); do
    read -r y c < <(one)
    yes+=("$y") cy+=("$c")
    read -r n c < <(one --no-overlap)
    no+=("$n") cn+=("$c")
    ratios+=("$(awk -v a="$n" -v b="$y" 'BEGIN { printf "%.2f", a / b }')")
  done
  my=$(printf '%s\n' "${yes[@]}" | median)
  mn=$(printf '%s\n' "${no[@]}" | median)
  mcy=$(printf '%s\n' "${cy[@]}" | median)
  mcn=$(printf '%s\n' "${cn[@]}" | median)
  lo=$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)
  hi=$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)
  ratio=$(awk -v a="$mn" -v b="$my" 'BEGIN { printf "%.2f", a / b }')
  echo "| $np | ${nx}x$ny | $my | $mn | $ratio | $lo-$hi | $mcy | $mcn |"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
