"""Panel files: errors name the file and the field; relative sources resolve to the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from roadeval.benchmarks.errors import SuiteSourceError, UnknownFieldPolicy
from roadeval.benchmarks.registry import get_suite
from roadeval.flows.panel.file import PanelError, load_panel, panel_from_dict
from roadeval.flows.stages.load import load_entry


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


def test_a_folder_is_not_a_panel_file(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match=r"is a folder, not a panel file$") as caught:
        load_panel(tmp_path)
    assert str(caught.value).startswith(f"{tmp_path}: ")


def test_a_panel_file_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_bytes(b"name: nightly\nsuites: [{name: trip, source: caf\xe9}]\n")
    with pytest.raises(PanelError) as caught:
        load_panel(tmp_path / "p.yaml")
    assert str(caught.value) == (
        f"{tmp_path / 'p.yaml'}: line 2: not UTF-8: b'\\xe9' at byte 33 of the line "
        "(byte 47 of the file): invalid continuation byte"
    )


def trip_panel(tmp_path: Path, **entry: str) -> Path:
    """A panel over a TRIP demo source whose first row carries a field TRIP does not define."""
    source = get_suite("trip").generate_demo(tmp_path / "trip")
    items = source / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "hint": "look left"})
    items.write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = {"name": "trip", "source": str(source), **entry}
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"suites": [suite], "models": [{"model": "roadeval/random"}]}))
    return path


def test_unknown_fields_warn_by_default_and_are_kept_on_the_loaded_suite(tmp_path: Path) -> None:
    panel = load_panel(trip_panel(tmp_path))
    assert panel.suites[0].unknown_fields is UnknownFieldPolicy.WARN
    loaded = load_entry(panel, panel.suites[0])
    items = str(tmp_path / "trip" / "items.jsonl")
    assert loaded.unknown_fields == {items: {"hint": 1}}
    assert loaded.unknown_fields_message == (
        f"suite trip: unknown fields ignored: {items}: 'hint' (1 row)"
    )
    assert len(loaded.items) == 43


def test_unknown_fields_error_refuses_the_suite(tmp_path: Path) -> None:
    panel = load_panel(trip_panel(tmp_path, unknown_fields="error"))
    with pytest.raises(SuiteSourceError) as caught:
        load_entry(panel, panel.suites[0])
    message = str(caught.value)
    assert message.startswith("suite trip: rows carry fields outside the suite's row format")
    assert message.endswith(f"{tmp_path / 'trip' / 'items.jsonl'}: 'hint' (1 row)")


def test_unknown_fields_policy_is_checked(tmp_path: Path) -> None:
    with pytest.raises(PanelError, match=r"suites\[0\] \(trip\)\.unknown_fields: Input should be"):
        load_panel(trip_panel(tmp_path, unknown_fields="ignore"))


def test_a_clean_suite_has_no_unknown_field_message(tmp_path: Path) -> None:
    panel = panel_from_dict(
        {
            "suites": [{"name": "trip", "demo": True, "unknown_fields": "error"}],
            "models": [{"model": "roadeval/random"}],
        },
        source="inline",
        base_dir=tmp_path,
    )
    loaded = load_entry(panel, panel.suites[0])
    assert loaded.unknown_fields == {} and loaded.unknown_fields_message is None


def test_the_judge_defaults_to_strides_model_at_the_endpoint_given(tmp_path: Path) -> None:
    base = "suites: [{name: stride, demo: true}]\nmodels: [{model: roadeval/random}]\n"
    (tmp_path / "p.yaml").write_text(base + "judge: {api_base: 'http://127.0.0.1:9/v1'}\n")
    judge = load_panel(tmp_path / "p.yaml").judge
    assert judge is not None
    assert (judge.model, judge.api_base) == (
        "openai/Qwen/Qwen3-VL-32B-Instruct",
        "http://127.0.0.1:9/v1",
    )
    # Without an endpoint the default would go to OpenAI's own API, which does not serve it.
    (tmp_path / "p.yaml").write_text(base + "judge: {}\n")
    with pytest.raises(PanelError, match=r"judge: .*default judge.*give its api_base"):
        load_panel(tmp_path / "p.yaml")
    (tmp_path / "p.yaml").write_text(base + "judge: {model: roadeval/midpoint-judge}\n")
    judge = load_panel(tmp_path / "p.yaml").judge
    assert judge is not None and judge.is_baseline


def _panel_with(tmp_path: Path, **model: object) -> Path:
    path = tmp_path / "p.yaml"
    body = {"suites": [{"name": "trip", "demo": True}], "models": [{"name": "m", **model}]}
    path.write_text(yaml.safe_dump(body))
    return path


@pytest.mark.parametrize(
    "api_base",
    [
        "",
        " ",
        "ftp://h/v1",
        "not a url",
        "h:8000/v1",
        "http://h:99999/v1",
        "http://h:0",
        "https://",
    ],
)
def test_api_base_must_be_an_http_url_with_a_host_and_a_port(tmp_path: Path, api_base: str) -> None:
    path = _panel_with(tmp_path, model="openai/x", api_base=api_base)
    with pytest.raises(PanelError) as caught:
        load_panel(path)
    assert str(caught.value).startswith(f"{path}: models[0] (m).api_base: ")
    assert "Value error" not in str(caught.value)


@pytest.mark.parametrize(
    "api_base",
    ["http://h/v1", "https://api.example.com", "http://127.0.0.1:65535/v1", "http://[::1]:8000"],
)
def test_good_endpoints_load(tmp_path: Path, api_base: str) -> None:
    assert load_panel(_panel_with(tmp_path, model="openai/x", api_base=api_base)).models[0].api_base


@pytest.mark.parametrize("model", ["openai/x", "roadeval/random"])
@pytest.mark.parametrize(
    ("prices", "named"),
    [
        ({"input_cost_per_token": 1e-6}, "input_cost_per_token is given but output_cost_per_token"),
        ({"output_cost_per_token": 0}, "output_cost_per_token is given but input_cost_per_token"),
        (
            {"batch_output_cost_per_token": 1e-7},
            "batch_output_cost_per_token is given but batch_input_cost_per_token",
        ),
    ],
)
def test_prices_come_in_pairs_at_load(
    tmp_path: Path, model: str, prices: dict[str, float], named: str
) -> None:
    path = _panel_with(tmp_path, model=model, **prices)
    with pytest.raises(PanelError) as caught:
        load_panel(path)
    assert str(caught.value) == (
        f"{path}: models[0] (m): {named} is not: prices come in pairs, give both or neither"
    )


def test_empty_store_and_source_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    models = "models: [{model: roadeval/random}]\n"
    path.write_text("store: ''\nsuites: [{name: trip, demo: true}]\n" + models)
    with pytest.raises(PanelError, match=r"p.yaml: store: the store is empty"):
        load_panel(path)
    path.write_text("store: 's3://'\nsuites: [{name: trip, demo: true}]\n" + models)
    with pytest.raises(PanelError, match=r"p.yaml: store: store URI 's3://' names no bucket"):
        load_panel(path)
    path.write_text("suites: [{name: trip, source: '  '}]\n" + models)
    with pytest.raises(PanelError, match=r"suites\[0\] \(trip\)\.source: is empty"):
        load_panel(path)


def test_ablations_are_known_names_each_given_once(tmp_path: Path) -> None:
    base = "suites: [{name: trip, demo: true}]\nmodels: [{model: roadeval/random}]\n"
    (tmp_path / "p.yaml").write_text(base + "ablations: [blind]\n")
    assert load_panel(tmp_path / "p.yaml").ablations == ["blind"]
    (tmp_path / "p.yaml").write_text(base)
    assert load_panel(tmp_path / "p.yaml").ablations == []
    (tmp_path / "p.yaml").write_text(base + "ablations: [blind, mute]\n")
    with pytest.raises(
        PanelError, match=r"p.yaml: ablations: unknown ablation 'mute'; known: blind"
    ):
        load_panel(tmp_path / "p.yaml")
    (tmp_path / "p.yaml").write_text(base + "ablations: [blind, blind]\n")
    with pytest.raises(PanelError, match=r"p.yaml: ablations: .*repeated: blind"):
        load_panel(tmp_path / "p.yaml")


def test_intervals_take_resamples_and_a_seed_and_refuse_too_few_resamples(tmp_path: Path) -> None:
    base = "suites: [{name: trip, demo: true}]\nmodels: [{model: openai/x}]\n"
    (tmp_path / "p.yaml").write_text(base)
    assert load_panel(tmp_path / "p.yaml").intervals.model_dump() == {"resamples": 1000, "seed": 0}
    (tmp_path / "p.yaml").write_text(base + "intervals: {resamples: 2000, seed: 7}\n")
    assert load_panel(tmp_path / "p.yaml").intervals.model_dump() == {"resamples": 2000, "seed": 7}
    (tmp_path / "p.yaml").write_text(base + "intervals: {resamples: 10}\n")
    with pytest.raises(
        PanelError,
        match=r"intervals\.resamples: 10 is less than 100, the least it may be: bootstrap",
    ):
        load_panel(tmp_path / "p.yaml")
