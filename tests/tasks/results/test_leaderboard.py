"""Leaderboards from metric rows (headline columns, best first by which way is better, ties from
paired differences, a fallback for suites not installed), the blind ablation beside them, and
how values print: counts as integers, other values with the decimals their scale needs."""

from __future__ import annotations

from roadeval.benchmarks.suite import Headline
from roadeval.storage.records import MetricPairRow, MetricRow
from roadeval.tasks.results.ablation import blind_tables
from roadeval.tasks.results.formats import SuiteRules, decimals_for, format_value
from roadeval.tasks.results.leaderboard import ItemHealth, leaderboards


def _row(
    model: str, metric: str, value: float, task: str = "*", suite: str = "s", **more: object
) -> MetricRow:
    return MetricRow("r", suite, task, model, "", "", metric, value, 10, **more)  # type: ignore[arg-type]


HEADLINES = {"s": (Headline("err", better="lower"), Headline("acc"), Headline("acc", task=""))}


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
    assert [c.label for c in boards.lead.columns] == ["err", "acc"]
    assert [r.model for r in boards.lead.rows] == ["b", "a", "c"]
    assert boards.per_task is not None
    # Tasks in numeric order.
    assert [c.label for c in boards.per_task.columns] == ["2 acc", "10 acc"]


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
    [boards] = leaderboards(metrics, {}, counts={"s": {"items"}})
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
