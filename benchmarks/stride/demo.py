"""Writes a small synthetic STRIDE suite in the release's nuScenes layout: `questions.json`, and
per scene ten grid frames `NNN_demo_grid.jpg`, a group file and the selected-vehicle render (the
query frame with the red box). Three scenes, seven questions each: three MCQ (SP-1, TM-2, TRJ-1),
two judged (SP-7, SC-6), TRJ-5 and TRJ-6 with made-up but well-formed trajectories.

Everything comes from this package's code; rows are written in a fixed order with fixed JSON
formatting and frames are PIL drawings, so every run writes the same files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roadeval.benchmarks.stride.demo_drawing import grid_frame, vehicle_box, with_red_box

DEMO_SPLIT = "nuscenes_demo"
FRAMES_PER_SCENE = 10
GROUP = "group_001"
GROUP_FRAMES = (4, 5, 6, 7, 8)
STEP_S = 0.5
JPEG_QUALITY = 90

DIRECTIONS = {
    "A": "Moving toward ego",
    "B": "Moving away from ego",
    "C": "Moving left-to-right across ego",
    "D": "Moving right-to-left across ego",
    "E": "Static",
    "F": "Same direction as ego",
}
POSITIONS = {
    "A": "In front",
    "B": "Front-right",
    "C": "Front-left",
    "D": "Left",
    "E": "Right",
    "F": "Behind",
}
MANEUVERS = {
    "A": "Go straight",
    "B": "Slightly veer left",
    "C": "Turn left",
    "D": "Turn right",
    "E": "Slightly veer right",
    "F": "Slow to near stop",
}


@dataclass(frozen=True)
class DemoScene:
    number: int
    motion: str  # the lead car relative to ego: toward, away, static
    lateral: int  # -1 front-left, 0 in front, 1 front-right
    ego_speed: float  # m/s
    curvature: float  # y = curvature * x^2, left positive
    maneuver: str  # the MANEUVERS letter the ego's path shows
    weather: str

    @property
    def scene_id(self) -> str:
        return f"scene_{self.number:03d}"

    @property
    def object_id(self) -> str:
        return f"demo{self.number:03d}lead"

    def distance(self, frame: int) -> float:
        if self.motion == "away":
            return 8.0 + 1.5 * frame
        if self.motion == "toward":
            return 24.0 - 1.5 * frame
        return 12.0

    def path(self, steps: range) -> list[list[float]]:
        """Ego positions at STEP_S intervals (negative steps: the past), current frame [0, 0]."""
        return [
            [
                round(self.ego_speed * STEP_S * k, 3),
                round(self.curvature * (self.ego_speed * STEP_S * k) ** 2, 3),
            ]
            for k in steps
        ]


SCENES = (
    DemoScene(1, "away", 0, 5.0, 0.0, "A", "clear daytime"),
    DemoScene(2, "toward", -1, 3.0, 0.01, "B", "overcast daytime"),
    DemoScene(3, "static", 1, 0.4, 0.0, "F", "clear dusk"),
)
_LATERAL_LETTER = {0: "A", 1: "B", -1: "C"}
_MOTION_LETTER = {"toward": "A", "away": "B", "static": "E"}


def _row(scene: DemoScene, template: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": template,
        "scene_id": scene.scene_id,
        "group_id": GROUP,
        "source_group_file": f"{scene.scene_id}/{GROUP}_vehicle_annotations.json",
    }
    row.update(fields)
    return row


def _trajectory_question(scene: DemoScene, points: int) -> str:
    past = json.dumps(scene.path(range(-4, 1)))
    template = ", ".join(f"[x{i}, y{i}]" for i in range(1, points + 1))
    return (
        "Based on the past 5 consecutive 360-degree multi-camera frames, use the following past "
        "ego trajectory in the ego-centric coordinate system anchored at the 5th observed frame.\n"
        f"Past observed ego positions (oldest to current, where the current frame is [0.0, 0.0]): "
        f"{past}\nPredict the next {points} future ego positions in the same coordinate system. "
        f"Output only a JSON array of exactly {points} points formatted as [{template}]."
    )


def scene_rows(scene: DemoScene) -> list[dict[str, Any]]:
    lead = {"object_id": scene.object_id, "object_reference": "the lead vehicle"}
    position = POSITIONS[_LATERAL_LETTER[scene.lateral]].lower()
    motion = DIRECTIONS[_MOTION_LETTER[scene.motion]].lower()
    mcq = {"question_format": "MCQ", "scoring_type": "mcq"}
    open_text = {"question_format": "OEQ", "scoring_type": "open_oeq_text"}
    waypoints = {"question_format": "OEQ", "scoring_type": "trajectory_waypoints"}
    return [
        _row(
            scene,
            "SP-1",
            task="space-perception",
            question="What is the trajectory direction of <obj> in relation to the ego vehicle?",
            choices=DIRECTIONS,
            ground_truth=_MOTION_LETTER[scene.motion],
            **lead,
            **mcq,
        ),
        _row(
            scene,
            "TM-2",
            task="time-memory",
            question=(
                "Where was <obj> located relative to the ego vehicle in the previous frame(s)?"
            ),
            choices=POSITIONS,
            ground_truth=_LATERAL_LETTER[scene.lateral],
            **lead,
            **mcq,
        ),
        _row(
            scene,
            "TRJ-1",
            task="trajectory-prediction",
            question=(
                "Based on the past 5 consecutive 360-degree multi-camera frames, what best "
                "describes the ego vehicle's recent maneuver over those past frames?"
            ),
            choices=MANEUVERS,
            ground_truth=scene.maneuver,
            **mcq,
        ),
        _row(
            scene,
            "SP-7",
            task="space-perception",
            question="Describe where <obj> is relative to the ego vehicle and how it is moving.",
            ground_truth=f"The vehicle is {position} of the ego vehicle and is {motion}.",
            **lead,
            **open_text,
        ),
        _row(
            scene,
            "SC-6",
            task="scene-context",
            question=(
                "Describe the overall environment of the scene, including weather, lighting "
                "conditions, road type, and notable surrounding activity."
            ),
            ground_truth=(
                f"A {scene.weather} scene on a straight two-lane road through open grassland, "
                "with a single lead vehicle and no pedestrians."
            ),
            **open_text,
        ),
        _row(
            scene,
            "TRJ-5",
            task="trajectory-prediction",
            question=_trajectory_question(scene, 5),
            ground_truth=json.dumps(scene.path(range(1, 6))),
            **waypoints,
        ),
        _row(
            scene,
            "TRJ-6",
            task="trajectory-prediction",
            question=_trajectory_question(scene, 4),
            ground_truth=json.dumps(scene.path(range(1, 5))),
            **waypoints,
        ),
    ]


def _write_scene(root: Path, scene: DemoScene) -> None:
    folder = root / scene.scene_id
    folder.mkdir(parents=True, exist_ok=True)
    for frame in range(1, FRAMES_PER_SCENE + 1):
        image = grid_frame(frame, scene.distance(frame), scene.lateral)
        image.save(folder / f"{frame:03d}_demo_grid.jpg", format="JPEG", quality=JPEG_QUALITY)
    query = GROUP_FRAMES[-1]
    box = vehicle_box(scene.distance(query), scene.lateral)
    render = with_red_box(grid_frame(query, scene.distance(query), scene.lateral), box)
    render.save(
        folder / f"{GROUP}_selected_vehicle_render.jpg", format="JPEG", quality=JPEG_QUALITY
    )
    group = {
        "scene_id": scene.scene_id,
        "group_id": GROUP,
        "group_size": len(GROUP_FRAMES),
        "frame_indices_1based": list(GROUP_FRAMES),
        "selected_vehicle_annotation_token": scene.object_id,
        "selected_vehicle_render_path": f"{scene.scene_id}/{GROUP}_selected_vehicle_render.jpg",
    }
    _write_json(folder / f"{GROUP}_vehicle_annotations.json", group)


def _write_json(path: Path, payload: Any) -> None:
    path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8", newline="\n")


def write_demo(root: Path) -> Path:
    """Write the demo under `root`; return the questions file."""
    root.mkdir(parents=True, exist_ok=True)
    tasks: list[dict[str, Any]] = []
    for scene in SCENES:
        _write_scene(root, scene)
        tasks.extend(scene_rows(scene))
    meta = {
        "benchmark": "STRIDE",
        "split": DEMO_SPLIT,
        "source_dataset": "nuScenes-shaped synthetic demo",
        "version": "demo-1",
        "n_questions": len(tasks),
        "notes": ["Synthetic frames drawn by roadeval; not STRIDE data."],
    }
    path = root / "questions.json"
    _write_json(path, {"meta": meta, "tasks": tasks})
    return path
