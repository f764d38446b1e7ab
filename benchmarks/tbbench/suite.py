"""The TB-Bench suite: eight traffic-behaviour tasks, scored by the release's keyword and
tolerance rules, reported as task accuracy x100 and their unweighted mean."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.headline_stats import Proportion, TaskMean
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.loading import LoadReport, take_limits
from roadeval.benchmarks.messages import ImageRef
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.quality_report import QualityReport
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.suite import (
    Headline,
    Message,
    ParsedAnswer,
    PredictionsRequest,
    ScoredItem,
    Suite,
)
from roadeval.benchmarks.tbbench.answers import grade, read_answer
from roadeval.benchmarks.tbbench.loader import load_items
from roadeval.benchmarks.tbbench.predictions import score_prediction_file
from roadeval.benchmarks.tbbench.prompt import prompt_messages, question_text
from roadeval.benchmarks.tbbench.summary import accuracy_percent, unweighted_mean
from roadeval.benchmarks.tbbench.tasks import SUITE_NAME
from roadeval.benchmarks.tbbench.vocabulary import VOCABULARY
from roadeval.benchmarks.vocabulary import Vocabulary

SUITE_VERSION = "hf-release-1"


@register_suite
class TBBenchSuite(Suite):
    """Options: `add_choices` (bool, default False as in the release notebook) appends the
    release's answer-format or option lines to each question."""

    name: ClassVar[str] = SUITE_NAME
    prompt_version: ClassVar[str] = "release-notebook-1"
    # One try per item: the release never asks again.
    max_attempts: ClassVar[int] = 1
    slice_labels: ClassVar[tuple[str, ...]] = ("gold_kind",)
    slice_metrics: ClassVar[tuple[str, ...]] = ("correct",)
    headline: ClassVar[tuple[Headline, ...]] = (
        # Task accuracy is in percent (x100), and so are their intervals.
        Headline("mean_accuracy", statistic=TaskMean("correct", scale=100.0)),
        Headline("accuracy", task="", statistic=Proportion("correct", scale=100.0)),
    )
    vocabulary: ClassVar[Vocabulary] = VOCABULARY

    # Tasks may ask of the same clip (or the same image: a clip of one frame); a clip's
    # questions are drawn together.
    cluster_unit: ClassVar[str] = "clips"

    def __init__(self, **options: Any) -> None:
        self.limits = take_limits(self.name, options, self.default_limits)
        add_choices = options.pop("add_choices", False)
        if options:
            raise ValueError(f"suite {self.name!r} has no option(s): {', '.join(sorted(options))}")
        if not isinstance(add_choices, bool):
            raise ValueError(
                f"{self.name} option add_choices must be true or false, got {add_choices!r}"
            )
        self.add_choices = add_choices

    def options(self) -> dict[str, Any]:
        return {"add_choices": self.add_choices}

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return load_items(
            source,
            suite_version=SUITE_VERSION,
            policy=on_bad_item,
            add_choices=self.add_choices,
            limits=self.limits,
        )

    def cluster_keys(self, item: Item) -> tuple[str, ...]:
        """The clip: its frames' bytes in order (the release embeds them), so items that show
        the same frames (or the same single image) share it; none for an item without frames."""
        if not item.media:
            return ()
        frames = "".join(media.sha256 for media in item.media)
        return (f"clip/{hashlib.sha256(frames.encode()).hexdigest()}",)

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        choices = [item.options[letter] for letter in sorted(item.options)]
        question = question_text(
            item.labels["release_task"], item.question, choices, self.add_choices
        )
        return prompt_messages(question, images)

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return read_answer(item.task, item.reference, output.text)

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return {"correct": 1.0 if grade(item.task, item.reference, parsed) else 0.0}

    def summarize(self, task: str, scored: Sequence[ScoredItem]) -> dict[str, float]:
        if not scored:
            return {}
        return {"accuracy": accuracy_percent([row.values["correct"] for row in scored])}

    def overall(self, per_task: dict[str, dict[str, float]]) -> dict[str, float]:
        accuracies = [metrics["accuracy"] for metrics in per_task.values() if "accuracy" in metrics]
        if not accuracies:
            return {}
        return {"mean_accuracy": unweighted_mean(accuracies)}

    def score_predictions(self, request: PredictionsRequest) -> dict[str, Any]:
        """Predictions are always raw text, read by the release's rules (the request has no
        options of this suite's own)."""
        return score_prediction_file(request.labels, request.predictions, request.task)

    def quality_report(self, source: Path) -> QualityReport:
        """Task codes, frames per task, golds its scorer can read, choices, ids and repeated
        questions (`qc_report`)."""
        from roadeval.benchmarks.tbbench.qc_report import quality_report

        return quality_report(self, Path(source))

    def generate_demo(self, root: Path) -> Path:
        from roadeval.benchmarks.tbbench.demo import write_demo

        return write_demo(root)
