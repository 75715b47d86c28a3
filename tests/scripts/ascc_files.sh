#!/usr/bin/env bash
# The files ascc reads and writes (docs/files.md): a write that fails (a
# full disk, a closed or full standard output, a file size limit) is an
# error with a non-zero status and leaves nothing behind; the output goes
# through a private temporary, never through a symbolic link, never over
# the input; inputs are regular files of a sane size, never a FIFO (which
# would block) or a device.
# usage: ascc_files.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
ascc=$build/ascc
tmp=$(mktemp -d "$build/test-tmp-files-XXXXXX")
mnt=
cleanup() {
  [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
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
empty_dir() {  # empty_dir NAME DIR: nothing was left in DIR
  local left
  left=$(ls -A "$2")
  [ -z "$left" ] || { echo "FAIL $1: left in $2: $left"; fail=1; }
}

cp "$src/tests/c/aot/aot_kernels.py" "$tmp/k.py"
cd "$tmp" || exit 1

# --- writing ------------------------------------------------------------

# Standard output on a full device: an error, not an empty output.
"$ascc" --emit=c k.py >/dev/full 2>"$tmp/err"
check "stdout on /dev/full" 2 $?
has "stdout on /dev/full" "$tmp/err" \
  "ascc: cannot write the output to standard output: No space left on device"

# A write limit (RLIMIT_FSIZE, SIGXFSZ ignored: writes past 1 KiB fail
# with EFBIG) stands for a full file system: -o fails and leaves neither
# the file nor a temporary.
mkdir "$tmp/out" "$tmp/tmpdir"
(ulimit -f 1; trap '' XFSZ; exec "$ascc" --emit=c -o "$tmp/out/k.c" k.py) \
  2>"$tmp/err"
check "-o past the size limit" 2 $?
has "-o past the size limit" "$tmp/err" "ascc: cannot write $tmp/out/k.c: File too large"
empty_dir "-o past the size limit" "$tmp/out"
# --emit=so: the generated C cannot be written either; no temporary
# directory stays in TMPDIR.
(ulimit -f 1; trap '' XFSZ; TMPDIR=$tmp/tmpdir exec "$ascc" -o "$tmp/out/k.so" k.py) \
  2>"$tmp/err"
check "so past the size limit" 2 $?
has "so past the size limit" "$tmp/err" "File too large"
empty_dir "so past the size limit: -o" "$tmp/out"
empty_dir "so past the size limit: TMPDIR" "$tmp/tmpdir"

# A really full file system, where this process may mount one.
mkdir "$tmp/full"
if mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
  mnt=$tmp/full
  dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
  for mode in c so; do
    TMPDIR=$tmp/tmpdir "$ascc" --emit=$mode -o "$mnt/k.$mode" k.py 2>"$tmp/err"
    check "full tmpfs, --emit=$mode" 2 $?
    has "full tmpfs, --emit=$mode" "$tmp/err" "No space left on device"
    [ "$(ls -A "$mnt")" = fill ] || { echo "FAIL full tmpfs, --emit=$mode: left $(ls -A "$mnt")"; fail=1; }
    empty_dir "full tmpfs, --emit=$mode: TMPDIR" "$tmp/tmpdir"
  done
  umount "$mnt" && mnt=
else
  echo "(full tmpfs case not run: this process may not mount a tmpfs;" \
       "the size-limit cases above cover the same failure)"
fi

# Success: the output and nothing else; modes as a compiler gives them.
(umask 022; exec "$ascc" --emit=c -o "$tmp/out/k.c" k.py) 2>"$tmp/err"
check "-o" 0 $?
(umask 022; TMPDIR=$tmp/tmpdir exec "$ascc" -o "$tmp/out/k.so" k.py) 2>"$tmp/err"
check "so -o" 0 $?
[ "$(ls -A "$tmp/out" | tr '\n' ' ')" = "k.c k.so " ] ||
  { echo "FAIL -o: left in out: $(ls -A "$tmp/out")"; fail=1; }
[ "$(stat -c %a "$tmp/out/k.c")" = 644 ] || { echo "FAIL mode of k.c"; fail=1; }
[ "$(stat -c %a "$tmp/out/k.so")" = 755 ] || { echo "FAIL mode of k.so"; fail=1; }
empty_dir "so -o: TMPDIR" "$tmp/tmpdir"

# A symbolic link at -o is not followed; a FIFO or device is refused.
echo victim >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/out/link.c"
"$ascc" --emit=c -o "$tmp/out/link.c" k.py 2>"$tmp/err"
check "-o a symbolic link" 2 $?
has "-o a symbolic link" "$tmp/err" "is a symbolic link"
[ "$(cat "$tmp/victim")" = victim ] || { echo "FAIL link target written"; fail=1; }
mkfifo "$tmp/out/fifo.c"
timeout 60 "$ascc" --emit=c -o "$tmp/out/fifo.c" k.py 2>"$tmp/err"
check "-o a FIFO" 2 $?
has "-o a FIFO" "$tmp/err" "is not a regular file"
"$ascc" -o /dev/null k.py 2>"$tmp/err"
check "-o /dev/null" 2 $?
has "-o /dev/null" "$tmp/err" "ascc: cannot write /dev/null: it exists and is not a regular file"

# Another user's file in a sticky directory (as /tmp) could not be
# replaced: refused before any work, and left as it was.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  chmod 755 "$tmp"
  mkdir -m 1777 "$tmp/sticky"
  echo theirs >"$tmp/sticky/theirs.c"
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$ascc" --emit=c -o "$tmp/sticky/theirs.c" "$tmp/k.py" 2>"$tmp/err"
  check "-o another user's file" 2 $?
  has "-o another user's file" "$tmp/err" "it belongs to another user, in a sticky directory"
  [ "$(cat "$tmp/sticky/theirs.c")" = theirs ] || { echo "FAIL theirs.c changed"; fail=1; }
  [ "$(ls -A "$tmp/sticky")" = theirs.c ] || { echo "FAIL left in sticky: $(ls -A "$tmp/sticky")"; fail=1; }
else
  echo "(another user's file case not run: needs root and setpriv)"
fi

# Never over the input, by its name or another (hard) link.
cp k.py k2.py
ln k2.py k3.py
for mode in c so; do
  "$ascc" --emit=$mode -o k2.py k2.py 2>"$tmp/err"
  check "--emit=$mode -o INPUT" 2 $?
  has "--emit=$mode -o INPUT" "$tmp/err" "ascc: cannot write k2.py: it is the input file k2.py"
  "$ascc" --emit=$mode -o k3.py k2.py 2>"$tmp/err"
  check "--emit=$mode -o a link to INPUT" 2 $?
  cmp -s k.py k2.py || { echo "FAIL --emit=$mode overwrote its input"; fail=1; }
done

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
