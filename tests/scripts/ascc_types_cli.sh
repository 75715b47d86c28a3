#!/usr/bin/env bash
# ascc --emit=types as a user meets it: the signature option, exit status
# 0 / 1 / 2, -o, diagnostics on stderr only.
# usage: ascc_types_cli.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {  # check NAME EXPECTED_RC ACTUAL_RC
  if [ "$2" != "$3" ]; then
    echo "FAIL $1: exit $3, expected $2"
    cat "$tmp/err" 2>/dev/null
    fail=1
  fi
}

cp "$src/tests/golden/front/seed_parallel_add.py" "$tmp/add.py"

"$ascc" --emit=types --signature 'parallel_add(f32[1], f32[1], f32[1])' \
  "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "typed" 0 $?
[ -s "$tmp/err" ] && { echo "FAIL typed: unexpected stderr"; fail=1; }
grep -q '^  param i: int64' "$tmp/out" || { echo "FAIL typed: lambda index"; fail=1; }

"$ascc" --emit=types --signature='(f64[1], f64[1], f64[1])' -o "$tmp/t.txt" \
  "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "unnamed signature, -o" 0 $?
[ -s "$tmp/out" ] && { echo "FAIL -o: stdout not empty"; fail=1; }
grep -q 'local size: int64' "$tmp/t.txt" || { echo "FAIL -o: file"; fail=1; }
grep -q 'c\[i\]: float64' "$tmp/t.txt" || { echo "FAIL -o: element type"; fail=1; }

"$ascc" --emit=types "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "no signature" 2 $?
grep -q 'needs --signature' "$tmp/err" || { echo "FAIL no signature: message"; fail=1; }

"$ascc" --emit=types --signature 'nope(f32[1])' "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "unknown kernel" 2 $?
grep -q "no kernel named 'nope'" "$tmp/err" || { echo "FAIL unknown kernel: message"; fail=1; }

"$ascc" --emit=types --signature 'parallel_add(f32[1], f32[1], f99[1])' \
  "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "bad signature" 1 $?
[ -s "$tmp/out" ] && { echo "FAIL bad signature: stdout not empty"; fail=1; }
grep -q '^<signature>:1:30: error: unknown type' "$tmp/err" ||
  { echo "FAIL bad signature: message"; cat "$tmp/err"; fail=1; }

"$ascc" --emit=types --signature 'parallel_add(f32[:,:], f64[1], f32[1])' \
  "$tmp/add.py" >"$tmp/out" 2>"$tmp/err"
check "type error" 1 $?
[ -s "$tmp/out" ] && { echo "FAIL type error: stdout not empty"; fail=1; }
grep -q "add.py:6:45: error: cannot store an array (Tensor\[float64, 1\]) into one element of Tensor\[float32, 1\]" "$tmp/err" ||
  { echo "FAIL type error: message"; cat "$tmp/err"; fail=1; }

exit $fail
