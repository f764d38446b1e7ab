"""The offline baselines `random` and `always-a`: registered for every task, reproducible, and
answering letters the suite's parser reads."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.registry import BaselineCall, BaselineReply, find_baseline
from roadeval.benchmarks.suite import ParseStatus
from roadeval.benchmarks.v2xqa.answers import EXACT_RULE
from roadeval.benchmarks.v2xqa.suite import V2XQASuite
from roadeval.benchmarks.v2xqa.tasks import SUITE_NAME, TASK_IDS
from roadeval.tasks.requests.request import request_key

SUITE = V2XQASuite()


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> list[Item]:
    return SUITE.load(SUITE.generate_demo(tmp_path_factory.mktemp("v2xqa-base"))).items


def reply(name: str, item: Item, seed: int = 0, attempt: int = 1) -> BaselineReply:
    baseline = find_baseline(name, SUITE_NAME, item.task)
    assert baseline is not None, (name, item.task)
    # Keyed as the gateway keys it: by the request the item's prompt sends.
    messages = SUITE.prompt(item, SUITE.render(item))
    key = request_key(f"roadeval/{name}", {"seed": seed}, messages, attempt)
    answer = baseline.fn(BaselineCall.blind(item, seed, attempt, key))
    assert isinstance(answer, BaselineReply)
    return answer


def ask(name: str, item: Item, seed: int = 0, attempt: int = 1) -> str:
    return reply(name, item, seed, attempt).text


def test_each_reports_the_distribution_it_draws_from(items: list[Item]) -> None:
    for item in items:
        uniform = reply("random", item).first_token_logprobs
        assert uniform == pytest.approx({x: math.log(0.25) for x in "ABCD"})
        assert reply("always-a", item).first_token_logprobs == {"A": 0.0}


@pytest.mark.parametrize("name", ["random", "always-a"])
def test_registered_for_every_task(name: str) -> None:
    assert all(find_baseline(name, SUITE_NAME, task) is not None for task in TASK_IDS)


@pytest.mark.parametrize("name", ["random", "always-a"])
def test_answers_parse_as_exact_letters(name: str, items: list[Item]) -> None:
    for item in items:
        parsed = SUITE.parse(item, ModelOutput(ask(name, item)))
        assert (parsed.status, parsed.rule) == (ParseStatus.OK, EXACT_RULE), item.item_id
        assert SUITE.score(item, parsed)["correct"] in (0.0, 1.0)


def test_always_a_scores_the_share_of_a_golds(items: list[Item]) -> None:
    assert {ask("always-a", item) for item in items} == {"A"}
    correct = [
        SUITE.score(item, SUITE.parse(item, ModelOutput(ask("always-a", item))))["correct"]
        for item in items
    ]
    share = sum(item.reference == "A" for item in items) / len(items)
    assert sum(correct) / len(items) == share and 0 < share < 1


def test_random_is_reproducible_and_varied(items: list[Item]) -> None:
    first = [ask("random", item, seed=3) for item in items]
    assert first == [ask("random", item, seed=3) for item in items]
    assert first != [ask("random", item, seed=4) for item in items]
    assert set(Counter(first)) == {"A", "B", "C", "D"}
