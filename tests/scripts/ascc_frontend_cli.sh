#!/usr/bin/env bash
# ascc's front-end modes as a user meets them: exit status 0 / 1 / 2, -o,
# diagnostics on stderr only.
# usage: ascc_frontend_cli.sh SRC_DIR BUILD_DIR
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
    fail=1
  fi
}

cp "$src/tests/golden/front/seed_parallel_add.py" "$tmp/ok.py"
printf 'import asc\n@asc.kernel\ndef k(x):\n    if x\n        pass\n' >"$tmp/bad.py"

"$ascc" --emit=ast "$tmp/ok.py" >"$tmp/out" 2>"$tmp/err"
check "valid file" 0 $?
[ -s "$tmp/err" ] && { echo "FAIL valid file: unexpected stderr"; cat "$tmp/err"; fail=1; }
grep -q '^  kernel parallel_add' "$tmp/out" || { echo "FAIL valid file: no kernel in dump"; fail=1; }

"$ascc" --emit=tokens -o "$tmp/tokens.txt" "$tmp/ok.py" >"$tmp/out" 2>&1
check "-o" 0 $?
[ -s "$tmp/out" ] && { echo "FAIL -o: stdout not empty"; fail=1; }
grep -q 'NAME parallel_add' "$tmp/tokens.txt" || { echo "FAIL -o: file lacks tokens"; fail=1; }

"$ascc" --emit=ast "$tmp/bad.py" >"$tmp/out" 2>"$tmp/err"
check "compile error" 1 $?
[ -s "$tmp/out" ] && { echo "FAIL compile error: stdout not empty"; fail=1; }
grep -q "bad.py:4:9: error: expected ':' (to close 'if' at line 4)" "$tmp/err" ||
  { echo "FAIL compile error: message"; cat "$tmp/err"; fail=1; }

"$ascc" --emit=nonsense "$tmp/ok.py" >/dev/null 2>&1
check "unknown mode" 2 $?
"$ascc" --emit=ast "$tmp/missing.py" >/dev/null 2>&1
check "missing file" 2 $?
"$ascc" --emit=ast >/dev/null 2>&1
check "no file" 2 $?
"$ascc" --emit=ast --bogus "$tmp/ok.py" >/dev/null 2>&1
check "unknown option" 2 $?
"$ascc" --emit=ast "$tmp/ok.py" "$tmp/ok.py" >/dev/null 2>&1
check "two files" 2 $?

[ $fail = 0 ] && echo "ascc_frontend_cli: ok"
exit $fail
