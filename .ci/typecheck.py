"""Type-check roadeval as it installs: mypy cannot follow setuptools' package-dir map, so the
check runs over a tree of links laid out as the built wheel is (roadeval/<folder>)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    with tempfile.TemporaryDirectory(prefix="roadeval-typecheck-") as tree:
        for package, folder in sorted(package_dir.items(), key=lambda kv: kv[0].count(".")):
            target = Path(tree, *package.split("."))
            if package == "roadeval":
                target.mkdir(parents=True)
                for source in (ROOT / folder).glob("*.py"):
                    (target / source.name).symlink_to(source)
            else:
                target.symlink_to(ROOT / folder, target_is_directory=True)
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
        return subprocess.run([*command, "-p", "roadeval"], cwd=tree, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
