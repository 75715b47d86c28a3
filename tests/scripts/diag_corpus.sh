#!/usr/bin/env bash
# Diagnostics corpus: each tests/diag/*.py is a program that must fail to
# compile.  Its header comments say how:
#   # mode: types          (optional; the ascc --emit mode, default ast)
#   # signature: k(f32[1]) (optional; passed as --signature)
#   # expect: 4:12: error: expected ':' (to close 'if' at line 3)
# Every `# expect:` line must appear in ascc's stderr as
# "FILE.py:<line:col: ...>" (FILE.py relative to tests/diag), and ascc must
# exit with status 1.
# usage: diag_corpus.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
dir=$src/tests/diag
fail=0
count=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for py in "$dir"/*.py; do
  name=$(basename "$py")
  mode=$(sed -n 's/^# mode: *\([a-z]*\).*/\1/p' "$py" | head -1)
  mode=${mode:-ast}
  if ! grep -q '^# expect: ' "$py"; then
    echo "FAIL $name: no '# expect:' line"
    fail=1
    continue
  fi
  sig=$(sed -n 's/^# signature: //p' "$py" | head -1)
  (cd "$dir" && "$ascc" --emit="$mode" ${sig:+--signature "$sig"} "$name") \
    >/dev/null 2>"$tmp/err"
  rc=$?
  if [ $rc -ne 1 ]; then
    echo "FAIL $name: ascc --emit=$mode exited $rc, expected 1"
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
echo "diag_corpus: $count programs checked"
exit $fail
