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


def pytest_configure(config):
    # Import asc with pytest's output capture suspended: when libasc needs
    # glibc's static-TLS tunable, the import re-executes the interpreter
    # (asc/_loader.py), and the new process must write to the real stdout.
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.suspend_global_capture(in_=True)
    try:
        import asc  # noqa: F401
    finally:
        if capman is not None:
            capman.resume_global_capture()


@pytest.fixture
def root():
    return ROOT
