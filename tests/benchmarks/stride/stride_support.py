"""Helpers for the STRIDE tests: where the release extracts are, the oracle sample's questions, and
image roots built from our own tiny generated frames, named as the extracts' rows require."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

from PIL import Image


def samples_dir() -> Path | None:
    """../shared/samples/stride beside the checkout, or under ROADEVAL_SHARED; None when absent."""
    configured = os.environ.get("ROADEVAL_SHARED")
    shared = Path(configured) if configured else Path(__file__).resolve().parents[4] / "shared"
    folder = shared / "samples" / "stride"
    return folder if folder.is_dir() else None


def jpeg(shade: int, size: tuple[int, int] = (32, 24)) -> bytes:
    """A distinct small JPEG per shade, so frame order can be checked by bytes."""
    buffer = io.BytesIO()
    Image.new("RGB", size, (shade % 256, (3 * shade) % 256, 90)).save(buffer, format="JPEG")
    return buffer.getvalue()


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def waymo_root(questions: dict[str, Any], root: Path) -> Path:
    """Every frame the rows name, under `root`, each a distinct JPEG."""
    for task in questions["tasks"]:
        for index, relative in enumerate(task.get("image_paths") or []):
            target = root / relative
            if not target.exists():
                write(target, jpeg(10 * index + len(relative)))
    return root


def nuscenes_root(questions: dict[str, Any], root: Path, grids: int = 12) -> Path:
    """Per scene, `grids` grid frames and the group files the rows name (frames 6-10)."""
    for task in questions["tasks"]:
        scene = root / task["scene_id"]
        for number in range(1, grids + 1):
            grid = scene / f"{number:03d}_CAM_grid.jpg"
            if not grid.exists():
                write(grid, jpeg(number))
        group = task["group_id"].split("_obj")[0]
        relative = (
            task.get("source_group_file") or f"{task['scene_id']}/{group}_vehicle_annotations.json"
        )
        payload = {
            "scene_id": task["scene_id"],
            "group_id": group,
            "frame_indices_1based": [6, 7, 8, 9, 10],
        }
        write(root / relative, json.dumps(payload))
    return root


def oracle_questions(samples: Path, target: Path) -> Path:
    """The nuScenes mini questions plus the oracle sample's TRJ-1 and TRJ-5 questions (rebuilt
    from its own rows, which carry each question's ids, text, choices and gold), as the full split
    holds them, written to `target`."""
    questions = json.loads((samples / "nuscenes_mini.json").read_text())
    sample = json.loads((samples / "sample_predictions_nuscenes.json").read_text())
    for row in sample["tasks"]:
        if row["id"] in ("TRJ-1", "TRJ-5"):
            rebuilt = {k: v for k, v in row.items() if k not in ("model_response", "object_id")}
            rebuilt["task"] = "trajectory-prediction"
            rebuilt["scoring_type"] = (
                "mcq" if row["question_format"] == "MCQ" else "trajectory_waypoints"
            )
            questions["tasks"].append(rebuilt)
    return write(target, json.dumps(questions))
