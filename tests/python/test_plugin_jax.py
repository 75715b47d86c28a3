"""asc.jax: libasc kernels as JAX functions through an XLA FFI handler
written in C: eager, jax.jit, jax.custom_vjp, jax.vmap; kernel errors as
JAX's runtime error naming file:line; inputs the kernel may not write;
calls from several threads at once.

Skipped without jax, except in scripts/test.sh's plugin stage
(plugin_support.py)."""
import os
import threading

import numpy as np
import pytest

from plugin_support import require

jax = require("jax")

import jax.numpy as jnp  # noqa: E402

import asc  # noqa: E402
import asc.jax  # noqa: E402

import plugin_kernels as K  # noqa: E402

softmax_fwd = asc.jax.ffi_op(K.softmax_rows)
softmax_bwd = asc.jax.ffi_op(K.softmax_rows_bwd)
scale = asc.jax.ffi_op(K.scale)
check = asc.jax.ffi_op(K.check_positive)


@jax.custom_vjp
def softmax(x):
    return softmax_fwd(x)


def _fwd(x):
    y = softmax_fwd(x)
    return y, y


def _bwd(y, gy):
    return (softmax_bwd(y, gy),)


softmax.defvjp(_fwd, _bwd)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_handler_built_against_jaxlib_header():
    path = asc.jax.handler_library()
    assert os.path.exists(path)
    assert os.path.exists(os.path.join(jax.ffi.include_dir(), "xla", "ffi",
                                       "api", "c_api.h"))


def test_eager_and_jit():
    x = jax.random.normal(jax.random.PRNGKey(0), (8, 33))
    close(softmax_fwd(x), jax.nn.softmax(x, axis=-1))
    close(jax.jit(softmax_fwd)(x), jax.nn.softmax(x, axis=-1))
    f = jax.jit(lambda x, a: scale(x * 2, a) + 1)
    v = jnp.arange(10, dtype=jnp.float32)
    close(f(v, 1.5), v * 3 + 1)
    # the scalar is a traced operand: a new value reuses the compiled code
    close(f(v, 0.5), v + 1)


def test_custom_vjp():
    x = jax.random.normal(jax.random.PRNGKey(1), (5, 6))
    w = jax.random.normal(jax.random.PRNGKey(2), (5, 6))
    g = jax.grad(lambda t: (softmax(t) * w).sum())(x)
    ref = jax.grad(lambda t: (jax.nn.softmax(t, axis=-1) * w).sum())(x)
    close(g, ref, 1e-5)
    gj = jax.jit(jax.grad(lambda t: (softmax(t) * w).sum()))(x)
    close(gj, ref, 1e-5)


def test_vmap_sequential():
    xb = jax.random.normal(jax.random.PRNGKey(3), (3, 4, 5))
    close(jax.vmap(softmax_fwd)(xb), jax.nn.softmax(xb, axis=-1))
    close(jax.jit(jax.vmap(softmax_fwd, in_axes=1))(xb),
          jax.nn.softmax(jnp.moveaxis(xb, 1, 0), axis=-1))
    vb = jnp.arange(12.0).reshape(3, 4)
    close(jax.vmap(scale, in_axes=(0, None))(vb, 2.0), vb * 2)


def test_non_contiguous_views():
    base = jnp.arange(108.0).reshape(9, 12) / 50
    for x in (base.T, base[::2, 1::3]):
        close(jax.jit(softmax_fwd)(x), jax.nn.softmax(x, axis=-1))


def test_kernel_error_is_jax_error():
    line = K.raise_line()
    good = jnp.arange(4.0)
    close(check(good), good)
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match=rf"plugin_kernels\.py:{line}.*negative input"):
        jax.block_until_ready(jax.jit(check)(jnp.array([1.0, -1.0])))
    close(jax.jit(check)(good), good)


def test_inputs_are_read_only():
    with pytest.raises(ValueError, match="writes parameter 'x'"):
        asc.jax.ffi_op(K.writes_input, outputs=())
    # an input the kernel writes is refused by the handler too
    op = asc.jax.ffi_op(K.add_inplace, outputs=("x",))
    op.pmap[0] = 0        # map the written parameter to an input
    with pytest.raises(jax.errors.JaxRuntimeError, match="read-only in JAX"):
        jax.block_until_ready(op(jnp.ones(3)))


def test_calls_from_many_threads():
    xs = [jax.random.normal(jax.random.PRNGKey(k), (64, 50)) for k in range(6)]
    refs = [jax.nn.softmax(x, axis=-1) for x in xs]
    f = jax.jit(softmax_fwd)
    errors = []

    def work(k):
        try:
            for _ in range(20):
                close(f(xs[k]), refs[k])
        except Exception as e:     # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_handler_runs_on_the_calling_thread():
    """XLA's CPU client runs a computation's custom calls on the thread
    that runs the computation: a framework thread launching joins there."""
    import ctypes
    lib = ctypes.CDLL(asc.jax.handler_library())
    lib.asc_xla_last_thread.restype = ctypes.c_int64
    f = jax.jit(softmax_fwd)
    x = jnp.ones((32, 16))
    seen = {}

    def work():
        jax.block_until_ready(f(x))
        seen["tid"] = lib.asc_xla_last_thread()
        seen["me"] = threading.get_native_id()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["tid"] == seen["me"] != threading.get_native_id()
