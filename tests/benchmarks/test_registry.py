"""The registry: suites found by their `roadeval.suites` entry points and loaded one by one,
names declared once on the class (an entry point of another name is refused), baselines for any
suite found by their own entry points, and prediction-file requests read by each suite."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from roadeval.benchmarks import registry
from roadeval.benchmarks.registry import (
    BASELINE_GROUP,
    SUITE_GROUP,
    find_baseline,
    get_suite,
    register_suite,
    suite_module,
    suite_names,
)
from roadeval.benchmarks.roadbench.predictions import RoadBenchPredictions
from roadeval.benchmarks.suite import PredictionsRequest, Suite
from roadeval.flows.cli.main import app

from support.plugin_dist import install_plugin

BUILT_IN = ("roadbench", "stride", "tbbench", "trip", "v2xqa")


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for this test's plugin distributions; the registry as it was before
    the test, and the plugin modules forgotten, when it ends."""
    # roadeval's own suites and baselines first, in the registries kept after the test.
    registry.registry_snapshot()
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_SUITES", dict(registry._SUITES))
    monkeypatch.setattr(
        registry, "_BASELINES", {k: list(v) for k, v in registry._BASELINES.items()}
    )
    monkeypatch.setattr(registry, "_BASELINE_PLUGINS", set(registry._BASELINE_PLUGINS))
    before = set(sys.modules)
    yield site
    for name in set(sys.modules) - before:
        if name.startswith("plug_"):
            del sys.modules[name]


SUITE_SOURCE = """
    from typing import ClassVar

    from roadeval.benchmarks.registry import register_baseline
    from roadeval.benchmarks.suite import Suite


    class {cls}(Suite):
        name: ClassVar[str] = {name!r}
        prompt_version: ClassVar[str] = "1"

        def load(self, source, *, on_bad_item=None):
            raise NotImplementedError

        def prompt(self, item, images):
            return []

        def parse(self, item, output):
            raise NotImplementedError

        def score(self, item, parsed):
            return {{}}


    @register_baseline("always-z", suite={name!r})
    def always_z(call):
        return "Z"


    NOT_A_SUITE = 42
"""


def _install(site: Path, module: str, suites: dict[str, str]) -> None:
    """A distribution `dist-<module>` with the module, declaring `suites`."""
    source = SUITE_SOURCE.format(cls="PluggedSuite", name="plugged")
    install_plugin(site, f"dist-{module}", {module: source}, {SUITE_GROUP: suites})


def test_the_built_in_suites_are_entry_points_named_as_their_classes() -> None:
    declared = {ep.name: ep for ep in entry_points(group=SUITE_GROUP)}
    assert set(BUILT_IN) <= set(declared)
    for name in BUILT_IN:
        cls = declared[name].load()
        assert issubclass(cls, Suite) and cls.name == name
        assert get_suite(name).name == name
    assert set(BUILT_IN) <= set(suite_names())
    assert suite_module("trip") == "roadeval.benchmarks.trip"
    assert suite_module("no-such-suite") is None


def test_a_trip_run_imports_no_other_suite() -> None:
    probe = (
        "import json, sys\n"
        "from roadeval.benchmarks.registry import find_baseline, get_suite\n"
        "get_suite('trip')\n"
        "assert find_baseline('random', 'trip', 'mcq') is not None\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('shapely', 'scipy') or m.startswith('roadeval.benchmarks.') and m.split('.')[2] in "
        f"{BUILT_IN!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded and all(module.startswith("roadeval.benchmarks.trip") for module in loaded)


def test_an_unknown_suite_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"unknown suite 'nope' \(known: .*roadbench.*trip"):
        get_suite("nope")


def test_a_plugin_suite_is_found_by_its_entry_point(plugins: Path) -> None:
    _install(plugins, "plug_good", {"plugged": "plug_good:PluggedSuite"})
    assert "plugged" in suite_names()
    assert "plug_good" not in sys.modules  # listed without being imported
    suite = get_suite("plugged")
    assert type(suite).__module__ == "plug_good" and suite.name == "plugged"
    # Its module's baseline came with it; the offline judge answers for it too.
    baseline = find_baseline("always-z", "plugged", "any")
    assert baseline is not None and baseline.suite == "plugged"
    assert find_baseline("midpoint-judge", "plugged", "any") is not None


def test_an_entry_point_named_otherwise_than_its_class_is_refused(plugins: Path) -> None:
    _install(plugins, "plug_renamed", {"other-name": "plug_renamed:PluggedSuite"})
    with pytest.raises(ValueError, match=r"other-name.*whose name is 'plugged'.*must be the same"):
        get_suite("other-name")


def test_an_entry_point_to_something_else_than_a_suite_is_refused(plugins: Path) -> None:
    _install(plugins, "plug_module", {"plugged": "plug_module:NOT_A_SUITE"})
    with pytest.raises(TypeError, match="not a Suite subclass"):
        get_suite("plugged")


def test_a_suite_declared_twice_differently_is_refused(plugins: Path) -> None:
    _install(plugins, "plug_one", {"plugged": "plug_one:PluggedSuite"})
    _install(plugins, "plug_two", {"plugged": "plug_two:PluggedSuite"})
    with pytest.raises(ValueError, match="more than one entry point"):
        get_suite("plugged")


def test_a_baseline_entry_point_must_register_its_name(plugins: Path) -> None:
    install_plugin(
        plugins,
        "dist-plug-judges",
        {"plug_judges": "from roadeval.benchmarks.registry import register_baseline\n"},
        {BASELINE_GROUP: {"silent-judge": "plug_judges"}},
    )
    with pytest.raises(ValueError, match="registers no baseline named 'silent-judge'"):
        find_baseline("silent-judge", "trip", "mcq")


def test_the_name_is_the_class_attribute(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_SUITES", dict(registry._SUITES))

    class Nameless(Suite):
        prompt_version: ClassVar[str] = "1"

    with pytest.raises(TypeError, match="declares no name"):
        register_suite(Nameless)
    with pytest.raises(TypeError, match="no arguments"):
        register_suite("a-name")

    class Copycat(Suite):
        name: ClassVar[str] = "trip"

    get_suite("trip")
    with pytest.raises(ValueError, match="already registered by TripSuite"):
        register_suite(Copycat)


def test_a_prediction_request_is_read_as_the_suite_reads_it(tmp_path: Path) -> None:
    plain = PredictionsRequest(labels=tmp_path / "l", predictions=tmp_path / "p", task="3")
    assert PredictionsRequest.option_names() == ()
    assert RoadBenchPredictions.option_names() == ("images", "reparse")
    widened = RoadBenchPredictions.of(plain)
    assert (widened.labels, widened.task, widened.images, widened.reparse) == (
        plain.labels,
        "3",
        None,
        False,
    )
    assert RoadBenchPredictions.of(widened) is widened
    assert get_suite("roadbench").predictions_request is RoadBenchPredictions
    assert get_suite("tbbench").predictions_request is PredictionsRequest


def test_the_cli_refuses_an_option_the_suite_does_not_take(tmp_path: Path) -> None:
    files: list[str] = []
    for name in ("labels.jsonl", "predictions.jsonl"):
        (tmp_path / name).write_text("")
        files.append(str(tmp_path / name))
    args: list[Any] = ["score-predictions", "--suite", "tbbench", "--labels", files[0]]
    result = CliRunner().invoke(app, [*args, "--predictions", files[1], "--reparse"])
    assert result.exit_code == 2
    assert "suite 'tbbench' takes no --reparse" in " ".join(result.output.split())
