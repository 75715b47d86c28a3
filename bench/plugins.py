"""Framework plugins against the frameworks' own operators, on CPU
(docs/plugins.md).  Rows, each a ratio measured in this run:

  overhead   a libasc operator on a 1-element tensor against the
             framework's own add (eager torch; jitted JAX): per-call cost
  softmax,   a fused libasc softmax / layer norm against torch.softmax,
  layernorm  torch.nn.functional.layer_norm, jax.nn.softmax, at sizes
             where the framework takes >= 1 ms
  mixed      torch.softmax (torch's threads on every core) then the libasc
             softmax, in a loop, against the sum of the two alone: the cost
             of the two pools sharing the cores
  fork       the libasc softmax launched on row slices from torch's
             inter-op threads (torch.jit.fork, one slice per core), and from
             its intra-op threads (at::parallel_for in the C++ extension of
             examples/plugins/torch), against one launch over all rows from
             one thread; the calling threads joining the launch
             (asc.this_thread, ascLaunchJoin) and handing it off
             (asc.this_thread.hand_off, ascLaunchHandOff)

    python3 bench/plugins.py [--quick]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import asc  # noqa: E402

import plugin_kernels as K  # noqa: E402


def turns(fns, reps, inner):
    """Median seconds per call of each of fns, their runs of inner calls
    taken in turns, so that a noisy neighbour slows them alike."""
    times = [[] for _ in fns]
    for f in fns:
        f()
    for _ in range(reps):
        for k, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner):
                f()
            times[k].append((time.perf_counter() - t0) / inner)
    return [statistics.median(t) for t in times]


def pair(fa, fb, reps, inner):
    return turns([fa, fb], reps, inner)


def row(name, t_asc, t_ref, ref_name, goal):
    ratio = t_asc / t_ref
    print(f"{name:34s} libasc {t_asc * 1e6:10.1f} us   {ref_name:24s} "
          f"{t_ref * 1e6:10.1f} us   ratio {ratio:5.2f}  ({goal})")
    return ratio


def cpp_extension():
    """The C++ extension of examples/plugins/torch (built there, or now)."""
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "plugins", "torch"))
    import run as example
    build = os.environ.get("BUILD_DIR", os.path.join(os.path.dirname(HERE), "build"))
    return example.build_extension(os.path.abspath(build))


def torch_rows(q):
    import torch
    import asc.torch
    reps, inner = (3, 20) if q else (9, 2000)
    add = asc.torch.custom_op("asc_bench::add1", K.add1)
    x, y = torch.ones(1), torch.ones(1)
    out = torch.empty(1)
    launch = K.add1[1, asc.this_thread]
    row("torch eager 1-element op (Python)",
        *pair(lambda: add(x, y), lambda: torch.add(x, y), reps, inner),
        "torch.add", "goal <= 2")
    row("  the kernel called directly",
        *pair(lambda: launch(x.numpy(), y.numpy(), out.numpy()),
              lambda: torch.add(x, y), reps, inner),
        "torch.add", "no torch dispatch")
    cpp = torch.ops.asc_example
    cpp_extension()
    x11 = torch.ones(1, 1)
    row("torch eager 1-element op (C++ ext)",
        *pair(lambda: cpp.softmax_text(x11), lambda: torch.add(x, y), reps, inner),
        "torch.add", "goal <= 2")

    n, m = (64, 128) if q else (4096, 1024)
    reps, inner = (3, 2) if q else (9, 10)
    xs = torch.randn(n, m)
    sm = asc.torch.custom_op("asc_bench::softmax", K.softmax_rows)
    torch.testing.assert_close(sm(xs), torch.softmax(xs, -1))
    t_sm, t_ref = pair(lambda: sm(xs), lambda: torch.softmax(xs, -1), reps, inner)
    row(f"torch softmax {n}x{m}", t_sm, t_ref, "torch.softmax", "goal <= 1")
    w, b = torch.randn(m), torch.randn(m)
    ln = asc.torch.custom_op("asc_bench::layer_norm", K.layer_norm)
    F = torch.nn.functional
    torch.testing.assert_close(ln(xs, w, b, 1e-5), F.layer_norm(xs, (m,), w, b, 1e-5),
                               atol=1e-4, rtol=1e-4)
    row(f"torch layer_norm {n}x{m}",
        *pair(lambda: ln(xs, w, b, 1e-5), lambda: F.layer_norm(xs, (m,), w, b, 1e-5),
              reps, inner), "F.layer_norm", "goal <= 1")

    def mixed():
        sm(torch.softmax(xs, -1))

    t_mixed, t_ref, t_sm = turns([mixed, lambda: torch.softmax(xs, -1),
                                  lambda: sm(xs)], reps, inner)
    row(f"torch+asc softmax in turns {n}x{m}", t_mixed, t_ref + t_sm,
        "sum of each alone", "goal <= 1.10")

    cores = asc.device_properties().cores
    smh = asc.torch.custom_op("asc_bench::softmax_ho", K.softmax_rows, hand_off=True)
    step = (n + cores - 1) // cores
    slices = [xs[i:i + step] for i in range(0, n, step)]

    @torch.jit.script
    def forked(parts: list[torch.Tensor]) -> list[torch.Tensor]:
        futs = [torch.jit.fork(torch.ops.asc_bench.softmax, p) for p in parts]
        return [torch.jit.wait(f) for f in futs]

    @torch.jit.script
    def forked_ho(parts: list[torch.Tensor]) -> list[torch.Tensor]:
        futs = [torch.jit.fork(torch.ops.asc_bench.softmax_ho, p) for p in parts]
        return [torch.jit.wait(f) for f in futs]

    torch.testing.assert_close(torch.cat(forked(slices)), torch.softmax(xs, -1))
    row(f"{len(slices)} torch.jit.fork threads, join",
        *pair(lambda: forked(slices), lambda: sm(xs), reps, inner),
        "one launch, all rows", "goal <= 1.10")
    row(f"{len(slices)} torch.jit.fork threads, hand-off",
        *pair(lambda: forked_ho(slices), lambda: smh(xs), reps, inner),
        "one launch, hand-off", "the other way")
    torch.testing.assert_close(cpp.softmax_parallel(xs), torch.softmax(xs, -1))
    t_join, t_ho, t_one = turns([lambda: cpp.softmax_parallel(xs),
                                 lambda: cpp.softmax_parallel(xs, hand_off=True),
                                 lambda: cpp.softmax_text(xs)], reps, inner)
    row("C++ at::parallel_for launches, join", t_join, t_one,
        "one launch (C++)", "goal <= 1.10")
    row("C++ at::parallel_for launches, hand-off", t_ho, t_one,
        "one launch (C++)", "the other way")


def jax_rows(q):
    import jax
    import jax.numpy as jnp
    import asc.jax
    reps, inner = (3, 20) if q else (9, 2000)
    add = jax.jit(asc.jax.ffi_op(K.add1))
    ref = jax.jit(lambda a, b: a + b)
    x, y = jnp.ones(1), jnp.ones(1)
    row("jax jit 1-element op",
        *pair(lambda: add(x, y).block_until_ready(),
              lambda: ref(x, y).block_until_ready(), reps, inner),
        "jit(a + b)", "goal <= 2")
    n, m = (64, 128) if q else (4096, 1024)
    reps, inner = (3, 2) if q else (9, 10)
    xs = jax.random.normal(jax.random.PRNGKey(0), (n, m))
    sm = jax.jit(asc.jax.ffi_op(K.softmax_rows))
    ref_sm = jax.jit(lambda a: jax.nn.softmax(a, axis=-1))
    err = float(jnp.max(jnp.abs(sm(xs) - ref_sm(xs))))
    assert err < 1e-5, err
    row(f"jax softmax {n}x{m}",
        *pair(lambda: sm(xs).block_until_ready(),
              lambda: ref_sm(xs).block_until_ready(), reps, inner),
        "jit(jax.nn.softmax)", "goal <= 1")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes: checks only")
    a = ap.parse_args()
    import warnings
    warnings.filterwarnings("ignore", category=FutureWarning)  # torch.jit.script
    print("framework plugins (ratio: libasc time / reference time; below 1: libasc faster)")
    try:
        import torch
        print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
        torch_rows(a.quick)
    except ImportError:
        print("torch not installed (scripts/setup.sh --plugins): no torch rows")
    try:
        import jax
        print(f"jax {jax.__version__}")
        jax_rows(a.quick)
    except ImportError:
        print("jax not installed (scripts/setup.sh --plugins): no jax rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
