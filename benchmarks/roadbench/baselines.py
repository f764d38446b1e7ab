"""The release's baselines as offline models: they answer in the YAML a model would write,
from what the prompt shows (the lane count, the reference line as its data block rounds it),
never from the gold answer, which their call does not carry."""

from __future__ import annotations

import json

from shapely import LineString, Point

from roadeval.benchmarks.registry import BaselineCall, register_baseline
from roadeval.benchmarks.roadbench.metrics_lanes import rule_designations
from roadeval.benchmarks.roadbench.prompt import reference_coords, shown_coordinates
from roadeval.benchmarks.roadbench.tasks import BEV_DIRECTION_LETTERS, ROAD_TYPES, SUITE_NAME

TERM_OF_LETTER = {letter: term for term, letter in BEV_DIRECTION_LETTERS.items()}
# The release's random lane-count baseline draws from these.
RANDOM_LANE_COUNTS = (2, 3, 4)


def yaml_reply(explanation: str, body: str) -> str:
    return f"```yaml\n# Explanation: {explanation}\n{body}\n```"


@register_baseline("lane-rule", suite=SUITE_NAME, tasks=["2", "5"])
def lane_rule(call: BaselineCall) -> str:
    """1 lane: left+straight+right; 2 lanes: left+straight, straight+right; else left, straight
    in the middle, right (the release's rule baseline)."""
    lanes = call.item.extra["num_lanes"]
    designations = [
        [TERM_OF_LETTER[letter] for letter in lane] for lane in rule_designations(int(lanes))
    ]
    return yaml_reply(
        f"rule baseline for {lanes} lanes",
        f"lane_designations: {json.dumps(designations)}",
    )


@register_baseline("always-2", suite=SUITE_NAME, tasks=["1", "4"])
def always_two(call: BaselineCall) -> str:
    return yaml_reply("baseline that always answers two lanes", "num_lanes: 2")


@register_baseline("random", suite=SUITE_NAME, tasks=["1", "4", "6"])
def random_answer(call: BaselineCall) -> str:
    """A lane count drawn from 2, 3, 4 (tasks 1, 4) or a road type (task 6), seeded by
    the request (seed, prompt, attempt)."""
    rng = call.rng()
    if call.task == "6":
        return yaml_reply("random baseline", f"road_type: {rng.choice(ROAD_TYPES)}")
    return yaml_reply("random baseline", f"num_lanes: {rng.choice(RANDOM_LANE_COUNTS)}")


@register_baseline("do-nothing", suite=SUITE_NAME, tasks=["3"])
def do_nothing(call: BaselineCall) -> str:
    """The reference line unchanged: its two ends as junctions, itself as the only line."""
    coords = shown_coordinates(reference_coords(call.item.extra["pixel_line"]))
    line = LineString(coords)
    junctions = [Point(coords[0]).wkt, Point(coords[-1]).wkt]
    return yaml_reply(
        "the reference line as given",
        f"junctions: {json.dumps(junctions)}\nlines: {json.dumps([line.wkt])}",
    )
