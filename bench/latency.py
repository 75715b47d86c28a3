"""The per-stage tables of docs/latency.md: `python -m asc profile-compile`
(cold, then a cache hit in a new process) of the suite's softmax kernel and
of the 30-line array kernel (bench/kernels/latency_array.py).

    PYTHONPATH=bindings/python python3 bench/latency.py

Needs the Python package built (scripts/build-python.sh build).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from suite import write_softmax_kernel  # noqa: E402

CASES = (
    ("softmax", None,
     "np.ones((4, 8), np.float32), np.empty((4, 8), np.float32)"),
    ("latency_array", os.path.join(HERE, "kernels", "latency_array.py"),
     "np.random.default_rng(1).random((64, 32)), np.ones(32), np.zeros(32), "
     "np.empty((64, 8))"),
)


def main():
    with tempfile.TemporaryDirectory(prefix="asc-latency-") as tmp:
        for name, path, args in CASES:
            if path is None:
                path = os.path.join(tmp, "softmax_kernel.py")
                write_softmax_kernel(path)
            subprocess.run([sys.executable, "-m", "asc", "profile-compile", path,
                            "--args", args, "--hit"], check=True)
            print()


if __name__ == "__main__":
    main()
