"""The built wheel holds every module of the tree under one import path, roadeval.*, as the
running code and the type checker see it; a top-level folder is never a second import path."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("benchmarks", "tasks", "flows", "storage", "deployments")


def _source_modules() -> set[str]:
    """Every file the wheel must carry, as its path inside the wheel."""
    found = {f"roadeval/{p.name}" for p in (REPO / "roadeval").glob("*.py")}
    for folder in FOLDERS:
        for path in (REPO / folder).rglob("*"):
            if path.suffix in {".py", ".yaml"} and "__pycache__" not in path.parts:
                found.add(f"roadeval/{folder}/{path.relative_to(REPO / folder).as_posix()}")
    return found


def test_the_wheel_carries_every_module_under_roadeval(tmp_path: Path) -> None:
    # Built from a copy, so that the build's own folders never appear in the checkout.
    source = tmp_path / "src"
    shutil.copytree(
        REPO,
        source,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build"),
    )
    build = ["wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")]
    subprocess.run(
        [sys.executable, "-m", "pip", *build, str(source)],
        check=True,
        capture_output=True,
    )
    [wheel] = (tmp_path / "dist").glob("roadeval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert _source_modules() - names == set()
    assert "roadeval/flows/panel/bundled/demo.yaml" in names
    # Nothing outside the one namespace (no top-level benchmarks/, tests/, bench/).
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"roadeval"}


def test_a_folder_is_not_a_second_import_path() -> None:
    for folder in FOLDERS:
        result = subprocess.run(
            [sys.executable, "-c", f"import {folder}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode != 0
        assert f"import roadeval.{folder}, not {folder}" in result.stderr
