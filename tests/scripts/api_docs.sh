#!/usr/bin/env bash
# Every public function of include/asc/*.h is documented: it has a comment
# in its header group and a row in docs/api.md.
# usage: api_docs.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
fail=0
count=0
for h in "$src"/include/asc/*.h; do
  for fn in $(grep -o 'ASC_API[^;]*(' "$h" | grep -o 'asc[A-Za-z0-9_]*(' | tr -d '('); do
    count=$((count + 1))
    if ! grep -q "\`$fn\`" "$src/docs/api.md"; then
      echo "FAIL $fn ($(basename "$h")) has no row in docs/api.md"
      fail=1
    fi
  done
done
if [ "$count" -lt 50 ]; then
  echo "FAIL only $count public functions found: is the pattern still right?"
  fail=1
fi
echo "api_docs: $count public functions checked"
exit $fail
