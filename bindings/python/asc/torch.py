"""libasc kernels as PyTorch operators (docs/plugins.md).

    import asc, asc.torch, torch

    @asc.kernel
    def softmax_rows(x, out): ...

    softmax = asc.torch.custom_op("mylib::softmax", softmax_rows)
    y = softmax(x)                         # torch.ops.mylib.softmax(x)
    y = torch.compile(f, fullgraph=True)(x)

The operator is registered with torch.library.custom_op, so eager mode,
torch.compile (no graph break: the fake function gives the outputs'
shapes), autograd (register_autograd) and torch.vmap (a batching rule)
treat it as one of theirs.  Tensors reach the kernel as numpy views of
their storage (DLPack where numpy has none, as for bfloat16): no copies,
strides kept.  Each call runs the kernel on the calling thread's
own stream with that thread taking part (asc.this_thread), so torch's
threads can call operators side by side.
"""
import torch

import asc

from ._plugin import Signature

_SCALAR_SCHEMA = {"bool": "bool", "float16": "float", "bfloat16": "float",
                  "float32": "float", "float64": "float"}
_TORCH_DTYPE = {"bool": torch.bool, "int8": torch.int8, "int16": torch.int16,
                "int32": torch.int32, "int64": torch.int64,
                "uint8": torch.uint8, "float16": torch.float16,
                "bfloat16": torch.bfloat16, "float32": torch.float32,
                "float64": torch.float64, "complex64": torch.complex64,
                "complex128": torch.complex128}


def _view(a):
    """What the kernel gets for an operator argument: a CPU tensor as a
    numpy view of its storage (the buffer protocol is the cheapest way in:
    a few microseconds less per tensor than __dlpack__), the tensor itself
    (DLPack) where numpy has no such view (bfloat16, conjugate bits)."""
    if not isinstance(a, torch.Tensor):
        return a
    a = a.detach()
    if a.device.type == "cpu" and a.dtype != torch.bfloat16:
        try:
            return a.numpy()
        except (RuntimeError, TypeError):
            pass
    return a


def _scalar_type(p):
    if p.dtype is None:
        return "Scalar"
    return _SCALAR_SCHEMA.get(p.dtype, "int")


class Operator:
    """A libasc kernel registered as a torch operator.  Call it with the
    kernel's inputs (every parameter but the outputs, in order); it
    returns the outputs.  .op is the torch.ops overload packet."""

    def __init__(self, name, kernel, outputs=None, mutates=(), like=None,
                 fake=None, blocks=1, vmap="loop", hand_off=False):
        self.sig = sig = Signature(kernel, outputs=outputs, mutates=mutates,
                                   like=like)
        self.kernel = kernel
        self.name = name
        self.blocks = int(blocks)
        self.launch = kernel[self.blocks, asc.this_thread.hand_off
                             if hand_off else asc.this_thread]
        self._fake = fake
        args = []
        for i, p in enumerate(sig.inputs):
            if p.tensor:
                alias = f"(a{i}!)" if p.name in sig.mutates else ""
                args.append(f"Tensor{alias} {p.name}")
            else:
                args.append(f"{_scalar_type(p)} {p.name}")
        outs = ", ".join("Tensor" for _ in sig.outputs)
        ret = "()" if not sig.outputs else (
            "Tensor" if len(sig.outputs) == 1 else f"({outs})")
        self.schema = f"({', '.join(args)}) -> {ret}"
        self._def = torch.library.custom_op(
            name, self._impl, mutates_args=tuple(sig.mutates),
            schema=self.schema)
        self._def.register_fake(self._alloc)
        ns, _, opname = name.partition("::")
        self.op = getattr(getattr(torch.ops, ns), opname)
        # the default rule needs a functional operator: one that mutates
        # gets none unless given
        if vmap is not None and not (sig.mutates and vmap == "loop"):
            self.register_vmap(vmap)

    # -- outputs -------------------------------------------------------
    def _alloc(self, *inputs):
        """Empty outputs for these inputs (real or fake tensors)."""
        if self._fake is not None:
            return self._fake(*inputs)
        out = []
        for n in self.sig.outputs:
            src = inputs[self.sig.input_index(self.sig.like[n])]
            p = self.sig.param(n)
            dt = _TORCH_DTYPE[p.dtype] if p.dtype else src.dtype
            out.append(torch.empty(src.shape, dtype=dt, device=src.device))
        if not out:
            return None
        return out[0] if len(out) == 1 else tuple(out)

    def _impl(self, *inputs):
        outs = self._alloc(*inputs)
        seq = () if outs is None else (
            outs if isinstance(outs, tuple) else (outs,))
        self.launch(*[_view(a) for a in self.sig.kernel_args(inputs, seq)])
        return outs

    def __call__(self, *inputs):
        return self.op(*inputs)

    # -- autograd ------------------------------------------------------
    def register_autograd(self, backward, setup_context=None):
        """backward(ctx, *grads) -> one gradient per input (None for
        scalars and inputs without one).  Without setup_context, ctx.inputs
        and ctx.outputs hold the call's inputs and outputs (tensors saved
        with save_for_backward)."""
        if setup_context is not None:
            self._def.register_autograd(backward, setup_context=setup_context)
            return

        def setup(ctx, inputs, output):
            outs = output if isinstance(output, tuple) else (
                () if output is None else (output,))
            idx = [i for i, a in enumerate(inputs) if isinstance(a, torch.Tensor)]
            ctx.save_for_backward(*[inputs[i] for i in idx], *outs)
            ctx._asc = (list(inputs), idx, len(outs))

        def bwd(ctx, *grads):
            inputs, idx, _ = ctx._asc
            saved = ctx.saved_tensors
            for k, i in enumerate(idx):
                inputs[i] = saved[k]
            ctx.inputs = tuple(inputs)
            ctx.outputs = tuple(saved[len(idx):])
            return backward(ctx, *grads)

        self._def.register_autograd(bwd, setup_context=setup)

    # -- vmap ----------------------------------------------------------
    def register_vmap(self, rule):
        """rule: "loop" (the default: the operator once per batch element,
        right for every kernel), "rows" (the batch folded into the first
        dimension of each batched tensor: right when the kernel treats
        the first dimension of those tensors as independent rows, as a
        row softmax or a layer norm does), or a function as
        torch.library.register_vmap takes."""
        if callable(rule):
            self._def.register_vmap(rule)
            return
        if rule not in ("loop", "rows"):
            raise ValueError(f"vmap must be 'loop', 'rows', a function or None, got {rule!r}")
        if self.sig.mutates:
            raise ValueError("the derived vmap rules need an operator without mutated inputs")
        self._def.register_vmap(self._vmap_loop if rule == "loop" else self._vmap_rows)

    def _vmap_loop(self, info, in_dims, *args):
        n = info.batch_size
        results = []
        for b in range(n):
            one = [a.select(d, b) if d is not None else a
                   for a, d in zip(args, in_dims)]
            r = self.op(*one)
            results.append(r if isinstance(r, tuple) else (r,))
        outs = tuple(torch.stack(list(col)) for col in zip(*results))
        return (outs[0], 0) if len(outs) == 1 else (outs, (0,) * len(outs))

    def _vmap_rows(self, info, in_dims, *args):
        n = info.batch_size
        flat, rows = [], None
        for a, d in zip(args, in_dims):
            if d is None:
                flat.append(a)
                continue
            a = a.movedim(d, 0)
            rows = a.shape[1] if a.dim() > 1 else 1
            flat.append(a.reshape(n * rows, *a.shape[2:]) if a.dim() > 1
                        else a.reshape(n))
        r = self.op(*flat)
        outs = r if isinstance(r, tuple) else (r,)
        outs = tuple(o.reshape(n, rows, *o.shape[1:]) if rows is not None
                     and o.dim() >= 1 and o.shape[0] == n * rows else o
                     for o in outs)
        return (outs[0], 0) if len(outs) == 1 else (outs, (0,) * len(outs))


def custom_op(name, kernel, *, outputs=None, mutates=(), like=None, fake=None,
              blocks=1, vmap="loop", hand_off=False):
    """Registers kernel (an @asc.kernel, or a kernel of asc.compile /
    asc.load_module) as the torch operator `name` ("namespace::op") and
    returns it as an Operator.

    outputs: the parameters the operator allocates and returns (default:
    the tensor parameters the kernel writes, except those in mutates);
    mutates: inputs the kernel writes in place.  A kernel parameter that
    the kernel writes must be one or the other.  Each output is like the
    input like[name] (default: the first tensor input): its shape, and the
    dtype the kernel annotates or else that input's; fake(*inputs) ->
    empty outputs overrides the rule (it also allocates the real ones).
    blocks: blockDim of each launch.  vmap: the batching rule
    (Operator.register_vmap; an operator with mutated inputs gets none by
    default).  hand_off: the calling thread sleeps while
    libasc's workers run the kernel, instead of taking part."""
    return Operator(name, kernel, outputs=outputs, mutates=mutates, like=like,
                    fake=fake, blocks=blocks, vmap=vmap, hand_off=hand_off)
