"""Fixtures shared by the suites' tests: a media cache of each test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

# The suites whose every test extracts media into a cache of its own; the other suites' tests use
# the session's (tests/conftest.py).
PRIVATE_MEDIA_CACHE = frozenset({"stride", "tbbench", "v2xqa"})


@pytest.fixture
def media_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ROADEVAL_MEDIA_CACHE for this test alone: a folder under its tmp_path."""
    cache = tmp_path / "media-cache"
    monkeypatch.setenv("ROADEVAL_MEDIA_CACHE", str(cache))
    return cache


@pytest.fixture(autouse=True)
def _private_media_cache(request: pytest.FixtureRequest) -> None:
    """Every test of a suite in PRIVATE_MEDIA_CACHE gets `media_cache`, asked for or not."""
    suite = Path(request.path).resolve().relative_to(HERE).parts[0]
    if suite in PRIVATE_MEDIA_CACHE:
        request.getfixturevalue("media_cache")
