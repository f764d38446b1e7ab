"""The demo's image items: each answer is read off a drawing (lanes, arrows, lines, signs, signals).

The drawings carry the evidence the question needs and nothing else, so an item is multimodal in
the paper's sense: without the image it cannot be answered. Two pairs of questions ask of one
drawing each, as a release's questions of one image do (clustered in the intervals).
"""

from __future__ import annotations

from functools import partial

from roadeval.benchmarks.trip import demo_drawing
from roadeval.benchmarks.trip.demo_spec import DemoSpec

_SCENE = "scene semantic understanding"
_LOGIC = "logical reasoning"
_LANE_COUNT = "How many lanes does the carriageway in the image have?"
_RIGHTMOST_ARROW = "What movement does the pavement arrow in the rightmost lane allow?"
_ARROW_OPTIONS = ("Turn left only", "Go straight only", "Turn right only", "Straight or right")
_SIGN_SHAPE = "What is the shape of the sign in the image?"
_SIGNAL = "Which indication is the traffic signal in the image displaying?"


def _others(correct: str, choices: tuple[str, ...]) -> tuple[str, str, str]:
    """The three distractors of a closed set of four choices, in the set's order."""
    rest = tuple(choice for choice in choices if choice != correct)
    if len(rest) != 3:
        raise ValueError(f"{correct!r} must be one of four choices {choices}")
    return rest[0], rest[1], rest[2]


IMAGE_ITEMS: tuple[DemoSpec, ...] = (
    DemoSpec(
        "planning-and-design",
        "road geometry",
        "lane count",
        _SCENE,
        "easy",
        _LANE_COUNT,
        "3 lanes",
        ("2 lanes", "4 lanes", "5 lanes"),
        "Two broken lane lines between the solid edge lines divide the carriageway into 3 lanes.",
        # The rightmost-arrow question's image: two questions of one image (one cluster).
        partial(demo_drawing.one_way_road, 3, ("left", "straight", "right")),
    ),
    DemoSpec(
        "planning-and-design",
        "road geometry",
        "lane count",
        _SCENE,
        "medium",
        _LANE_COUNT,
        "5 lanes",
        ("3 lanes", "4 lanes", "6 lanes"),
        "Four broken lane lines between the solid edge lines divide the carriageway into 5 lanes.",
        partial(demo_drawing.one_way_road, 5),
    ),
    DemoSpec(
        "planning-and-design",
        "capacity analysis",
        "approach saturation flow",
        "numerical calculation",
        "medium",
        "Each lane of the approach shown has a saturation flow of 1800 veh/h. What is the "
        "saturation flow of the whole approach?",
        "7200 veh/h",
        ("5400 veh/h", "9000 veh/h", "1800 veh/h"),
        "The image shows 4 lanes; 4 x 1800 = 7200 veh/h.",
        # The lane-selection question's image.
        partial(demo_drawing.one_way_road, 4, ("left", "straight", "straight", "straight-right")),
    ),
    DemoSpec(
        "planning-and-design",
        "intersection design",
        "intersection legs",
        _SCENE,
        "easy",
        "How many approach legs does the intersection in the image have?",
        "3 legs",
        ("4 legs", "5 legs", "6 legs"),
        "Roads leave the junction to the north, east and west: a three-leg (T) intersection.",
        partial(demo_drawing.intersection, (0, 90, 270)),
    ),
    DemoSpec(
        "vehicle",
        "lane use",
        "pavement turn arrows",
        _SCENE,
        "easy",
        _RIGHTMOST_ARROW,
        "Turn right only",
        _others("Turn right only", _ARROW_OPTIONS),
        "The rightmost lane's arrow has only a right-pointing head.",
        partial(demo_drawing.one_way_road, 3, ("left", "straight", "right")),
    ),
    DemoSpec(
        "vehicle",
        "lane use",
        "pavement turn arrows",
        _SCENE,
        "medium",
        _RIGHTMOST_ARROW,
        "Straight or right",
        _others("Straight or right", _ARROW_OPTIONS),
        "The rightmost lane's arrow has an upward head and a right-pointing head.",
        partial(demo_drawing.one_way_road, 3, ("straight-left", "straight", "straight-right")),
    ),
    DemoSpec(
        "vehicle",
        "lane use",
        "lane selection",
        _LOGIC,
        "medium",
        "Counting lanes from the left, which lane must a driver use to turn right?",
        "Lane 4",
        ("Lane 1", "Lane 2", "Lane 3"),
        "Only the fourth lane's arrow has a right-pointing head (straight or right).",
        partial(demo_drawing.one_way_road, 4, ("left", "straight", "straight", "straight-right")),
    ),
    DemoSpec(
        "vehicle",
        "traffic regulations",
        "stop sign",
        "knowledge memory",
        "easy",
        "What must a driver do on reaching the sign shown?",
        "Come to a complete stop",
        ("Yield to cross traffic", "Slow down for children", "No entry for vehicles"),
        "A red octagon is the stop sign: a full stop is required before proceeding.",
        partial(demo_drawing.road_sign, "octagon"),
    ),
    DemoSpec(
        "vehicle",
        "signal control",
        "signal indications",
        _SCENE,
        "easy",
        _SIGNAL,
        "Steady red",
        ("Steady amber", "Steady green", "Green arrow"),
        "Only the top lamp is lit, in red.",
        partial(demo_drawing.signal_head, "red"),
    ),
    DemoSpec(
        "vehicle",
        "signal control",
        "protected left turn",
        _LOGIC,
        "medium",
        "A driver waits in the left-turn lane facing this signal. What may the driver do?",
        "Turn left, protected",
        ("Turn left, yield first", "Stop and wait for green", "Turn right on arrow"),
        "A green left arrow gives a protected left-turn movement: opposing traffic is held on red.",
        partial(demo_drawing.signal_head, "green-left-arrow"),
    ),
    DemoSpec(
        "traffic management",
        "signs and markings",
        "centre line markings",
        _SCENE,
        "easy",
        "What type of line separates the two opposing lanes?",
        "Double solid yellow",
        ("Single broken yellow", "Single solid white", "Double broken white"),
        "Two parallel unbroken yellow lines run between the opposing lanes.",
        partial(demo_drawing.two_way_road, "double-solid-yellow"),
    ),
    DemoSpec(
        "traffic management",
        "signs and markings",
        "centre line markings",
        _LOGIC,
        "medium",
        "Judging only by the centre line shown, may a driver cross it to overtake when the road "
        "ahead is clear?",
        "Yes, passing is permitted",
        ("No, passing is prohibited", "Only to turn into a driveway", "Only on a divided highway"),
        "A single broken yellow centre line permits passing in both directions when it is safe.",
        partial(demo_drawing.two_way_road, "single-broken-yellow"),
    ),
    DemoSpec(
        "traffic management",
        "signs and markings",
        "sign shapes",
        _SCENE,
        "easy",
        _SIGN_SHAPE,
        "Triangular",
        ("Octagonal", "Circular", "Pentagonal"),
        "A downward-pointing triangle with a red border: the yield sign's shape.",
        partial(demo_drawing.road_sign, "inverted-triangle"),
    ),
    DemoSpec(
        "traffic management",
        "signs and markings",
        "sign shapes",
        _SCENE,
        "medium",
        _SIGN_SHAPE,
        "Pentagonal",
        ("Octagonal", "Triangular", "Circular"),
        "A five-sided sign pointing up: the pentagon used for school zones.",
        partial(demo_drawing.road_sign, "pentagon"),
    ),
)
