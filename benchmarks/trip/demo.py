"""Writes the TRIP demo suite (43 items: 26 text, 14 image, 3 point cloud) in the suite's format.

Everything comes from code in this package (no downloads), and the output is byte-identical on
every run: the rows are written in a fixed order with fixed JSON formatting, the images are PIL
drawings without text, saved as PNG without metadata, and the scans are synthetic `.bin` files
(float32 x, y, z, intensity) from a fixed seed each.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from roadeval.benchmarks.pointcloud import synthetic_scan
from roadeval.benchmarks.trip.demo_image_items import IMAGE_ITEMS
from roadeval.benchmarks.trip.demo_scan_items import SCAN_ITEMS
from roadeval.benchmarks.trip.demo_spec import DemoSpec
from roadeval.benchmarks.trip.demo_text_items import TEXT_ITEMS
from roadeval.benchmarks.trip.taxonomy import ITEMS_FILE, LETTERS, VERSION_FILE, Modality

DEMO_VERSION = "trip-demo-3"
IMAGE_FOLDER = "images"
SCAN_FOLDER = "scans"
# Fewer points than a real scan (about 120,000): the demo's scans only need to look like one.
DEMO_SCAN_POINTS = 60_000
# Ids follow the paper's `B_b_1` shape: role code, modality code, running number.
_ROLE_CODES = {
    "vehicle": "V",
    "traffic management": "M",
    "traveler": "T",
    "planning-and-design": "P",
}
_MODALITY_CODES = {Modality.TEXT: "t", Modality.IMAGE: "i", Modality.POINT_CLOUD: "p"}


def demo_specs() -> tuple[DemoSpec, ...]:
    """All demo questions in file order."""
    return (*TEXT_ITEMS, *IMAGE_ITEMS, *SCAN_ITEMS)


def generate_demo(root: Path) -> Path:
    """Write `items.jsonl`, `VERSION`, `images/*.png` and `scans/*.bin` under `root`; return
    `root`."""
    root = Path(root)
    (root / IMAGE_FOLDER).mkdir(parents=True, exist_ok=True)
    (root / SCAN_FOLDER).mkdir(parents=True, exist_ok=True)
    numbers: Counter[tuple[str, str]] = Counter()
    lines: list[str] = []
    for index, spec in enumerate(demo_specs()):
        modality = _modality(spec)
        key = (_ROLE_CODES[spec.role], _MODALITY_CODES[modality])
        numbers[key] += 1
        item_id = f"{key[0]}_{key[1]}_{numbers[key]}"
        # Rotating the gold letter through A-D spreads the answers evenly and deterministically.
        row = _row(spec, item_id, modality, LETTERS[index % len(LETTERS)])
        if spec.picture is not None:
            name = f"{IMAGE_FOLDER}/{item_id}.png"
            spec.picture().save(root / name, format="PNG")
            row["image"] = name
        if spec.scan_seed is not None:
            name = f"{SCAN_FOLDER}/{item_id}.bin"
            scan = synthetic_scan(spec.scan_seed, DEMO_SCAN_POINTS)
            (root / name).write_bytes(scan.astype("<f4").tobytes())
            row["point_cloud"] = name
        lines.append(json.dumps(row, ensure_ascii=False))
    (root / ITEMS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    (root / VERSION_FILE).write_text(DEMO_VERSION + "\n", encoding="utf-8", newline="\n")
    return root


def _modality(spec: DemoSpec) -> Modality:
    if spec.scan_seed is not None:
        return Modality.POINT_CLOUD
    return Modality.IMAGE if spec.picture is not None else Modality.TEXT


def _row(spec: DemoSpec, item_id: str, modality: Modality, answer: str) -> dict[str, Any]:
    distractors = iter(spec.distractors)
    options = {
        letter: spec.correct if letter == answer else next(distractors) for letter in LETTERS
    }
    return {
        "id": item_id,
        "role_tag": spec.role,
        "subject_tag": spec.subject,
        "knowledge_point": spec.knowledge_point,
        "question": spec.question,
        **options,
        "answer": answer,
        "explanation": spec.explanation,
        "difficulty": spec.difficulty,
        "modality": modality.value,
        "capability_tag": spec.capability,
    }
