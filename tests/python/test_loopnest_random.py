"""Random-nest differential test of the loop-nest passes (docs/optimizer.md).

Each batch generates kernels of random j-p reduction nests, some with the
reduction split over two loops p-q as a convolution window (the shapes the
interchange pass rewrites, and near misses it must refuse: carried
dependences through the output, steps, bounds that depend on j, several
running ops, mixed dtypes), and 2-deep nests reading xt[j, i] into
o[k, i, j] (the crossing accesses the tile pass blocks, some with
dependences along j or across rows that it must refuse), compiles the
module twice, with ASC_INTERCHANGE=0 ASC_UNROLLJAM=0 ASC_GEMMREC=0
ASC_TILE=0 ASC_HOIST=0 ASC_REDLANES=0 ASC_VMCHUNK=0 and with the passes on (the gemmrec pass replaces the nests
that are plain matrix products; the switches are
read when a kernel compiles, at its first launch), runs both on the same inputs and
requires the outputs to be bitwise equal (the default floating-point mode
keeps every element's order of operations).

The count of distinct nests is ASC_LOOPNEST_NESTS (default 2000, in
batches of KERNELS_PER_BATCH kernels of NESTS_PER_KERNEL nests each); each
nest runs on len(WIDTHS) output widths, so the default is 12000 nest runs,
each transformed against untransformed.  The first kernel of the first two
batches (float32, float64) is compiled at the default -O3 (vectorised
code), the others with
ASC_CFLAGS=-O0, which only shortens the C compiler's run: the order of
floating-point operations is fixed by the C text (-ffp-contract=off).
"""
import os
import random
import re

import numpy as np
import pytest

asc = pytest.importorskip("asc")

NESTS = int(os.environ.get("ASC_LOOPNEST_NESTS", "2000"))
NESTS_PER_KERNEL = 40
KERNELS_PER_BATCH = 10
# each nest runs on every one of these output widths (m = o.shape[2]):
# one element, short, around the 512-element f32 / 256-element f64 tile,
# and several tiles with a remainder
WIDTHS = [1, 7, 255, 257, 513, 1100]
SEED = int(os.environ.get("ASC_LOOPNEST_SEED", "1234"))

# inputs: a[I, P], b[P, J + 2], w[P], x[I, J + P], xt[J + P, I], all float64
# or float32
I_, J_, P_ = 7, 1100, 6


def gen_expr(r, dt):
    """A random term of the running update, reading the inputs."""
    picks = [
        "a[i, p]", "b[p, j]", "w[p]", "x[i, j + p]", "b[p, j + 1]",
        "b[p, m - 1 - j]", "x[i, 2 * j - j + p]",
    ]
    unit_j = ["b[p, j]", "x[i, j + p]", "b[p, j + 1]", "x[i, 2 * j - j + p]"]
    t1 = r.choice(unit_j) if r.random() < 0.7 else r.choice(picks)
    k = r.random()
    if k < 0.4:
        return f"{t1} * {r.choice(picks)}"
    if k < 0.6:
        return f"({t1} - {r.choice(picks)}) * 0.5"
    if k < 0.7:
        return f"{t1} * {t1} + 1.0"
    return t1


def gen_cross(r, k):
    """A 2-deep nest reading xt[j, i] and writing o[k, i, j]: the crossing
    accesses the tile pass blocks, with dependences it must refuse."""
    loop = r.choice(["range", "range", "asc.prange"])
    ilo, jlo, jhi = 0, 0, r.choice(["m", "m", "m - 1"])
    e = r.choice(["xt[j, i]", "xt[j, i] * 2.0 + x[i, j]",
                  "xt[j, i] - xt[j + 1, i] * 0.5", "-xt[j, i]"])
    dep = r.random()
    if dep < 0.15:      # along j, in one row: legal in a prange too
        e, jlo = f"{e} + o[k, i, j - 1]", 1
    elif dep < 0.25:    # across rows: a plain range only (else a race)
        e, ilo, jhi, loop = f"{e} + o[k, i - 1, j + 1]", 1, "m - 1", "range"
    lines = [
        f"    for i in {loop}({ilo}, n):",
        f"        for j in range({jlo}, {jhi}):",
        f"            o[k, i, j] = {e}",
    ]
    text = "\n".join(lines).replace("[k,", f"[{k},")
    for v in ("i", "j"):
        text = re.sub(rf"\b{v}\b", f"{v}{k}", text)
    return text


def gen_nest(r, k, dt):
    """Nest number k of a kernel: writes o[k, i, j].  Every seventh is a
    crossing nest (gen_cross) instead, drawn from its own stream so that
    the reduction nests stay those of the same seed without it."""
    text = gen_reduction(r, k, dt)
    if k % 7 == 3:
        return gen_cross(random.Random(f"cross {k} {text}"), k)
    return text


def gen_reduction(r, k, dt):
    """A j-p reduction nest (the interchange pass's shape)."""
    jlo = r.choice([0, 0, 0, 1, 2])
    jhi = r.choice(["m", "m", "m - 1", "m - 3"])
    jstep = r.choice([1] * 9 + [2])
    plo = r.choice([0, 0, 1])
    phi = r.choice(["K", "K", "K - 1", "j % 3 + 1" if r.random() < 0.1 else "K"])
    init = r.choice(["0.0"] * 4 + ["1.5", "-0.0", "o[k, i, j]", "x[i, j]"])
    op = r.choice(["+=", "+=", "+=", "-=", "*=", "max", "min"])
    e = gen_expr(r, dt)
    if op in ("max", "min"):
        upd = f"s = {op}(s, {e})"
    else:
        upd = f"s {op} {e}"
    dep = r.random()
    if dep < 0.08:
        e2 = "o[k, i, j - 1]" if jlo >= 1 else "o[k, i, j]"
        # additive, so that the chain along j grows instead of decaying
        # into subnormals: whether a thread flushes those to zero is
        # process state (a kernel built with -ffast-math, as the fastmath
        # tests load, sets FTZ/DAZ in the thread that loads it), which
        # would make the reference itself depend on the thread
        upd = f"s += {e2} - w[p]"
    elif dep < 0.14:
        upd = f"s += o[k, i, j + 1] * b[p, j]"
        jhi = "m - 3"
    post = r.choice(["s", "s", "s * 2.0", "s + x[i, j]", "-s"])
    inner_extra = ""
    if r.random() < 0.05:
        inner_extra = "\n                o[k, i, j] = s"
    lines = [
        f"    for i in range(n):",
        f"        for j in range({jlo}, {jhi}, {jstep}):",
        f"            s = {init}",
        f"            for p in range({plo}, {phi}):",
        f"                {upd}{inner_extra}",
        f"            o[k, i, j] = {post}",
    ]
    # the reduction as a nest of two loops (a convolution's window), maybe
    # with set-up between them (set-up that reads j must be refused); its
    # own generator, seeded by the nest, leaves r's sequence as it was
    rq = random.Random("\n".join(lines))
    if rq.random() < 0.2:
        setup = rq.choice(["", "", "t = p * 3 + 1", "t = p + K", "t = j + p"])
        # a constant 2 is unrolled; K is a real loop; K - p changes with p
        # (refused).  Indices stay inside the inputs.
        q_hi = rq.choice(["2", "K", "K", "K - p"])
        upd2 = upd
        if q_hi == "K - p":
            upd2 = upd2.replace("x[i, j + p]", "x[i, j + p + q]")
        elif q_hi == "K":
            upd2 = upd2.replace("x[i, j + p]", "x[i, j + q]")
        upd2 = upd2.replace("b[p, j]", rq.choice(
            ["b[p, j]", "b[q, j]"] + (["b[p, j + q]"] if q_hi == "2" else [])))
        if setup and not upd2.startswith("s = m"):
            upd2 += " + t * 0.25"
        extra = inner_extra.replace("\n" + " " * 16, "\n" + " " * 20)
        inner = [f"                for q in range({q_hi}):",
                 f"                    {upd2}{extra}"]
        lines[4:5] = ([f"                {setup}"] if setup else []) + inner
    # each nest its own variables: a variable shared by several loops of a
    # kernel is one register for all of them, which the passes refuse
    text = "\n".join(lines).replace("[k,", f"[{k},")
    for v in ("s", "i", "j", "p", "q", "t"):
        text = re.sub(rf"\b{v}\b", f"{v}{k}", text)
    return text


def gen_module(r, nk, dt):
    out = ["import asc", ""]
    for q in range(nk):
        out.append("@asc.kernel")
        out.append(f"def k{q}(a, b, w, x, xt, o):")
        out.append("    n = a.shape[0]")
        out.append("    K = a.shape[1]")
        out.append("    m = o.shape[2]")
        for k in range(NESTS_PER_KERNEL):
            out.append(gen_nest(r, k, dt))
        out.append("")
    return "\n".join(out) + "\n"


def run_all(text, interchange, nk, inputs, o0, o3):
    """Compiles text and runs its kernels; kernels compile at their first
    launch, so the pass switches are set around the whole run."""
    saved = {k: os.environ.get(k) for k in ("ASC_CFLAGS", "ASC_INTERCHANGE",
                                            "ASC_UNROLLJAM", "ASC_GEMMREC",
                                            "ASC_TILE", "ASC_HOIST",
                                            "ASC_REDLANES", "ASC_VMCHUNK")}
    res = []
    try:
        os.environ["ASC_INTERCHANGE"] = "1" if interchange else "0"
        os.environ["ASC_UNROLLJAM"] = "1" if interchange else "0"
        os.environ["ASC_GEMMREC"] = "1" if interchange else "0"
        os.environ["ASC_TILE"] = "1" if interchange else "0"
        os.environ["ASC_HOIST"] = "1" if interchange else "0"
        os.environ["ASC_REDLANES"] = "1" if interchange else "0"
        os.environ["ASC_VMCHUNK"] = "1" if interchange else "0"
        mod = asc.compile(text)
        for q in range(nk):
            if q > 0 or not o3:
                os.environ["ASC_CFLAGS"] = "-O0"
            else:
                os.environ.pop("ASC_CFLAGS", None)
            for w in WIDTHS:
                o = o0[:, :, :w].copy()
                getattr(mod, f"k{q}")(*inputs, o)
                res.append(o)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return res


BATCH = NESTS_PER_KERNEL * KERNELS_PER_BATCH
NBATCH = max(1, -(-NESTS // BATCH))


@pytest.mark.parametrize("batch", range(NBATCH))
def test_random_nests_bitwise(batch):
    r = random.Random(SEED * 1000 + batch)
    dt = np.float64 if batch % 2 else np.float32
    text = gen_module(r, KERNELS_PER_BATCH, dt)
    rng = np.random.default_rng(batch)
    inputs = [
        rng.standard_normal((I_, P_)).astype(dt),
        rng.standard_normal((P_, J_ + 2)).astype(dt),
        rng.standard_normal(P_).astype(dt),
        rng.standard_normal((I_, J_ + P_)).astype(dt),
        rng.standard_normal((J_ + P_, I_)).astype(dt),
    ]
    # a few special values: signed zeros and a NaN-free spread
    inputs[1][0, :7] = [0.0, -0.0, 1e30, -1e30, 3.0, 0.0, -0.0]
    o0 = rng.standard_normal((NESTS_PER_KERNEL, I_, J_)).astype(dt)
    o3 = batch < 2   # one float32 and one float64 kernel at -O3
    want = run_all(text, False, KERNELS_PER_BATCH, inputs, o0, o3)
    got = run_all(text, True, KERNELS_PER_BATCH, inputs, o0, o3)
    assert len(want) == KERNELS_PER_BATCH * len(WIDTHS)
    for q in range(len(want)):
        if not np.array_equal(want[q].view(np.uint8), got[q].view(np.uint8)):
            bad = np.argwhere(want[q].view(np.uint8) != got[q].view(np.uint8))
            k = q // len(WIDTHS)
            pytest.fail(f"batch {batch} kernel k{k} width {WIDTHS[q % len(WIDTHS)]}: "
                        f"{len(bad)} bytes differ, first at {bad[0]} "
                        f"(nest {bad[0][0]})\n{text}")


def test_random_nests_are_interchanged(tmp_path):
    """The generator produces nests the pass rewrites and nests it refuses
    (else the differential test above would prove little)."""
    import subprocess
    r = random.Random(SEED)
    text = gen_module(r, 1, np.float32)
    build = os.environ.get("ASC_BUILD_DIR", os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build"))
    ascc = os.path.join(build, "ascc")
    if not os.path.exists(ascc):
        pytest.skip(f"no ascc in {build} (set ASC_BUILD_DIR)")
    src = tmp_path / "nests.py"
    src.write_text(text)
    sig = ("k0(f32[:, ::1], f32[:, ::1], f32[::1], f32[:, ::1], f32[:, ::1], "
           "f32[:, :, ::1])")
    ir = subprocess.run([ascc, "--emit=ir", "--signature", sig, str(src)],
                        check=True, capture_output=True, text=True).stdout
    moved = len(re.findall(r"interchange: [^\n]*in tiles of", ir))
    kept = len(re.findall(r"interchange: [^\n]*keeps its order", ir))
    windows = len(re.findall(r"moved inside loop %q\d+", ir))
    # of 40 nests, many twice (pfor and parallelize's serial fallback)
    assert moved >= 12, (moved, kept)
    assert kept >= 5, (moved, kept)
    assert windows >= 1, (moved, kept, windows)  # a two-loop reduction
    # and crossing nests for the tile pass, tiled and refused
    tiled = ir.count("; tile: loops")
    refused = ir.count("; tile: loop ")
    assert tiled >= 1 and refused >= 1, (tiled, refused)
