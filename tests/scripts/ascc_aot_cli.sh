#!/usr/bin/env bash
# ascc as an ahead-of-time compiler, as a user meets it: -h/--help, the
# default mode (so), the flags, '# asc: signature' lines, and the messages
# for a kernel that does not exist, a bad signature and nothing to compile.
# (test_aot loads and runs such a module from C.)
# usage: ascc_aot_cli.sh SRC_DIR BUILD_DIR
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
    cat "$tmp/err" 2>/dev/null
    fail=1
  fi
}
has() {  # has NAME FILE TEXT
  grep -qF -- "$3" "$2" || { echo "FAIL $1: '$3' not in:"; cat "$2"; fail=1; }
}

# -h and --help explain every mode and flag, with an example.
for opt in -h --help; do
  "$ascc" $opt >"$tmp/help" 2>"$tmp/err"
  check "$opt" 0 $?
  for word in --emit= so h c ir types ast tokens --signature -o -O0 \
    --fastmath --boundscheck -march= '# asc: signature' f32[:, ::1] \
    aliased --cache-info example: ascModuleLoad; do
    has "$opt mentions $word" "$tmp/help" "$word"
  done
done
"$ascc" --emit=so -h >/dev/null 2>&1
check "-h after other options" 0 $?

cp "$src/tests/c/aot/aot_kernels.py" "$tmp/k.py"
# default mode: so, written to STEM.so in the working directory
(cd "$tmp" && "$ascc" --signature 'axpy(f64, f64[:], f64[:])' k.py) \
  2>"$tmp/err"
check "default so" 0 $?
[ -s "$tmp/k.so" ] || { echo "FAIL default so: no k.so"; fail=1; }
# the flags are accepted and reach the C compiler
"$ascc" -O0 --fastmath --boundscheck -march=native \
  --signature 'axpy(f64, f64[:], f64[:])' -o "$tmp/f.so" "$tmp/k.py" \
  2>"$tmp/err"
check "flags" 0 $?
[ -s "$tmp/f.so" ] || { echo "FAIL flags: no f.so"; fail=1; }
"$ascc" -march='x;y' "$tmp/k.py" 2>"$tmp/err"
check "bad -march" 2 $?
# --emit=c is the C --emit=so compiles: both signature sources, the table
"$ascc" --emit=c --signature 'axpy(i64, i64[1], i64[1])' "$tmp/k.py" \
  >"$tmp/out" 2>"$tmp/err"
check "emit c" 0 $?
has "emit c table" "$tmp/out" "asc_specs_v1"
has "emit c comment signature" "$tmp/out" '"vadd(f64[1], f64[1], f64[1])"'
has "emit c cli signature" "$tmp/out" '"axpy(i64, i64[1], i64[1])"'
# a kernel with no signature is left out with a warning
"$ascc" --emit=c "$tmp/k.py" >/dev/null 2>"$tmp/err"
check "no axpy signature" 0 $?
has "warning" "$tmp/err" "kernel 'axpy' has no signature"
# no such kernel: named, with the kernels the file has
"$ascc" --signature 'nope(f32[1])' "$tmp/k.py" 2>"$tmp/err"
check "no such kernel" 2 $?
has "no such kernel" "$tmp/err" "no kernel named 'nope'; its kernels: 'vadd', 'axpy'"
"$ascc" --emit=ir --signature 'nope(f32[1])' "$tmp/k.py" 2>"$tmp/err"
check "no such kernel (ir)" 2 $?
has "no such kernel (ir)" "$tmp/err" "no kernel named 'nope'; its kernels:"
# a malformed or mistyped signature
"$ascc" --signature 'axpy(f32, f32[:, ::2], f32[1])' "$tmp/k.py" 2>"$tmp/err"
check "bad signature" 1 $?
has "bad signature" "$tmp/err" "::1 marks the contiguous dimension"
"$ascc" --signature 'axpy(f32, f32[1])' "$tmp/k.py" 2>"$tmp/err"
check "arity" 2 $?
has "arity" "$tmp/err" "kernel 'axpy' takes 3 parameters"
"$ascc" --signature 'axpy(f32[1], f32[1], f32[1])' "$tmp/k.py" 2>"$tmp/err"
check "type error" 1 $?
# nothing to compile
printf 'import asc\n\n@asc.kernel\ndef k(x):\n    x[0] = 1\n' >"$tmp/one.py"
"$ascc" "$tmp/one.py" 2>"$tmp/err"
check "nothing" 2 $?
has "nothing" "$tmp/err" "nothing to compile"
# a nameless signature in a one-kernel file; a fully annotated kernel
# needs none
printf 'import asc\n\n@asc.kernel\ndef k(x: asc.Tensor[asc.float32, 1]):\n    x[0] = 1\n' \
  >"$tmp/ann.py"
"$ascc" --emit=h "$tmp/ann.py" >"$tmp/out" 2>"$tmp/err"
check "annotated" 0 $?
has "annotated wrapper" "$tmp/out" "asc_launch_k_f32("
"$ascc" --emit=h --signature '(f64[:])' "$tmp/one.py" >"$tmp/out" 2>"$tmp/err"
check "nameless" 0 $?
has "nameless wrapper" "$tmp/out" "/* k(f64[1:s]) */"
# the header compiles on its own
"$ascc" --emit=h -o "$tmp/k.h" --signature 'axpy(bool, u8[1], u8[1])' \
  --signature 'axpy(float, f64[1], f64[1]) aliased' "$tmp/k.py" 2>"$tmp/err"
check "header" 0 $?
printf '#include "k.h"\nint main(void) { return 0; }\n' >"$tmp/main.c"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$src/include" \
  -I"$build/generated" -I"$tmp" -c "$tmp/main.c" -o "$tmp/main.o" 2>"$tmp/err"
check "header compiles" 0 $?
has "aliased wrapper" "$tmp/k.h" "asc_launch_axpy_f64("
has "aliased comment" "$tmp/k.h" "axpy(float, f64[1], f64[1]) aliased"
# --boundscheck reaches the generated code
printf 'import asc\n\n@asc.kernel\ndef oob(x):\n    x[x.shape[0]] = 1.0\n' >"$tmp/oob.py"
"$ascc" --emit=c --boundscheck --signature 'oob(f32[1])' "$tmp/oob.py" \
  >"$tmp/out" 2>"$tmp/err"
check "boundscheck" 0 $?
has "boundscheck" "$tmp/out" "out of bounds"
"$ascc" --emit=c --signature 'oob(f32[1])' "$tmp/oob.py" >"$tmp/out" 2>"$tmp/err"
if grep -q "out of bounds" "$tmp/out"; then
  echo "FAIL no boundscheck: checks emitted anyway"
  fail=1
fi
# ConstExpr parameters are compiled in (no wrapper argument); float16
# scalars: a double for a generic one (ascScalar), the bits for an
# annotated one
printf 'import asc\n\n@asc.kernel\ndef c(x, n: asc.ConstExpr[int], h, g: asc.float16, m: asc.ConstExpr[asc.bfloat16]):\n    for i in range(n):\n        x[i] = x[i] + h + g + m\n' \
  >"$tmp/ce.py"
"$ascc" --emit=h --signature 'c(f32[1], i64=3, f16, f16, bf16=1.5)' \
  -o "$tmp/ce.h" "$tmp/ce.py" 2>"$tmp/err"
check "constexpr header" 0 $?
has "generic f16 arg" "$tmp/ce.h" "    double h,"
has "annotated f16 arg" "$tmp/ce.h" "    uint16_t g) {"
has "constexpr compiled in" "$tmp/ce.h" "int64_t asc_v1 = 3LL;"
has "bf16 bits" "$tmp/ce.h" "uint16_t asc_v4 = 0x3fc0;"
printf '#include "ce.h"\nint main(void) { return 0; }\n' >"$tmp/main2.c"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$src/include" \
  -I"$build/generated" -I"$tmp" -c "$tmp/main2.c" -o "$tmp/main2.o" 2>"$tmp/err"
check "constexpr header compiles" 0 $?
exit $fail
