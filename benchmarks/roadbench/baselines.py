"""The release's baselines as offline models: they answer in the YAML a model would write,
from what the request carries (the lane count and the reference line in the prompt's data
block), never from the gold answer."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import yaml
from shapely import LineString, Point

from roadeval.benchmarks.messages import message_text
from roadeval.benchmarks.registry import BaselineCall, register_baseline
from roadeval.benchmarks.roadbench.metrics_lanes import rule_designations
from roadeval.benchmarks.roadbench.tasks import BEV_DIRECTION_LETTERS, ROAD_TYPES

SUITE = "roadbench"
DATA_BLOCK = re.compile(r"\*\*Data:\*\*\n```yaml\n(.*?)```", re.DOTALL)
TERM_OF_LETTER = {letter: term for term, letter in BEV_DIRECTION_LETTERS.items()}
# The release's random lane-count baseline draws from these.
RANDOM_LANE_COUNTS = (2, 3, 4)


def prompt_data(call: BaselineCall) -> dict[str, Any]:
    """The YAML data block of the request's prompt."""
    found = DATA_BLOCK.search(message_text(call.messages))
    if not found:
        raise ValueError(f"roadbench baseline: no data block in the prompt of {call.item_id}")
    data = yaml.safe_load(found.group(1))
    if not isinstance(data, dict):
        raise ValueError(f"roadbench baseline: unreadable data block in {call.item_id}")
    return data


def yaml_reply(explanation: str, body: str) -> str:
    return f"```yaml\n# Explanation: {explanation}\n{body}\n```"


def seeded(call: BaselineCall) -> random.Random:
    return random.Random(f"{call.seed}:{SUITE}:{call.item_id}:{call.attempt}")


@register_baseline("lane-rule", suite=SUITE, tasks=["2", "5"])
def lane_rule(call: BaselineCall) -> str:
    """1 lane: left+straight+right; 2 lanes: left+straight, straight+right; else left, straight
    in the middle, right (the release's rule baseline)."""
    lanes = prompt_data(call)["num_lanes"]
    designations = [
        [TERM_OF_LETTER[letter] for letter in lane] for lane in rule_designations(int(lanes))
    ]
    return yaml_reply(
        f"rule baseline for {lanes} lanes",
        f"lane_designations: {json.dumps(designations)}",
    )


@register_baseline("always-2", suite=SUITE, tasks=["1", "4"])
def always_two(call: BaselineCall) -> str:
    return yaml_reply("baseline that always answers two lanes", "num_lanes: 2")


@register_baseline("random", suite=SUITE, tasks=["1", "4", "6"])
def random_answer(call: BaselineCall) -> str:
    """A lane count drawn from 2, 3, 4 (tasks 1, 4) or a road type (task 6), seeded per item."""
    rng = seeded(call)
    if call.task == "6":
        return yaml_reply("random baseline", f"road_type: {rng.choice(ROAD_TYPES)}")
    return yaml_reply("random baseline", f"num_lanes: {rng.choice(RANDOM_LANE_COUNTS)}")


@register_baseline("do-nothing", suite=SUITE, tasks=["3"])
def do_nothing(call: BaselineCall) -> str:
    """The reference line unchanged: its two ends as junctions, itself as the only line."""
    coords = [(point["x"], point["y"]) for point in prompt_data(call)["coordinates"]]
    line = LineString(coords)
    junctions = [Point(coords[0]).wkt, Point(coords[-1]).wkt]
    return yaml_reply(
        "the reference line as given",
        f"junctions: {json.dumps(junctions)}\nlines: {json.dumps([line.wkt])}",
    )
