"""A distribution installed by a test: modules in a folder, and a `*.dist-info` folder beside them
(METADATA, entry_points.txt) that `importlib.metadata` finds once the folder is on sys.path (in
this process, or through PYTHONPATH in a child) - as pip would install a plugin, without pip."""

from __future__ import annotations

import textwrap
from pathlib import Path


def install_plugin(
    root: Path,
    dist: str,
    modules: dict[str, str],
    entry_points: dict[str, dict[str, str]],
    version: str = "0.1",
) -> Path:
    """Write `modules` (module name -> source) and the dist-info of distribution `dist` declaring
    `entry_points` (group -> name -> value) under `root`; return `root`, the folder to put on
    sys.path."""
    root.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    sections = [
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items())
        for group, names in entry_points.items()
    ]
    (info / "entry_points.txt").write_text("\n".join(sections))
    return root
