#!/usr/bin/env bash
# How libasc's own compile time (front end, passes, emit: `ascc --emit=c`,
# no C compiler) grows with kernel size.  Near-linear is the goal: twice the
# statements should take about twice the time.
#
#   bash bench/compile_scaling.sh                 # 5k, 20k, 50k statements
#   bash bench/compile_scaling.sh 1000 2000       # other sizes
#   bash bench/compile_scaling.sh --arrays [N...] # whole-array statements
#                                                 # (400 800 1600 3200)
#   BUILD_DIR=other/build bash bench/compile_scaling.sh  # another ascc
#
# Shapes:
#   aug   N x `a[i % 4] += 1.0` (the report that found CSE quadratic)
#   vars  N/2 x `x<j> = a[..] * 2.0 + i; a[..] = x<j>` (a fresh name each)
#   loops N/2 x `for j in range(i): a[j] += 1.0` at smaller sizes
#   arrays  N x `t<k> = a * k.0 + b; out += t<k>` on 1-D arrays, a loop
#           nest and a new array each (--arrays)
#   arrays4 N x `a += 1.0` / `a[...] = a * 2.0 + i` on a 4-D array
#
# Prints wall and user-CPU seconds and the peak resident memory; on a
# loaded machine compare the CPU column.  BUILD_DIR (default: build) holds
# ascc.  Figures measured on the
# 2-core development machine (user CPU, seconds), before -> after the
# hashing work (commits f91b6d0..13a8979):
#   aug   5k 5.3 -> 0.13   20k > 28 (killed) -> 0.7   50k > 21 (killed) -> 2.0
#   vars  20k > 505 (killed) -> 0.6, 50k -> 1.6 (12.5 at 20k with only
#         the CSE and register-name fixes: resolve and lower scanned names)
#   loops 2k 1.5 -> 1.5    4k 9.3 -> 5.3      (still quadratic then)
# and before -> after the per-loop tables and kept counts
# (docs/decisions.md; user CPU s / peak MB, main's ascc and this one in
# turn on the loaded 2-core Xeon VM):
#   loops   1k 0.29 / 166 -> 0.05 / 13   2k 1.2 / 629 -> 0.14 / 23
#           4k 5.1 / 2424 -> 0.40 / 42
#   arrays  400 4.3 / 2757 -> 0.18 / 45   800: out of memory under a
#           10 GB limit after 18 -> 0.39 / 86   5000: -> 3.8 / 496
#   arrays4 400 1.6 / 1314 -> 0.12 / 29   800 6.1 / 5200 -> 0.25 / 55
#           5000: over the 60 s budget at 10.1 GB -> 2.5 / 346
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
ascc=$build/ascc
[ -x "$ascc" ] || cmake --build "$build" --target ascc >/dev/null
arrays=0
if [ "${1:-}" = --arrays ]; then
  arrays=1
  shift
fi
sizes=("$@")
if [ $arrays = 1 ]; then
  [ ${#sizes[@]} -gt 0 ] || sizes=(400 800 1600 3200)
else
  [ ${#sizes[@]} -gt 0 ] || sizes=(5000 20000 50000)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() { # shape n file
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
shape, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    if shape == "arrays":
        f.write("import asc\n\n@asc.kernel\n"
                "def k(a: asc.Tensor[asc.float64, 1], "
                "b: asc.Tensor[asc.float64, 1], "
                "out: asc.Tensor[asc.float64, 1]):\n")
        for j in range(n):
            f.write(f"    t{j} = a * {j}.0 + b\n    out += t{j}\n")
        sys.exit(0)
    if shape == "arrays4":
        f.write("import asc\n\n@asc.kernel\n"
                "def k(a: asc.Tensor[asc.float64, 4], i: asc.int64):\n")
        for j in range(n):
            f.write("    a += 1.0\n" if j % 2 == 0
                    else "    a[...] = a * 2.0 + i\n")
        sys.exit(0)
    f.write("import asc\n\n@asc.kernel\n"
            "def k(a: asc.Tensor[asc.float64, 1], i: asc.int64):\n")
    for j in range(n if shape == "aug" else n // 2):
        if shape == "aug":
            f.write("    a[i % 4] += 1.0\n")
        elif shape == "vars":
            f.write(f"    x{j} = a[{j % 4}] * 2.0 + i\n"
                    f"    a[{(j + 1) % 4}] = x{j}\n")
        else:
            f.write("    for j in range(i):\n        a[j] += 1.0\n")
EOF
}

printf '%-7s %8s %10s %10s %8s %10s\n' shape lines wall_s cpu_s peak_MB \
  C_bytes
run() { # shape n
  local f=$tmp/$1_$2.py out=$tmp/out.c t sig='k(f64[1], i64)'
  case $1 in
    arrays) sig='k(f64[1], f64[1], f64[1])' ;;
    arrays4) sig='k(f64[4], i64)' ;;
  esac
  gen "$1" "$2" "$f"
  t=$( { /usr/bin/time -f '%e %U %M' "$ascc" --emit=c \
           --signature "$sig" "$f" >"$out"; } 2>&1 | tail -1)
  set -- "$1" "$2" $t
  printf '%-7s %8s %10s %10s %8s %10s\n' "$1" "$(wc -l <"$f")" "$3" "$4" \
    "$(($5 / 1024))" "$(wc -c <"$out")"
}
if [ $arrays = 1 ]; then
  for n in "${sizes[@]}"; do run arrays "$n"; done
  for n in "${sizes[@]}"; do run arrays4 "$n"; done
  exit 0
fi
for n in "${sizes[@]}"; do run aug "$n"; done
for n in "${sizes[@]}"; do run vars "$n"; done
for n in 1000 2000 4000; do run loops "$n"; done
