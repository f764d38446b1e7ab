"""Where the reference data is: ../shared beside the checkout, or ROADEVAL_SHARED. Tests that read
it skip cleanly when it is absent (a clean checkout carries none of it)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def shared_dir() -> Path | None:
    """The reference data beside the checkout (../shared), or ROADEVAL_SHARED; None when absent."""
    configured = os.environ.get("ROADEVAL_SHARED")
    path = Path(configured) if configured else REPO.parent / "shared"
    return path if (path / "samples").is_dir() else None
