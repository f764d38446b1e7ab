"""The demo suite: release layout, 8-12 items per task, and the same bytes on every run."""

from __future__ import annotations

from pathlib import Path

from roadeval.benchmarks.registry import get_suite

SUITE = get_suite("roadbench")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_demo_is_byte_deterministic(tmp_path: Path) -> None:
    first = SUITE.generate_demo(tmp_path / "a")
    second = SUITE.generate_demo(tmp_path / "b")
    assert first == tmp_path / "a" / "roadbench-demo"
    files = snapshot(first)
    assert files == snapshot(second)
    assert sum(name.endswith(".png") for name in files) == 40
    assert set(name.split("/")[0] for name in files) == {"task_1_2", "task_3", "task_4_5", "task_6"}


def test_demo_items_per_task_and_no_problems(tmp_path: Path) -> None:
    report = SUITE.load(SUITE.generate_demo(tmp_path))
    assert report.skipped == []
    for task in "123456":
        count = sum(item.task == task for item in report.items)
        assert 8 <= count <= 12
