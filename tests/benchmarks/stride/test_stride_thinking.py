"""`</think>` stripping on every path of a run (the suite's parse and score_item on the demo's
items): each reasoning trace below would change the result if it reached a parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.judging import JudgeReply, JudgeRequest
from roadeval.benchmarks.messages import message_text
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.stride import mcq, waypoints
from roadeval.benchmarks.stride.suite import OPEN_ANSWER, OPEN_NO_ANSWER, StrideSuite
from roadeval.benchmarks.stride.thinking import strip_thinking
from roadeval.benchmarks.suite import ParseStatus


def _first(items: list[Item], task: str) -> Item:
    return next(item for item in items if item.task == task)


@pytest.fixture
def suite_items(tmp_path: Path) -> tuple[StrideSuite, list[Item]]:
    suite = StrideSuite()
    return suite, suite.load(suite.generate_demo(tmp_path / "demo")).items


def test_strip_thinking_keeps_the_text_after_the_last_tag() -> None:
    assert strip_thinking("<think>a</think> b <think>c</think>  d \n") == "d"
    assert strip_thinking("  no tags  ") == "no tags"
    assert strip_thinking("<think>unterminated") == "<think>unterminated"


def test_mcq(suite_items: tuple[StrideSuite, list[Item]]) -> None:
    suite, items = suite_items
    item = _first(items, "SP-1")
    wrong = next(letter for letter in sorted(item.options) if letter != item.reference)
    output = ModelOutput(f"<think>Option {wrong} looks right</think>{item.reference}")
    parsed = suite.parse(item, output)
    assert (parsed.status, parsed.value, parsed.rule) == (
        ParseStatus.OK,
        item.reference,
        mcq.SINGLE_LETTER,
    )
    assert suite.score(item, parsed) == {"correct": 1.0}


def test_trajectory(suite_items: tuple[StrideSuite, list[Item]]) -> None:
    suite, items = suite_items
    item = _first(items, "TRJ-5")
    # A wrong list after the right one inside the reasoning: tried first were it kept.
    text = f"<think>{json.dumps(item.reference)} or [[9, 9]]</think>{json.dumps(item.reference)}"
    parsed = suite.parse(item, ModelOutput(text))
    assert (parsed.status, parsed.rule) == (ParseStatus.OK, waypoints.EXPECTED_COUNT)
    assert suite.score(item, parsed) == {"ade": 0.0, "fde": 0.0, "min_fde": 0.0}
    only_thoughts = suite.parse(item, ModelOutput(f"<think>{json.dumps(item.reference)}</think>"))
    assert only_thoughts.rule == waypoints.ORIGIN_FALLBACK
    assert only_thoughts.value == [[0.0, 0.0]] * len(item.reference)


class EchoJudge:
    """Scores 9 and keeps the request, so the candidate it was shown can be checked."""

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    async def __call__(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        reply = ModelOutput('<think>first thought: 2</think>{"score": 9}')
        return JudgeReply("echo", "k", {}, request.prompt_hash, reply)


async def test_open_answer_and_judge_reply(suite_items: tuple[StrideSuite, list[Item]]) -> None:
    suite, items = suite_items
    item = _first(items, "SP-7")
    output = ModelOutput("<think>Is it 3 m away? Maybe.</think>\n  It is ahead, moving away. ")
    parsed = suite.parse(item, output)
    assert (parsed.status, parsed.value, parsed.rule) == (
        ParseStatus.OK,
        "It is ahead, moving away.",
        OPEN_ANSWER,
    )
    judge = EchoJudge()
    score = await suite.score_item(item, parsed, output, judge)
    # The judge saw the answer without the reasoning, and its own reasoning was dropped too
    # (kept, the reply is not JSON and its first integer, 2, would be the score).
    assert message_text(judge.requests[0].messages).endswith(
        "Candidate answer: It is ahead, moving away.\n"
    )
    assert score.values == {"judge_score": 9.0}
    empty = suite.parse(item, ModelOutput("<think>It is ahead.</think>"))
    assert (empty.status, empty.rule) == (ParseStatus.UNPARSED, OPEN_NO_ANSWER)
