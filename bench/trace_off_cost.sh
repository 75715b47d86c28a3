#!/bin/bash
# What the tracing hooks cost while tracing is off (docs/tracing.md, "Cost"):
# this build against one with the hooks compiled out (-DASC_TRACE_HOOKS=OFF,
# same build type and C flags, made in <build>-trace-off), two ways.
#
# 1. Counted: bench/launch_count under callgrind, counting only the launch
#    path (--toggle-collect on ascLaunchKernel and run_block, the block
#    runner, whose callees include the launch's completion and the start
#    of the stream's next op), so that threads waiting for work, whose
#    loops run a varying number of times, count nothing.  launch_count
#    warms up (3000 launches), dumps the counts at the start of the
#    measured launches (CALLGRIND_DUMP_STATS) and the rest is read from
#    the launching thread's last part:
#      roundtrip: launch + stream synchronise, N times.  The synchronising
#        launching thread runs the block itself (the script checks it ran
#        all N), so its part holds the whole path: enqueue, start, the
#        block, completion.  Exact: runs of one build print the same count.
#      async: N back-to-back launches, a sync every 1000.  Workers run the
#        blocks, so the launching thread's part is ascLaunchKernel only.
#    `in trace.h` is what the hooks-in build spends in the inlined flag
#    tests of src/base/trace.h; the difference between the builds also
#    holds what the hooks cost the code around them (registers kept live).
# 2. Timed: bench/launch_latency ITERS ASYNC untraced, run alternately in
#    the two builds PAIRS times (the order swapped every pair); medians
#    of the runs' medians and of the paired differences, with the range of
#    the paired differences, which is the run-to-run noise.
#
# Usage: bench/trace_off_cost.sh [build-dir]       (default build)
# Environment: RUNS (callgrind runs per build and mode, 3), N_RT (1000),
# N_ASYNC (2000), PAIRS (8), ITERS (5000), ASYNC (200000).  Needs valgrind
# with its headers (<valgrind/callgrind.h>) and python3.  After the first
# build of <build>-trace-off (a few minutes), it takes about a minute on
# 2 idle cores.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
OFF=$B-trace-off
RUNS=${RUNS:-3}
N_RT=${N_RT:-1000}
N_ASYNC=${N_ASYNC:-2000}
PAIRS=${PAIRS:-8}
ITERS=${ITERS:-5000}
ASYNC=${ASYNC:-200000}
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
targets="--target bench_launch_count --target bench_launch_latency"
cmake --build "$B" $targets -j2 >/dev/null
# The same build type and C flags as $B: only the hooks may differ.
type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$B/CMakeCache.txt")
cflags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$B/CMakeCache.txt")
cmake -S . -B "$OFF" -DCMAKE_BUILD_TYPE="$type" -DCMAKE_C_FLAGS="$cflags" \
  -DASC_TRACE_HOOKS=OFF -DASC_BUILD_EXAMPLES=OFF -DASC_WITH_MPI=OFF >/dev/null
cmake --build "$OFF" $targets -j2 >/dev/null
for b in "$B" "$OFF"; do
  if ! "$b/bench/launch_count" 1 | grep -q 'dump_mark=yes'; then
    echo "$b/bench/launch_count was built without <valgrind/callgrind.h>" >&2
    exit 1
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/an.py" <<'EOF'
import collections, os, statistics, sys


def parse(path):
    """Self Ir per function, Ir of the calls each function made, call
    counts per callee and self Ir in src/base/trace.h, from one callgrind
    output file (compressed names, line-level positions)."""
    self_, callee_ir, calls = (collections.Counter() for _ in range(3))
    in_trace_h = 0
    names, files = {}, {}
    fn = fl = cur = cfn = None
    pending = None

    def lookup(table, v):
        v = v.strip()
        if v.startswith('('):
            i = v.index(')')
            key, rest = v[:i + 1], v[i + 1:].strip()
            if rest:
                table[key] = rest
            return table.get(key, key)
        return v

    for line in open(path):
        line = line.rstrip('\n')
        if not line:
            continue
        if line[0].isdigit() or line[0] in '+-*':
            toks = line.split()
            ir = int(toks[1]) if len(toks) > 1 else 0
            if pending is not None:
                callee_ir[fn] += ir
                calls[pending[0]] += pending[1]
                pending = None
            else:
                self_[fn] += ir
                if cur and cur.endswith('base/trace.h'):
                    in_trace_h += ir
        elif line.startswith('fn='):
            fn, cur = lookup(names, line[3:]), fl
        elif line.startswith('fl='):
            fl = cur = lookup(files, line[3:])
        elif line.startswith(('fi=', 'fe=')):
            cur = lookup(files, line[3:])
        elif line.startswith(('cfi=', 'cfl=')):
            lookup(files, line[4:])
        elif line.startswith('cfn='):
            cfn = lookup(names, line[4:])
        elif line.startswith('calls='):
            pending = (cfn, int(line[6:].split()[0]))
    return self_, callee_ir, calls, in_trace_h

def report(tmp, n_rt, n_async):
    def measure(side, mode, n):
        """Per launch, for each run: (path, ascLaunchKernel, in trace.h,
        blocks run by the launching thread)."""
        out = []
        base = os.path.join(tmp, 'cg', side, mode)
        for r in sorted(os.listdir(base), key=int):
            # cg-01: thread 1's part after the dump at the start of the
            # measured launches (cg.1-01 holds the warm-up).
            s, c, calls, th = parse(os.path.join(base, r, 'cg-01'))
            k = 'ascLaunchKernel'
            out.append((sum(s.values()) / n, (s[k] + c[k]) / n, th / n,
                        calls['run_block'], s))
        return out

    def fmt(vals):
        lo, hi = min(vals), max(vals)
        return f"{lo:.1f}" if lo == hi else f"{statistics.median(vals):.1f} ({lo:.1f}..{hi:.1f})"

    print("counted (callgrind, instructions per launch; median (min..max) over"
          " the runs):")
    for mode, n in (('roundtrip', n_rt), ('async', n_async)):
        on, off = measure('in', mode, n), measure('out', mode, n)
        if mode == 'roundtrip':
            # Only runs whose launching thread ran every block hold the
            # whole path (a worker rarely takes one).
            on = [m for m in on if m[3] == n]
            off = [m for m in off if m[3] == n]
            col, what = 0, 'whole launch path'
        else:
            col, what = 1, 'ascLaunchKernel on the launching thread'
        if not on or not off:
            print(f"  {mode}: no run of one build had the launching thread run"
                  " every block; run it again")
            continue
        a = [m[col] for m in on]
        b = [m[col] for m in off]
        d = statistics.median(a) - statistics.median(b)
        extra = (f"; in trace.h: {fmt([m[2] for m in on])}"
                 if mode == 'roundtrip' else '')
        print(f"  {mode} ({what}; {len(a)}+{len(b)} runs): hooks_in={fmt(a)}"
              f" hooks_compiled_out={fmt(b)} -> {d:+.1f}"
              f" ({100 * d / statistics.median(b):+.2f}%){extra}")
        if mode == 'roundtrip':
            # Where the difference is: own instructions per launch of each
            # function, in the run of each build nearest its median (a run
            # may take another path, e.g. no worker to wake).
            def typical(runs):
                med = statistics.median(m[0] for m in runs)
                return min(runs, key=lambda m: abs(m[0] - med))[4]
            fa, fb = typical(on), typical(off)
            diff = sorted(((fa[f] - fb[f]) / n, f) for f in set(fa) | set(fb))
            print("    by function: " + ", ".join(
                f"{f} {v:+.1f}" for v, f in reversed(diff) if abs(v) >= 0.5))

    rows = [l.split() for l in open(os.path.join(tmp, 'timed'))]
    pairs = collections.defaultdict(dict)
    for p, side, rt, rate in rows:
        pairs[p][side] = (float(rt), 1e6 / float(rate))
    pairs = [v for v in pairs.values() if len(v) == 2]
    print(f"timed (bench/launch_latency untraced, {len(pairs)} alternating pairs,"
          " each run the median of 9 repetitions):")
    for i, name in ((0, 'roundtrip_us'), (1, 'async_us_per_launch')):
        a = [p['in'][i] for p in pairs]
        b = [p['out'][i] for p in pairs]
        d = [100 * (p['in'][i] - p['out'][i]) / p['out'][i] for p in pairs]
        print(f"  {name}: hooks_in={statistics.median(a):.3f}"
              f" ({min(a):.3f}..{max(a):.3f}) hooks_compiled_out="
              f"{statistics.median(b):.3f} ({min(b):.3f}..{max(b):.3f});"
              f" paired difference {statistics.median(d):+.1f}%"
              f" (range {min(d):+.1f}%..{max(d):+.1f}%);"
              f" best {100 * (min(a) - min(b)) / min(b):+.1f}%")

if sys.argv[1] == 'blocks':
    # Blocks the launching thread ran in its measured part.
    print(parse(sys.argv[2])[2]['run_block'])
else:
    report(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
EOF
# callgrind build mode n out-dir
count() {
  mkdir -p "$4"
  ASC_SPIN_US=0 valgrind --tool=callgrind --separate-threads=yes \
    --toggle-collect=ascLaunchKernel --toggle-collect=run_block \
    --callgrind-out-file="$4/cg" "$1/bench/launch_count" "$3" "$2" \
    >/dev/null 2>"$4/log" || { cat "$4/log" >&2; exit 1; }
}
# A roundtrip run counts only if the launching thread ran every block (a
# worker sometimes takes one): such a run is repeated, up to 3 times.
roundtrip() { # build out-dir
  for try in 1 2 3; do
    rm -rf "$2"
    count "$1" roundtrip "$N_RT" "$2"
    [ "$(python3 "$tmp/an.py" blocks "$2/cg-01")" = "$N_RT" ] && return
  done
}
for r in $(seq "$RUNS"); do
  roundtrip "$B" "$tmp/cg/in/roundtrip/$r"
  roundtrip "$OFF" "$tmp/cg/out/roundtrip/$r"
  count "$B" async "$N_ASYNC" "$tmp/cg/in/async/$r"
  count "$OFF" async "$N_ASYNC" "$tmp/cg/out/async/$r"
done
for p in $(seq "$PAIRS"); do
  order="$B $OFF"
  [ $((p % 2)) = 0 ] && order="$OFF $B"
  for b in $order; do
    side=in
    [ "$b" = "$OFF" ] && side=out
    "$b/bench/launch_latency" "$ITERS" "$ASYNC" untraced |
      sed -n "s/^asc_roundtrip_us=\([0-9.]*\) async_launches_per_s=\([0-9.]*\)/$p $side \1 \2/p" \
      >>"$tmp/timed"
  done
done

python3 "$tmp/an.py" report "$tmp" "$N_RT" "$N_ASYNC"
