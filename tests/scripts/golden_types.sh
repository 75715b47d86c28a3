#!/usr/bin/env bash
# Golden files of `ascc --emit=types`: for each tests/golden/types/NAME.py,
# every `# signature: SIG` line at its top is run, and the outputs (stdout,
# stderr, exit status) together must equal NAME.types.
#   bash golden_types.sh SRC_DIR BUILD_DIR
# ASC_UPDATE_GOLDEN=1 rewrites the .types files instead of comparing.
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
dir=$src/tests/golden/types
fail=0
count=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

for py in "$dir"/*.py; do
  name=${py%.py}
  : >"$tmp"
  sigs=$(sed -n 's/^# signature: //p' "$py")
  if [ -z "$sigs" ]; then
    echo "FAIL $py: no '# signature:' line"
    fail=1
    continue
  fi
  while IFS= read -r sig; do
    {
      echo "== $sig"
      (cd "$dir" && "$ascc" --emit=types --signature "$sig" "$(basename "$py")" 2>&1)
      echo "== exit $?"
    } >>"$tmp"
  done <<<"$sigs"
  count=$((count + 1))
  if [ "${ASC_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp" "$name.types"
  elif ! diff -u "$name.types" "$tmp"; then
    echo "FAIL $py (ASC_UPDATE_GOLDEN=1 to accept)"
    fail=1
  fi
done
echo "$count golden type files checked"
exit $fail
