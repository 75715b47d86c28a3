#!/usr/bin/env bash
# IR-in/IR-out pass tests.  Each tests/golden/passes/<pass>/NAME.ir runs through
# `ir_pass_driver --passes=<pass>` (tests/golden/passes/pipeline/: the whole pipeline;
# a first line "; passes: a,b" overrides) and the output must equal
# NAME.out.  ASC_UPDATE_GOLDEN=1 rewrites the .out files instead.
set -u
src=$1
build=$2
driver=$build/ir_pass_driver
fail=0
n=0
cd "$src" || exit 1
for f in tests/golden/passes/*/*.ir; do
  dir=$(basename "$(dirname "$f")")
  want=${f%.ir}.out
  first=$(head -n 1 "$f")
  case $first in
    "; passes: "*) args=(--passes="${first#; passes: }") ;;
    *)
      if [ "$dir" = pipeline ]; then args=(--pipeline)
      else args=(--passes="$dir"); fi ;;
  esac
  # internal errors name the C file: keep the golden files checkout-neutral
  got=$("$driver" "${args[@]}" "$f" 2>&1 | sed -e "s#$src/##g" -e 's#([^()]*/src/#(src/#g')
  n=$((n + 1))
  if [ "${ASC_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$got" > "$want"
    continue
  fi
  if [ ! -f "$want" ] || ! diff -u "$want" <(printf '%s\n' "$got"); then
    echo "FAIL: $f"
    fail=1
  fi
done
echo "$n IR pass tests"
if [ "$n" = 0 ]; then echo "no tests found"; exit 1; fi
exit $fail
