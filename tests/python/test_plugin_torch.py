"""asc.torch: libasc kernels as PyTorch operators, in eager mode, under
torch.compile(fullgraph=True), with autograd and torch.vmap; kernel
errors as Python exceptions naming file:line; non-contiguous inputs;
launches from several threads at once.

Skipped without torch, except in scripts/test.sh's plugin stage
(plugin_support.py)."""
import threading

import numpy as np
import pytest

from plugin_support import require

torch = require("torch")

import asc  # noqa: E402
import asc.torch  # noqa: E402

import plugin_kernels as K  # noqa: E402

softmax = asc.torch.custom_op("asc_test::softmax", K.softmax_rows, vmap="rows")
softmax_bwd = asc.torch.custom_op("asc_test::softmax_bwd", K.softmax_rows_bwd)
softmax.register_autograd(lambda ctx, gy: softmax_bwd(ctx.outputs[0], gy))
scale = asc.torch.custom_op("asc_test::scale", K.scale)
scale.register_autograd(lambda ctx, g: (scale(g, ctx.inputs[1]), None))
add_ = asc.torch.custom_op("asc_test::add_", K.add_inplace, mutates=("x",))
check = asc.torch.custom_op("asc_test::check", K.check_positive)

# aot_eager traces through the fake functions and autograd like inductor,
# without compiling C++ (minutes on a 2-core machine)
BACKEND = "aot_eager"


def test_schema_and_eager():
    assert softmax.schema == "(Tensor x) -> Tensor"
    assert scale.schema == "(Tensor x, float alpha) -> Tensor"
    assert add_.schema == "(Tensor(a0!) x, Tensor y) -> ()"
    x = torch.randn(8, 33)
    torch.testing.assert_close(softmax(x), torch.softmax(x, -1))
    torch.testing.assert_close(torch.ops.asc_test.softmax(x),
                               torch.softmax(x, -1))
    v = torch.arange(10, dtype=torch.float32)
    torch.testing.assert_close(scale(v, 2.5), v * 2.5)
    x64 = torch.randn(3, 5, dtype=torch.float64)
    torch.testing.assert_close(softmax(x64), torch.softmax(x64, -1))


def test_mutating_operator():
    x, y = torch.zeros(6), torch.arange(6.0)
    before = x._version
    assert add_(x, y) is None
    torch.testing.assert_close(x, y)
    assert x._version > before


def test_compiled_fullgraph():
    def f(x, v):
        return softmax(x * 2) + 1, scale(v, 3.0).sum()

    g = torch.compile(f, fullgraph=True, backend=BACKEND)
    x, v = torch.randn(4, 7), torch.randn(9)
    a, b = g(x, v)
    torch.testing.assert_close(a, torch.softmax(x * 2, -1) + 1)
    torch.testing.assert_close(b, (v * 3).sum())
    # a new shape recompiles through the fake function, still one graph
    a, _ = g(torch.zeros(2, 3), v)
    torch.testing.assert_close(a, torch.full((2, 3), 1 / 3) + 1)


def test_autograd():
    x = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, 6, dtype=torch.float64)
    (softmax(x) * w).sum().backward()
    ref = x.detach().clone().requires_grad_()
    (torch.softmax(ref, -1) * w).sum().backward()
    torch.testing.assert_close(x.grad, ref.grad)
    assert torch.autograd.gradcheck(softmax, (x.detach().requires_grad_(),))
    v = torch.randn(7, requires_grad=True)
    scale(v, 4.0).sum().backward()
    torch.testing.assert_close(v.grad, torch.full((7,), 4.0))
    # and compiled
    x2 = x.detach().clone().requires_grad_()
    g = torch.compile(lambda t: (softmax(t) * w).sum(), fullgraph=True,
                      backend=BACKEND)
    g(x2).backward()
    torch.testing.assert_close(x2.grad, ref.grad)


def test_vmap_rules():
    xb = torch.randn(3, 4, 5)
    torch.testing.assert_close(torch.vmap(softmax)(xb), torch.softmax(xb, -1))
    torch.testing.assert_close(torch.vmap(softmax, in_dims=1)(xb),
                               torch.softmax(xb.movedim(1, 0), -1))
    vb = torch.randn(4, 6)
    torch.testing.assert_close(torch.vmap(scale, in_dims=(0, None))(vb, 2.0),
                               vb * 2)


def test_non_contiguous_inputs():
    base = torch.randn(9, 12)
    for x in (base.t(), base[::2, 1::3], base[:, :5]):
        assert not x.is_contiguous()
        torch.testing.assert_close(softmax(x), torch.softmax(x, -1))
    v = torch.arange(20.0)[::4]
    torch.testing.assert_close(scale(v, 2.0), v * 2)


def test_kernel_error_is_python_exception():
    line = K.raise_line()
    where = rf"plugin_kernels\.py:{line}"
    good = torch.arange(4.0)
    torch.testing.assert_close(check(good), good)
    with pytest.raises(ValueError, match=where + r".*negative input"):
        check(torch.tensor([1.0, -1.0]))
    g = torch.compile(lambda t: check(t) * 2, fullgraph=True, backend=BACKEND)
    torch.testing.assert_close(g(good), good * 2)
    with pytest.raises(ValueError, match=where):
        g(torch.tensor([-3.0]))
    # the operator works again after an error
    torch.testing.assert_close(check(good), good)


def test_written_parameters_must_be_declared():
    with pytest.raises(ValueError, match="writes parameter 'x'"):
        asc.torch.custom_op("asc_test::bad", K.writes_input, outputs=())
    op = asc.torch.custom_op("asc_test::writes_y", K.writes_input,
                             outputs=(), mutates=("x",))
    x, y = torch.zeros(2), torch.ones(2)
    op(x, y)
    assert x[0] == 1


def test_launches_from_many_threads():
    """Threads calling operators at once: each call runs on its thread's
    own stream, with that thread taking part."""
    xs = [torch.randn(64, 50) for _ in range(8)]
    refs = [torch.softmax(x, -1) for x in xs]
    errors = []

    def work(k):
        try:
            for _ in range(20):
                torch.testing.assert_close(softmax(xs[k]), refs[k])
        except Exception as e:     # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_torchscript_fork_runs_on_torch_threads():
    """torch.jit.fork runs the operator on torch's inter-op thread pool."""
    @torch.jit.script
    def forked(x, y):
        a = torch.jit.fork(torch.ops.asc_test.softmax, x)
        b = torch.jit.fork(torch.ops.asc_test.softmax, y)
        return torch.jit.wait(a), torch.jit.wait(b)

    seen = []
    launch = softmax.launch

    def recording(*args):
        seen.append(threading.get_ident())
        return launch(*args)

    x, y = torch.randn(16, 9), torch.randn(3, 30)
    softmax.launch = recording
    try:
        a, b = forked(x, y)
    finally:
        softmax.launch = launch
    torch.testing.assert_close(a, torch.softmax(x, -1))
    torch.testing.assert_close(b, torch.softmax(y, -1))
    assert len(seen) == 2
    assert any(t != threading.get_ident() for t in seen), seen


def test_bfloat16_through_dlpack():
    """numpy has no bfloat16 view: such tensors go through DLPack."""
    x = torch.arange(8, dtype=torch.bfloat16)[::2]
    y = scale(x, 2.0)
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y, x * 2)
