"""The corpus's `qa_*` kernels (tests/python/corpus/qa_*.py): numpy tasks
described in public Q&A threads, tutorials and blog posts (each file names
the page), written for this project in plain numpy style, then only
`import asc` and the decorator added.  Each runs against numpy (its own
Python function run by CPython on the same input), results and array
arguments after the call.

Every qa kernel is in exactly one of two states, and this test asserts it:
* QA_EXPECTED_TO_RUN: compiles, runs and matches numpy;
* QA_EXPECTED_FAILURES: name -> (status, line, message), the first error it
  stops at today, exactly.  When that error changes the test fails and
  shows the new one; when the kernel runs and matches numpy the test fails
  with "now passes: remove it from the list" (and add it to
  QA_EXPECTED_TO_RUN).  A status other than a diagnostic at a kernel line
  is a libasc bug; those are marked "bug" below.

tests/tools/corpus_report.py prints the table with the other kernels.
"""
import re
from pathlib import Path

import pytest

from corpus import _harness as h

QA_NAMES = [n for n in h.names() if n.startswith("qa_")]

# compile and match numpy today
QA_EXPECTED_TO_RUN = {
    "qa_batched_matmul_nd",
    "qa_cart2pol",
    "qa_cbrt_sign",
    "qa_checkerboard_indices",
    "qa_checkerboard_tile",
    "qa_circle_mgrid",
    "qa_correlated_samples",
    "qa_diff_matrix_triu",
    "qa_digitize_group_means",
    "qa_disc_masks_ogrid",
    "qa_einsum_bmm",
    "qa_flip_concat",
    "qa_game_of_life_roll",
    "qa_gaussian_meshgrid",
    "qa_gkern_outer",
    "qa_heat1d_roll_mask",
    "qa_hist_equalize",
    "qa_histogram_inverse_cdf",
    "qa_import_in_body",
    "qa_inverse_transform_pmf",
    "qa_iqr_outliers",
    "qa_life_slices",
    "qa_linear_system",
    "qa_max_drawdown",
    "qa_minmax_fit_transform",
    "qa_most_frequent",
    "qa_moving_sum_cumsum",
    "qa_mult_table",
    "qa_mvn_cholesky",
    "qa_normal_equation",
    "qa_normalize_rows",
    "qa_one_hot_eye",
    "qa_one_hot_fancy",
    "qa_pagerank_converge",
    "qa_pairwise_broadcast",
    "qa_pairwise_gram",
    "qa_power_iteration",
    "qa_qr_lstsq",
    "qa_rank_argsort",
    "qa_reject_outliers_median",
    "qa_rolling_sum_rows",
    "qa_rot90_augment",
    "qa_rotation_matrix",
    "qa_sum_axes_tuple",
    "qa_svd_low_rank",
    "qa_upsample_repeat",
    "qa_weighted_std",
}

# name -> (status, kernel line (0: none), first error message): the message
# exactly, up to the list of names the compiler accepts, which grows with
# every function added (short() below)
QA_EXPECTED_FAILURES = {
    "qa_batchnorm_axes": (h.DIAG, 13,
        "axis must be an integer constant (or None) written in the call; 'axes' is a variable (a helper's parameter is one too, whatever its default or argument)"),
    "qa_einsum_matvec": (h.DIAG, 13,
        "np.einsum('ijk,ik->ij') is not supported in kernels: kernels take one or two operands: products of one contracted letter ('ij,jk->ik', 'ij,j->i', 'bij,bjk->bik', transposed operands), elementwise products and outer products ('ij,ij->ij', 'i,j->ij'), 'ii->', 'ii->i', transposes and sums ('ij->ji', 'ij->')"),
    "qa_heat1d_swap": (h.DIAG, 18,
        "'u = un' would keep the array 'un' holds, but 'un' is bound to another array in a loop or a branch and the arrays are written into; kernels do not keep an array a name held before: bind a copy (u = un.copy())"),
    "qa_heat1d_tuple_swap": (h.DIAG, 17,
        "'u = un' would keep the array 'un' holds, but 'un' is bound to another array in a loop or a branch and the arrays are written into; kernels do not keep an array a name held before: bind a copy (u = un.copy())"),
    "qa_kmeans_step": (h.DIAG, 17,
        'a comprehension in a kernel is unrolled at compile time, so it must run over a sequence of static length (a shape, a tuple, range() with constant bounds, zip() or enumerate() of those): this bound of range() is not a compile-time constant'),
    "qa_logistic_lambda": (h.DIAG, 22,
        'a nested tuple or struct is not supported by the compiler yet'),
    "qa_mad_outliers": (h.DIAG, 14,
        "cannot assign Tensor[float64, 2, strided] to 'points', which has type Tensor[float64, 1]"),
    "qa_pca_eigh": (h.DIAG, 23,
        'kernels take an index array or a boolean mask only as the whole index (a[idx], a[mask]), not together with other indices'),
    "qa_polyfit_lstsq": (h.DIAG, 13,
        'a comprehension in a kernel is unrolled at compile time, so it must run over a sequence of static length (a shape, a tuple, range() with constant bounds, zip() or enumerate() of those): this bound of range() is not a compile-time constant'),
    "qa_spectrum_phase": (h.DIAG, 15,
        "'.real' of an array (Tensor[complex128, 1]) is not supported in kernels yet; np.real(a) gives it as a new array"),
}


def test_qa_lists():
    assert len(QA_NAMES) >= 34
    assert QA_EXPECTED_TO_RUN <= set(QA_NAMES)
    assert set(QA_EXPECTED_FAILURES) <= set(QA_NAMES)
    assert not QA_EXPECTED_TO_RUN & set(QA_EXPECTED_FAILURES)
    assert QA_EXPECTED_TO_RUN | set(QA_EXPECTED_FAILURES) == set(QA_NAMES), \
        "every qa kernel is listed in QA_EXPECTED_TO_RUN or QA_EXPECTED_FAILURES"


@pytest.mark.parametrize("name", QA_NAMES)
def test_qa_source_is_cited(name):
    text = (h.CORPUS_DIR / f"{name}.py").read_text()
    head = text[:800]
    assert re.search(r"^# Task described at https?://\S+$", head, re.M), head
    assert "Written for this project from that description" in head, head
    code = text.split('"""', 2)[-1]
    assert not re.search(r"\b(numba|nb)\.\w|@n?jit\b|import numba|from numba", code)
    mod = h.load(name)
    assert callable(mod.args) and hasattr(mod.KERNEL, "py_func")


def short(message):
    """A message without its list of accepted numpy names or methods."""
    message = message.split(" (numpy names kernels accept")[0]
    return message.split("; array methods kernels accept")[0]


def check(name, r):
    """None when `r` is what the lists say, else the failure message."""
    if name in QA_EXPECTED_TO_RUN:
        if r.status != h.OK:
            return f"{name} no longer runs and matches numpy: {r.line()}\n{r.detail}"
        return None
    status, lineno, message = QA_EXPECTED_FAILURES[name]
    if r.status == h.OK:
        return (f"{name} now passes: remove it from the list QA_EXPECTED_FAILURES "
                f"(and add it to QA_EXPECTED_TO_RUN)")
    now = (r.status, r.lineno, short(r.message))
    if now != (status, lineno, message):
        return (f"{name}: the expected failure changed.\n  listed: {(status, lineno, message)!r}\n"
                f"  now:    {now!r}\n{r.detail}")
    return None


def test_an_expected_failure_that_passes_fails_the_test():
    name = "qa_x"
    QA_EXPECTED_FAILURES[name] = (h.DIAG, 3, "np.foo is not supported in kernels yet")
    try:
        bad = check(name, h.Result(name, h.OK))
        assert bad and "now passes: remove it from the list" in bad
        assert check(name, h.Result(name, h.DIAG, 3, "np.foo is not supported in kernels yet")) is None
        assert "changed" in check(name, h.Result(name, h.DIAG, 4, "np.foo is not supported in kernels yet"))
    finally:
        del QA_EXPECTED_FAILURES[name]


@pytest.mark.parametrize("name", QA_NAMES)
def test_qa_kernel(name, record_property):
    r = h.run(name)
    record_property("corpus_status", r.line())
    bad = check(name, r)
    if bad:
        pytest.fail(bad)


def test_report_names_the_numpy_function_that_blocks_a_kernel():
    # the accepted names in the message (complex64, complex128, ...) are
    # not the blocker: np.linalg.cholesky was counted as "complex numbers"
    accepted = " (numpy names kernels accept: sin, cos, ... complex64, complex128 (and conj))"
    assert h.diag_construct("np.linalg.cholesky is not supported in kernels" + accepted) \
        == "np.linalg.cholesky"
    assert h.diag_construct("np.multiply.accumulate is not supported in kernels" + accepted) \
        == "np.multiply.accumulate"
    assert h.diag_construct("np.einsum is not supported in kernels yet" + accepted) == "np.einsum"
    assert h.diag_construct("method calls are not supported in kernels ('.argsort()'; array "
                            "methods kernels accept: sum, prod)") == "method .argsort()"
    assert h.diag_construct("complex arguments are not supported") == "complex numbers"
