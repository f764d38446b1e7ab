"""A suite that exists only for tests: it uses every part of the suite contract that the
shipped suites do not yet (log-probabilities in the parser, protocol generation settings, a
scorer that calls the judge, an unscored metric), so the contract is exercised end to end."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.generation import GenerationSettings
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.judging import Judge, JudgeRequest
from roadeval.benchmarks.loading import LoadReport, collect, read_jsonl
from roadeval.benchmarks.messages import ImageRef, Message, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import register_suite
from roadeval.benchmarks.suite import ItemScore, ParsedAnswer, ParseStatus, Suite

LETTERS = ("A", "B", "C", "D")
JUDGE_SETTINGS = GenerationSettings(temperature=0, max_tokens=192)


def letter_confidence(output: ModelOutput) -> float | None:
    """The largest softmax probability over the four letters at the first output token; None
    when the provider gave no log-probabilities (never invented)."""
    top = output.top_logprobs(0)
    if top is None:
        return None
    letters = {t.strip().upper(): lp for t, lp in top.items() if t.strip().upper() in LETTERS}
    if not letters:
        return None
    peak = max(letters.values())
    weights = {letter: math.exp(lp - peak) for letter, lp in letters.items()}
    return max(weights.values()) / sum(weights.values())


@register_suite
class ProbeSuite(Suite):
    name: ClassVar[str] = "contract-probe"
    prompt_version: ClassVar[str] = "probe-v1"
    generation: ClassVar[GenerationSettings] = GenerationSettings(
        max_tokens=5, temperature=0, logprobs=True, top_logprobs=4
    )
    uses_judge: ClassVar[bool] = True

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        report = LoadReport()

        def build(line: int, row: dict[str, Any]) -> Item:
            return Item(
                suite=self.name,
                suite_version="probe-1",
                item_id=row["id"],
                task="probe",
                question=row["question"],
                options=row["options"],
                answer_kind=AnswerKind.CHOICE,
                reference=row["answer"],
            )

        fields = ("id", "question", "options", "answer")
        collect(read_jsonl(source), build, on_bad_item, report, file=source, known_fields=fields)
        return report

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        options = "\n".join(f"{k}. {v}" for k, v in sorted(item.options.items()))
        return [user_message(f"{item.question}\n{options}\nAnswer with one letter.", images)]

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        letter = output.text.strip()[:1].upper()
        value = {"letter": letter, "confidence": letter_confidence(output)}
        if letter not in LETTERS:
            return ParsedAnswer(ParseStatus.UNPARSED, value, "no-letter")
        return ParsedAnswer(ParseStatus.OK, value, "first-letter")

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return {"correct": float(parsed.value["letter"] == item.reference)}

    async def score_item(
        self, item: Item, parsed: ParsedAnswer, output: ModelOutput, judge: Judge | None
    ) -> ItemScore:
        assert judge is not None
        values = self.score(item, parsed)
        request = JudgeRequest(
            messages=[
                user_message(
                    f"Question: {item.question}\nCandidate answer: {output.text}\n"
                    'Rate it from 0 to 10; reply as JSON {"score": <n>}.'
                )
            ],
            settings=JUDGE_SETTINGS,
            prompt_version="probe-judge-v1",
        )
        reply = await judge(request)
        unscored: dict[str, str] = {}
        score = _judge_score(reply.text) if reply.text is not None else None
        if score is None:
            unscored["judge_score"] = f"unreadable judge reply: {reply.text or reply.error!r}"
        else:
            values["judge_score"] = score
        return ItemScore(values=values, unscored=unscored, judged=reply)


def _judge_score(text: str) -> float | None:
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        found = re.search(r"\b([0-9]|10)\b", text)
        return float(found.group(1)) if found else None
    return float(body["score"]) if isinstance(body, dict) and "score" in body else None
