#!/usr/bin/env bash
# layers.sh fails when a layer rule is broken: run on a copy of the
# sources and of libasc's objects, clean (it passes), then with one
# violation planted at a time (it must fail and name it): an include of
# runtime/ in a pass, of types/ in the front end, of jit/cache.h in the
# runtime, a compiler object calling a runtime function, a pass
# calling another pass, a compiler object reading the environment, a jit
# object using a runtime symbol.
# usage: layers_selftest.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
objs=CMakeFiles/asc_obj.dir/src
script=$src/tests/scripts/layers.sh
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

if [ ! -d "$build/$objs" ]; then
  echo "FAIL: no objects under $build/$objs (build libasc first)"
  exit 1
fi
fresh() {
  rm -rf "$tmp/s" "$tmp/b"
  mkdir -p "$tmp/s" "$tmp/b/$(dirname "$objs")"
  cp -R "$src/src" "$tmp/s/src"
  cp -R "$build/$objs" "$tmp/b/$objs"
}

# expect NAME WANT: layers.sh on the copy fails and prints WANT
expect() {
  local out
  if out=$(bash "$script" "$tmp/s" "$tmp/b" 2>&1); then
    echo "FAIL $1: layers.sh passed"
    fail=1
  elif ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: no '$2' in:"
    printf '%s\n' "$out"
    fail=1
  else
    echo "ok $1"
  fi
}

# plant LAYER/NAME C-TEXT: an object compiled from the text among LAYER's
plant() {
  printf '%s\n' "$2" >"$tmp/planted.c"
  "$cc" -c -o "$tmp/b/$objs/$1.c.o" "$tmp/planted.c" || {
    echo "FAIL: cannot compile the planted object"
    exit 1
  }
}

fresh
if ! out=$(bash "$script" "$tmp/s" "$tmp/b" 2>&1); then
  echo "FAIL clean copy:"
  printf '%s\n' "$out"
  exit 1
fi
echo "ok clean copy"

printf '#include "runtime/stream.h"\n' >>"$tmp/s/src/compiler/passes/dce.c"
expect "include of runtime/ in a pass" \
  'src/compiler/passes/dce.c:'

fresh
printf '#include "compiler/types/types.h"\n' >>"$tmp/s/src/compiler/front/ast.c"
expect "include of types/ in the front end" 'src/compiler/front/ast.c:'

fresh
printf '#include "jit/cache.h"\n' >>"$tmp/s/src/runtime/stream.c"
expect "include of a jit/ header other than driver.h and file.h" \
  'src/runtime/stream.c:'

fresh
plant compiler/planted \
  'void asc__stream_launch(void); void asc__planted(void); void asc__planted(void) { asc__stream_launch(); }'
expect "compiler object using a runtime symbol" \
  'compiler/planted.c.o uses asc__stream_launch'

fresh
plant jit/planted \
  'extern int asc__trace_env_start(void); int asc__planted(void); int asc__planted(void) { return asc__trace_env_start(); }'
expect "jit object using a runtime symbol" \
  'jit/planted.c.o uses asc__trace_env_start'

fresh
plant compiler/passes/planted \
  'struct c; struct f; void asc__pass_dce(struct c *, struct f *); void asc__pass_planted(struct c *, struct f *); void asc__pass_planted(struct c *c, struct f *f) { asc__pass_dce(c, f); }'
expect "pass calling another pass" \
  'pass compiler/passes/planted.c.o uses asc__pass_dce'

fresh
plant compiler/planted \
  '#include <stdlib.h>
const char *asc__planted(void); const char *asc__planted(void) { return getenv("ASC_X"); }'
expect "compiler object reading the environment" \
  'compiler/planted.c.o uses getenv'

exit $fail
