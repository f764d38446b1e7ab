"""The demo's scenes and questions (our own wording): each scene fixes four attributes, each
task asks about one of them, so every gold answer follows from what the images show."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from roadeval.benchmarks.v2xqa.tasks import LETTERS


class Attribute(StrEnum):
    LAYOUT = "layout"  # 0 intersection, 1 straight road, 2 merge lane, 3 work zone
    AGENT = "agent"  # 0 car, 1 truck, 2 pedestrian, 3 cyclist
    DENSITY = "density"  # 0 light, 1 moderate, 2 heavy, 3 a stopped queue (RSU view)
    MANOEUVRE = "manoeuvre"  # 0 straight, 1 left, 2 right, 3 stop (road marking, ego view)


@dataclass(frozen=True)
class Scene:
    index: int
    layout: int
    agent: int
    density: int
    manoeuvre: int

    def value(self, attribute: Attribute) -> int:
        return int(getattr(self, attribute.value))

    @property
    def vehicle_image_id(self) -> str:
        return f"{100 + self.index:06d}"

    @property
    def infrastructure_image_id(self) -> str:
        return f"{200 + self.index:06d}"


SCENE_COUNT = 4
# Shifting each attribute by a different offset gives every scene a different combination.
SCENES: tuple[Scene, ...] = tuple(
    Scene(s, s % 4, (s + 1) % 4, (s + 2) % 4, (s + 3) % 4) for s in range(SCENE_COUNT)
)


@dataclass(frozen=True)
class DemoQuestion:
    task_id: str
    question: str
    attribute: Attribute
    answers: tuple[str, str, str, str]  # by attribute value

    def options(self, rotation: int) -> dict[str, str]:
        """Letters A-D over the answers, rotated so the gold letter varies across scenes."""
        placed = {LETTERS[(j + rotation) % 4]: text for j, text in enumerate(self.answers)}
        return {letter: placed[letter] for letter in LETTERS}

    def gold(self, scene: Scene, rotation: int) -> str:
        return LETTERS[(scene.value(self.attribute) + rotation) % 4]


_LAYOUTS = ("An intersection.", "A straight road.", "A merging lane.", "A work zone.")
_AGENTS = ("A car.", "A truck.", "A pedestrian.", "A cyclist.")
_DENSITY = ("Light traffic.", "Moderate traffic.", "Heavy traffic.", "A stopped queue.")
_MANOEUVRES = ("Continue straight.", "Turn left.", "Turn right.", "Stop at the line.")

QUESTIONS: tuple[DemoQuestion, ...] = (
    DemoQuestion(
        "VS1", "Which road layout is ahead of the ego vehicle?", Attribute.LAYOUT, _LAYOUTS
    ),
    DemoQuestion("VS2", "Which road user is nearest ahead?", Attribute.AGENT, _AGENTS),
    DemoQuestion(
        "VS3",
        "What should the ego driver watch most closely?",
        Attribute.AGENT,
        ("The car ahead braking.", "The truck's blind spot.", "The pedestrian.", "The cyclist."),
    ),
    DemoQuestion(
        "VS4",
        "What does the lane marking tell the ego vehicle to do?",
        Attribute.MANOEUVRE,
        _MANOEUVRES,
    ),
    DemoQuestion(
        "IS1", "Which layout does the roadside camera overlook?", Attribute.LAYOUT, _LAYOUTS
    ),
    DemoQuestion("IS2", "How busy is the road in the roadside view?", Attribute.DENSITY, _DENSITY),
    DemoQuestion(
        "IS3",
        "What is the main hazard across the roadside view?",
        Attribute.DENSITY,
        ("No notable hazard.", "Uneven gaps.", "Close following.", "Queue spill-back."),
    ),
    DemoQuestion(
        "IS4", "Which road user stands out at the far end of the view?", Attribute.AGENT, _AGENTS
    ),
    DemoQuestion(
        "CO1", "Using both views, what is the ego vehicle approaching?", Attribute.LAYOUT, _LAYOUTS
    ),
    DemoQuestion(
        "CO2",
        "What does the roadside view show beyond the ego view?",
        Attribute.DENSITY,
        ("Little traffic.", "Some traffic.", "Much traffic.", "A queue."),
    ),
    DemoQuestion(
        "CO3",
        "Using both views, what will the ego vehicle do next?",
        Attribute.MANOEUVRE,
        _MANOEUVRES,
    ),
    DemoQuestion(
        "CO4",
        "Using both views, what should the ego vehicle do now?",
        Attribute.MANOEUVRE,
        ("Keep its speed.", "Yield, then turn left.", "Slow, then turn right.", "Brake to a stop."),
    ),
)
