"""The vision judge through `score_item`, with a fake judge: the request it is sent (frames,
question, reference, candidate, rubric, settings) and how each kind of reply is scored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.benchmarks.messages import ImageRef, message_text
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.stride.judge import (
    FIRST_INTEGER,
    JSON_SCORE,
    JUDGE_PROMPT_VERSION,
    judge_prompt,
    parse_judge_score,
)
from roadeval.benchmarks.stride.suite import StrideSuite


class FakeJudge:
    """Answers every request with `reply` (text) or fails with `error`; keeps the requests."""

    def __init__(self, reply: str | None, error: str | None = None) -> None:
        self.reply, self.error = reply, error
        self.requests: list[JudgeRequest] = []

    async def __call__(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        output = ModelOutput(self.reply) if self.reply is not None else None
        return JudgeReply(
            "fake-judge", "key", request.settings.params(), request.prompt_hash, output, self.error
        )


@pytest.fixture
def judged_item(tmp_path: Path) -> tuple[StrideSuite, Item]:
    suite = StrideSuite()
    items = suite.load(suite.generate_demo(tmp_path / "demo")).items
    return suite, next(i for i in items if i.task == "SP-7")


@pytest.mark.parametrize(
    ("reply", "score", "rule"),
    [
        ('{"score": 8, "rationale": "good"}', 8.0, JSON_SCORE),
        ('{"score": 12, "rationale": "too generous"}', 12.0, JSON_SCORE),  # not clamped
        ('{"score": "7.5"}', 7.5, JSON_SCORE),
        ('<think>maybe 3</think>{"score": 6}', 6.0, JSON_SCORE),
        # A fenced reply is not JSON: the first 0-10 integer wins, even in the rationale.
        ('```json\n{"rationale": "2 lanes", "score": 9}\n```', 2.0, FIRST_INTEGER),
        ("I would give it 10 out of 10", 10.0, FIRST_INTEGER),
        ('{"score": null} but 4', 4.0, FIRST_INTEGER),
    ],
)
def test_reply_reader(reply: str, score: float, rule: str) -> None:
    assert parse_judge_score(reply) == (score, rule)


def test_unreadable_reply() -> None:
    score, reason = parse_judge_score("I would rather not say.")
    assert score is None and "no JSON score" in reason
    assert parse_judge_score("score: 11")[0] is None  # 11 is no standalone 0-10 integer


async def test_the_request_carries_frames_text_and_settings(
    judged_item: tuple[StrideSuite, Item],
) -> None:
    suite, item = judged_item
    judge = FakeJudge('{"score": 12, "rationale": "x"}')
    answer = "<think>hmm</think> The vehicle is ahead and moving away."
    output = ModelOutput(answer)
    score = await suite.score_item(item, suite.parse(item, output), output, judge)
    assert score.values == {"judge_score": 12.0} and score.judged is not None
    (request,) = judge.requests
    assert request.settings.params() == {"temperature": 0, "max_tokens": 192}
    assert request.prompt_version == JUDGE_PROMPT_VERSION
    (message,) = request.messages
    parts = message["content"]
    frames = suite.render(item)
    # The same frames as the candidate saw, in order, before the rubric text.
    assert [p["image_url"]["url"] for p in parts[:-1]] == list(frames)
    assert all(isinstance(p["image_url"]["url"], ImageRef) for p in parts[:-1])
    text = message_text(request.messages)
    assert text == judge_prompt(
        item.question, item.reference, "The vehicle is ahead and moving away."
    )
    assert f"Question: {item.question}\n" in text  # the row's question, `<obj>` unreplaced
    assert f"Reference answer: {item.reference}\n" in text
    assert text.endswith("Candidate answer: The vehicle is ahead and moving away.\n")
    assert "10 = fully correct and complete given the visuals" in text


@pytest.mark.parametrize(
    ("judge", "reason"),
    [
        (lambda: FakeJudge("I would rather not say."), "unreadable judge reply"),
        (lambda: FakeJudge(None, error="rate limited"), "judge call failed: rate limited"),
    ],
)
async def test_unscored_replies_keep_their_reason(
    judged_item: tuple[StrideSuite, Item], judge: Callable[[], FakeJudge], reason: str
) -> None:
    suite, item = judged_item
    output = ModelOutput("An answer.")
    score = await suite.score_item(item, suite.parse(item, output), output, judge())
    assert score.values == {}
    assert reason in score.unscored["judge_score"]
    assert score.judged is not None  # the reply (or the failure) is kept for the audit


@pytest.mark.parametrize("answer", ["", "   ", "<think>all thoughts</think>", "[ERROR] timeout"])
async def test_nothing_to_judge_is_unanswered_and_not_sent(
    judged_item: tuple[StrideSuite, Item], answer: str
) -> None:
    suite, item = judged_item
    judge = FakeJudge('{"score": 10}')
    output = ModelOutput(answer)
    score = await suite.score_item(item, suite.parse(item, output), output, judge)
    assert judge.requests == []
    assert score.values == {} and "unanswered" in score.unscored["judge_score"]
    assert score.state.judge.value == "unanswered"
