"""Which frames an item shows, found as the release's `stride/visual.py` finds them.

Waymo rows list `image_paths` (5 CAM_FRONT frames, the query frame last; `image_path` alone when
the list is empty) relative to the image root. nuScenes rows name a group file under the image
root (the release's formatted_scenes folder: `source_group_file`, else
`<scene_id>/<group>_vehicle_annotations.json`) whose `frame_indices_1based` (five) pick the grids
`<scene_id>/<NNN>_*_grid.jpg` (the first of each sorted match); the query frame is replaced by
`<scene_id>/<group>_selected_vehicle_render.jpg` (the red box already drawn) when that file exists.
SC-6 shows every `*_grid.jpg` of the scene, evenly subsampled to 8 by the release's rounding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from roadeval.benchmarks.errors import ItemError, ItemProblem
from roadeval.benchmarks.image_check import NotAnImageError, image_media
from roadeval.benchmarks.item import Media, MediaKind
from roadeval.benchmarks.stride.rows import TaskRow
from roadeval.benchmarks.stride.tasks import (
    SCENE_OVERVIEW,
    SCENE_OVERVIEW_MAX_FRAMES,
    Split,
)

GROUP_FRAMES = 5


def overview_indices(count: int, keep: int = SCENE_OVERVIEW_MAX_FRAMES) -> list[int]:
    """The release's even subsample: all when few, else round(i * (n - 1) / 7) (banker's
    rounding, as Python's round)."""
    if count <= keep:
        return list(range(count))
    return [round(i * (count - 1) / (keep - 1)) for i in range(keep)]


def base_group(group_id: str) -> str:
    return group_id.split("_obj")[0]


@dataclass
class FrameFinder:
    """Resolves and checks frames for the rows of one file; each file is read and hashed once."""

    questions_file: Path
    image_root: Path
    split: Split
    _media: dict[Path, Media] = field(default_factory=dict)
    _groups: dict[Path, dict[str, Any]] = field(default_factory=dict)

    def frames(self, row: TaskRow) -> tuple[Media, ...]:
        waymo = self.split is Split.WAYMO
        try:
            paths, where = self._waymo_paths(row) if waymo else self._nuscenes_paths(row)
        except ItemError:
            raise
        except (OSError, ValueError) as exc:
            # A name no system call takes (too long, a NUL byte) where the frames are looked up.
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            field = "image_paths" if waymo else "scene_id"
            self._fail(row, field, f"the frames cannot be looked up: {reason}")
        return tuple(self._checked(row, path, index, where) for index, path in enumerate(paths))

    def _waymo_paths(self, row: TaskRow) -> tuple[list[Path], str]:
        listed = row.raw.get("image_paths") or []
        where = "image_paths"
        if not listed and row.raw.get("image_path"):
            listed, where = [row.raw["image_path"]], "image_path"
        if not isinstance(listed, list) or not listed:
            self._fail(row, "image_paths", "no frames listed")
        if not all(isinstance(entry, str) and entry for entry in listed):
            self._fail(row, where, "every frame path must be non-empty text")
        return [self._under_root(Path(entry)) for entry in listed], where

    def _nuscenes_paths(self, row: TaskRow) -> tuple[list[Path], str]:
        scene_dir = self.image_root / str(row.raw["scene_id"])
        if row.template == SCENE_OVERVIEW:
            grids = sorted(scene_dir.glob("*_grid.jpg"))
            if not grids:
                self._fail(row, "scene_id", f"no *_grid.jpg frames in {scene_dir}")
            return [grids[i] for i in overview_indices(len(grids))], "scene_id"
        group_file = self._group_file(row)
        payload = self._group(row, group_file)
        indices = payload.get("frame_indices_1based", [])
        if not isinstance(indices, list) or len(indices) != GROUP_FRAMES:
            count = len(indices) if isinstance(indices, list) else "no"
            self._fail(
                row, "source_group_file", f"{group_file}: expected 5 frame indices, got {count}"
            )
        paths: list[Path] = []
        for number in indices:
            if not isinstance(number, int) or isinstance(number, bool):
                self._fail(row, "source_group_file", f"{group_file}: frame index {number!r}")
            matches = sorted(scene_dir.glob(f"{number:03d}_*_grid.jpg"))
            if not matches:
                self._fail(row, "source_group_file", f"no grid for frame {number} in {scene_dir}")
            paths.append(matches[0])
        group = payload.get("group_id") or base_group(str(row.raw["group_id"]))
        selected = scene_dir / f"{group}_selected_vehicle_render.jpg"
        if selected.exists():
            paths[GROUP_FRAMES - 1] = selected
        return paths, "source_group_file"

    def _group_file(self, row: TaskRow) -> Path:
        relative = row.raw.get("source_group_file")
        if not relative:
            group = base_group(str(row.raw["group_id"]))
            relative = f"{row.raw['scene_id']}/{group}_vehicle_annotations.json"
        if not isinstance(relative, str):
            self._fail(row, "source_group_file", "expected a relative path")
        path = self.image_root / relative
        if not path.is_file():
            self._fail(row, "source_group_file", f"group file not found: {path}")
        return path

    def _group(self, row: TaskRow, path: Path) -> dict[str, Any]:
        if path not in self._groups:
            try:
                payload = json.loads(path.read_text(encoding="utf-8"))
            # ValueError: not UTF-8, not JSON, or an integer too long; RecursionError: too deep.
            except (OSError, ValueError, RecursionError) as exc:
                self._fail(row, "source_group_file", f"{path}: unreadable: {exc}")
            if not isinstance(payload, dict):
                self._fail(row, "source_group_file", f"{path}: not a JSON object")
            self._groups[path] = payload
        return self._groups[path]

    def _under_root(self, path: Path) -> Path:
        return path if path.is_absolute() else self.image_root / path

    def _checked(self, row: TaskRow, path: Path, index: int, where: str) -> Media:
        media = self._media.get(path)
        if media is None:
            try:
                media, _ = image_media(MediaKind.FRAME, path)
            except NotAnImageError as exc:
                self._fail(row, where, f"frame {index}: {exc}")
            self._media[path] = media
        return media.model_copy(update={"index": index})

    def _fail(self, row: TaskRow, field_name: str, message: str) -> NoReturn:
        problem = ItemProblem(str(self.questions_file), None, field_name, message, row.item_id)
        raise ItemError(problem)
