"""The STRIDE suite: spatio-temporal driving questions over five frames (nuScenes 360-degree grids
or Waymo CAM_FRONT), scored as the release scores them: MCQ accuracy, TRJ-5 / TRJ-6 waypoint
errors, and a vision judge for the open templates."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.headline_stats import Mean, Proportion
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import Judge, JudgeRequest
from roadeval.benchmarks.loading import LoadReport
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.stride.judge import candidate_answer, judge_request
from roadeval.benchmarks.stride.loader import load_items
from roadeval.benchmarks.stride.mcq import read_choice
from roadeval.benchmarks.stride.predictions import score_prediction_file
from roadeval.benchmarks.stride.prompt import PROMPT_VERSION, build_messages
from roadeval.benchmarks.stride.render import item_frames
from roadeval.benchmarks.stride.rows import KEY_FIELDS
from roadeval.benchmarks.stride.scoring import (
    CORRECT,
    JUDGE_SCORE,
    item_kind,
    score_judged,
    score_plain,
)
from roadeval.benchmarks.stride.summary import group_values, summarize_task
from roadeval.benchmarks.stride.tasks import SUITE_NAME, Kind, expected_points
from roadeval.benchmarks.stride.vocabulary import VOCABULARY
from roadeval.benchmarks.stride.waypoints import read_trajectory
from roadeval.benchmarks.suite import (
    JUDGE_CALL_CPU_S,
    GroupValue,
    Headline,
    ItemScore,
    Message,
    ParsedAnswer,
    ParseStatus,
    PredictionsRequest,
    ScoredItem,
    Suite,
)
from roadeval.benchmarks.vocabulary import Vocabulary

OPEN_ANSWER = "open:answer"
OPEN_NO_ANSWER = "open:no-answer"


# A trajectory item's estimated scoring CPU (`heavy_scoring_seconds`).
TRAJECTORY_ITEM_S = 0.0001


@register_suite
class StrideSuite(Suite):
    """Source: a `questions.json` (nuScenes v6, Waymo v1, or a Mini file), or a folder holding
    `questions.json` (else exactly one .json file).

    Option `images`: the image root (Waymo: the `val/images` folder `image_paths` are relative
    to; nuScenes: the formatted_scenes folder with the grids and group files), relative to the
    questions file's folder; default: that folder.
    """

    name: ClassVar[str] = SUITE_NAME
    prompt_version: ClassVar[str] = PROMPT_VERSION
    # The release's runner (`evaluation/run_openai.py`) sends temperature 0 and nothing else.
    generation: ClassVar[GenerationSettings] = GenerationSettings(temperature=0)
    uses_judge: ClassVar[bool] = True
    # Waymo rows name their scenario cluster (Cut-ins, Construction, ...).
    slice_labels: ClassVar[tuple[str, ...]] = ("scenario",)
    slice_metrics: ClassVar[tuple[str, ...]] = ("correct", "judge_score", "ade", "fde", "min_fde")
    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("mcq_accuracy", statistic=Proportion(CORRECT)),
        Headline("judge_score", statistic=Mean(JUDGE_SCORE)),
        Headline("traj_ade", statistic=Mean("ade")),
        Headline("traj_fde", statistic=Mean("fde")),
        Headline("accuracy", task="", statistic=Proportion(CORRECT)),
        Headline("judge_score", task="", statistic=Mean(JUDGE_SCORE)),
        Headline("ade", task="", statistic=Mean("ade")),
    )
    vocabulary: ClassVar[Vocabulary] = VOCABULARY
    # The release asks several templates of each scene (nuScenes v6: 1,150 questions over 761
    # scenes): a scene's questions are drawn together.
    cluster_unit: ClassVar[str] = "scenes"
    # Per template and per group: items correct, read, not read, judged or not.
    count_metrics: ClassVar[frozenset[str]] = frozenset(
        {
            "correct",
            "unparsed",
            "not_an_option",
            "parsed",
            "parse_failures",
            "judge_scored",
            "judge_unscored",
            "unanswered",
            "not_judged",
            "mcq_correct",
            "mcq_unparsed",
            "mcq_not_an_option",
            "traj_parsed",
            "traj_parse_failures",
            "judge_unanswered",
        }
    )

    def __init__(self, *, images: str | None = None, **options: Any) -> None:
        super().__init__(**options)
        if images is not None and not isinstance(images, str | Path):
            raise ValueError(f"suite {self.name!r}: images must be a folder path, got {images!r}")
        self.images = str(images) if images is not None else None

    def options(self) -> dict[str, Any]:
        return {"images": self.images}

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return load_items(Path(source), images=self.images, policy=on_bad_item, limits=self.limits)

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """The row's `scene_id` (kept in its matching key); none when the row has none."""
        scene = item.extra["match_key"][KEY_FIELDS.index("scene_id")]
        return (f"scene/{scene}",) if scene not in (None, "") else ()

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        """The frames re-encoded as the release's runner sends them, the Waymo box drawn."""
        return item_frames(item)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return build_messages(item, images)

    def judge_preview(self, item: Item, images: Sequence[ImageRef]) -> JudgeRequest | None:
        if item_kind(item) is not Kind.JUDGED:
            return None
        return judge_request(images, item.question, str(item.reference), "")

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        kind = item_kind(item)
        if kind is Kind.MCQ:
            return read_choice(output.text, item.options)
        if kind is Kind.TRAJECTORY:
            return read_trajectory(output.text, expected_points(item.task), len(item.reference))
        answer = candidate_answer(output.text)
        if answer is None:
            return ParsedAnswer(ParseStatus.UNPARSED, "", OPEN_NO_ANSWER, "empty or [ERROR]")
        return ParsedAnswer(ParseStatus.OK, answer, OPEN_ANSWER)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return self.score_details(item, parsed).values

    def score_details(self, item: Item, parsed: ParsedAnswer) -> ItemScore:
        return score_plain(item, parsed)

    def heavy_scoring(self, item: Item) -> bool:
        """Judge calls and waypoint metrics go to the scoring cluster; MCQ letters do not."""
        return item_kind(item) in (Kind.JUDGED, Kind.TRAJECTORY)

    def heavy_scoring_seconds(self, item: Item) -> float:
        """A judge call's CPU, or a trajectory's metrics (tens of microseconds an item, its
        ADE/FDE in Python)."""
        if item_kind(item) is Kind.JUDGED:
            return JUDGE_CALL_CPU_S
        return TRAJECTORY_ITEM_S

    async def score_item(
        self, item: Item, parsed: ParsedAnswer, output: ModelOutput, judge: Judge | None
    ) -> ItemScore:
        if item_kind(item) is Kind.JUDGED:
            # The frames the model saw (shipped with the item to a scoring worker).
            return await score_judged(item, output.text, self.images_shown(item), judge)
        return score_plain(item, parsed)

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        return summarize_task(scored)

    def group_values(self, scored: Sequence[ScoredItem]) -> list[GroupValue]:
        return group_values(scored)

    def score_predictions(self, request: PredictionsRequest) -> dict[str, Any]:
        """Raw answers are always read by the release's rules; `task` keeps one template (the
        request has no options of this suite's own)."""
        return score_prediction_file(Path(request.labels), Path(request.predictions), request.task)

    def quality_report(self, source: Path) -> QualityReport:
        """Templates, choices, golds and trajectory lengths, frames, the query frame's box, ids
        and repeated questions (`qc_report`)."""
        from roadeval.benchmarks.stride.qc_report import quality_report

        return quality_report(self, Path(source))

    def generate_demo(self, root: Path) -> Path:
        from roadeval.benchmarks.stride.demo import write_demo

        return write_demo(Path(root))
