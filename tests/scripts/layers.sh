#!/usr/bin/env bash
# The layers of docs/architecture.md, checked two ways:
#  1. includes: every `#include "layer/..."` of src/ against the rules
#     below (which layer may include which, and inside the compiler which
#     part may include which; the runtime includes of jit/ only driver.h
#     and file.h);
#  2. symbols: the objects of libasc (BUILD_DIR/CMakeFiles/asc_obj.dir/src)
#     under nm: base uses nothing defined above it, the compiler nothing
#     defined in jit/ or runtime/, jit/ nothing defined in runtime/, and
#     runtime/ nothing defined in the compiler (it goes through jit/); a
#     pass (passes/NAME.c defining asc__pass_NAME) uses nothing another
#     pass or pipeline.c defines (code passes share lives in files of its
#     own); the compiler reads no environment (getenv, asc__env_u64).
# Prints each violation and fails; layers_selftest.sh checks that a
# planted one fails it.
# usage: layers.sh SRC_DIR BUILD_DIR
set -u
src=$(cd "${1:?source dir}" && pwd)
build=$(cd "${2:?build dir}" && pwd)
objs=$build/CMakeFiles/asc_obj.dir/src
fail=0

# ------------------------------------------------------------- includes
# WHY RULE [except ALLOWED] FILES... : lines of FILES whose quoted include
# path matches the extended regex RULE (and not ALLOWED) are violations.
bad_includes() {
  local why=$1 re=$2 ok='^$'
  shift 2
  if [ "${1:-}" = except ]; then
    ok=$2
    shift 2
  fi
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    grep -nHE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($re)" "$f" |
      grep -vE "#[[:space:]]*include[[:space:]]*\"($ok)\"" |
      while IFS= read -r line; do
        echo "FAIL include: ${line#"$src"/}  ($why)"
      done
  done
}

s=$src/src
c=$s/compiler
shopt -s nullglob
checks=$(
  bad_includes "base includes nothing above it" \
    "compiler/|jit/|runtime/|mpi/" "$s"/base/*
  bad_includes "the compiler never includes jit/ or runtime/" \
    "jit/|runtime/|mpi/" "$c"/*.[ch] "$c"/*/*.[ch]
  bad_includes "jit/ never reaches into the runtime" \
    "runtime/|mpi/" "$s"/jit/*
  bad_includes "the runtime reaches jit/ only through its interfaces for \
the runtime, driver.h (modules) and file.h (files), and never the compiler" \
    "compiler/|jit/" except "jit/driver\.h|jit/file\.h" "$s"/runtime/*
  bad_includes "the front end is below types, IR, lowering, passes, emit" \
    "compiler/(types|ir|passes|lower|emit|prange|compile)" "$c"/front/*
  bad_includes "types are below IR, lowering, passes, emit" \
    "compiler/(ir|passes|lower|emit|prange|compile)" "$c"/types/*
  bad_includes "the IR knows no front end, types, lowering, passes, emit" \
    "compiler/(front|types|passes|lower|emit|prange|compile)" "$c"/ir/*
  bad_includes "passes see the IR only" \
    "compiler/(front|types|lower|emit|prange|compile)" "$c"/passes/*
  bad_includes "emit sees the IR only" \
    "compiler/(front|types|passes|lower|prange|compile)" "$c"/emit*
  bad_includes "lowering comes before passes and emit" \
    "compiler/(passes|emit|compile)" "$c"/lower*
  bad_includes "the context and the options are below everything" \
    "compiler/(front|types|ir|passes|lower|emit|prange|compile)" \
    "$c"/cctx.* "$c"/options.*
)
if [ -n "$checks" ]; then
  printf '%s\n' "$checks"
  fail=1
fi

# -------------------------------------------------------------- symbols
if [ ! -d "$objs" ]; then
  echo "FAIL: no objects under $objs (build libasc first)"
  exit 1
fi
command -v nm >/dev/null || { echo "FAIL: nm is needed"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# defined and undefined global symbols, one "layer object symbol" a line
# (nm -A: "object:value type symbol", "object: U symbol")
touch "$tmp/def" "$tmp/use"
for layer in base compiler jit runtime; do
  find "$objs/$layer" -name '*.o' | sort >"$tmp/list"
  [ -s "$tmp/list" ] || continue
  xargs nm -A -g --defined-only <"$tmp/list" 2>/dev/null |
    awk -v l="$layer" '{ o = $1; sub(/:[^:]*$/, "", o); print l, o, $NF }' \
    >>"$tmp/def"
  xargs nm -A -u <"$tmp/list" 2>/dev/null |
    awk -v l="$layer" '{ o = $1; sub(/:$/, "", o); print l, o, $NF }' \
    >>"$tmp/use"
done
if [ ! -s "$tmp/def" ]; then
  echo "FAIL: nm found no symbols under $objs"
  exit 1
fi

sym_checks=$(awk -v objs="$objs/" '
  function rel(o) { sub(objs, "", o); return o }
  # the file name of an object of passes/, "" for others
  function pass_of(o,   b) {
    if (o !~ /\/compiler\/passes\//) return ""
    b = o; sub(/.*\//, "", b); sub(/\.c\.o$/, "", b)
    return b
  }
  BEGIN {
    above["base"] = "compiler jit runtime"
    above["compiler"] = "jit runtime"
    above["jit"] = "runtime"
    above["runtime"] = "compiler"
    env["getenv"] = env["secure_getenv"] = env["asc__env_u64"] = 1
  }
  FNR == NR {
    layer_of[$3] = layer_of[$3] " " $1
    obj_of[$3] = $2
    b = pass_of($2)
    if (b != "" && $3 == "asc__pass_" b)
      is_pass[b] = 1
    next
  }
  {
    l = $1; o = $2; s = $3
    split(above[l], up, " ")
    for (k in up)
      if (up[k] != "" && index(layer_of[s] " ", " " up[k] " "))
        printf "FAIL symbol: %s uses %s, defined in %s (%s)\n", rel(o), s,
               rel(obj_of[s]), l " may not use " up[k]
    if (l == "compiler" && (s in env))
      printf "FAIL symbol: %s uses %s (the compiler reads no " \
             "environment: asc__compile_opts)\n", rel(o), s
    me = pass_of(o)
    if (me != "" && (me in is_pass) && (s in obj_of)) {
      d = pass_of(obj_of[s])
      if (d != "" && d != me && ((d in is_pass) || d == "pipeline"))
        printf "FAIL symbol: pass %s uses %s, defined in %s (a pass " \
               "uses no other pass and nothing of pipeline.c)\n",
               rel(o), s, rel(obj_of[s])
    }
  }' "$tmp/def" "$tmp/use")
if [ -n "$sym_checks" ]; then
  printf '%s\n' "$sym_checks"
  fail=1
fi
nobj=$(cut -d' ' -f2 "$tmp/def" | sort -u | wc -l)
echo "layers: includes of $s and $nobj objects checked"
exit $fail
