"""The framework a plugin test needs: skipped where it is not installed,
except in scripts/test.sh's plugin stage (ASC_REQUIRE_PLUGINS=1), where
a missing package fails the tests instead of skipping them."""
import importlib
import os

import pytest


def require(name):
    if os.environ.get("ASC_REQUIRE_PLUGINS") == "1":
        return importlib.import_module(name)
    return pytest.importorskip(name)
