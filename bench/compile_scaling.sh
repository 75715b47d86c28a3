#!/usr/bin/env bash
# How libasc's own compile time (front end, passes, emit: `ascc --emit=c`,
# no C compiler) grows with kernel size.  Near-linear is the goal: twice the
# statements should take about twice the time.
#
#   bash bench/compile_scaling.sh                 # 5k, 20k, 50k statements
#   bash bench/compile_scaling.sh 1000 2000       # other sizes
#
# Shapes:
#   aug   N x `a[i % 4] += 1.0` (the report that found CSE quadratic)
#   vars  N/2 x `x<j> = a[..] * 2.0 + i; a[..] = x<j>` (a fresh name each)
#   loops N/2 x `for j in range(i): a[j] += 1.0` at smaller sizes: each
#         loop nest still costs parallelize a walk over the whole kernel
#
# Prints wall and user-CPU seconds; on a loaded machine compare the CPU
# column.  BUILD_DIR (default: build) holds ascc.  Figures measured on the
# 2-core development machine (user CPU, seconds), before -> after the
# hashing work (commits f91b6d0..13a8979):
#   aug   5k 5.3 -> 0.13   20k > 28 (killed) -> 0.7   50k > 21 (killed) -> 2.0
#   vars  20k > 505 (killed) -> 0.6, 50k -> 1.6 (12.5 at 20k with only
#         the CSE and register-name fixes: resolve and lower scanned names)
#   loops 2k 1.5 -> 1.5    4k 9.3 -> 5.3      (still quadratic, see above)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
ascc=$build/ascc
[ -x "$ascc" ] || cmake --build "$build" --target ascc >/dev/null
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(5000 20000 50000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() { # shape n file
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
shape, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
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

printf '%-6s %8s %10s %10s %10s\n' shape lines wall_s cpu_s C_bytes
run() { # shape n
  local f=$tmp/$1_$2.py out=$tmp/out.c t
  gen "$1" "$2" "$f"
  t=$( { /usr/bin/time -f '%e %U' "$ascc" --emit=c \
           --signature 'k(f64[1], i64)' "$f" >"$out"; } 2>&1 | tail -1)
  printf '%-6s %8s %10s %10s %10s\n' "$1" "$(wc -l <"$f")" ${t} \
    "$(wc -c <"$out")"
}
for n in "${sizes[@]}"; do run aug "$n"; done
for n in "${sizes[@]}"; do run vars "$n"; done
for n in 1000 2000 4000; do run loops "$n"; done
