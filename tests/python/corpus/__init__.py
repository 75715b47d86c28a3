"""A corpus of kernels ported from public numba code (issue 16).

Each module here is one ported program: a header naming its source
(repository, path, licence), the kernel as the source wrote it with only
the decorator changed (`@numba.njit`/`@nb.jit(...)` -> `@asc.kernel(...)`
for the entry point, `@asc.func(...)` for the helpers it calls) and
`prange` -> `asc.prange`, then what the runner needs:

* ``KERNEL``: the entry point (an asc kernel);
* ``args()``: a small deterministic input, a fresh copy on every call;
* optional ``RTOL`` / ``ATOL``: the tolerance when the dtype's default
  does not suit (fastmath reassociation of long sums).

tests/python/test_corpus.py runs them against numpy and
tests/tools/corpus_report.py prints what blocks each one.
"""
