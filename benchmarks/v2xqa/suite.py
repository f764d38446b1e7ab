"""The V2X-QA suite: twelve four-option tasks over vehicle-side, roadside and cooperative
images, asked with the release's prompt, read with its letter parser, scored by accuracy per
task, view and overall, with ECE and Brier from the log-probabilities at the answer's letter."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.headline_stats import Mean, Proportion
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadReport, take_limits
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.suite import (
    GroupValue,
    Headline,
    ItemScore,
    Message,
    ParsedAnswer,
    PredictionsRequest,
    ScoredItem,
    Suite,
)
from roadeval.benchmarks.v2xqa import summary
from roadeval.benchmarks.v2xqa.answers import (
    parse_output,
    parsed_confidence,
    parsed_letter,
    parsed_letters_seen,
    parsed_position,
    parsed_probs,
)
from roadeval.benchmarks.v2xqa.calibration import brier_item
from roadeval.benchmarks.v2xqa.headline_stats import CalibrationError
from roadeval.benchmarks.v2xqa.loader import load_items
from roadeval.benchmarks.v2xqa.options import MAX_TOP_LOGPROBS, SuiteOptions
from roadeval.benchmarks.v2xqa.predictions import score_prediction_file
from roadeval.benchmarks.v2xqa.prompt import PROMPT_VERSION, build_messages
from roadeval.benchmarks.v2xqa.render import item_images
from roadeval.benchmarks.v2xqa.tasks import SUITE_NAME, ImageSide
from roadeval.benchmarks.v2xqa.vocabulary import VOCABULARY
from roadeval.benchmarks.vocabulary import Vocabulary

NO_LOGPROBS = "no confidence: the provider gave no log-probabilities with an A-D letter"


@register_suite
class V2XQASuite(Suite):
    """Options (see `options` for details): `vehicle_images`, `infrastructure_images` (image
    roots, default `images/vehicle` and `images/infrastructure` under the source),
    `image_max_side` (default null; 560 sends the release script's thumbnails) and
    `top_logprobs` (default 20; 1-20)."""

    name: ClassVar[str] = SUITE_NAME
    prompt_version: ClassVar[str] = PROMPT_VERSION
    # The release's eval: greedy, 5 new tokens; log-probabilities for its calibration (it reads
    # the four letter logits; an API gives its top alternatives, so as many as it will: the
    # `top_logprobs` option, 20 by default, sets the instance's `protocol_generation`).
    generation: ClassVar[GenerationSettings] = GenerationSettings(
        max_tokens=5, temperature=0, logprobs=True, top_logprobs=MAX_TOP_LOGPROBS
    )
    max_attempts: ClassVar[int] = 1
    # 2: the confidence is read at the first position whose alternatives hold a letter.
    scorer_version: ClassVar[str] = "2"
    slice_labels: ClassVar[tuple[str, ...]] = ("question_id",)
    slice_metrics: ClassVar[tuple[str, ...]] = (summary.CORRECT,)
    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("accuracy", statistic=Proportion(summary.CORRECT)),
        Headline("ece", statistic=CalibrationError()),
        Headline("brier", statistic=Mean(summary.BRIER)),
        Headline("accuracy", task="", statistic=Proportion(summary.CORRECT)),
    )
    vocabulary: ClassVar[Vocabulary] = VOCABULARY
    count_metrics: ClassVar[frozenset[str]] = frozenset(
        {"unparsed_count", "confidence_items", "no_confidence_items"}
    )
    # A scene: a vehicle-side frame and the roadside frame its cooperative rows pair it with;
    # the release asks twelve questions of each (four per view).
    cluster_unit: ClassVar[str] = "scenes"

    def __init__(self, **options: Any) -> None:
        self.limits = take_limits(self.name, options, self.default_limits)
        self.settings = SuiteOptions.parse(options)

    def options(self) -> dict[str, Any]:
        return self.settings.as_dict()

    def protocol_generation(self) -> GenerationSettings:
        return self.generation.model_copy(update={"top_logprobs": self.settings.top_logprobs})

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return load_items(Path(source), self.settings, on_bad_item, self.limits)

    def render(self, item: Item) -> tuple[ImageRef, ...]:
        return item_images(item, self.settings.image_max_side)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return build_messages(item, images)

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return parse_output(output)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return self.score_details(item, parsed).values

    def score_details(self, item: Item, parsed: ParsedAnswer) -> ItemScore:
        """`correct` (an unparsed reply has no letter: wrong), and the item's Brier score when
        the reply came with letter probabilities (else unscored, with the reason). Details:
        `letters_seen` (0-4) and `position` (the output position read; null with none) always,
        `confidence` when there is one."""
        values = {summary.CORRECT: 1.0 if parsed_letter(parsed) == item.reference else 0.0}
        details: dict[str, Any] = {
            "letters_seen": parsed_letters_seen(parsed),
            "position": parsed_position(parsed),
        }
        probs = parsed_probs(parsed)
        if probs is None:
            return ItemScore(values=values, unscored={summary.BRIER: NO_LOGPROBS}, details=details)
        values[summary.BRIER] = brier_item(probs, str(item.reference))
        details["confidence"] = parsed_confidence(parsed)
        return ItemScore(values=values, details=details)

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """The frames the item shows, by side and release id (`image_id_vs`, `image_id_is`):
        a cooperative row names both, so it links its scene's vehicle-side and roadside rows."""
        return tuple(
            f"{side.value}/{item.extra[side.id_field]}"
            for side in ImageSide
            if item.extra.get(side.id_field)
        )

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        """accuracy (a fraction; the release prints percent) and unparsed_count."""
        return summary.task_summary(scored)

    def group_values(self, scored: Sequence[ScoredItem]) -> list[GroupValue]:
        """Per view and overall: accuracy, confidence_items, no_confidence_items,
        letters_seen_lt4, ece, brier; per family: accuracy.
        The suite-wide accuracy lives here, so `overall` adds nothing."""
        return summary.group_values([summary.outcome_of(row) for row in scored])

    def score_predictions(self, request: PredictionsRequest) -> dict[str, Any]:
        """Predictions are read by the release's letter parser always; no images are needed (the
        request has no options of this suite's own)."""
        return score_prediction_file(Path(request.labels), Path(request.predictions), request.task)

    def quality_report(self, source: Path) -> QualityReport:
        """The release schema's checks, the views' images, task codes and repeated questions
        (`qc_report`)."""
        from roadeval.benchmarks.v2xqa.qc_report import quality_report

        return quality_report(self, Path(source))

    def generate_demo(self, root: Path) -> Path:
        from roadeval.benchmarks.v2xqa.demo import write_demo

        return write_demo(Path(root))
