#!/usr/bin/env bash
# Golden tests of the front end: for each tests/golden/front/NAME.py, the output
# of `ascc --emit=tokens` must equal NAME.tokens and that of
# `ascc --emit=ast` NAME.ast.  ASC_UPDATE_GOLDEN=1 rewrites the expected
# files instead (review the diff before committing).
# usage: golden_frontend.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
dir=$src/tests/golden/front
fail=0
count=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for py in "$dir"/*.py; do
  base=${py%.py}
  name=$(basename "$base")
  for mode in tokens ast; do
    expected=$base.$mode
    # run from the source dir so file names in output are stable
    (cd "$dir" && "$ascc" --emit=$mode "$name.py") >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "FAIL $name.$mode: ascc exited $rc"
      cat "$tmp/err"
      fail=1
      continue
    fi
    if [ "${ASC_UPDATE_GOLDEN:-0}" = 1 ]; then
      cp "$tmp/out" "$expected"
      continue
    fi
    if [ ! -f "$expected" ]; then
      echo "FAIL $name.$mode: missing $expected (run with ASC_UPDATE_GOLDEN=1)"
      fail=1
      continue
    fi
    if ! diff -u "$expected" "$tmp/out" >"$tmp/diff"; then
      echo "FAIL $name.$mode differs:"
      head -40 "$tmp/diff"
      fail=1
      continue
    fi
    count=$((count + 1))
  done
done
echo "golden_frontend: $count outputs checked"
exit $fail
