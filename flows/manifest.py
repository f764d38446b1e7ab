"""The run manifest: everything needed to audit or reproduce a run, as one JSON document."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import roadeval


def code_version() -> str:
    """The package version, plus the git commit when running from a checkout."""
    version = roadeval.__version__
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=Path(roadeval.__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    return f"{version}+{commit}" if commit else version


def redact_model(spec_dump: dict[str, Any]) -> dict[str, Any]:
    """Specs carry only the name of a key's variable, never a key; keep it that way in artifacts."""
    return {k: v for k, v in spec_dump.items() if "key" not in k or k == "api_key_env"}
