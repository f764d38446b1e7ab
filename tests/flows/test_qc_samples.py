"""`roadeval qc` on the releases' own extracts (../shared/samples, or ROADEVAL_SHARED; skipped when
absent): their layouts are accepted, the images the extracts do not ship are the only failures,
and every suite refuses the other suites' files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.shared_data import shared_dir
from support.trip_panel import invoke


@pytest.fixture(scope="module")
def samples() -> Path:
    shared = shared_dir()
    if shared is None:
        pytest.skip("the release extracts (shared/samples) are not available")
    return shared / "samples"


def qc(suite: str, source: Path) -> tuple[int, dict[str, dict[str, Any]], dict[str, Any]]:
    """Exit code, the rules by name, and the whole JSON report."""
    result = invoke("qc", suite, "--source", str(source), "--format", "json")
    report = json.loads(result.stdout)
    return result.exit_code, {rule["rule"]: rule for rule in report["rules"]}, report


def failed(rules: dict[str, dict[str, Any]]) -> list[str]:
    return [name for name, rule in rules.items() if rule["status"] == "fail"]


def test_v2xqa_extracts_lack_only_their_images(samples: Path) -> None:
    code, rules, report = qc("v2xqa", samples / "v2x-qa" / "test")
    assert code == 1 and failed(rules) == ["images"]
    assert report["n_items"] == 0 and report["n_refused"] == rules["images"]["count"] == 120
    assert {f["field"] for f in rules["images"]["findings"]} == {"image_id_vs", "image_id_is"}
    assert all(rule["count"] == 0 for name, rule in rules.items() if name != "images")


def test_roadbench_extracts_lack_only_their_images(samples: Path) -> None:
    source = samples / "roadbench"
    code, rules, report = qc("roadbench", source)
    shipped = len(list(source.glob("task_*/*.png")))
    rows = sum(len(path.read_text().splitlines()) for path in source.glob("task_*/labels.jsonl"))
    assert code == 1 and failed(rules) == ["images"]
    assert report["n_refused"] == rules["images"]["count"] == rows - shipped
    # Tasks 1/2 and 4/5 make two items of a row: the four shipped images give six items.
    assert report["n_items"] == 6
    assert all("does not exist" in f["message"] for f in rules["images"]["findings"])
    assert rules["labels"]["count"] == 0 and rules["ids"]["count"] == 0


@pytest.mark.parametrize("split", ["nuscenes_mini.json", "waymo_mini.json"])
def test_stride_extracts_lack_only_their_frames(samples: Path, split: str) -> None:
    code, rules, report = qc("stride", samples / "stride" / split)
    assert code == 1 and failed(rules) == ["frames"]
    assert rules["frames"]["count"] == report["n_refused"] == 3
    assert all(rule["count"] == 0 for name, rule in rules.items() if name != "frames")


# suite -> another suite's extract in its place.
FOREIGN = {
    "trip": "v2x-qa/test/VS1_annotations.jsonl",
    "roadbench": "v2x-qa/test",
    "tbbench": "roadbench/task_6/labels.jsonl",
    "v2xqa": "stride",
    "stride": "roadbench/task_1_2/labels.jsonl",
}


@pytest.mark.parametrize("suite", FOREIGN)
def test_each_suite_refuses_another_suites_extract(samples: Path, suite: str) -> None:
    result = invoke("qc", suite, "--source", str(samples / FOREIGN[suite]))
    said = " ".join(result.output.split())
    assert result.exit_code == 2 and said.startswith("error: ") and said.count("error:") == 1
    assert "expected" in said or "found" in said, said
