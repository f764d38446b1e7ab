"""Panel files: errors name the file and the field; relative sources resolve to the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from roadeval.flows.panel_file import PanelError, load_panel


def test_relative_source_resolves_against_the_panel_folder(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "suites: [{name: trip, source: data/trip}]\nmodels: [{model: openai/x, api_base: 'http://h/v1'}]\n"
    )
    panel = load_panel(tmp_path / "p.yaml")
    assert panel.source_path(panel.suites[0]) == tmp_path / "data" / "trip"
    assert panel.models[0].label == "openai/x"


def test_duplicate_model_names_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "suites: [{name: trip, demo: true}]\nmodels: [{model: openai/x}, {model: openai/x}]\n"
    )
    with pytest.raises(PanelError, match=r"p.yaml: .*repeated: openai/x"):
        load_panel(tmp_path / "p.yaml")


def test_not_yaml_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("suites: [\n")
    with pytest.raises(PanelError, match="not valid YAML"):
        load_panel(tmp_path / "p.yaml")
    with pytest.raises(PanelError, match="no such panel file"):
        load_panel(tmp_path / "absent.yaml")


def test_secrets_are_named_not_stored(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "suites: [{name: trip, demo: true}]\nmodels: [{model: openai/x, api_key: sk-123}]\n"
    )
    with pytest.raises(PanelError, match=r"api_key: unknown key"):
        load_panel(tmp_path / "p.yaml")


def test_a_suite_appears_once(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(
        "suites: [{name: trip, demo: true}, {name: trip, source: x}]\nmodels: [{model: openai/x}]\n"
    )
    with pytest.raises(PanelError, match="repeated: trip"):
        load_panel(tmp_path / "p.yaml")
