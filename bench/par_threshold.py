"""Where a parallel array loop starts to pay (docs/parallelize.md, "Small
loops").  Times two elementwise statements at sizes from 1k to 1M
elements in two processes: one whose team is the machine's cores, one
whose team is one core (ASC_VISIBLE_CORES=0: every loop runs on the
calling thread).  The crossover, where the team's time drops below the
single core's, is the size below which a loop is not worth waking the
team for.

    python3 bench/par_threshold.py            # both, and the ratio
    python3 bench/par_threshold.py --child    # one process's times (JSON)

To see the raw crossover, build with PAR_MIN_WORK in
src/compiler/emit_pfor.c set to 64; with the threshold in place the two
columns agree below it (both run on one thread).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

SRC = '''
import numpy as np
import asc

@asc.kernel
def axpb(a, b, out):
    out[:] = a * 2.0 + b

@asc.kernel
def expm(a, out):
    out[:] = np.exp(a) * 0.5
'''

SIZES = [1 << k for k in range(10, 21)]


def child():
    import asc
    m = asc.compile(SRC)
    r = np.random.default_rng(0)
    res = {}
    for n in SIZES:
        a, b, out = r.random(n), r.random(n), np.empty(n)
        for name, f, args in (("axpb", m.axpb, (a, b, out)),
                              ("exp", m.expm, (a, out))):
            f(*args)
            reps = max(20, min(2000, (1 << 22) // n))
            best = []
            for _ in range(5):
                t = time.perf_counter()
                for _ in range(reps):
                    f(*args)
                best.append((time.perf_counter() - t) / reps)
            res["%s/%d" % (name, n)] = min(best)
    json.dump(res, sys.stdout)


def main():
    if "--child" in sys.argv:
        child()
        return
    runs = {}
    for label, extra in (("team", {}), ("one", {"ASC_VISIBLE_CORES": "0"})):
        e = dict(os.environ, **extra)
        p = subprocess.run([sys.executable, __file__, "--child"], env=e,
                           capture_output=True, text=True, check=True)
        runs[label] = json.loads(p.stdout)
    print("%-12s %12s %12s %8s" % ("loop/n", "team us", "one core us",
                                   "one/team"))
    for k in runs["team"]:
        t, o = runs["team"][k], runs["one"][k]
        print("%-12s %12.2f %12.2f %8.2f" % (k, t * 1e6, o * 1e6, o / t))


if __name__ == "__main__":
    main()
