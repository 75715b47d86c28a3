#!/usr/bin/env bash
# Type-error corpus: each tests/diag/types_*.py must fail type inference
# for the signature in its `# signature: SIG` line, with exit status 1 and
# every `# expect: LINE:COL: ...` line present in stderr as
# "FILE.py:LINE:COL: ..." (the header format of tests/diag).
# usage: diag_types.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
dir=$src/tests/diag
fail=0
count=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for py in "$dir"/types_*.py; do
  name=$(basename "$py")
  sig=$(sed -n 's/^# signature: //p' "$py" | head -1)
  if [ -z "$sig" ] || ! grep -q '^# expect: ' "$py"; then
    echo "FAIL $name: needs '# signature:' and '# expect:' lines"
    fail=1
    continue
  fi
  (cd "$dir" && "$ascc" --emit=types --signature "$sig" "$name") \
    >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 1 ]; then
    echo "FAIL $name: ascc exited $rc, expected 1"
    cat "$tmp/err"
    fail=1
    continue
  fi
  ok=1
  while IFS= read -r want; do
    if ! grep -qF -- "$name:$want" "$tmp/err"; then
      echo "FAIL $name: missing diagnostic: $name:$want"
      ok=0
    fi
  done < <(sed -n 's/^# expect: //p' "$py")
  if [ $ok = 0 ]; then
    echo "--- got:"
    cat "$tmp/err"
    fail=1
    continue
  fi
  count=$((count + 1))
done
echo "diag_types: $count programs checked"
[ $count -ge 15 ] || { echo "FAIL: fewer than 15 programs"; fail=1; }
exit $fail
