"""The TRIP-Evaluate suite: single-choice transport questions over text, images and point clouds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.drawing import DrawJob, drawn_views
from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.headline_stats import Proportion
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadReport
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.pointcloud import DEFAULT_FRAME, frame_from_config
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.suite import GroupValue, Headline, Message, ParsedAnswer, ScoredItem, Suite
from roadeval.benchmarks.trip import demo, diagnostics, metrics, qc_report, records
from roadeval.benchmarks.trip.answers import AbnormalRule, parse_reply
from roadeval.benchmarks.trip.headline_stats import DIFFICULTY_PENALTY, MODALITY_PENALTY
from roadeval.benchmarks.trip.loader import load_items
from roadeval.benchmarks.trip.prompt import PROMPT_VERSION, build_messages, shown_images
from roadeval.benchmarks.trip.scan_views import scan_views
from roadeval.benchmarks.trip.taxonomy import LABEL_FIELDS, SUITE_NAME, TASK
from roadeval.benchmarks.trip.vocabulary import VOCABULARY
from roadeval.benchmarks.vocabulary import Vocabulary

# Suite-level figures surfaced from the single task's summary.
_OVERALL_KEYS = ("accuracy", "abnormal_rate", "modality_penalty", "difficulty_penalty")


@register_suite
class TripSuite(Suite):
    """TRIP-Evaluate: one prompt, one letter A-D, accuracy overall and by each label.

    Option `abnormal_rule`: "wrong" (default; abnormal replies are wrong) or "first-valid" (the
    first option letter in an abnormal reply is taken); see `answers` for the exact rule.
    Option `point_cloud_frame`: the scans' frame, a preset (`default`/`kitti`: X forward, Y left,
    Z up; `nuscenes`: X right, Y forward, Z up) or a 3x3 rotation into the default.
    """

    name: ClassVar[str] = SUITE_NAME
    prompt_version: ClassVar[str] = PROMPT_VERSION
    # The paper's "fixed decoding": greedy. It states no token limit, so none is set.
    generation: ClassVar[GenerationSettings] = GenerationSettings(temperature=0)
    slice_labels: ClassVar[tuple[str, ...]] = tuple(LABEL_FIELDS)
    slice_metrics: ClassVar[tuple[str, ...]] = (metrics.CORRECT,)
    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("accuracy", statistic=Proportion(metrics.CORRECT)),
        Headline("modality_penalty", statistic=MODALITY_PENALTY),
        Headline("difficulty_penalty", statistic=DIFFICULTY_PENALTY),
    )
    vocabulary: ClassVar[Vocabulary] = VOCABULARY
    count_metrics: ClassVar[frozenset[str]] = frozenset({"abnormal_count"})
    # Items that show the same image or scan are drawn together; an item without one, alone.
    cluster_unit: ClassVar[str] = "items or groups sharing an image or scan"
    # `pareto`, the Pareto of errors (`extra_tables`).
    tables: ClassVar[Mapping[str, type[Any]]] = records.TABLES

    def __init__(
        self,
        *,
        abnormal_rule: str = AbnormalRule.WRONG.value,
        point_cloud_frame: str | list[list[float]] = DEFAULT_FRAME.name,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        try:
            self.abnormal_rule = AbnormalRule(abnormal_rule)
        except ValueError:
            allowed = ", ".join(rule.value for rule in AbnormalRule)
            raise ValueError(
                f"suite {self.name!r}: abnormal_rule must be one of {allowed}, "
                f"got {abnormal_rule!r}"
            ) from None
        try:
            self.frame = frame_from_config(point_cloud_frame)
        except ValueError as exc:
            raise ValueError(f"suite {self.name!r}: point_cloud_frame: {exc}") from None

    def options(self) -> dict[str, Any]:
        frame = self.frame.name if self.frame.name != "custom" else self.frame.rotation
        return {"abnormal_rule": self.abnormal_rule.value, "point_cloud_frame": frame}

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return load_items(Path(source), on_bad_item, self.limits)

    def draw_job(self, item: Item) -> DrawJob | None:
        """A point-cloud item's scan, drawn as the protocol's BEV and front views."""
        return scan_views(item, self.frame)

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        job = self.draw_job(item)
        return drawn_views(job) if job is not None else shown_images(item)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return build_messages(item, images)

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """The images or scan the item shows, by their bytes; none for a text item."""
        return tuple(f"media/{media.sha256}" for media in item.media)

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return parse_reply(output.text, self.abnormal_rule)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        # An unparsed reply has no value, so it never equals the gold letter: wrong, by the rule.
        return {metrics.CORRECT: 1.0 if parsed.value == item.reference else 0.0}

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        return metrics.summarize_items(scored)

    def overall(self, per_task: dict[str, dict[str, float]]) -> dict[str, float]:
        summary = per_task.get(TASK, {})
        return {key: summary[key] for key in _OVERALL_KEYS if key in summary}

    def group_values(self, scored: Sequence[ScoredItem]) -> list[GroupValue]:
        return diagnostics.capability_penalties(scored)

    def extra_tables(self, run_id: str, model: str, scored: Sequence[ScoredItem]) -> list[Any]:
        return diagnostics.pareto_rows(run_id, model, scored)

    def quality_report(self, source: Path) -> QualityReport:
        return qc_report.quality_report(self, Path(source))

    def generate_demo(self, root: Path) -> Path:
        return demo.generate_demo(Path(root))
