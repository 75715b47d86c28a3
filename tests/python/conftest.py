"""pytest setup: import the in-tree asc package (built in place by
scripts/build-python.sh) with a private kernel cache."""
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings" / "python"))
os.environ.setdefault("ASC_CACHE_DIR", tempfile.mkdtemp(prefix="asc-pytest-cache-"))

import pytest  # noqa: E402


@pytest.fixture
def root():
    return ROOT


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: builds a wheel or a venv (still run in CI)")
    config.addinivalue_line(
        "markers", "serial: times a signal's delivery or runs MPI ranks on every "
        "core; scripts/test.sh runs these alone, after the rest ran on all cores")
