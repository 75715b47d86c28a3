#!/usr/bin/env bash
# Vector math (docs/vecmath.md), read off the machine code: with SLEEF
# found, gcc's hot loop of asc.exp calls the AVX2 vector variant with ymm
# registers (float: 8 lanes, double: 4), clang's calls the scalar entry of
# the same SLEEF function (clang 14 does not vectorise calls through
# declared vector variants), and the module needs libsleef; ASC_VECMATH=libm
# (or no SLEEF) calls libm's expf and needs no libsleef; afn keeps libm's
# names (gcc: glibc's libmvec).
# usage: ascc_vecmath.sh SRC_DIR BUILD_DIR
set -u
# The machine code checked is that of the default kernel flags: the
# sanitizer stage's ASC_CFLAGS (UBSan in kernels) instruments each call
# and keeps gcc from vectorising them.
unset ASC_CFLAGS
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

cat >"$tmp/vm.py" <<'PY'
import asc

@asc.kernel
def vexp(x, out):
    for i in range(x.shape[0]):
        out[i] = asc.exp(x[i])
PY
sig=(--signature 'vexp(f32[::1], f32[::1])' --signature 'vexp(f64[::1], f64[::1])')

cpu_avx2=0
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && cpu_avx2=1

# the disassembly of the kernels' own functions (k<N>_vexp...), not the
# wrappers
kernels() { awk '/^[0-9a-f]+ <k[0-9]+_vexp[^>]*>:$/{p=1; next} /^$/{p=0} p' "$1"; }

build_so() {  # build_so CC TAG [ascc args...]
  local cc=$1 tag=$2
  shift 2
  ASC_CC=$cc "$ascc" --emit=so -march=native "${sig[@]}" "$@" \
    -o "$tmp/$tag.so" "$tmp/vm.py" 2>"$tmp/$tag.err" ||
    { echo "FAIL $tag: ascc failed"; cat "$tmp/$tag.err"; fail=1; return 1; }
  objdump -d --no-show-raw-insn "$tmp/$tag.so" >"$tmp/$tag.dis"
  kernels "$tmp/$tag.dis" >"$tmp/$tag.k"
  readelf -d "$tmp/$tag.so" >"$tmp/$tag.dyn"
}

sleef_found() {  # sleef_found CC
  local p
  p=$("$1" -print-file-name=libsleef.so.3 2>/dev/null) || return 1
  case $p in /*) [ -e "$p" ] ;; *) return 1 ;; esac
}

"$ascc" --emit=c -march=native "${sig[@]}" "$tmp/vm.py" >"$tmp/vm.c" 2>/dev/null
has emit-c "$tmp/vm.c" '^ASC_VM_FN1_f\(exp, '
has emit-c-f64 "$tmp/vm.c" '^ASC_VM_FN1_d\(exp, '
has emit-c-call "$tmp/vm.c" 'asc_vm_expf\('
"$ascc" --emit=c --fastmath=afn -march=native "${sig[@]}" "$tmp/vm.py" \
  >"$tmp/afn.c" 2>/dev/null
hasnt afn-c "$tmp/afn.c" 'asc_vm_exp'
has afn-c-call "$tmp/afn.c" ' = expf\('

# A module calling exp in float only holds no double instance of it (its
# scalar function and vector variants): cc would compile them all,
# called or not (docs/latency.md).
sig32=(--signature 'vexp(f32[::1], f32[::1])')
"$ascc" --emit=c -march=native "${sig32[@]}" "$tmp/vm.py" >"$tmp/vm32.c" 2>/dev/null
has f32-c "$tmp/vm32.c" '^ASC_VM_FN1_f\(exp, '
hasnt f32-c-no-f64 "$tmp/vm32.c" '^ASC_VM_FN1_d\('
if sleef_found gcc; then
  ASC_CC=gcc "$ascc" --emit=so -march=native "${sig32[@]}" -o "$tmp/vm32.so" \
    "$tmp/vm.py" 2>"$tmp/vm32.err" || { echo "FAIL f32-so"; cat "$tmp/vm32.err"; fail=1; }
  objdump -d "$tmp/vm32.so" >"$tmp/vm32.dis"
  has f32-so-float "$tmp/vm32.dis" '<asc_vms_expf>:'
  hasnt f32-so-no-double "$tmp/vm32.dis" '<(_ZGV[b-e]N[0-9]+v_)?asc_vms_exp>:'
fi

for cc in gcc clang; do
  command -v "$cc" >/dev/null || { echo "FAIL: $cc not found"; fail=1; continue; }
  build_so "$cc" "$cc" || continue
  if sleef_found "$cc"; then
    has "$cc-needs-sleef" "$tmp/$cc.dyn" 'NEEDED.*libsleef\.so\.3'
    if [ "$cc" = gcc ] && [ $cpu_avx2 = 1 ]; then
      # AVX2: the 8/4-lane variants in ymm registers; on an AVX-512
      # machine gcc's main loop takes the 16/8-lane ones (zmm) and the
      # 8-lane wrapper widens to SLEEF's avx512f entry
      has gcc-vector-f32 "$tmp/gcc.k" 'call +[0-9a-f]+ <_ZGV[de]N(8|16)v_asc_vms_expf>'
      has gcc-vector-f64 "$tmp/gcc.k" 'call +[0-9a-f]+ <_ZGV[de]N(4|8)v_asc_vms_exp>'
      # the argument and the result travel in vector registers
      has gcc-ymm "$tmp/gcc.k" 'vmov[a-z]+ +[^,]+,%[yz]mm0'
      awk '/<_ZGVdN8v_asc_vms_expf>:$/{p=1; next} /^$/{p=0} p' "$tmp/gcc.dis" \
        >"$tmp/gcc.w"
      has gcc-wrapper "$tmp/gcc.w" 'Sleef_finz_expf(8_u10avx2|16_u10avx512f)'
    else
      # the scalar entry, or its body inlined: SLEEF's widest variant
      has "$cc-scalar-sleef" "$tmp/$cc.k" \
        'call.*<(asc_vms_expf|Sleef_[cf]inz_expf[0-9]+_u10[a-z0-9]+(@plt)?)>'
    fi
    hasnt "$cc-no-libm" "$tmp/$cc.k" '<expf@plt>'
  else
    has "$cc-libm" "$tmp/$cc.k" '<expf@plt>'
  fi
  ASC_VECMATH=libm build_so "$cc" "$cc-libm" || continue
  has "$cc-libm-call" "$tmp/$cc-libm.k" '<expf@plt>'
  hasnt "$cc-libm-no-sleef" "$tmp/$cc-libm.dyn" 'libsleef'
done

[ $fail = 0 ] && echo "ascc_vecmath: ok"
exit $fail
