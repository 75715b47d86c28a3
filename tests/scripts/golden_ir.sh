#!/usr/bin/env bash
# Golden tests of lowering + passes: each tests/golden/ir/NAME.sig holds
# "SOURCE.py<TAB>SIGNATURE" (SOURCE relative to tests/golden/front); the output of
# `ascc --emit=ir --signature SIGNATURE SOURCE.py` must equal NAME.ir.
# ASC_UPDATE_GOLDEN=1 rewrites the expected files instead.
# usage: golden_ir.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
fail=0
count=0
for sigf in "$src"/tests/golden/ir/*.sig; do
  name=${sigf%.sig}
  IFS=$'\t' read -r py sig < "$sigf"
  got=$(cd "$src/tests/golden/front" && "$ascc" --emit=ir --signature "$sig" "$py" 2>&1)
  count=$((count + 1))
  if [ "${ASC_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$got" > "$name.ir"
    continue
  fi
  if ! diff -u "$name.ir" <(printf '%s\n' "$got"); then
    echo "FAIL: $(basename "$name")"
    fail=1
  fi
done
echo "$count IR golden tests"
[ "$count" -gt 0 ] || exit 1
exit $fail
