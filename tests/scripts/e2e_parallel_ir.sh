#!/usr/bin/env bash
# The parallelisation decision is visible in the IR text (docs/parallelize.md):
#  * the seed conv2d: `ascc --emit=ir` shows one pfor at the batch loop
#    (line 9) that collapses b, oc, oh and ow, with only ic, kh and kw left
#    as serial loops inside it, and the note saying so (the serial nest kept
#    as the fallback of the run-time test has renamed inductions);
#    ASC_DUMP=parallelize prints the same after the pass;
#  * a prefix sum: the loop stays serial and the note says why.
# usage: e2e_parallel_ir.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

expect() { # NAME FILE PATTERN COUNT: PATTERN (grep -E) matches COUNT lines
  local got
  got=$(grep -c -E -- "$3" "$2")
  if [ "$got" != "$4" ]; then
    echo "FAIL $1: '$3' on $got lines, expected $4"
    fail=1
  fi
}

sig='conv2d(f32[4], f32[4], f32[4])'
# the parallelizer's own decision, without the interchange of the ow loop
# into the window (checked below)
(cd "$src/tests/golden/front" && ASC_INTERCHANGE=0 "$ascc" --emit=ir --signature "$sig" seed_conv2d.py) \
  >"$tmp/conv.ir" 2>&1 || { echo "FAIL conv2d: ascc"; cat "$tmp/conv.ir"; exit 1; }
expect conv2d "$tmp/conv.ir" '^ *pfor ' 1
expect conv2d "$tmp/conv.ir" '^ *pfor %[a-z0-9_.]+:i64 = 0, %[a-z0-9_.]+, 1 @9 \{$' 1
expect conv2d "$tmp/conv.ir" '^ *for %(b|oc|oh|ow)[.a-z]*:' 0
expect conv2d "$tmp/conv.ir" '^ *for %(ic|kh|kw)\.it:i64 ' 3
expect conv2d "$tmp/conv.ir" '^ *; parallelize: loop %b\.it at line 9 collapsed 4 loops \(%b\.it, %oc\.it, %oh\.it, %ow\.it\) into one pfor' 1
# the serial loops sit inside the pfor: deeper indentation than it
pfor_indent=$(grep -E '^ *pfor ' "$tmp/conv.ir" | head -1 | sed -E 's/^( *).*/\1/' | wc -c)
for_indent=$(grep -E '^ *for %ic' "$tmp/conv.ir" | head -1 | sed -E 's/^( *).*/\1/' | wc -c)
if [ "$for_indent" -le "$pfor_indent" ]; then
  echo "FAIL conv2d: the ic loop is not inside the pfor"
  fail=1
fi

(cd "$src/tests/golden/front" && ASC_INTERCHANGE=0 ASC_DUMP=parallelize "$ascc" --emit=ir \
  --signature "$sig" seed_conv2d.py) 2>"$tmp/dump.txt" >/dev/null ||
  { echo "FAIL conv2d: ASC_DUMP=parallelize"; fail=1; }
expect dump "$tmp/dump.txt" '^; after parallelize$' 1
expect dump "$tmp/dump.txt" '^ *pfor .* @9 \{$' 1
expect dump "$tmp/dump.txt" '; parallelize: loop %b\.it at line 9 collapsed 4 loops' 1

# with the interchange (the default): the ow loop moved inside the window,
# the three loops around it collapsed into the pfor
(cd "$src/tests/golden/front" && "$ascc" --emit=ir --signature "$sig" seed_conv2d.py) \
  >"$tmp/conv2.ir" 2>&1 || { echo "FAIL conv2d: ascc"; cat "$tmp/conv2.ir"; exit 1; }
expect conv2d "$tmp/conv2.ir" '^ *pfor %[a-z0-9_.]+:i64 = 0, %[a-z0-9_.]+, 1 @9 \{$' 1
expect conv2d "$tmp/conv2.ir" '^ *; parallelize: loop %b\.it at line 9 collapsed 3 loops \(%b\.it, %oc\.it, %oh\.it\) into one pfor' 1
expect conv2d "$tmp/conv2.ir" '; interchange: loop %ow\.it at line 12 moved inside loop %kw\.it' 1

cat >"$tmp/prefix.py" <<'EOF'
import asc

@asc.kernel
def prefix(a, out):
    s = 0
    for i in range(a.shape[0]):
        s += a[i]
        out[i] = s
EOF
"$ascc" --emit=ir --signature 'prefix(i64[1], i64[1])' "$tmp/prefix.py" \
  >"$tmp/prefix.ir" 2>&1 || { echo "FAIL prefix: ascc"; cat "$tmp/prefix.ir"; exit 1; }
expect prefix "$tmp/prefix.ir" '^ *pfor ' 0
expect prefix "$tmp/prefix.ir" '^ *; parallelize: loop %i\.it at line 6 stays serial: %s is carried' 1

[ $fail = 0 ] || { echo "--- conv2d IR"; cat "$tmp/conv.ir"; echo "--- prefix IR"; cat "$tmp/prefix.ir"; }
exit $fail
