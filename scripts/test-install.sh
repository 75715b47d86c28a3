#!/usr/bin/env bash
# Installs BUILD_DIR into a temporary prefix, checks what was installed, and
# builds and runs examples/consumer against it twice: with CMake
# (find_package(asc)) and with make (pkg-config).  Nothing outside the
# temporary directory is touched.
# Usage: scripts/test-install.sh BUILD_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/asc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

fail() { echo "test-install: $*" >&2; exit 1; }

# The program must load the installed libasc, not one from the build tree.
check_loads_installed() {
  local got
  got=$(ldd "$1" | awk '$1 ~ /^libasc\.so/ {print $3}')
  [ -n "$got" ] || fail "$1 does not load libasc"
  [ "$(realpath "$got")" = "$(realpath "$libdir/libasc.so.$major")" ] ||
    fail "$1 loads $got, not the installed $libdir/libasc.so.$major"
}

cmake --install "$build" --prefix "$prefix" >/dev/null

# ------------------------------------------------------------ the files
pc=$(find "$prefix" -name asc.pc -path '*/pkgconfig/*' | head -n1)
[ -n "$pc" ] || fail "asc.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
for f in "$prefix/include/asc/asc.h" "$prefix/include/asc/version.h" \
         "$libdir/cmake/asc/ascConfig.cmake" \
         "$libdir/cmake/asc/ascConfigVersion.cmake" \
         "$libdir/cmake/asc/ascTargets.cmake"; do
  [ -f "$f" ] || fail "missing $f"
done
major=$(sed -n 's/^#define ASC_VERSION_MAJOR \([0-9]*\)$/\1/p' \
  "$prefix/include/asc/version.h")
[ -n "$major" ] || fail "version.h has no ASC_VERSION_MAJOR"
[ -L "$libdir/libasc.so" ] || fail "libasc.so is not a symlink"
# jemalloc is private to libasc (docs/decisions.md): not required, not
# loaded, and none of its symbols exported.
! grep -q jemalloc "$pc" || fail "asc.pc mentions jemalloc"
! ldd "$libdir/libasc.so.$major" | grep -q jemalloc ||
  fail "libasc.so.$major loads a shared jemalloc"
# Only the public API is exported, and the runtime hooks for optional
# components (src/runtime/extern_op.h, docs/decisions.md "External ops").
hooks='^asc__(stream_enqueue_extern|stream_enqueue_extern_named|extern_complete|extern_error|extern_set_poll|extern_set_cancel)$'
exported=$(nm -D --defined-only "$libdir/libasc.so.$major" | awk '$3 !~ /^asc[A-Z]/ {print $3}' |
  grep -Ev "$hooks" || true)
[ -z "$exported" ] || fail "libasc exports non-asc symbols: $exported"
[ -L "$libdir/libasc.so.$major" ] || fail "libasc.so.$major (SOVERSION) missing"
soname=$(readelf -d "$libdir/libasc.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libasc.so.$major" ] || fail "SONAME is '$soname'"
if nm -D --defined-only "$libdir/libasc.so" | awk '$2 ~ /[TDB]/ {print $3}' |
    grep -v '^asc[A-Z]' | grep -Ev "$hooks" | grep -v '^_' | grep -q .; then
  nm -D --defined-only "$libdir/libasc.so" | awk '$2 ~ /[TDB]/ {print $3}' |
    grep -v '^asc[A-Z]' | grep -Ev "$hooks" | grep -v '^_' >&2
  fail "libasc.so exports non-API symbols (above)"
fi

# ---------------------------------------------------- CMake consumer
cmake -S "$root/examples/consumer" -B "$tmp/cmake-build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
found=$(sed -n 's/^asc_DIR:PATH=//p' "$tmp/cmake-build/CMakeCache.txt")
[ "$found" = "$libdir/cmake/asc" ] || fail "find_package(asc) found '$found'"
cmake --build "$tmp/cmake-build" >/dev/null
check_loads_installed "$tmp/cmake-build/consumer"
echo "cmake consumer: $("$tmp/cmake-build/consumer")"

# ---------------------------------------------- pkg-config + make consumer
cp "$root/examples/consumer/main.c" "$root/examples/consumer/Makefile" "$tmp/"
PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
  make -s -C "$tmp" consumer >/dev/null
check_loads_installed "$tmp/consumer"
echo "make consumer:  $("$tmp/consumer")"
echo "install test passed"
