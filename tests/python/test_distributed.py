"""asc.distributed under mpirun (2 and 4 ranks): tests/python/mpi/dist_ops.py
and examples/python/mpi_sgd.py.  Needs Open MPI's mpirun, mpi4py and
libasc_mpi (scripts/setup.sh installs the first two; the build makes the
third when MPI is found, and scripts/build-python.sh copies it into the
package)."""
import os
import shutil
import subprocess
import sys

import pytest

MPIRUN = shutil.which("mpirun")


def run(root, np_, script, timeout=120):
    env = dict(os.environ)
    env.update({
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
        "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl": "self,vader",
        "ASC_SPIN_US": "0",
        "PYTHONPATH": str(root / "bindings" / "python") + os.pathsep
        + env.get("PYTHONPATH", ""),
        "GLIBC_TUNABLES": "glibc.rtld.optional_static_tls=65536",
    })
    r = subprocess.run([MPIRUN, "--oversubscribe", "-np", str(np_), sys.executable,
                        str(script)], env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


needs_mpi = pytest.mark.skipif(MPIRUN is None, reason="no mpirun (MPI not installed)")
# up to 4 ranks polling on the cores, one of them sent SIGINT (conftest.py)
pytestmark = pytest.mark.serial


@needs_mpi
@pytest.mark.parametrize("np_", [2, 4])
def test_dist_ops(root, np_):
    out = run(root, np_, root / "tests" / "python" / "mpi" / "dist_ops.py")
    assert f"dist_ops: {np_} ranks ok" in out


@needs_mpi
@pytest.mark.parametrize("np_", [2, 4])
def test_mpi_sgd_example(root, np_):
    out = run(root, np_, root / "examples" / "python" / "mpi_sgd.py")
    assert f"mpi_sgd: {np_} ranks" in out


@needs_mpi
def test_ctrl_c_reaches_a_collective(root):
    out = run(root, 2, root / "tests" / "python" / "mpi" / "cancel_dist.py")
    assert "rank 0: KeyboardInterrupt after" in out, out
    assert "cancel_dist: rank 0 ok" in out and "cancel_dist: rank 1 ok" in out, out
