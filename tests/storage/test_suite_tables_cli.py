"""A suite's own table, declared on the suite: registered with it, landed as a run lands it (with
the metrics), and there in `roadeval query` (its rows, `show tables`, `describe`) and in the
views `roadeval query --help` lists, without a change to storage or to the flow."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.loading import LoadReport
from roadeval.benchmarks.messages import ImageRef, Message, user_message
from roadeval.benchmarks.output import ModelOutput
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem, Suite
from roadeval.flows.cli.main import app
from roadeval.storage.catalog import view_names
from roadeval.storage.landing import Part, land
from roadeval.storage.records import Int32
from roadeval.storage.store import LocalStore
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.suite_tables import suite_table_parts

runner = CliRunner()


@dataclass(frozen=True)
class WrongByTaskRow:
    """The test suite's own table: wrong answers per task."""

    run_id: str
    suite: str
    model: str
    task: str
    wrong: Int32
    of: Int32


class TallySuite(Suite):
    """A suite for this test only, with one table of its own."""

    name: ClassVar[str] = "tally-probe"
    prompt_version: ClassVar[str] = "tally-v1"
    tables: ClassVar[dict[str, type[Any]]] = {"wrong_by_task": WrongByTaskRow}

    def load(self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR) -> LoadReport:
        return LoadReport()

    def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
        return [user_message(item.question)]

    def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
        return ParsedAnswer(ParseStatus.OK, output.text.strip(), "as-is")

    def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
        return {"correct": float(parsed.value == item.reference)}

    def extra_tables(self, run_id: str, model: str, scored: Sequence[ScoredItem]) -> list[Any]:
        tasks = sorted({row.item.task for row in scored})
        return [
            WrongByTaskRow(
                run_id,
                self.name,
                model,
                task,
                sum(1 for row in scored if row.item.task == task and row.values["correct"] < 1),
                sum(1 for row in scored if row.item.task == task),
            )
            for task in tasks
        ]


def _scored(task: str, item_id: str, answer: str) -> ScoredItem:
    item = Item(
        suite="tally-probe",
        suite_version="1",
        item_id=item_id,
        task=task,
        question=f"question {item_id}",
        options={"A": "a", "B": "b"},
        answer_kind=AnswerKind.CHOICE,
        reference="A",
    )
    parsed = ParsedAnswer(ParseStatus.OK, answer, "as-is")
    return ScoredItem(item, parsed, {"correct": float(answer == "A")})


def _invoke(*args: str) -> Any:
    return runner.invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def store(tmp_path: Path, temporary_suite) -> str:
    """A store where a run of the test suite landed its metrics and its own table."""
    suite = temporary_suite(TallySuite)()
    scored = [_scored("t1", "a", "A"), _scored("t1", "b", "B"), _scored("t2", "c", "B")]
    run_id, model = "run-1", "openai/m"
    # As the run lands them: the suite's own parts with the metrics, under one landing.
    parts = [
        Part("metrics", aggregate(suite, model, run_id, scored)),
        *suite_table_parts(suite, model, run_id, scored),
    ]
    assert [part.table for part in parts] == ["metrics", "wrong_by_task"]
    location = tmp_path / "store"
    land(LocalStore(location), f"{run_id}-metrics", parts)
    return str(location)


def _csv(store: str, sql: str) -> list[str]:
    result = _invoke("query", "--store", store, "--format", "csv", sql)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


def test_a_suites_own_table_is_queried_shown_and_described(store: str) -> None:
    assert _csv(store, "select model, task, wrong, of from wrong_by_task order by task") == [
        "model,task,wrong,of",
        "openai/m,t1,1,2",
        "openai/m,t2,1,1",
    ]
    shown = _csv(store, "show tables")[1:]
    assert "wrong_by_task" in shown and "metrics" in shown
    assert not [name for name in shown if name.startswith("_") or name.endswith("_arrow")]
    assert _csv(store, "select column_name from (describe wrong_by_task)")[1:] == [
        "run_id",
        "suite",
        "model",
        "task",
        "wrong",
        "of",
    ]


def test_query_help_lists_every_view_with_the_suites_own(store: str) -> None:
    result = _invoke("query", "--help")
    assert result.exit_code == 0, result.output
    words = {word.strip(",") for word in result.output.split()}
    assert "wrong_by_task" in words
    assert set(view_names()) <= words
    assert {"plan", "estimates", "runs", "costs", "cost_totals"} <= words


def test_the_table_leaves_with_the_suite(temporary_suite) -> None:
    # The fixture above registered it for its test only; here nobody has.
    assert "wrong_by_task" not in view_names()


def test_a_row_of_a_table_the_suite_does_not_declare_is_refused(temporary_suite) -> None:
    class Undeclared(TallySuite):
        name: ClassVar[str] = "tally-undeclared"
        tables: ClassVar[dict[str, type[Any]]] = {}

    suite = temporary_suite(Undeclared)()
    with pytest.raises(TypeError, match="returned a WrongByTaskRow row"):
        suite_table_parts(suite, "m", "r", [_scored("t1", "a", "B")])


def test_a_suite_that_fails_to_load_costs_its_tables_not_the_query(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roadeval.benchmarks import registry

    loaded = registry.load_suite

    def broken(name: str) -> Any:
        if name == "tally-probe":
            raise ImportError("no module named tally")
        return loaded(name)

    monkeypatch.setattr(registry, "load_suite", broken)
    # Naming no shared view, the statement may read any suite's tables: every suite is loaded.
    sql = "select count(*) > 0 as landed from information_schema.tables"
    result = _invoke("query", "--store", store, "--format", "csv", sql)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["landed", "True"]
    assert "suite 'tally-probe' could not be loaded" in result.stderr


def test_suites_are_loaded_only_for_a_statement_that_may_read_their_tables(
    store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from roadeval.benchmarks import registry

    loaded: list[str] = []
    load = registry.load_suite

    def counted(name: str) -> Any:
        loaded.append(name)
        return load(name)

    monkeypatch.setattr(registry, "load_suite", counted)
    assert _csv(store, "select count(distinct model) as n from metrics") == ["n", "1"]
    assert loaded == []
    # A table not found among those registered: the suites are loaded, and the query tried again.
    result = _invoke(
        "query", "--store", store, "select * from metrics join no_such_table using (model)"
    )
    assert result.exit_code == 2 and "no_such_table" in result.output
    assert "tally-probe" in loaded
