#!/usr/bin/env bash
# examples/mpi/jacobi2d on 1 rank, 2 ranks without overlap and 4 ranks
# with it: the residual and the hash of the final grid must be the same
# bits.
# Usage: jacobi_ranks.sh JACOBI MPIEXEC
set -euo pipefail
exe=$1
mpirun=$2
ref=""
for run in 1: 2:--no-overlap 4:; do
  np=${run%%:*}
  mode=${run#*:}
  out=$("$mpirun" --oversubscribe -np "$np" "$exe" $mode 66 48 40)
  echo "$out"
  line=$(echo "$out" | grep 'residual' | sed 's/ranks [0-9]*//')
  [ -n "$line" ] || { echo "no result line"; exit 1; }
  if [ -z "$ref" ]; then
    ref=$line
  elif [ "$line" != "$ref" ]; then
    echo "np $np $mode differs from np 1:"
    echo "  $line"
    echo "  $ref"
    exit 1
  fi
done
echo "jacobi2d: identical over 1, 2 and 4 ranks"
