"""A baseline's answers are indexed from columns and made on demand: each stored answer equals
the landed row it comes from, whether a few are asked for (row by row) or all (a rescore)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pyarrow as pa
import pytest

from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus
from roadeval.storage.records import EVERY_METRIC, SCHEMAS
from roadeval.tasks.rerun import answers as module
from roadeval.tasks.rerun.answers import BaselineAnswers
from roadeval.tasks.shard.remote_scoring import SCORER_ERROR
from roadeval.tasks.shard.stages import copied_outcome

from support.rows import record

RUN = "20261202T000000Z-aaaaaaaa"


def _tables(n: int) -> dict[str, pa.Table]:
    def table(name: str, rows: list[object]) -> pa.Table:
        return pa.Table.from_pylist([r.__dict__ for r in rows], schema=SCHEMAS[name])

    common = {"run_id": RUN, "suite": "s", "task": "t", "model": "m", "sample": 1, "variant": ""}
    responses = [
        record(
            "responses",
            **common,
            item_id=f"i{k}",
            content_hash=f"h{k}",
            role="answer",
            attempt=1,
            try_number=1,
            request_key=f"key-{k}",
            raw_text=f"answer {k}",
            model_string="openai/m",
            tokens_in=10 + k,
            tokens_out=1,
            original_cost_usd=0.001 * k,
            latency_s=0.5,
            cached=False,
        )
        for k in range(n)
    ]
    parses = [
        record(
            "parses",
            **common,
            item_id=f"i{k}",
            content_hash=f"h{k}",
            attempt=1,
            status="ok",
            value_json='"A"',
            rule="letter",
            detail="",
        )
        for k in range(n)
    ]
    scores = [
        record(
            "scores",
            **common,
            item_id=f"i{k}",
            content_hash=f"h{k}",
            metric="correct",
            value=float(k % 2),
            status="scored",
            request_key=f"key-{k}",
        )
        for k in range(n)
    ]
    return {
        "responses": table("responses", responses),
        "parses": table("parses", parses),
        "scores": table("scores", scores),
    }


@pytest.mark.parametrize("asked", [3, 200])
def test_stored_answers_are_their_rows_however_many_are_asked_for(asked: int) -> None:
    found = BaselineAnswers.of(RUN, _tables(200))
    assert len(found.outcomes) == 200 and len(found.answers) == 200
    for k in range(asked):
        call = found.stored(f"key-{k}")
        assert call is not None and call.cached and call.try_number == 0
        assert (call.request_key, call.text, call.attempt) == (f"key-{k}", f"answer {k}", 1)
        assert call.output is not None and call.output.tokens_in == 10 + k
        assert call.origin_run_id == RUN
    assert found.stored("key-missing") is None
    # Past a few, the table is made into records once rather than row by row.
    assert found.rows is not None
    assert (found.rows._records is not None) == (asked > module._ONE_BY_ONE)


def test_an_outcome_matches_by_its_chains_keys_without_making_its_answers() -> None:
    found = BaselineAnswers.of(RUN, _tables(5))
    outcome = found.outcomes[("i2", 1, "")]
    assert outcome.keys == ("key-2",) and outcome.matches("h2", ["key-2", "key-2-reask"])
    assert not outcome.matches("h2", ["other"]) and not outcome.matches("changed", ["key-2"])
    assert found.rows is not None and not found.rows._made  # nothing made yet
    assert [c.request_key for c in outcome.calls] == ["key-2"]


def _scorer_failed(tables: dict[str, pa.Table], k: int) -> dict[str, pa.Table]:
    """Item `k`'s score row as a scorer that raised lands it: metric '*', unscored."""
    scores = tables["scores"].to_pylist()
    scores[k] |= {
        "metric": EVERY_METRIC,
        "value": None,
        "status": "unscored",
        "unscored_reason": "scorer_error: ValueError: boom",
        "details_json": json.dumps({SCORER_ERROR: {"type": "ValueError", "message": "boom"}}),
    }
    return tables | {"scores": pa.Table.from_pylist(scores, schema=SCHEMAS["scores"])}


def test_an_outcomes_parse_and_scores_are_its_rows_read_from_columns() -> None:
    found = BaselineAnswers.of(RUN, _tables(5))
    outcome = found.outcomes[("i3", 1, "")]
    assert outcome.final_parse == ParsedAnswer(ParseStatus.OK, "A", "letter", "")
    assert outcome.score_values() == ({"correct": 1.0}, {})
    (row,) = found.scores(("i3", 1, ""))
    assert (row.item_id, row.metric, row.value, row.request_key) == ("i3", "correct", 1.0, "key-3")
    assert found.scores(("missing", 1, "")) == ()


def test_an_item_its_scorer_raised_on_is_no_outcome_to_copy_but_its_answer_is_stored() -> None:
    # Scored again from the stored answer by the rerun (as a failed call is asked again),
    # and its '*' row is the baseline's score that the new scores are compared with.
    found = BaselineAnswers.of(RUN, _scorer_failed(_tables(3), 1))
    assert ("i1", 1, "") not in found.outcomes
    call = found.stored("key-1")
    assert call is not None and call.cached and call.text == "answer 1"
    (row,) = found.scores(("i1", 1, ""))
    assert (row.metric, row.status, row.value) == (EVERY_METRIC, "unscored", None)
    scored = found.outcomes[("i2", 1, "")]
    request = SimpleNamespace(sample=1)
    copy = copied_outcome(SimpleNamespace(item=object(), requests=[request], reused=scored))  # type: ignore[arg-type]
    assert copy.scorer_error is None and copy.score is not None
    assert copy.score.values == {"correct": 0.0}


def _judged(tables: dict[str, pa.Table], tries: dict[int, list[str | None]]) -> dict[str, pa.Table]:
    """Item k's score names a judge verdict (`judge-k`) and its judge rows are `tries[k]`: each
    try's error kind, None for a verdict."""
    responses, scores = tables["responses"].to_pylist(), tables["scores"].to_pylist()
    for k, errors in tries.items():
        scores[k] |= {"judge_request_key": f"judge-{k}", "judge_reply": "6"}
        for n, error in enumerate(errors, 1):
            verdict = {"raw_text": None, "error_kind": error} if error else {"raw_text": "6"}
            responses.append(
                responses[k] | {"role": "judge", "request_key": f"judge-{k}", "try_number": n}
            )
            responses[-1] |= verdict
    return tables | {
        "responses": pa.Table.from_pylist(responses, schema=SCHEMAS["responses"]),
        "scores": pa.Table.from_pylist(scores, schema=SCHEMAS["scores"]),
    }


def test_an_item_whose_judge_call_failed_is_no_outcome_to_copy_but_its_answer_is_stored() -> None:
    # Judged again from the stored answer by the rerun: its score rests on a call that failed.
    # A verdict that landed after a failed try is an outcome, copied with that verdict.
    tables = _judged(_tables(3), {0: ["server_error", "server_error"], 1: ["server_error", None]})
    found = BaselineAnswers.of(RUN, tables)
    assert ("i0", 1, "") not in found.outcomes
    call = found.stored("key-0")
    assert call is not None and call.text == "answer 0"
    (row,) = found.scores(("i0", 1, ""))
    assert row.judge_request_key == "judge-0"
    retried = found.outcomes[("i1", 1, "")]
    assert [(c.request_key, c.text) for c in retried.judge_calls] == [("judge-1", "6")]
    assert ("i2", 1, "") in found.outcomes  # not judged: no verdict to rest on
