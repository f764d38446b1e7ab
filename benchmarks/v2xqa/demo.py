"""Writes the demo suite in the release layout: the twelve `<task>_annotations.jsonl` files
(four items each, one per scene) and drawn images, the road user asked about in a red box, in
`images/vehicle` (JPEG, no chroma subsampling so the thin box stays red) and
`images/infrastructure` (PNG), the suite's default roots. VS rows name a vehicle image only,
IS rows an infrastructure image only, CO rows both. Byte-identical on every run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from roadeval.benchmarks.v2xqa.demo_drawing import infrastructure_view, vehicle_view
from roadeval.benchmarks.v2xqa.demo_scenes import QUESTIONS, SCENES, DemoQuestion, Scene
from roadeval.benchmarks.v2xqa.options import DEFAULT_ROOTS
from roadeval.benchmarks.v2xqa.tasks import TASK_BY_ID, ImageSide, View


def write_demo(root: Path) -> Path:
    """Write the demo under `root`; return `root`, the source to load."""
    root = Path(root)
    vehicle_root = root / DEFAULT_ROOTS[ImageSide.VEHICLE]
    infrastructure_root = root / DEFAULT_ROOTS[ImageSide.INFRASTRUCTURE]
    vehicle_root.mkdir(parents=True, exist_ok=True)
    infrastructure_root.mkdir(parents=True, exist_ok=True)
    for scene in SCENES:
        vehicle_view(scene).save(
            vehicle_root / f"{scene.vehicle_image_id}.jpg", quality=90, subsampling=0
        )
        infrastructure_view(scene).save(
            infrastructure_root / f"{scene.infrastructure_image_id}.png", format="PNG"
        )
    for rotation, question in enumerate(QUESTIONS):
        lines = [
            json.dumps(_row(question, scene, rotation), ensure_ascii=False) for scene in SCENES
        ]
        path = root / TASK_BY_ID[question.task_id].file_name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return root


def _row(question: DemoQuestion, scene: Scene, rotation: int) -> dict[str, Any]:
    view = TASK_BY_ID[question.task_id].view
    uses_vehicle = view in (View.VS, View.CO)
    uses_infrastructure = view in (View.IS, View.CO)
    options = question.options(rotation)
    gold = question.gold(scene, rotation)
    sample_id = scene.vehicle_image_id if uses_vehicle else scene.infrastructure_image_id
    return {
        "sample_id": sample_id,
        "task_id": question.task_id,
        "question_id": f"{question.task_id}_Q1",
        "question": question.question,
        "options": options,
        "selected_option_id": gold,
        "canonical_answer": options[gold],
        "image_id_vs": scene.vehicle_image_id if uses_vehicle else None,
        "image_id_is": scene.infrastructure_image_id if uses_infrastructure else None,
    }
