"""Each suite names what its items share (`Suite.cluster_keys`), read from its released layout:
V2X-QA the scene (a vehicle-side frame and the roadside frame its cooperative rows pair with
it), STRIDE the scene id, RoadBench the image file, TB-Bench the clip, TRIP the image or scan.
Each demo asks several questions of one scene, image or clip, so its clusters are real."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.suite import Suite
from roadeval.tasks.results.clusters import SuiteClusters, suite_clusters


def _loaded(name: str, root: Path) -> tuple[Suite, dict[str, Item], SuiteClusters]:
    suite = get_suite(name)
    items = suite.load(suite.generate_demo(root / name)).items
    clusters = suite_clusters(suite.cluster_unit, ((i, suite.cluster_keys(i)) for i in items))
    return suite, {item.item_id: item for item in items}, clusters


def _sizes(clusters: SuiteClusters) -> Counter[int]:
    """How many clusters have each size."""
    return Counter(Counter(clusters.of.values()).values())


def test_v2xqa_a_scene_is_its_vehicle_frame_and_the_roadside_frame_paired_with_it(
    tmp_path: Path, media_cache: Path
) -> None:
    suite, items, clusters = _loaded("v2xqa", tmp_path)
    assert suite.cluster_keys(items["CO1:000100"]) == ("vehicle/000100", "infrastructure/000200")
    assert suite.cluster_keys(items["VS2:000100"]) == ("vehicle/000100",)
    assert suite.cluster_keys(items["IS3:000200"]) == ("infrastructure/000200",)
    scene = {i for i, c in clusters.of.items() if c == clusters.of["VS1:000100"]}
    assert scene == {
        f"{view}{k}:{sample}"
        for view, sample in (("VS", "000100"), ("IS", "000200"), ("CO", "000100"))
        for k in range(1, 5)
    }
    assert _sizes(clusters) == {12: 4} and suite.cluster_unit == "scenes"


def test_stride_a_scene_is_its_scene_id(tmp_path: Path, media_cache: Path) -> None:
    suite, items, clusters = _loaded("stride", tmp_path)
    first = items["SP-1:scene_001:group_001:demo001lead"]
    assert suite.cluster_keys(first) == ("scene/scene_001",)
    scene = {i for i, c in clusters.of.items() if c == clusters.of[first.item_id]}
    assert scene == {i for i in items if ":scene_001:" in i}
    assert _sizes(clusters) == {7: 3} and suite.cluster_unit == "scenes"


def test_roadbench_an_image_is_its_file_in_the_release(tmp_path: Path) -> None:
    suite, items, clusters = _loaded("roadbench", tmp_path)
    counting = next(item for item in items.values() if item.task == "1")
    release_id = counting.extra["release_id"]
    assert suite.cluster_keys(counting) == (f"task_1_2/{release_id}.png",)
    # Lane counting and lane designation ask of the same image.
    assert clusters.of[f"1:{release_id}"] == clusters.of[f"2:{release_id}"]
    road_type = next(item for item in items.values() if item.task == "6")
    assert suite.cluster_keys(road_type) == (f"task_6/{Path(road_type.media[0].path).name}",)
    assert Counter(clusters.of.values())[clusters.of[road_type.item_id]] == 1
    assert _sizes(clusters) == {2: 20, 1: 20} and suite.cluster_unit == "images"


def test_tbbench_a_clip_is_its_frames(tmp_path: Path, media_cache: Path) -> None:
    suite, items, clusters = _loaded("tbbench", tmp_path)
    distance, spatial = items["RD-0000"], items["SR-0000"]
    frames = "".join(m.sha256 for m in distance.media)
    assert suite.cluster_keys(distance) == (f"clip/{hashlib.sha256(frames.encode()).hexdigest()}",)
    assert suite.cluster_keys(distance) == suite.cluster_keys(spatial)
    assert clusters.of["RD-0000"] == clusters.of["SR-0000"] != clusters.of["RD-0001"]
    # An item without frames shares nothing (not a clip of no frames with every such item).
    assert suite.cluster_keys(distance.model_copy(update={"media": ()})) == ()
    assert _sizes(clusters) == {2: 5, 1: 30} and suite.cluster_unit == "clips"


def test_trip_shared_media_are_its_images_and_scans(tmp_path: Path) -> None:
    suite, items, clusters = _loaded("trip", tmp_path)
    image = items["P_i_1"]
    digest = hashlib.sha256(Path(image.media[0].path).read_bytes()).hexdigest()
    assert suite.cluster_keys(image) == (f"media/{digest}",)
    assert clusters.of["P_i_1"] == clusters.of["V_i_1"]
    assert clusters.of["P_i_3"] == clusters.of["V_i_3"]
    text = [item for item in items.values() if item.labels["modality"] == "text"]
    assert text and all(suite.cluster_keys(item) == () for item in text)
    assert _sizes(clusters) == {2: 2, 1: 39}
