"""Iterated stencils as PolyBench writes them (jacobi-2d, heat-3d: a time
loop around two sweeps, a -> b and b -> a, plain `range` loops): libasc
with the wavefront pass (the default, docs/optimizer.md) and without it
(ASC_WAVEFRONT=0, the same text), against the same loops in C with
OpenMP (bench/ref/loops.c, built by CMake with libasc's kernel flags,
`#pragma omp parallel for` on each sweep's row loop) and against numpy
slices.  Every implementation starts from the same arrays and must give
the same bits as asc's default before it is timed.  One run, medians of
--reps timings with a short pause between calls (so one runtime's
spinning threads do not slow the next), ratios within the run.

    python3 bench/stencil.py [--build build] [--reps 7] [--quick]
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

import asc  # noqa: E402

SRC = '''
import asc

@asc.kernel
def jacobi2d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])

@asc.kernel
def heat3d(A, B, T: int):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    B[i, j, k] = (0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k]) +
                                  0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k]) +
                                  0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1]) +
                                  A[i, j, k])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    A[i, j, k] = (0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k]) +
                                  0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k]) +
                                  0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1]) +
                                  B[i, j, k])
'''


def np_jacobi2d(A, B, T):
    for _ in range(T):
        B[1:-1, 1:-1] = 0.2 * ((((A[1:-1, 1:-1] + A[1:-1, :-2]) + A[1:-1, 2:]) +
                                A[2:, 1:-1]) + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * ((((B[1:-1, 1:-1] + B[1:-1, :-2]) + B[1:-1, 2:]) +
                                B[2:, 1:-1]) + B[:-2, 1:-1])


def np_heat_sweep(A, B):
    c = A[1:-1, 1:-1, 1:-1]
    B[1:-1, 1:-1, 1:-1] = (
        (0.125 * ((A[2:, 1:-1, 1:-1] - 2.0 * c) + A[:-2, 1:-1, 1:-1]) +
         0.125 * ((A[1:-1, 2:, 1:-1] - 2.0 * c) + A[1:-1, :-2, 1:-1])) +
        0.125 * ((A[1:-1, 1:-1, 2:] - 2.0 * c) + A[1:-1, 1:-1, :-2])) + c


def np_heat3d(A, B, T):
    for _ in range(T):
        np_heat_sweep(A, B)
        np_heat_sweep(B, A)


def compile_module(tmp, wavefront):
    """The kernels, compiled with the pass on or off (ASC_WAVEFRONT is
    read when a kernel is compiled, and keys the cache)."""
    old = os.environ.get("ASC_WAVEFRONT")
    os.environ["ASC_WAVEFRONT"] = "1" if wavefront else "0"
    try:
        path = os.path.join(tmp, f"stencil_wf{int(wavefront)}.py")
        with open(path, "w") as f:
            f.write(SRC)
        ns = {}
        exec(compile(SRC, path, "exec"), ns)
        # compile now, while the variable holds
        ns["jacobi2d"](np.zeros((8, 8)), np.zeros((8, 8)), 1)
        ns["heat3d"](np.zeros((8, 8, 8)), np.zeros((8, 8, 8)), 1)
        return ns
    finally:
        if old is None:
            del os.environ["ASC_WAVEFRONT"]
        else:
            os.environ["ASC_WAVEFRONT"] = old



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    args = ap.parse_args()
    import tempfile
    tmp = tempfile.mkdtemp(prefix="asc-stencil-")
    mods = {"asc": compile_module(tmp, True), "asc ASC_WAVEFRONT=0": compile_module(tmp, False)}
    lib = ctypes.CDLL(os.path.join(args.build, "bench", "bench_ref_omp.so"))
    for fn in (lib.ref_jacobi2d, lib.ref_heat3d):
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        fn.restype = None
    cases = [("jacobi2d", (4000, 4000), 10, lib.ref_jacobi2d, np_jacobi2d),
             ("heat3d", (200, 200, 200), 10, lib.ref_heat3d, np_heat3d)]
    if args.quick:
        cases = [(n, tuple(max(s // 20, 12) for s in sh), 2, c, p) for n, sh, _, c, p in cases]
    print(f"stencil.py: medians of {args.reps}, float64; ratio = other's time / asc's "
          f"(above 1: asc faster); load average {os.getloadavg()[0]:.2f}")
    for name, shape, T, cfn, npfn in cases:
        r = np.random.default_rng(7)
        A0, B0 = r.random(shape), r.random(shape)
        impls = {}
        for tag, ns in mods.items():
            k = ns[name]
            impls[tag] = lambda A, B, k=k: k(A, B, T)
        impls["C OpenMP"] = lambda A, B: cfn(A.ctypes.data, B.ctypes.data, shape[0], T)
        impls["numpy"] = lambda A, B: npfn(A, B, T)
        # the same bits from the same start
        ref = None
        state = {}
        for tag, fn in impls.items():
            A, B = A0.copy(), B0.copy()
            fn(A, B)
            if ref is None:
                ref = (A.copy(), B.copy())
            elif not (np.array_equal(A, ref[0]) and np.array_equal(B, ref[1])):
                sys.exit(f"stencil.py: {name}: {tag} differs from asc")
            state[tag] = (A, B)
        times = {tag: [] for tag in impls}
        for _ in range(args.reps):
            for tag, fn in impls.items():
                A, B = state[tag]
                time.sleep(0.02)
                t0 = time.perf_counter()
                fn(A, B)
                times[tag].append(time.perf_counter() - t0)
        ta = statistics.median(times["asc"])
        print(f"\n{name} {'x'.join(map(str, shape))} f64, T={T} (two sweeps each)")
        for tag, ts in times.items():
            med = statistics.median(ts)
            print(f"  {tag:22s} {med * 1e3:9.2f} ms  (min {min(ts) * 1e3:.2f}, max "
                  f"{max(ts) * 1e3:.2f})  ratio {med / ta:5.2f}")


if __name__ == "__main__":
    main()
