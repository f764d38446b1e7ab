"""Leaderboards from metric rows (headline columns, best first by which way is better, ties from
paired differences, a fallback for suites not installed), the blind ablation beside them, and
how values print: counts as integers, other values with the decimals their scale needs."""

from __future__ import annotations

from typing import ClassVar

from roadeval.benchmarks.suite import Headline, Suite
from roadeval.benchmarks.vocabulary import SHARE, Better, MetricInfo, Vocabulary
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.ablation import blind_tables
from roadeval.tasks.results.formats import SuiteRules, decimals_for, format_value
from roadeval.tasks.results.leaderboard import ORDER_RULE, ItemHealth, leaderboards


def _row(
    model: str, metric: str, value: float, task: str = "*", suite: str = "s", **more: object
) -> MetricRow:
    return MetricRow("r", suite, task, model, "", "", metric, value, 10, **more)  # type: ignore[arg-type]


class _Suite(Suite):
    """Only read (never made): its headlines, counts and vocabulary."""

    headline: ClassVar[tuple[Headline, ...]] = (
        Headline("err"),
        Headline("acc"),
        Headline("acc", task=""),
    )
    count_metrics: ClassVar[frozenset[str]] = frozenset({"items"})
    vocabulary: ClassVar[Vocabulary] = Vocabulary(
        metrics=(
            MetricInfo("err", "error rate", "share wrong", Better.LOWER, SHARE),
            MetricInfo("acc", "accuracy", "share right", Better.HIGHER, SHARE),
            MetricInfo("pen", "penalty", "a gap", None, SHARE),
        ),
        tasks={"2": "the second task", "10": "the tenth task"},
    )


HEADLINES = SuiteRules(["s"], classes={"s": _Suite})


def test_models_rank_by_the_first_headline_that_says_which_way_is_better() -> None:
    metrics = [
        _row("a", "err", 0.3),
        _row("b", "err", 0.1),
        _row("c", "acc", 0.9),  # no `err`: last
        _row("a", "acc", 0.5),
        _row("a", "acc", 0.7, task="2"),
        _row("a", "acc", 0.6, task="10"),
    ]
    [boards] = leaderboards(metrics, HEADLINES)
    assert [c.label for c in boards.lead.columns] == ["error rate", "accuracy"]
    assert [r.model for r in boards.lead.rows] == ["b", "a", "c"]
    assert boards.per_task is not None
    # Tasks in numeric order.
    assert [c.label for c in boards.per_task.columns] == ["2 accuracy", "10 accuracy"]


def test_ties_health_baselines_and_intervals_reach_the_cells() -> None:
    metrics = [_row("a", "acc", 0.5, ci_low=0.4, ci_high=0.6), _row("b", "acc", 0.45)]
    pair = MetricPairRow("r", "s", "*", "acc", "a", "b", 10, 0.05, -0.1, 0.2, False)
    health = {("s", "b", ""): ItemHealth(unparsed=1, abnormal=2, errors=3)}
    [boards] = leaderboards(metrics, HEADLINES, health=health, baselines={"b"}, pairs=[pair])
    a, b = boards.lead.rows
    assert a.cells[0] is not None and a.cells[0].tied_with == ("b",)
    assert (a.cells[0].ci_low, a.cells[0].ci_high) == (0.4, 0.6)
    assert b.baseline and not a.baseline
    assert b.health == ItemHealth(1, 2, 3) and a.health is None


def test_a_suite_without_headlines_leads_with_its_suite_wide_metrics_not_counts() -> None:
    metrics = [_row("a", "score", 0.5), _row("a", "items", 10.0), _row("a", "x", 1.0, task="t")]

    class _Bare(_Suite):
        headline: ClassVar[tuple[Headline, ...]] = ()

    [boards] = leaderboards(metrics, SuiteRules(["s"], classes={"s": _Bare}))
    assert [c.label for c in boards.lead.columns] == ["score"]


def test_blind_rows_make_their_own_table_with_the_difference() -> None:
    metrics = [
        _row("a", "acc", 0.7),
        _row("a", "acc", 0.4, variant="blind"),
        _row("rnd", "acc", 0.25),
    ]
    assert blind_tables([m for m in metrics if not m.variant], HEADLINES) == []
    [table] = blind_tables(metrics, HEADLINES, baselines={"rnd"})
    a, rnd = table.lines
    assert a.model == "a" and a.difference is not None and round(a.difference, 6) == 0.3
    assert rnd.baseline and rnd.blind is None and rnd.difference is None
    # The released leaderboard does not mix in blind rows.
    [boards] = leaderboards(metrics, HEADLINES)
    [cell] = boards.lead.rows[0].cells
    assert cell is not None and cell.value == 0.7


def test_counts_print_as_integers_and_rates_with_their_precision() -> None:
    rules = SuiteRules(["roadbench", "stride", "v2xqa"])
    assert rules.text("roadbench", "items", 10.0) == "10"
    assert rules.text("roadbench", "errors", 0.0) == "0"
    assert rules.text("roadbench", "lanes", 35.0) == "35"
    assert rules.text("roadbench", "f1", 0.13571) == "0.136"
    assert rules.text("v2xqa", "confidence_items", 48.0) == "48"
    # STRIDE's `correct` counts items per template, but is a mean within a slice.
    assert rules.text("stride", "correct", 1.0) == "1"
    assert rules.text("stride", "correct", 1.0, "scenario") == "1.000"
    assert format_value(27.5) == "27.50" and format_value(1234.5) == "1234"
    assert decimals_for([0.5, 12.0, None]) == 2


def test_every_column_ranks_every_model_it_has_and_the_order_rule_is_stated() -> None:
    # RoadBench's shape: each model has values in some tasks only. On main the rank followed
    # the first column, so models without it had none.
    metrics = [
        _row("random", "f1", 0.14, task="1"),
        _row("random", "f1", 0.13, task="4"),
        _row("always-2", "f1", 0.02, task="1"),
        _row("always-2", "f1", 0.13, task="4"),
        _row("lane-rule", "exact_match", 0.69, task="2"),
        _row("do-nothing", "buffer_f1@0.2", 0.98, task="3"),
    ]
    metrics = [MetricRow(**{**vars(m), "suite": "roadbench"}) for m in metrics]
    [boards] = leaderboards(metrics, SuiteRules(["roadbench"]))
    board = boards.lead
    assert [c.label for c in board.columns] == [
        "1 F1",
        "2 lane exact match",
        "3 buffer F1 @0.2",
        "4 F1",
    ]
    ranks = {
        (row.model, column.task): cell.rank
        for row in board.rows
        for column, cell in zip(board.columns, row.cells, strict=True)
        if cell is not None
    }
    assert ranks == {
        ("random", "1"): 1,
        ("always-2", "1"): 2,
        ("lane-rule", "2"): 1,
        ("do-nothing", "3"): 1,
        ("random", "4"): 1,  # equal values share a rank
        ("always-2", "4"): 1,
    }
    # Rows by rank in the first column, then the next: the rule the report and `show` print.
    assert [r.model for r in board.rows] == ["random", "always-2", "lane-rule", "do-nothing"]
    assert "rows: by rank in the first column" in ORDER_RULE


def test_a_metric_label_and_its_meaning_come_from_its_suite() -> None:
    metrics = [MetricRow("r", "roadbench", "1", "m", "", "", "f1", 0.3, 10)]
    [boards] = leaderboards(metrics, SuiteRules(["roadbench"]))
    [column] = boards.lead.columns
    assert column.heading == "1 F1 ↑"
    assert column.title == "task 1, BEV lane counting: F1"
    assert column.legend.startswith("1 F1 ↑: task 1 (BEV lane counting), F1 over the answer")
    assert column.legend.endswith("higher is better")


def test_every_headline_of_every_suite_says_what_it_is_and_which_way_is_better() -> None:
    rules = SuiteRules(["trip", "roadbench", "tbbench", "v2xqa", "stride"])
    for suite, headlines in rules.headlines().items():
        for headline in headlines:
            info = rules.metric(suite, headline.metric)
            assert info.declared and info.description, (suite, headline.metric)
            assert info.better is not None and info.arrow in ("↑", "↓"), (suite, headline.metric)
    # TRIP's two penalties are gaps a steadier model keeps small: both better lower.
    assert rules.metric("trip", "modality_penalty").better is Better.LOWER
    assert rules.metric("trip", "difficulty_penalty").better is Better.LOWER
