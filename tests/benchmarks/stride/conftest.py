"""Fixtures for the STRIDE tests: the release extracts (tests that need them skip when they are
absent); each test's private media cache is ../conftest.py's. Puts this folder on sys.path for
`stride_support`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from stride_support import samples_dir  # noqa: E402


@pytest.fixture
def samples() -> Path:
    folder = samples_dir()
    if folder is None:
        pytest.skip("STRIDE release extracts (shared/samples/stride) are not available")
    return folder
