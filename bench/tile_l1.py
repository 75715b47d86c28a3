"""Tile sizes for other L1 sizes, on this machine (docs/decisions.md, "Tile
sizes from the L1 data cache"): the same kernels compiled with
ASC_L1_CACHE = 16K, 32K (this machine's), 64K and 128K, which give the
interchange pass 1, 2, 4 and 8 KiB accumulator tiles and the tile pass
16, 32, 32 and 64-element float32 tiles, timed in one process, rounds
interleaved, medians (and each result checked against the 32K one, byte
for byte):

* the seed's conv2d (interchange over its window) on wide rows, where the
  accumulator tile matters: x 1x16x18x4098, w 16x16x3x3 (out rows of
  4096 float32);
* the naive float32 transpose (tile pass), 4096^2.

    PYTHONPATH=bindings/python python3 bench/tile_l1.py [--reps 21]
"""
import argparse
import os
import statistics
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SEED = os.path.join(ROOT, "examples", "python", "seed_kernels.asc")
KERNELS = os.path.join(HERE, "kernels", "suite_kernels.py")
SIZES = ["16K", "32K", "64K", "128K"]


def compiled(l1):
    import asc
    saved = os.environ.get("ASC_L1_CACHE")
    os.environ["ASC_L1_CACHE"] = l1
    try:
        seed, suite = asc.compile(SEED), asc.compile(KERNELS)
        # kernels compile at their first launch: launch them now
        x = np.zeros((1, 1, 3, 3), np.float32)
        seed.conv2d(x, np.zeros((1, 1, 3, 3), np.float32),
                    np.zeros((1, 1, 1, 1), np.float32))
        suite.transpose(np.zeros((40, 40), np.float32),
                        np.zeros((40, 40), np.float32))
    finally:
        if saved is None:
            os.environ.pop("ASC_L1_CACHE", None)
        else:
            os.environ["ASC_L1_CACHE"] = saved
    return seed, suite


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=21)
    args = ap.parse_args()
    mods = {l1: compiled(l1) for l1 in SIZES}
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (1, 16, 18, 4098)).astype(np.float32)
    w = rng.uniform(-1, 1, (16, 16, 3, 3)).astype(np.float32)
    a = rng.uniform(-1, 1, (4096, 4096)).astype(np.float32)
    outs = {l1: (np.zeros((1, 16, 16, 4096), np.float32),
                 np.zeros((4096, 4096), np.float32)) for l1 in SIZES}
    runs = {}
    for l1, (seed, suite) in mods.items():
        o, t = outs[l1]
        runs[("conv2d", l1)] = lambda seed=seed, o=o: seed.conv2d(x, w, o)
        runs[("transpose", l1)] = lambda suite=suite, t=t: suite.transpose(a, t)
    for fn in runs.values():
        fn()
    for l1 in SIZES:
        assert outs[l1][0].tobytes() == outs["32K"][0].tobytes(), l1
        assert (outs[l1][1] == a.T).all(), l1
    times = {k: [] for k in runs}
    for _ in range(args.reps):
        for k, fn in runs.items():
            time.sleep(0.02)
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    for bench in ("conv2d", "transpose"):
        base = statistics.median(times[(bench, "32K")])
        for l1 in SIZES:
            med = statistics.median(times[(bench, l1)])
            print(f"{bench:10s} ASC_L1_CACHE={l1:5s} median {med * 1e3:7.2f} ms "
                  f"(min {min(times[(bench, l1)]) * 1e3:7.2f})  32K / this "
                  f"{base / med:.2f}x")


if __name__ == "__main__":
    main()
