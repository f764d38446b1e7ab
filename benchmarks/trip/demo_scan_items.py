"""The demo's point-cloud questions: each over a scan the project synthesises (a straight
three-lane road with kerbs, pavements, walls, 3-5 vehicles and 2-4 poles; see
`pointcloud.synthetic`), so every answer follows from how the scan is built, whatever its seed."""

from __future__ import annotations

from roadeval.benchmarks.trip.demo_spec import DemoSpec

_SCENE = "scene semantic understanding"

SCAN_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "vehicle",
        "road geometry",
        "lane counting from LiDAR",
        _SCENE,
        "easy",
        "How many traffic lanes does the road in the point cloud have?",
        "3",
        ("2", "4", "6"),
        "Three 3.5 m lanes between kerbs 10.5 m apart.",
        scan_seed=11,
    ),
    DemoSpec(
        "traffic management",
        "road geometry",
        "cross-section elements",
        _SCENE,
        "medium",
        "What separates the carriageway from the pavements in the point cloud?",
        "A raised kerb on each side",
        (
            "A painted line on each side",
            "A guard rail on the left side",
            "Nothing: the surfaces are level",
        ),
        "Both edges step up by about 0.15 m: a kerb on each side.",
        scan_seed=23,
    ),
    DemoSpec(
        "planning-and-design",
        "roadside objects",
        "street furniture placement",
        _SCENE,
        "hard",
        "Where are the vertical poles in the point cloud placed?",
        "On the pavements beside the road",
        (
            "In the middle lane of the road",
            "Along the centre line of the road",
            "Only behind the sensor position",
        ),
        "Thin vertical columns stand about 7 m to either side of the centre line.",
        scan_seed=37,
    ),
)
