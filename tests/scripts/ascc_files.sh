#!/usr/bin/env bash
# The files ascc reads: regular files of a sane size, never a FIFO (which
# would block) or a device.
# usage: ascc_files.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
tmp=$(mktemp -d "$build/test-tmp-files-XXXXXX")
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

cp "$src/tests/c/aot/aot_kernels.py" "$tmp/k.py"
cd "$tmp" || exit 1

# --- reading ------------------------------------------------------------

# A FIFO would block (timeout: the hang guard), a device be read forever,
# a file over the size limit fill the memory.
mkfifo "$tmp/in.py"
timeout 60 "$ascc" --emit=tokens "$tmp/in.py" 2>"$tmp/err"
check "FIFO input" 2 $?
has "FIFO input" "$tmp/err" "ascc: cannot read $tmp/in.py: not a regular file"
timeout 60 "$ascc" --emit=tokens /dev/null 2>"$tmp/err"
check "/dev/null input" 2 $?
has "/dev/null input" "$tmp/err" "ascc: cannot read /dev/null: not a regular file"
# /dev/zero under a memory limit, so that a reader that does not refuse
# it fails rather than filling the machine (a sanitizer's shadow memory
# does not fit such a limit: there the case above stands for it).
if (ulimit -v 4000000; exec "$ascc" --version) >/dev/null 2>&1; then
  (ulimit -v 4000000; exec timeout 60 "$ascc" --emit=tokens /dev/zero) \
    2>"$tmp/err"
  check "/dev/zero input" 2 $?
  has "/dev/zero input" "$tmp/err" "ascc: cannot read /dev/zero: not a regular file"
fi
"$ascc" --emit=tokens "$tmp" 2>"$tmp/err"
check "directory input" 2 $?
has "directory input" "$tmp/err" "Is a directory"
truncate -s 257M "$tmp/big.py"
timeout 60 "$ascc" --emit=tokens "$tmp/big.py" 2>"$tmp/err"
check "big input" 2 $?
has "big input" "$tmp/err" "ascc: cannot read $tmp/big.py: larger than 256 MiB"

[ $fail = 0 ] && echo OK
exit $fail
