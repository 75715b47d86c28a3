#!/usr/bin/env bash
# ascc --fastmath[=FLAGS]: the IR shows the kernel's mode and what the
# parallelizer made of it, a decorator's fastmath= wins over the option, a
# helper's caps the kernel's, the C compiler gets the flags of the mode
# (logged by an ASC_CC wrapper), and bad flags or one module of two modes
# are errors that name the problem.
# usage: ascc_fastmath.sh SRC_DIR BUILD_DIR
set -u
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
hasnt() {  # hasnt NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then echo "FAIL $1: '$3' in:"; cat "$2"; fail=1; fi
}

cat >"$tmp/fsum.py" <<'PY'
import asc

@asc.kernel
def fsum(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = s
PY
sig=(--signature 'fsum(f64[::1], f64[::1])')

"$ascc" --emit=ir "${sig[@]}" "$tmp/fsum.py" >"$tmp/ir" 2>"$tmp/err"
check default 0 $?
has default "$tmp/ir" "stays serial: %s is a floating-point reduction"
hasnt default "$tmp/ir" "fastmath("

"$ascc" --emit=ir --fastmath=reassoc "${sig[@]}" "$tmp/fsum.py" >"$tmp/ir" 2>"$tmp/err"
check reassoc 0 $?
has reassoc "$tmp/ir" ") fastmath(reassoc) {"
has reassoc "$tmp/ir" "becomes a pfor with reduce(add %s)"

"$ascc" --emit=ir --fastmath "${sig[@]}" "$tmp/fsum.py" >"$tmp/ir" 2>"$tmp/err"
check all 0 $?
has all "$tmp/ir" "fastmath(contract,reassoc,nnan,ninf,nsz,arcp,afn)"

"$ascc" --emit=ir --fastmath=contract,nsz "${sig[@]}" "$tmp/fsum.py" >"$tmp/ir" 2>"$tmp/err"
check list 0 $?
has list "$tmp/ir" "fastmath(contract,nsz)"
has list "$tmp/ir" "stays serial"

# the decorator wins over --fastmath; a helper's fastmath= caps the kernel
sed 's/^@asc.kernel$/@asc.kernel(fastmath=False)/' "$tmp/fsum.py" >"$tmp/strict.py"
"$ascc" --emit=ir --fastmath "${sig[@]}" "$tmp/strict.py" >"$tmp/ir" 2>"$tmp/err"
check decorator 0 $?
hasnt decorator "$tmp/ir" "fastmath("
cat >"$tmp/capped.py" <<'PY'
import asc

@asc.func(fastmath={"reassoc", "contract"})
def twice(v):
    return v + v

@asc.kernel(fastmath=True)
def fsum(x, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    out[0] = twice(s)
PY
"$ascc" --emit=ir "${sig[@]}" "$tmp/capped.py" >"$tmp/ir" 2>"$tmp/err"
check capped 0 $?
has capped "$tmp/ir" ") fastmath(contract,reassoc) {"

# bad flags
for bad in --fastmath=fast --fastmath=contract,nan --fastmath=; do
  "$ascc" --emit=ir $bad "${sig[@]}" "$tmp/fsum.py" >/dev/null 2>"$tmp/err"
  check "$bad" 2 $?
  has "$bad" "$tmp/err" "unknown fastmath flag"
  has "$bad" "$tmp/err" "valid: contract, reassoc, nnan, ninf, nsz, arcp, afn"
done

# the C compiler gets the mode's flags (and the default none of them)
cat >"$tmp/cc" <<SH
#!/bin/sh
for a in "\$@"; do echo "\$a"; done >>"$tmp/cc.log"
exec cc "\$@"
SH
chmod +x "$tmp/cc"
: >"$tmp/cc.log"
ASC_CC="$tmp/cc" "$ascc" --emit=so "${sig[@]}" -o "$tmp/a.so" "$tmp/fsum.py" 2>"$tmp/err"
check so-default 0 $?
hasnt so-default "$tmp/cc.log" "-fassociative-math"
hasnt so-default "$tmp/cc.log" "-ffast-math"
: >"$tmp/cc.log"
ASC_CC="$tmp/cc" "$ascc" --emit=so --fastmath=reassoc "${sig[@]}" -o "$tmp/b.so" "$tmp/fsum.py" 2>"$tmp/err"
check so-reassoc 0 $?
has so-reassoc "$tmp/cc.log" "-fassociative-math"
hasnt so-reassoc "$tmp/cc.log" "-ffp-contract=fast"
: >"$tmp/cc.log"
ASC_CC="$tmp/cc" "$ascc" --emit=so "${sig[@]}" -o "$tmp/c.so" "$tmp/capped.py" 2>"$tmp/err"
check so-capped 0 $?
has so-capped "$tmp/cc.log" "-ffp-contract=fast"
has so-capped "$tmp/cc.log" "-fassociative-math"
hasnt so-capped "$tmp/cc.log" "-ffast-math"
hasnt so-capped "$tmp/cc.log" "-freciprocal-math"

# one module built ahead of time has one mode
cat >"$tmp/two.py" <<'PY'
import asc

@asc.kernel(fastmath={"contract"})
def a(x):
    x[0] = x[0] * x[1] + x[2]

@asc.kernel
def b(x):
    x[0] = x[0] * x[1] + x[2]
PY
"$ascc" --emit=so --signature 'a(f64[::1])' --signature 'b(f64[::1])' \
  -o "$tmp/two.so" "$tmp/two.py" >/dev/null 2>"$tmp/err"
check two-modes 1 $?
has two-modes "$tmp/err" "kernel 'b' needs fastmath={} but 'a' needs {contract}"
has two-modes "$tmp/err" "build them as separate modules"

exit $fail
