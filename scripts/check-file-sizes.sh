#!/usr/bin/env bash
# No hand-written C file of src/ (.c or .h) is over 1,500 lines: a file
# that grows without bound is split on a seam of what it does (STYLE.md,
# "Avoid").  Generated tables are exempt by name (GENERATED below).
# Prints each file over the limit with its length and fails.
# usage: check-file-sizes.sh [ROOT]   (ROOT: the repository, default ..)
set -u
root=${1:-$(dirname "$0")/..}
limit=1500
# written by a program, not by hand (the program named at their top)
GENERATED=(
  src/compiler/front/nfkc_table.h   # scripts/gen_nfkc_table.py
)

cd "$root" || exit 2
if [ ! -d src ]; then
  echo "check-file-sizes: no src/ under $root" >&2
  exit 2
fi
fail=0
while IFS= read -r -d '' f; do
  f=${f#./}
  for g in "${GENERATED[@]}"; do
    [ "$f" = "$g" ] && continue 2
  done
  n=$(wc -l <"$f")
  if [ "$n" -gt "$limit" ]; then
    echo "$f: $n lines (limit $limit)"
    fail=1
  fi
done < <(find src -type f \( -name '*.c' -o -name '*.h' \) -print0 | sort -z)
if [ $fail -ne 0 ]; then
  echo "check-file-sizes: split the files above on a seam of what they do"
fi
exit $fail
