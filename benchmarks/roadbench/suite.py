"""The RoadBench suite: the six released tasks with the release's prompts, YAML parsing with up
to 4 attempts, and its metric scripts' semantics per item and per task."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.headline_stats import Mean, Proportion
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadReport
from roadeval.benchmarks.messages import ImageRef, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.roadbench.answers import read_reply
from roadeval.benchmarks.roadbench.answers import should_reask as release_reasks
from roadeval.benchmarks.roadbench.demo import write_demo
from roadeval.benchmarks.roadbench.headline_stats import LaneExactMatch, WeightedF1
from roadeval.benchmarks.roadbench.loader import load_items
from roadeval.benchmarks.roadbench.outcomes import parsed_outcome, scored_outcome
from roadeval.benchmarks.roadbench.predictions import RoadBenchPredictions, score_prediction_file
from roadeval.benchmarks.roadbench.render import item_image
from roadeval.benchmarks.roadbench.scoring import item_values, summarize_task
from roadeval.benchmarks.roadbench.tasks import ROADNET_TASK, SUITE_NAME, TASKS
from roadeval.benchmarks.roadbench.vocabulary import VOCABULARY
from roadeval.benchmarks.suite import (
    Headline,
    ItemScore,
    Message,
    ParsedAnswer,
    PredictionsRequest,
    ScoredItem,
    Suite,
)
from roadeval.benchmarks.vocabulary import Vocabulary

# The release commit whose prompts, parsing and metric scripts this adapter follows.
SUITE_VERSION = "release-8178e69"


# Task 3's estimated scoring CPU per item and per reference vertex (`heavy_scoring_seconds`).
TASK3_ITEM_S = 0.0005
TASK3_VERTEX_S = 0.0002


def reference_vertices(reference: Any) -> int:
    """The vertices of a task-3 reference's lines (WKT: one more than its commas), counted
    without parsing them."""
    lines = reference.get("lines") if isinstance(reference, dict) else None
    if not isinstance(lines, list):
        return 0
    return sum(line.count(",") + 1 for line in lines if isinstance(line, str))


@register_suite
class RoadBenchSuite(Suite):
    """Items are "<task>:<release id>" for tasks "1".."6"; images go as PNG data URLs before the
    prompt text, as the release sends them."""

    name: ClassVar[str] = SUITE_NAME
    prompt_version: ClassVar[str] = "release-8178e69:both-arrows"
    # The release's client tries 4 times in all while the reply's YAML does not read.
    max_attempts: ClassVar[int] = 4
    # Tasks have one view each, so only the capture condition (tasks 4, 5) slices within a task.
    slice_labels: ClassVar[tuple[str, ...]] = ("condition",)
    slice_metrics: ClassVar[tuple[str, ...]] = (
        "correct",
        "abs_error",
        "hamming_loss",
        "lane_exact_match",
        "release_error",
    )
    headline: ClassVar[tuple[Headline, ...]] = (
        # Lane counting (1, 4), designation (2, 5), network correction (3), road type (6).
        Headline("f1", task="", statistic=WeightedF1()),
        Headline("exact_match", task="", statistic=LaneExactMatch()),
        Headline("buffer_f1@0.2", task="", statistic=Mean("buffer_f1@0.2")),
        Headline("accuracy", task="", statistic=Proportion("correct")),
    )
    vocabulary: ClassVar[Vocabulary] = VOCABULARY
    # Per task: items, the release's error count, and lanes compared (tasks 2 and 5).
    count_metrics: ClassVar[frozenset[str]] = frozenset({"items", "errors", "lanes"})
    # Tasks 1 and 2 (4 and 5) ask of the same image; a task's items are drawn by image.
    cluster_unit: ClassVar[str] = "images"
    # Prediction files take two options of RoadBench's own: `images` and `reparse`.
    predictions_request: ClassVar[type[PredictionsRequest]] = RoadBenchPredictions

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return load_items(Path(source), SUITE_VERSION, on_bad_item, self.limits)

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        """BEV images with the reference line drawn on, FPV images as they are (PNG)."""
        return (item_image(item),)

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """The image file, as the release names it: its label folder and file name."""
        return tuple(f"{TASKS[item.task].folder}/{Path(m.path).name}" for m in item.media)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return [user_message(item.question, images=images)]

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return read_reply(item.task, output.text)

    def should_reask(self, item: Item, parsed: ParsedAnswer) -> bool:
        return release_reasks(parsed)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return self.score_details(item, parsed).values

    def heavy_scoring(self, item: Item) -> bool:
        """Task 3's buffer-F1 (GEOS buffers of every line at three thresholds) costs
        milliseconds per item; the other tasks microseconds."""
        return item.task == ROADNET_TASK

    def heavy_scoring_seconds(self, item: Item) -> float:
        """Task 3's cost grows with the road network's vertices (each line is buffered, and
        matched to the answer's): about 0.5 ms plus 0.2 ms a reference vertex on one core
        (bench/roadbench_scoring.py: 1.5 ms for the release's items of about 5 vertices,
        40 ms for heavy ones of about 200)."""
        return TASK3_ITEM_S + TASK3_VERTEX_S * reference_vertices(item.reference)

    def score_details(self, item: Item, parsed: ParsedAnswer) -> ItemScore:
        """The values, the anomaly (why the release would drop or crash on the item) kept for
        audits, and the metric scripts' view of the item, which the task summary reuses."""
        result = parsed_outcome(item.task, parsed, item.reference)
        values, anomaly = item_values(
            item.task, item.reference, result, item.extra.get("image_size")
        )
        details = {"anomaly": anomaly} if anomaly else {}
        return ItemScore(values=values, details=details, state=result)

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        """The official metrics of the task (names in `scoring`), plus items and errors."""
        truths = [row.item.reference for row in scored]
        results = [scored_outcome(row) for row in scored]
        return summarize_task(task, truths, results, [row.values for row in scored])

    def score_predictions(self, request: PredictionsRequest) -> dict[str, Any]:
        return score_prediction_file(RoadBenchPredictions.of(request))

    def quality_report(self, source: Path) -> QualityReport:
        """Each task's label format, its images, ids and repeated questions (`qc_report`)."""
        from roadeval.benchmarks.roadbench.qc_report import quality_report

        return quality_report(self, Path(source))

    def generate_demo(self, root: Path) -> Path:
        return write_demo(Path(root))
