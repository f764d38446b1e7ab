"""How a reader follows a run through `flows/` (issue 39): the modules of `roadeval.flows` in the
order a small inline run first calls into them, from `evaluate_panel` to its summary.

A *stop* is a call into a flows module other than the one the path is in (calls within one
module are one stop); *files* are the distinct modules; a *return* is a stop at a module the path
had already left; a *climb* is a stop at a module on a higher floor than the one before, a floor
being a module's height in flows' own import graph (a module that imports no other flows module
is on floor 0; every import counts, lazy ones too). Each function counts at its first call only,
so that loops over shards do not repeat the path.

    .venv/bin/python bench/code_path.py [--show]   (inside ../shared/scripts/loopback-only)
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
import threading
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

import roadeval

FLOWS = "roadeval.flows"
ROOT = Path(roadeval.__file__).parent


def flows_modules() -> dict[str, Path]:
    """Every module of roadeval.flows by dotted name (the folder is a symlink in a checkout)."""
    found: dict[str, Path] = {}
    base = ROOT / "flows"
    for path in sorted(base.rglob("*.py")):
        parts = [FLOWS, *path.relative_to(base).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def flows_imports(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the flows modules it imports (anywhere in its text)."""
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets: set[str] = set()
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = name.split(".") if is_package else name.split(".")[:-1]
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    base = ".".join([*pkg, *([node.module] if node.module else [])])
                names = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in names:
                while target and target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """A module's height: 0 for a module importing no flows module, else one more than the
    highest it imports (a circle counts once: its modules share the floor)."""

    @cache
    def height(module: str, seen: frozenset[str] = frozenset()) -> int:
        below = [t for t in graph[module] if t not in seen]
        return 0 if not below else 1 + max(height(t, seen | {module}) for t in below)

    return {module: height(module) for module in graph}


def trace_run(workdir: Path) -> list[tuple[str, str]]:
    """(module, function) of every flows function at its first call, in any thread, while
    `evaluate_panel` runs the smallest demo-like panel inline."""
    entry = _entry_point()
    panel = _small_panel(workdir)
    seen: set[Any] = set()
    calls: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(FLOWS):
            return
        code = frame.f_code
        if code in seen or code.co_name.startswith("<"):
            return
        seen.add(code)
        calls.append((module, code.co_qualname))

    lock = threading.Lock()

    def locked(frame: FrameType, event: str, arg: object) -> None:
        with lock:
            profile(frame, event, arg)

    # The stages run on the orchestrator's threads: every thread's calls count, in time order.
    threading.setprofile(locked)
    sys.setprofile(locked)
    try:
        entry(panel, str(workdir / "store"))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return calls


def _entry_point() -> Any:
    """`evaluate_panel`, wherever the layout keeps it (the tree before and after issue 39)."""
    import importlib

    for module in ("roadeval.flows.evaluate", "roadeval.flows.run", "roadeval.flows.panel"):
        try:
            found = getattr(importlib.import_module(module), "evaluate_panel", None)
        except ImportError:
            continue
        if found is not None:
            return found
    raise SystemExit("no evaluate_panel found under roadeval.flows")


def _small_panel(workdir: Path) -> Any:
    import yaml

    text = yaml.safe_dump(
        {
            "name": "code-path",
            "suites": [{"name": "trip", "demo": True}],
            "models": [{"model": "roadeval/random"}],
            "scoring": {"engine": "local"},
            "render": {"engine": "local"},
        }
    )
    path = workdir / "panel.yaml"
    path.write_text(text)
    # The panel file's module: before issue 39, and after.
    for module in ("roadeval.flows.panel_file", "roadeval.flows.panel.file"):
        import importlib

        try:
            loader = getattr(importlib.import_module(module), "load_panel", None)
        except ImportError:
            continue
        if loader is not None:
            return loader(path)
    raise SystemExit("no load_panel found under roadeval.flows")


def path_figures(calls: list[tuple[str, str]], floor: dict[str, int]) -> dict[str, int]:
    stops: list[str] = []
    for module, _ in calls:
        if not stops or stops[-1] != module:
            stops.append(module)
    visited: set[str] = set()
    returns = climbs = 0
    for n, module in enumerate(stops):
        if module in visited:
            returns += 1
        if n and floor.get(module, 0) > floor.get(stops[n - 1], 0):
            climbs += 1
        visited.add(module)
    return {
        "stops": len(stops),
        "files": len(set(stops)),
        "returns": returns,
        "climbs": climbs,
        "flows modules": len(floor),
        "floors": max(floor.values()) + 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the path, stop by stop")
    args = parser.parse_args()
    known = flows_modules()
    floor = floors(flows_imports(known))
    with tempfile.TemporaryDirectory() as folder:
        calls = trace_run(Path(folder))
    if args.show:
        last = None
        for module, function in calls:
            if module != last:
                print(f"[{floor.get(module, 0):2d}] {module.removeprefix(FLOWS + '.')}")
                last = module
            print(f"       {function}")
    for name, value in path_figures(calls, floor).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
