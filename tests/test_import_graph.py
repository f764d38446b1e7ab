"""No import circles anywhere in roadeval, and its packages (flows' own among them) in layers
that depend one way: every import counts, at module level, inside functions and under
TYPE_CHECKING alike, and so does `import_module("literal")`. The one exception is a plugin load
by name through the registry (an entry point), listed below."""

from __future__ import annotations

import ast
import os
import tomllib
from collections.abc import Iterator
from pathlib import Path

import roadeval

REGISTRY = "roadeval.benchmarks.registry"
# The entry-point groups the registry loads plugins from, by name.
PLUGIN_GROUPS = ("roadeval.suites", "roadeval.baselines")


def plugin_loads(pyproject: Path) -> frozenset[tuple[str, str]]:
    """(importer, imported): the registry's loads by name of roadeval's own entry points, the
    only edges allowed to close a circle (a loaded suite registers itself with the registry)."""
    declared = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
    return frozenset(
        (REGISTRY, value.split(":")[0])
        for group in PLUGIN_GROUPS
        for value in declared.get(group, {}).values()
    )


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package at `root` by dotted name (the package's folders are symlinks
    in a checkout, so the walk follows links)."""
    found: dict[str, Path] = {}
    for folder, _dirs, files in os.walk(root, followlinks=True):
        for name in files:
            if not name.endswith(".py"):
                continue
            parts = [root.name, *Path(folder).relative_to(root).parts]
            if name != "__init__.py":
                parts.append(name[:-3])
            found[".".join(parts)] = Path(folder) / name
    return found


def _imported(module: str, is_package: bool, node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            package = ".".join([*base, *([node.module] if node.module else [])])
        else:
            package = node.module or ""
        for alias in node.names:
            yield f"{package}.{alias.name}"
            yield package
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        yield node.args[0].value


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (a `from a import b` names module a.b when
    there is one, else a itself)."""
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            candidates = list(_imported(name, path.name == "__init__.py", node))
            if isinstance(node, ast.ImportFrom):
                # `from a import b`: the module a.b if it exists, else the package a.
                pairs = zip(candidates[::2], candidates[1::2], strict=True)
                candidates = [sub if sub in known else pkg for sub, pkg in pairs]
            for target in candidates:
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]], allowed: frozenset[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    edges = {m: {t for t in ts if (m, t) not in allowed} for m, ts in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


ROOT = Path(roadeval.__file__).parent
PLUGIN_LOADS = plugin_loads(ROOT.parent / "pyproject.toml")


def _graph_with_plugin_loads() -> dict[str, set[str]]:
    graph = import_graph(ROOT)
    for source, target in PLUGIN_LOADS:
        graph[source].add(target)
    return graph


def test_no_import_cycles() -> None:
    found = cycles(_graph_with_plugin_loads(), PLUGIN_LOADS)
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_allowed_plugin_loads_are_real_modules() -> None:
    # The exceptions are the registry's loads of modules that exist, and nothing else.
    assert PLUGIN_LOADS
    known = modules(ROOT)
    assert all(source == REGISTRY and target in known for source, target in PLUGIN_LOADS)
    # Without the exception the circle through the registry is there: the list is needed.
    assert cycles(_graph_with_plugin_loads(), frozenset())


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n"
    )
    (package / "c.py").write_text("def f():\n    import pkg.d\n")
    (package / "d.py").write_text(
        "from importlib import import_module\ndef g():\n    import_module('pkg.a')\n"
    )
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.c"] == {"pkg.d"}
    assert graph["pkg.d"] == {"pkg.a"}
    assert cycles(graph, frozenset()) == [["pkg.a", "pkg.c", "pkg.d", "pkg.sub.b"]]
    assert cycles(graph, frozenset({("pkg.d", "pkg.a")})) == []


# The packages in the order they may depend on one another: each only on those before it.
LAYERS = (
    "environment",
    "version",
    "names",
    "bounds",
    "storage",
    "benchmarks",
    "tasks.requests",
    "tasks.calls",
    "tasks.cache",
    "tasks.batch",
    "tasks.rerun",
    "tasks.shard",
    "tasks.render",
    "tasks.results",
    "tasks.report",
    "flows",
    "deployments",
)


def _package(module: str) -> str:
    parts = module.split(".")[1:]
    if parts[:1] == ["tasks"] and len(parts) > 2:
        return ".".join(parts[:2])
    return parts[0] if parts else "roadeval"


def test_packages_depend_one_way() -> None:
    backwards = sorted(
        f"{source} -> {target}"
        for source, targets in import_graph(ROOT).items()
        for target in targets
        if (a := _package(source)) != (b := _package(target))
        and a != "roadeval"  # the package's lazy re-exports name everything
        and LAYERS.index(b) > LAYERS.index(a)
    )
    assert not backwards, "imports against the layers:\n" + "\n".join(backwards)


# The packages of roadeval.flows in the order they may depend on one another (see flows/__init__):
# the run never reaches up to the adapters that drive it, nor to the command line.
FLOWS_LAYERS = ("panel", "stages", "rerun", "run", "prefect", "evaluate", "cli")


def _flows_layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["roadeval", "flows"] and len(parts) > 2 else None


def flows_backwards(graph: dict[str, set[str]]) -> list[str]:
    """Imports inside roadeval.flows from a lower layer to a higher one."""
    return sorted(
        f"{source} -> {target}"
        for source, targets in graph.items()
        for target in targets
        if (a := _flows_layer(source)) is not None
        and (b := _flows_layer(target)) is not None
        and FLOWS_LAYERS.index(b) > FLOWS_LAYERS.index(a)
    )


def test_flows_packages_depend_one_way() -> None:
    # Every flows module sits in one of the layers, and imports only its own or lower ones.
    graph = import_graph(ROOT)
    outside = sorted(m for m in graph if m.startswith("roadeval.flows.") and not _flows_layer(m))
    assert not outside
    assert {_flows_layer(m) for m in graph} - {None} == set(FLOWS_LAYERS)
    backwards = flows_backwards(graph)
    assert not backwards, "imports against flows' layers:\n" + "\n".join(backwards)


def external_imports(root: Path) -> dict[str, set[str]]:
    """Module -> the top-level names of what it imports from outside the package (`prefect` for
    `from prefect.states import Failed`), every import counted as in `import_graph`."""
    found: dict[str, set[str]] = {}
    for name, path in modules(root).items():
        tree = ast.parse(path.read_text(), str(path))
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            names.update(t.split(".")[0] for t in _imported(name, False, node) if t)
        found[name] = names - {root.name}
    return found


def run_reaches_up(graph: dict[str, set[str]], external: dict[str, set[str]]) -> list[str]:
    """Imports by modules of flows/run of the command line or of Prefect (the library)."""
    run = [m for m in graph if _flows_layer(m) == "run"]
    return sorted(
        [f"{m} -> {t}" for m in run for t in graph[m] if _flows_layer(t) == "cli"]
        + [f"{m} -> prefect" for m in run if "prefect" in external[m]]
    )


def test_the_run_imports_neither_the_cli_nor_prefect() -> None:
    found = run_reaches_up(import_graph(ROOT), external_imports(ROOT))
    assert not found, "the run reaches up:\n" + "\n".join(found)


def test_the_layer_checks_see_a_run_module_that_imports_the_cli_or_prefect(
    tmp_path: Path,
) -> None:
    # The same checks on a copy of flows' shape, with a run module reaching up both ways.
    root = tmp_path / "roadeval"
    for folder in ("flows", "flows/run", "flows/cli"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "flows" / "cli" / "app.py").write_text("")
    (root / "flows" / "run" / "start.py").write_text(
        "def f():\n    from roadeval.flows.cli.app import app\n"
    )
    (root / "flows" / "run" / "flow.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from prefect import flow\n"
    )
    graph = import_graph(root)
    assert flows_backwards(graph) == ["roadeval.flows.run.start -> roadeval.flows.cli.app"]
    assert run_reaches_up(graph, external_imports(root)) == [
        "roadeval.flows.run.flow -> prefect",
        "roadeval.flows.run.start -> roadeval.flows.cli.app",
    ]
