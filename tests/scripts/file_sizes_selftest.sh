#!/usr/bin/env bash
# scripts/check-file-sizes.sh fails when a hand-written .c or .h of src/
# is over 1,500 lines, and names it: run on a planted tree, clean (a file
# of exactly 1,500 lines, a long generated table, a long file that is not
# C: it passes), then with a .c and a .h of 1,501 lines (it must fail and
# name both, and nothing else).
# usage: file_sizes_selftest.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
script=$src/scripts/check-file-sizes.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

lines() {  # lines N FILE: a file of N lines
  mkdir -p "$(dirname "$2")"
  seq "$1" | sed 's/^/int x;  \/\* /; s/$/ *\//' >"$2"
}
lines 1500 "$tmp/src/runtime/at_limit.c"
lines 1500 "$tmp/src/runtime/at_limit.h"
lines 4000 "$tmp/src/compiler/front/nfkc_table.h"
lines 4000 "$tmp/src/compiler/notes.txt"
if ! out=$(bash "$script" "$tmp" 2>&1); then
  echo "FAIL clean tree:"
  printf '%s\n' "$out"
  exit 1
fi
echo "ok clean tree"

lines 1501 "$tmp/src/compiler/long.c"
lines 1501 "$tmp/src/base/long.h"
if out=$(bash "$script" "$tmp" 2>&1); then
  echo "FAIL: check-file-sizes.sh passed with files of 1,501 lines"
  fail=1
fi
for want in "src/compiler/long.c: 1501 lines" "src/base/long.h: 1501 lines"; do
  if grep -qF -- "$want" <<<"$out"; then
    echo "ok names ${want%%:*}"
  else
    echo "FAIL: no '$want' in:"
    printf '%s\n' "$out"
    fail=1
  fi
done
for other in at_limit nfkc_table notes; do
  if grep -q "$other" <<<"$out"; then
    echo "FAIL: names $other:"
    printf '%s\n' "$out"
    fail=1
  fi
done
exit $fail
