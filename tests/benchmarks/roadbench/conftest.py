"""Puts this folder on sys.path so that tests share `roadbench_reference` (the slow, plain
re-statement of the release's metric semantics used as the oracle) and `roadbench_shared`."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
