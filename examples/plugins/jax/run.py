"""A libasc kernel as a JAX function: an XLA custom call whose handler is
C calling libasc (asc.jax), under jax.jit, differentiated with
jax.custom_vjp, batched with jax.vmap; each result is checked against
jax.nn.softmax.

    python3 examples/plugins/jax/run.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
try:
    import asc
except ImportError:     # in the source tree: scripts/build-python.sh's build
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
    import asc

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import asc.jax  # noqa: E402


# the kernel text (not imported: kernels use the kernel language)
kernels = asc.compile(os.path.join(os.path.dirname(HERE), "kernels.py"))

forward = asc.jax.ffi_op(kernels.softmax_rows)          # out is allocated, returned
backward = asc.jax.ffi_op(kernels.softmax_rows_grad)    # gx likewise


@jax.custom_vjp
def softmax(x):
    return forward(x)


def softmax_fwd(x):
    y = forward(x)
    return y, y


def softmax_bwd(y, gy):
    return (backward(y, gy),)


softmax.defvjp(softmax_fwd, softmax_bwd)


def report(what, got, want, tol):
    err = float(jnp.max(jnp.abs(got - want)))
    good = err <= tol
    print(f"{what}: max |difference| against JAX = {err:.1e} "
          f"{'OK' if good else 'WRONG'}")
    return good


def main():
    x = jax.random.normal(jax.random.PRNGKey(0), (512, 300))
    w = jax.random.normal(jax.random.PRNGKey(1), (512, 300))
    ok = report("jax.jit(softmax)", jax.jit(softmax)(x),
                jax.nn.softmax(x, axis=-1), 1e-6)
    loss = lambda f: (lambda t: jnp.sum(f(t) * w))
    ok &= report("jax.grad through custom_vjp",
                 jax.jit(jax.grad(loss(softmax)))(x),
                 jax.grad(loss(lambda t: jax.nn.softmax(t, axis=-1)))(x), 1e-5)
    xb = x.reshape(4, 128, 300)
    ok &= report("jax.vmap(softmax)", jax.vmap(softmax)(xb),
                 jax.nn.softmax(xb, axis=-1), 1e-6)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
