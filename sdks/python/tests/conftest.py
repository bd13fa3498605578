import os
import sys
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


@pytest.fixture(scope="session")
def env():
    """The daemon the suite runs against (integration/sdk_py_test.go sets these)."""
    for k in ("SBX_HOST", "SBX_TOKEN", "SBX_TEST_PYTHON_IMAGE"):
        assert os.environ.get(k), f"{k} must be set: run it through integration/sdk_py_test.go"
    return os.environ


def until(what, cond, timeout=20.0):
    """until polls cond until it is true, failing after timeout seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail("timed out waiting for " + what)
        time.sleep(0.05)
