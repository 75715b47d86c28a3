"""Budgets for the size of generated C (docs/latency.md): the C compiler's
time on a cold compile grows with it, and it grew unnoticed before.  A
change that makes one of these kernels' C larger than its budget fails
here; raise a budget only with the reason in docs/latency.md.

Lines of `ascc --emit=c` (deterministic: not a timing), with the figure
at the time each budget was set:
  bench/kernels/latency_array.py score_rows   6,843 (11,440 before the
                                              launch tests over new arrays
                                              folded, codegen 40); 8,127
                                              with its 11 float row sums
                                              in numpy's pairwise order
                                              (codegen 42, budget 8,500);
                                              8,598 with the lines of the
                                              build in two parts (codegen
                                              49: a prototype, #if and
                                              #endif per parallel body;
                                              budget 8,650); 8,360 when
                                              fold drops the broadcast
                                              checks that cannot fail
                                              (codegen 50, budget 8,450);
                                              7,931 with a new array one
                                              call of asc_new_array
                                              (codegen 51, budget 8,000)
  the bench suite's softmax                   1,538 (1,704 at codegen 49,
                                              budget 1,720; 1,745 at 51:
                                              asc_new_array's 41 lines in
                                              every module, budget 1,760)
  examples/python/seed_kernels.asc conv2d     1,615 (1,774 at codegen 51)

And of what an unoptimised build (the quick tier's -O0, docs/latency.md)
compiles: the text after the preprocessor without __OPTIMIZE__ (the
system headers included, Debian 12's glibc), counting lines that are not
blank or line markers: 7,663 / 1,269 / 1,407 when set (8,204 / 1,556 /
1,610 with __OPTIMIZE__, whose second copies of polling loops the quick
build leaves out; and with <immintrin.h>, which streaming stores
included before, over 550,000); 7,463 / 1,272 / 1,410 at codegen 50
(budget 7,700 / 1,400 / 1,550); 6,959 / 1,314 / 1,452 at codegen 51
(budget 7,100 / 1,400 / 1,550)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ASCC = os.path.join(ROOT, "build", "ascc")

BUDGETS = [
    ("bench/kernels/latency_array.py",
     "score_rows(f64[2], f64[1], f64[1], f64[2])", 8_000),
    (None, "softmax(f32[2], f32[2])", 1_760),
    ("examples/python/seed_kernels.asc", "conv2d(f32[4], f32[4], f32[4])", 1_800),
]
# (lines of C, preprocessed lines of the unoptimised build)
O0_BUDGETS = [7_100, 1_400, 1_550]


def softmax_file(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        from suite import write_softmax_kernel
    finally:
        sys.path.pop(0)
    path = tmp_path / "softmax_kernel.py"
    write_softmax_kernel(str(path))
    return str(path)


def emit_c(tmp_path, src, sig):
    if not os.path.exists(ASCC):
        pytest.fail("build/ascc not built (cmake --build build)")
    path = softmax_file(tmp_path) if src is None else os.path.join(ROOT, src)
    out = tmp_path / "k.c"
    r = subprocess.run([ASCC, "--emit=c", "--signature", sig, path, "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("src,sig,budget", BUDGETS, ids=["array30", "softmax", "conv2d"])
def test_generated_c_within_budget(tmp_path, src, sig, budget):
    lines = emit_c(tmp_path, src, sig).read_text().count("\n")
    assert lines <= budget, (
        f"{sig}: {lines} lines of C, budget {budget} (docs/latency.md)")


@pytest.mark.parametrize("src,sig,budget",
                         [(s, g, b) for (s, g, _), b in zip(BUDGETS, O0_BUDGETS)],
                         ids=["array30", "softmax", "conv2d"])
def test_unoptimised_build_text_within_budget(tmp_path, src, sig, budget):
    c = emit_c(tmp_path, src, sig)
    r = subprocess.run(["cc", "-E", "-O0", "-march=native", "-DASC_VECMATH_SLEEF=1", str(c)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = sum(1 for x in r.stdout.splitlines() if x.strip() and not x.startswith("#"))
    assert lines <= budget, (
        f"{sig}: {lines} preprocessed lines at -O0, budget {budget} (docs/latency.md)")
