#!/usr/bin/env bash
# Streaming stores (docs/arrays.md), read off the generated C and the
# machine code: a whole-array statement over 1-d arrays streams its
# destination (asc_nt_store64, asc_nt_fence) behind the run-time test of
# its strides and size; gcc's and clang's code for it holds non-temporal
# vector stores (zmm with AVX-512, ymm with AVX, xmm with SSE2) and an
# sfence; ASC_NTSTORE=0 emits none of it, ASC_NTSTORE=N bakes N bytes in,
# and kernels that cannot stream (complex, a collapsed 2-d nest) do not
# include the helpers.
# usage: ascc_ntstore.sh SRC_DIR BUILD_DIR
set -u
# machine code of the default kernel flags (the sanitizer stage's
# ASC_CFLAGS instruments every access)
unset ASC_CFLAGS ASC_NTSTORE
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

has() {  # has NAME FILE REGEX
  grep -qE -- "$3" "$2" || { echo "FAIL $1: /$3/ not in $2"; fail=1; }
}
hasnt() {  # hasnt NAME FILE REGEX
  if grep -qE -- "$3" "$2"; then echo "FAIL $1: /$3/ in $2"; fail=1; fi
}

cat >"$tmp/nt.py" <<'PY'
import asc

@asc.kernel
def fused(a, b, c, d):
    a[:] = b * c + d

@asc.kernel
def cadd(a, b):
    a[:] = b + b

@asc.kernel
def stencil(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] +
                           A[2:, 1:-1] + A[:-2, 1:-1])
PY
fsig=(--signature 'fused(f32[:], f32[:], f32[:], f32[:])'
      --signature 'fused(f64[::1], f64[::1], f64[::1], f64[::1])'
      --signature 'fused(i32[:], i32[:], i32[:], i32[:])')
osig=(--signature 'cadd(c64[:], c64[:])'
      --signature 'stencil(f64[:, :], f64[:, :])')

# the C: both specialisations of each fused signature (broadcast or not)
# stream, behind the test of every stride; the default threshold (8 MiB)
"$ascc" --emit=c "${fsig[@]}" "$tmp/nt.py" >"$tmp/on.c" 2>"$tmp/on.err" ||
  { echo "FAIL emit-c"; cat "$tmp/on.err"; fail=1; }
has c-store "$tmp/on.c" 'asc_nt_store64\(&d0_a\[k\], &w[0-9]+\);'
has c-fence "$tmp/on.c" '^ +asc_nt_fence\(\);'
has c-test "$tmp/on.c" \
  'if \(v[0-9_a-z]+ == 1 && .*env->n >= \(int64_t\)\(8388608ull / sizeof\(float\)\)\)'
has c-f64 "$tmp/on.c" 'env->n >= \(int64_t\)\(8388608ull / sizeof\(double\)\)'
has c-i32 "$tmp/on.c" 'asc_v_i32 w[0-9]+ = w[0-9]+ \* w[0-9]+;'
has c-vector "$tmp/on.c" 'asc_v_f32 w[0-9]+ = w[0-9]+ \+ w[0-9]+;'
n=$(grep -c 'asc_nt_store64(&' "$tmp/on.c")
[ "$n" = 6 ] || { echo "FAIL c-count: $n streaming loops, not 6"; fail=1; }
# the compilers' builtins: no intrinsics header (half a million lines with
# -march=native, docs/latency.md)
hasnt c-no-header "$tmp/on.c" '#include <[a-z]*intrin'
n=$(grep -c '^#define ASC_NT_HELPERS' "$tmp/on.c")
[ "$n" = 1 ] || { echo "FAIL c-helpers: emitted $n times"; fail=1; }

ASC_NTSTORE=0 "$ascc" --emit=c "${fsig[@]}" "$tmp/nt.py" >"$tmp/off.c" \
  2>/dev/null
hasnt c-off "$tmp/off.c" 'asc_nt_'
ASC_NTSTORE=65536 "$ascc" --emit=c "${fsig[@]}" "$tmp/nt.py" \
  >"$tmp/64k.c" 2>/dev/null
has c-threshold "$tmp/64k.c" 'env->n >= \(int64_t\)\(65536ull / sizeof\(float\)\)'
"$ascc" --emit=c "${osig[@]}" "$tmp/nt.py" >"$tmp/other.c" 2>/dev/null
hasnt c-other "$tmp/other.c" 'asc_nt_'

# the machine code of the loop bodies (k<N>_fused_body<J>)
bodies() { awk '/^[0-9a-f]+ <k[0-9]+_fused_body[0-9]+>:$/{p=1; next} /^$/{p=0} p' "$1"; }
if grep -qw avx512f /proc/cpuinfo; then
  nt='vmovnt(dq|ps|pd) +%zmm[0-9]+,'
elif grep -qw avx /proc/cpuinfo; then
  nt='vmovnt(dq|ps|pd) +%ymm[0-9]+,'
else
  nt='movnt(dq|ps|pd) +%xmm[0-9]+,'
fi
for cc in gcc clang; do
  command -v "$cc" >/dev/null || { echo "FAIL: $cc not found"; fail=1; continue; }
  for mode in on off; do
    env=()
    [ $mode = off ] && env=(ASC_NTSTORE=0)
    env "${env[@]}" ASC_CC=$cc "$ascc" --emit=so -march=native "${fsig[@]}" \
      -o "$tmp/$cc-$mode.so" "$tmp/nt.py" 2>"$tmp/$cc-$mode.err" ||
      { echo "FAIL $cc-$mode: ascc failed"; cat "$tmp/$cc-$mode.err"; fail=1;
        continue; }
    objdump -d --no-show-raw-insn "$tmp/$cc-$mode.so" >"$tmp/$cc-$mode.dis"
    bodies "$tmp/$cc-$mode.dis" >"$tmp/$cc-$mode.k"
  done
  has "$cc-movnt" "$tmp/$cc-on.k" "$nt"
  has "$cc-sfence" "$tmp/$cc-on.k" 'sfence'
  hasnt "$cc-off" "$tmp/$cc-off.k" 'movnt|sfence'
done

[ $fail = 0 ] && echo "ascc_ntstore: ok"
exit $fail
