#!/bin/bash
# ascc --cache-info / --cache-clear against a scratch cache directory.
set -euo pipefail
SRC=$1 BUILD=$2
ASCC=$BUILD/ascc
T=$(mktemp -d "$BUILD/test-tmp-cli-XXXXXX")
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

export ASC_CACHE_DIR=$T/cache
out=$("$ASCC" --cache-info)
echo "$out"
grep -q "^directory *$T/cache\$" <<<"$out" || fail "directory not shown"
grep -q "^status *ok" <<<"$out" || fail "status not ok"
grep -q "^entries *0\$" <<<"$out" || fail "expected 0 entries"
[ "$(stat -c %a "$T/cache")" = 700 ] || fail "cache dir not created 0700"
grep -q "^compiler  */" <<<"$out" || fail "compiler not shown"
grep -q "^flags .*-march=native" <<<"$out" || fail "flags not shown"

# Two entries (the scan counts by name; contents are checked at lookup).
mkdir -p "$T/cache/ab" "$T/cache/cd"
head -c 100 /dev/zero > "$T/cache/ab/0123456789abcdef0123456789abcd.so"
head -c 50 /dev/zero > "$T/cache/cd/0123456789abcdef0123456789abcd.so"
touch "$T/cache/ab/not-an-entry.txt"
out=$(ASC_CACHE_MAX_BYTES=10M "$ASCC" --cache-info)
echo "$out"
grep -q "^entries *2\$" <<<"$out" || fail "expected 2 entries"
grep -q "^size *150 bytes" <<<"$out" || fail "expected 150 bytes"
grep -q "^max size *10485760 bytes" <<<"$out" || fail "cap not shown"

out=$("$ASCC" --cache-clear)
echo "$out"
grep -q "removed 2 entries" <<<"$out" || fail "clear did not remove 2"
[ -e "$T/cache/ab/not-an-entry.txt" ] || fail "clear removed a foreign file"
out=$("$ASCC" --cache-info)
grep -q "^entries *0\$" <<<"$out" || fail "entries left after clear"

# An unsafe directory is reported, not cleared.
chmod 0777 "$T/cache"
out=$("$ASCC" --cache-info 2>"$T/err")
grep -q "^status *unusable" <<<"$out" || fail "unsafe dir not reported"
grep -q "warning" "$T/err" || fail "no warning for unsafe dir"
if "$ASCC" --cache-clear 2>/dev/null; then fail "cleared an unsafe dir"; fi
echo OK
