"""The release's prompts, verbatim (they are the protocol), in its default setting: the
reference line both drawn on the image and given in the data block, direction shown by arrows."""

from __future__ import annotations

from collections.abc import Sequence

import shapely
import yaml

IMAGE_DESCRIPTION_BEV = (
    "This is a satellite image of a road network in China, where vehicles drive on the right "
    "side of the road."
)
IMAGE_DESCRIPTION_FPV = (
    "This is a personal viewpoint image of a road in China, where vehicles drive on the right "
    "side of the road."
)
# The release's arrow-mode description, line break and trailing space included.
REFERENCE_LINE_ARROWS = (
    "A specific road segment has been marked as a red polyline with \narrowheads."
)

EXPLANATION_LINE = "# Explanation: [Describe what you see that led to your determination]"


LANE_COUNT_OUTPUT = (
    "**YAML Output Requirements:**\n"
    "- Add ONLY one-line YAML comment explaining your visual analysis and reasoning\n"
    "- Extract `num_lanes` (integer)\n"
    "\n"
    "**Output Format:**\n"
    "```yaml\n"
    f"{EXPLANATION_LINE}\n"
    "num_lanes: <integer>\n"
    "```\n"
    "\n"
    "Your YAML output:\n"
)


def reference_coords(pixel_line: str) -> list[tuple[float, float]]:
    """The vertices of a WKT reference line, as floats (as shapely gives them)."""
    return [(float(x), float(y)) for x, y, *_ in shapely.from_wkt(pixel_line).coords]


def shown_coordinates(coords: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The vertices as the prompt shows them: rounded to 2 decimals, as the release dumps them."""
    return [(round(float(x), 2), round(float(y), 2)) for x, y in coords]


def coordinates_yaml(coords: Sequence[tuple[float, float]]) -> str:
    """The reference line as the release dumps it: yaml.dump of {"coordinates": [{x, y}, ...]}
    with float coordinates rounded to 2 decimals (shapely gives floats, so 400 shows as 400.0)."""
    points = [{"x": x, "y": y} for x, y in shown_coordinates(coords)]
    return yaml.dump({"coordinates": points}).strip()


def bev_data_block(
    width: int, height: int, coords: Sequence[tuple[float, float]], num_lanes: int | None = None
) -> str:
    lanes = "" if num_lanes is None else f"# The number of lanes\nnum_lanes: {num_lanes}\n"
    return (
        "**Data:**\n"
        "```yaml\n"
        f"{lanes}"
        "# The image size\n"
        "image:\n"
        f"  width: {width}\n"
        f"  height: {height}\n"
        "# The pixel coordinates of the reference centerline\n"
        f"{coordinates_yaml(coords)}\n"
        "```\n"
    )


def bev_lane_counting_prompt(width: int, height: int, coords: Sequence[tuple[float, float]]) -> str:
    """Task 1 (bev_lane_counting.py)."""
    return (
        "**Task: Lane Counting for Road Network Analysis**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_BEV} {REFERENCE_LINE_ARROWS}\n"
        "\n"
        f"{bev_data_block(width, height, coords)}"
        "\n"
        "**Question:**\n"
        "Analyze the marked road segment and determine: How many lanes are available for "
        "vehicles traveling in the direction of the arrow?\n"
        "\n"
        f"{LANE_COUNT_OUTPUT}"
    )


def fpv_lane_counting_prompt() -> str:
    """Task 4 (fpv_lane_counting.py)."""
    return (
        "**Task: Lane Counting for Road Network Analysis**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_FPV}\n"
        "\n"
        "**Question:**\n"
        "Analyze the image and determine: How many lanes are available for vehicles traveling "
        "in the direction of the road?\n"
        "\n"
        f"{LANE_COUNT_OUTPUT}"
    )


def lane_designation_rules(num_lanes: int, terms: Sequence[str]) -> str:
    """Direction types, output requirements and format of tasks 2 and 5."""
    listed = "".join(f"({index}) {term}\n" for index, term in enumerate(terms, start=1))
    quoted = ", ".join(f'"{term}"' for term in terms)
    return (
        "**Lane Direction Types:**\n"
        "The available lane direction types include:\n"
        f"{listed}"
        "\n"
        "**YAML Output Requirements:**\n"
        "- Add ONLY one-line YAML comment explaining your visual analysis and reasoning\n"
        "- Return `lane_designations` as a list where each item represents the lane direction "
        "types for each lane from left to right\n"
        "  - Make sure the number of lane designations is equal to the number of lanes "
        f"(which is {num_lanes})\n"
        "- Each lane can have multiple direction types, so each item in the list should also "
        "be a list\n"
        f"- Use the English terms: {quoted}\n"
        "\n"
        "**Output Format:**\n"
        "```yaml\n"
        f"{EXPLANATION_LINE}\n"
        'lane_designations: [["direction1", "direction2"], ["direction3"], ...]\n'
        "```\n"
        "\n"
        "Your YAML output:\n"
    )


BEV_TERMS = ("U-turn", "left-turn", "straight", "right-turn")
FPV_TERMS = (*BEV_TERMS, "variable")


def bev_lane_designation_prompt(
    width: int, height: int, coords: Sequence[tuple[float, float]], num_lanes: int
) -> str:
    """Task 2 (bev_lane_designations.py)."""
    return (
        "**Task: Lane Designations Recognition for Road Network Analysis**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_BEV} {REFERENCE_LINE_ARROWS}\n"
        "\n"
        f"{bev_data_block(width, height, coords, num_lanes)}"
        "\n"
        "**Question:**\n"
        "Analyze the marked road segment and determine: What are the lane designations in the "
        "direction of the arrow?\n"
        "\n"
        f"{lane_designation_rules(num_lanes, BEV_TERMS)}"
    )


def fpv_lane_designation_prompt(num_lanes: int) -> str:
    """Task 5 (fpv_lane_designations.py)."""
    return (
        "**Task: Lane Designations Recognition for Road Network Analysis**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_FPV}\n"
        "\n"
        "**Data:**\n"
        "```yaml\n"
        "# The number of lanes\n"
        f"num_lanes: {num_lanes}\n"
        "```\n"
        "\n"
        "**Question:**\n"
        "Analyze the image and determine: What are the lane designations in the direction of "
        "the road?\n"
        "\n"
        f"{lane_designation_rules(num_lanes, FPV_TERMS)}"
    )


def fpv_road_type_prompt() -> str:
    """Task 6 (fpv_road_type.py)."""
    return (
        "**Task: Road Type Classification**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_FPV}\n"
        "\n"
        "**Question:**\n"
        "Analyze the image and determine: Is the current vehicle traveling on a main road or a "
        "service road?\n"
        "\n"
        "**Road Type Definitions:**\n"
        "- **Main road**: Primary traffic arteries, highways, major streets with higher traffic "
        "capacity and speed limits\n"
        "- **Service road**: Secondary roads, access roads, frontage roads, or auxiliary roads "
        "that typically serve adjacent properties or provide access to main roads\n"
        "\n"
        "**YAML Output Requirements:**\n"
        "- Add ONLY one-line YAML comment explaining your visual analysis and reasoning\n"
        '- Extract `road_type` as either "main" or "service"\n'
        "\n"
        "**Output Format:**\n"
        "```yaml\n"
        f"{EXPLANATION_LINE}\n"
        'road_type: <"main" or "service">\n'
        "```\n"
        "\n"
        "Your YAML output:\n"
    )


def bev_roadnet_prompt(width: int, height: int, coords: Sequence[tuple[float, float]]) -> str:
    """Task 3 (bev_roadnet_correction.py)."""
    return (
        "**Task: Road Network Modification and Junction Identification**\n"
        "\n"
        "**Image Description:**\n"
        f"{IMAGE_DESCRIPTION_BEV} A reference line has been marked as a red directed polyline "
        "to indicate the path and direction of travel along a road.\n"
        "\n"
        f"{bev_data_block(width, height, coords)}"
        "\n"
        "**Task Description:**\n"
        "The given reference line may have missed important junctions such as intersections, "
        "highway on/off ramps, U-turn locations, dedicated right-turn lanes, etc., and it may not "
        "always be accurately aligned with the true centerline of the road. Your task is to "
        "analyze the image and identify:\n"
        "\n"
        "1. **Junctions**: Important road intersections, merging points, or decision points that "
        "should be marked. Junctions are represented by WKT POINT geometries.\n"
        "2. **Line Segments (with Directionality)**: Road segments between junctions that "
        "represent the centerlines of the roads, with attention to the direction of travel (from "
        "start to end, following the reference line's direction). Line segments are represented "
        "by WKT LINESTRING geometries, and their order and orientation should reflect the actual "
        "direction of traffic flow along the road.\n"
        "\n"
        "**Analysis Requirements:**\n"
        "- Carefully examine the directed reference line and the actual road network in the "
        "image\n"
        "- Identify any missing junctions where the directed reference line should be split "
        "(intersections, ramps, etc.)\n"
        "- Return corrected directed line segments that represent the centerlines between "
        "identified junctions\n"
        "- Ensure junctions are placed at the center points of intersections/decision points\n"
        "- Ensure line segments follow the actual road centerlines\n"
        "- Do not return junctions or line segments that are not related to the directed "
        "reference line\n"
        "\n"
        "**YAML Output Requirements:**\n"
        "- Add ONLY one-line YAML comment explaining your analysis and corrections\n"
        "- Return `junctions` as a list of WKT POINT geometries representing junction center "
        "points\n"
        "- Return `lines` as a list of directed WKT LINESTRING geometries representing road "
        "centerlines between junctions\n"
        '- Use pixel coordinates in the format: "POINT (x y)" and "LINESTRING (x1 y1, x2 y2, '
        '...)"\n'
        "\n"
        "**Output Format:**\n"
        "```yaml\n"
        "# Explanation: [Describe the junctions and line segments you identified and any "
        "corrections made to the directed reference line]\n"
        'junctions: ["POINT (x1 y1)", "POINT (x2 y2)", ...]\n'
        'lines: ["LINESTRING (x1 y1, x2 y2)", "LINESTRING (x2 y2, x3 y3)", ...]\n'
        "```\n"
        "\n"
        "Your YAML output:\n"
    )
