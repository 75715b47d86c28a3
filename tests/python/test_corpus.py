"""The numba corpus of issue 16 (tests/python/corpus/): kernels ported from
public numba code with only the decorator (and prange) changed, each run
against numpy.

Every kernel is in exactly one of three states, and this test asserts it:
* EXPECTED_TO_RUN: compiles, runs and matches numpy (its own Python
  function run by CPython on the same input);
* KNOWN_BUGS: shows a libasc bug (a launch-time error with no kernel line,
  an internal compiler error, a crash, a wrong result); the test asserts the
  bug is still there, so a fix makes it fail and says where to move it;
* any other kernel: rejected by an asc.CompileError at a line inside the
  kernel (or its helpers), never an internal error.

When array support lands, kernels move from the third state to the first:
the failure message says so.  tests/tools/corpus_report.py prints the
table of statuses and what blocks the rest.
"""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import _harness as h

# compile and match numpy today
EXPECTED_TO_RUN = {
    # parameters typed by what is passed, helpers returning arrays, locals
    # rebound to another array (docs/arrays.md)
    "npb_channel_flow",
    "npb_conv2d_bias",
    "npb_lenet",
    "npb_mlp",
    "npb_nbody",
    "npb_resnet",
    "nex_blackscholes",
    "nex_bubblesort",
    "nex_fbcorr",
    "nex_filter2d",
    "nex_filter2d_core",
    "nex_jacobi_relax",
    "nex_julia",
    "nex_kde",
    "nex_kde_prange",
    "nex_lj_prange",
    "nex_lj_scalar",
    "npb_adi",
    "npb_arc_distance",
    "npb_atax",
    "npb_azimint_hist",
    "npb_azimint_naive",
    "npb_bicg",
    "npb_cavity_flow",
    "npb_cholesky",
    "npb_cholesky2",
    "npb_compute",
    "npb_contour_integral",
    "npb_correlation",
    "npb_covariance",
    "npb_covariance2",
    "npb_crc16",
    "npb_deriche",
    "npb_doitgen",
    "npb_durbin",
    "npb_fdtd_2d",
    "npb_floyd_warshall",
    "npb_floyd_warshall_prange",
    "npb_gemm",
    "npb_gemver",
    "npb_gesummv",
    "npb_go_fast",
    "npb_go_fast_prange",
    "npb_gramschmidt",
    "npb_hdiff",
    "npb_heat_3d",
    "npb_jacobi_1d",
    "npb_jacobi_2d",
    "npb_k2mm",
    "npb_k3mm",
    "npb_lu",
    "npb_ludcmp",
    "npb_mandelbrot1",
    "npb_mandelbrot2",
    "npb_mvt",
    "npb_nussinov",
    "npb_scattering_self_energies",
    "npb_seidel_2d",
    "npb_softmax",
    "npb_spmv",
    "npb_spmv_prange",
    "npb_stockham_fft",
    "npb_symm",
    "npb_syr2k",
    "npb_syrk",
    "npb_trisolv",
    "npb_trmm",
    "npb_trmm_prange",
    "npb_vadv",
}

# name -> (status, a fragment of the message): bugs in libasc (issue 16,
# item 9: launch-time type errors must name the line where the parameter is
# used; complex arrays are rejected at launch instead of at a line)
KNOWN_BUGS = {
}

# the qa_* kernels (written for this project from public task descriptions,
# not ported) have their own lists in test_corpus_qa.py
NAMES = [n for n in h.names() if not n.startswith("qa_")]


def test_corpus_size_and_lists():
    assert len(NAMES) >= 40
    assert EXPECTED_TO_RUN <= set(NAMES)
    assert set(KNOWN_BUGS) <= set(NAMES)
    assert not EXPECTED_TO_RUN & set(KNOWN_BUGS)


@pytest.mark.parametrize("name", NAMES)
def test_source_is_cited_and_only_the_decorator_changed(name):
    text = Path(h.CORPUS_DIR / f"{name}.py").read_text()
    head = text[:600]
    assert re.search(r"^# Ported from \S+/\S+ \(https://github\.com/\S+\),\n# file \S+\.py", head, re.M), head
    assert re.search(r"^# Licence of the source: BSD-[23]-Clause, Copyright", head, re.M), head
    code = text.split('"""', 2)[-1]
    assert not re.search(r"\b(numba|nb)\.\w|@n?jit\b|import numba|from numba", code), \
        "a numba decorator or call is left in the kernel text"
    assert "prange" not in text or "asc.prange" in text
    mod = h.load(name)
    assert callable(mod.args) and hasattr(mod.KERNEL, "py_func")


def test_corpus_covers_the_constructs_the_issue_names():
    # issue 16: stencils with slice arithmetic, a reduction with axis=, a
    # kernel that allocates temporaries, a masked update, a complex kernel,
    # a kernel returning an array -- each in a kernel that runs and matches
    # numpy
    texts = {n: (h.CORPUS_DIR / f"{n}.py").read_text() for n in EXPECTED_TO_RUN}
    def some(rx):
        return [n for n, t in texts.items() if re.search(rx, t, re.M)]
    assert some(r"\[1:-1, 1:-1\] = .*\[2:, 1:-1\]|\[1:-1\] = .*\[:-2\]")
    assert some(r"np\.sum\(.*axis=")
    assert some(r"= np\.(empty|zeros)(_like)?\(")
    assert some(r"\[stddev <= 0\.1\] = ")
    assert some(r"np\.complex128")
    assert some(r"^    return \w+( [-+*/] \w+)?$")


@pytest.mark.parametrize("name", NAMES)
def test_corpus_kernel(name, record_property):
    r = h.run(name)
    record_property("corpus_status", r.line())   # in the junit XML, per kernel
    if name in EXPECTED_TO_RUN:
        assert r.status == h.OK, f"{name} no longer runs and matches numpy: {r.line()}\n{r.detail}"
        return
    if name in KNOWN_BUGS:
        status, fragment = KNOWN_BUGS[name]
        assert r.status == status and fragment in r.message, (
            f"{name}: the known bug ({status}: ...{fragment}...) changed; it is now "
            f"'{r.line()}'. If that is a fix, move {name} out of KNOWN_BUGS "
            f"(to EXPECTED_TO_RUN when it runs and matches numpy).")
        return
    if r.status == h.OK:
        pytest.fail(f"{name} now compiles and matches numpy: add it to EXPECTED_TO_RUN")
    assert r.status == h.DIAG, f"{name}: not a diagnostic inside the kernel: {r.line()}\n{r.detail}"
    assert r.lineno > 0 and r.message.strip()
    assert "internal compiler error" not in r.detail


def test_array_fuzz_tool_runs(root, tmp_path):
    """tests/tools/array_fuzz.py (issue 16's differential fuzzer) still runs:
    a few cases each way; the loop form compiles today and must match numpy."""
    p = subprocess.run([sys.executable, str(root / "tests/tools/array_fuzz.py"), "--seed", "3",
                        "--count", "6", "--mode", "both", "--last", str(tmp_path / "last.py")],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    counts = dict(re.findall(r"^  (\w[\w ]*?)\s+(\d+)$", p.stdout, re.M))
    assert counts["cases"] == "12" and counts["mismatched"] == "0" and counts["internal error"] == "0"
    assert int(counts["matched"]) >= 5, p.stdout


# Bugs the fuzzer found (array_fuzz.py --mode loop --dtypes ...,float16,...),
# asserted to be still there like KNOWN_BUGS: a weak-float expression
# (int32 + 0.5) stored into a float32/float16 element is computed in the
# element's type, where numpy (and docs/types.md: weak float -> float64)
# computes in float64 and rounds once on the store.  Fixed, these asserts
# fail: then assert numpy's values instead.
_WEAK_STORE = """import asc

@asc.kernel
def k(out, b, big):
    out[0] = (b[0] + 0.5) - big
    t = b[0] + 0.5
    out[1] = t - big
"""


def test_known_bug_weak_float_expression_stored_in_narrow_float():
    import numpy as np

    import asc
    m = asc.compile(_WEAK_STORE, filename="weak_store.py")
    out32 = np.zeros(2, np.float32)
    m.k(out32, np.array([16777217], np.int32), 16777216)       # 2**24 + 1
    numpy_says = np.float32((np.int32(16777217) + 0.5) - 16777216)   # 1.5
    assert numpy_says == 1.5
    assert out32.tolist() == [0.0, 2.0], "fixed? assert [1.5, 1.5] (numpy) instead"
    out16 = np.zeros(2, np.float16)
    m.k(out16, np.array([70000], np.int32), 69000)
    assert np.float16((np.int32(70000) + 0.5) - 69000) == 1000.5
    # 69000 becomes float16 inf, and inf - inf is NaN
    assert np.isnan(out16).all(), "fixed? assert [1000.5, 1000.5] (numpy) instead"
