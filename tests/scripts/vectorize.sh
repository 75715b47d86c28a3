#!/usr/bin/env bash
# The generated C must let gcc vectorise what hand-written C would:
#  * the parallel body of the seed parallel_add (unit stride, restrict,
#    ivdep) at -O3;
#  * the innermost loop of the seed conv2d (a float sum over unit-stride
#    loads) once float reassociation is allowed (-ffast-math): under strict
#    IEEE semantics gcc keeps a sequential sum, as Python evaluates it.
#    (these two with ASC_INTERCHANGE=0: by default the ow loop is moved
#    inside the window, docs/optimizer.md)
#  * with the interchange, the ow tile loop inside the window vectorised
#    at -O3, strict IEEE semantics (no reduction left in it);
#  * and that same loop not vectorised at -O3 under strict IEEE semantics:
#    gcc would make it an in-order reduction (a shuffle per element, a
#    vector path that a 3-wide window never enters), which made conv2d
#    run at about half the speed of the scalar loop (ASC_SEQ_SUM).
# Skipped when the C compiler is not gcc (the -fopt-info format is gcc's).
# usage: vectorize.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
cc=${ASC_CC:-cc}
macros=$(echo | "$cc" -dM -E - 2>/dev/null)
if ! grep -q __GNUC__ <<<"$macros" || grep -q __clang__ <<<"$macros"; then
  echo "vectorize: $cc is not gcc, skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# check [-n] NAME SIG PY LOOP_PATTERN FLAGS...  (-n: must not vectorise)
check() {
  local want=yes
  if [ "$1" = -n ]; then
    want=no
    shift
  fi
  local name=$1 sig=$2 py=$3 pat=$4
  shift 4
  (cd "$src/tests/golden/front" && env $ASC_ENV "$build/ascc" --emit=c --signature "$sig" "$py") \
    >"$tmp/$name.c" || { echo "FAIL $name: ascc"; fail=1; return; }
  local line
  line=$(grep -n -- "$pat" "$tmp/$name.c" | head -1 | cut -d: -f1)
  if [ -z "$line" ]; then
    echo "FAIL $name: no loop matching '$pat' in the generated C"
    fail=1
    return
  fi
  "$cc" "$@" -fexcess-precision=standard -fopt-info-vec-optimized -shared \
    -fPIC -o "$tmp/$name.so" "$tmp/$name.c" -lm 2>"$tmp/$name.log"
  local got=no
  if grep -q ":$line:[0-9]*: optimized: loop vectorized" "$tmp/$name.log"; then
    got=yes
  fi
  if [ $got = $want ]; then
    echo "ok $name: line $line vectorized: $got ($*)"
  else
    echo "FAIL $name: line $line vectorized: $got, expected $want ($*)"
    sed -n "${line}p" "$tmp/$name.c"
    fail=1
  fi
}

ASC_ENV=ASC_INTERCHANGE=1
check parallel_add 'parallel_add(f32[1], f32[1], f32[1])' \
  seed_parallel_add.py 'for (; k < hi; k++)' -O3
check conv2d_tile 'conv2d(f32[4], f32[4], f32[4])' seed_conv2d.py \
  'for (int64_t v[0-9]*_jj_' -O3
ASC_ENV=ASC_INTERCHANGE=0
check conv2d 'conv2d(f32[4], f32[4], f32[4])' seed_conv2d.py \
  'for (int64_t v[0-9]*_kw_it' -O3 -ffast-math
check -n conv2d 'conv2d(f32[4], f32[4], f32[4])' seed_conv2d.py \
  'for (int64_t v[0-9]*_kw_it' -O3
exit $fail
