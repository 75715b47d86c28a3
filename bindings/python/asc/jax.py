"""libasc kernels as JAX functions (docs/plugins.md).

    import asc, asc.jax, jax

    @asc.kernel
    def softmax_rows(x, out): ...

    softmax = asc.jax.ffi_op(softmax_rows)        # out: allocated, returned
    y = jax.jit(softmax)(x)

Each call is an XLA custom call ("asc_launch", CPU) whose handler is C
(_xla_ffi.c, built against the XLA FFI header jaxlib ships) calling
ascLaunchKernelSync on the XLA thread that runs it.  Inputs and results
are XLA's buffers: no copies.  Differentiate with jax.custom_vjp around
the op; vmap follows vmap_method (jax.ffi.ffi_call's): "sequential", the
default, runs the kernel once per batch element, always right;
"expand_dims" or "broadcast_all" pass the batch as a leading dimension,
right only for kernels that treat leading dimensions as a batch.
"""
import ctypes
import os
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _asc
from ._plugin import Signature, build_shared

TARGET = "asc_launch"

_lock = threading.Lock()
_registered = None


def handler_library():
    """Builds (once, cached on disk) and registers the XLA FFI handler;
    returns the path of its shared object."""
    global _registered
    with _lock:
        if _registered is None:
            here = os.path.dirname(os.path.abspath(__file__))
            with open(os.path.join(here, "_xla_ffi.c")) as f:
                source = f.read()
            path = build_shared("asc_xla_ffi", source, [jax.ffi.include_dir()],
                                extra_key=jax.__version__)
            lib = ctypes.CDLL(path)
            jax.ffi.register_ffi_target(
                TARGET, jax.ffi.pycapsule(lib.asc_xla_launch), platform="cpu")
            _registered = (path, lib)
        return _registered[0]


def _np_dtype(name):
    if name == "bfloat16":
        return jnp.bfloat16
    return np.dtype("bool" if name == "bool" else name)


class FfiOp:
    """A libasc kernel as a JAX function: call it with the kernel's inputs
    (every parameter but the outputs, in order); it returns the outputs
    (one array, or a tuple)."""

    def __init__(self, kernel, outputs=None, like=None, out_shapes=None,
                 blocks=1, vmap_method="sequential", hand_off=False):
        self.sig = Signature(kernel, outputs=outputs, like=like)
        self.kernel = kernel
        self.out_shapes = out_shapes
        self.blocks = int(blocks)
        self.vmap_method = vmap_method
        self.flags = 1 if hand_off else 0
        handler_library()
        self.handle = kernel._handle
        ins = [p.name for p in self.sig.inputs]
        self.pmap = np.array([ins.index(p.name) if p.name in ins
                              else -1 - self.sig.outputs.index(p.name)
                              for p in self.sig.params], dtype=np.int64)
        self.__name__ = getattr(kernel, "__name__", "asc_kernel")

    def result_shapes(self, *args):
        if self.out_shapes is not None:
            r = self.out_shapes(*args)
            return list(r) if isinstance(r, (list, tuple)) else [r]
        out = []
        for n in self.sig.outputs:
            src = args[self.sig.input_index(self.sig.like[n])]
            p = self.sig.param(n)
            dt = _np_dtype(p.dtype) if p.dtype else src.dtype
            out.append(jax.ShapeDtypeStruct(src.shape, dt))
        return out

    def __call__(self, *args):
        if len(args) != len(self.sig.inputs):
            raise TypeError(
                f"{self.__name__} takes {len(self.sig.inputs)} inputs "
                f"({', '.join(p.name for p in self.sig.inputs)}), "
                f"got {len(args)}")
        ops = []
        for p, a in zip(self.sig.inputs, args):
            if p.tensor:
                ops.append(jnp.asarray(a))
            else:
                # scalars are 0-d operands (traced values allowed), of the
                # annotated dtype when there is one
                ops.append(jnp.asarray(a, _np_dtype(p.dtype)) if p.dtype
                           else jnp.asarray(a))
        shapes = self.result_shapes(*ops)
        call = jax.ffi.ffi_call(TARGET, shapes, vmap_method=self.vmap_method)
        res = call(*ops, kernel=np.uint64(self.handle),
                   blocks=np.int64(self.blocks), flags=np.int64(self.flags),
                   pmap=self.pmap)
        return res[0] if len(res) == 1 else tuple(res)


def ffi_op(kernel, *, outputs=None, like=None, out_shapes=None, blocks=1,
           vmap_method="sequential", hand_off=False):
    """kernel (an @asc.kernel, or a kernel of asc.compile / asc.load_module)
    as a JAX function usable under jax.jit, jax.vmap and inside
    jax.custom_vjp.

    outputs: the parameters the call allocates and returns (default: the
    tensor parameters the kernel writes); every other parameter is an
    input, in the kernel's order.  A kernel may not write its inputs (JAX
    arrays are immutable).  Each output has the shape of the input
    like[name] (default: the first tensor input) and the dtype the kernel
    annotates, else that input's; out_shapes(*inputs) -> ShapeDtypeStructs
    overrides the rule.  blocks: blockDim of each launch.  hand_off: the
    XLA thread sleeps while libasc's workers run the kernel, instead of
    taking part (ascLaunchHandOff)."""
    return FfiOp(kernel, outputs=outputs, like=like, out_shapes=out_shapes,
                 blocks=blocks, vmap_method=vmap_method, hand_off=hand_off)
