"""Builds the C++ extension (torch.utils.cpp_extension) whose operators
call libasc's C API, compiles the kernel ahead of time with ascc, and
checks each operator against torch.softmax.

    python3 examples/plugins/torch/run.py [BUILD_DIR]   (default: build)
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
try:
    import asc
except ImportError:     # in the source tree: scripts/build-python.sh's build
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
    import asc

import torch  # noqa: E402
from torch.utils.cpp_extension import load  # noqa: E402


def build_extension(build):
    """Compiles the kernel with ascc and builds (or finds built) the
    extension, under BUILD/examples/plugins/torch; returns the module,
    loaded with both kernels."""
    out_dir = os.path.join(build, "examples", "plugins", "torch")
    os.makedirs(out_dir, exist_ok=True)
    kernels = os.path.join(os.path.dirname(HERE), "kernels.py")
    so = os.path.join(out_dir, "kernels.so")
    subprocess.run([os.path.join(build, "ascc"), "-o", so, kernels], check=True)
    libdir = os.path.dirname(asc.library_path())
    # -O2: torch.utils.cpp_extension.load passes no optimisation flag, and
    # the unoptimised operator spent more per call than the launch itself
    ext = load(name="asc_torch_example",
               sources=[os.path.join(HERE, "asc_torch_ext.cpp")],
               extra_cflags=["-O2"],
               extra_include_paths=[asc.include_dir()],
               extra_ldflags=[asc.library_path(), f"-Wl,-rpath,{libdir}"],
               build_directory=out_dir, verbose=False)
    ext.load(kernels, so)
    return ext


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    t0 = time.time()
    build_extension(build)
    print(f"extension ready in {time.time() - t0:.1f} s (built, or found built)")
    x = torch.randn(1000, 257)
    ref = torch.softmax(x, -1)
    ok = True
    ops = torch.ops.asc_example
    calls = (("softmax_text", ops.softmax_text), ("softmax_ascc", ops.softmax_ascc),
             ("softmax_parallel", ops.softmax_parallel),
             ("softmax_parallel(hand_off=True)",
              lambda t: ops.softmax_parallel(t, hand_off=True)))
    for name, op in calls:
        for arg, what in ((x, "contiguous"), (x.t().contiguous().t(), "transposed")):
            y = op(arg)
            err = (y - ref).abs().max().item()
            good = err < 1e-6
            ok &= good
            print(f"torch.ops.asc_example.{name} ({what}): max |y - torch.softmax| "
                  f"= {err:.1e} {'OK' if good else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
