"""`roadeval qc trip`: the demo passes; each rule, broken in a copy of the demo, shows in the
report with the item it is about, and a failed rule exits 1; bad input exits 2."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from roadeval.benchmarks.quality_report import Example, RuleResult, RuleStatus
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.trip.taxonomy import LETTERS

from support.trip_panel import invoke

Rows = list[dict[str, Any]]
Edited = Callable[[Callable[[Rows], Rows]], Path]


@pytest.fixture(scope="module")
def demo_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return get_suite("trip").generate_demo(tmp_path_factory.mktemp("trip-qc") / "demo")


@pytest.fixture
def edited(demo_source: Path, tmp_path: Path) -> Edited:
    """A copy of the demo source whose rows `edit` has changed."""

    def copy(edit: Callable[[Rows], Rows]) -> Path:
        target = Path(shutil.copytree(demo_source, tmp_path / "source"))
        items = target / "items.jsonl"
        rows = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
        lines = [json.dumps(row, ensure_ascii=False) for row in edit(rows)]
        items.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return target

    return copy


def _qc(source: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    """Exit code and the JSON report's rules by name."""
    result = invoke("qc", "trip", "--source", str(source), "--format", "json")
    report = json.loads(result.stdout)
    return result.exit_code, {rule["rule"]: rule for rule in report["rules"]}


def _with_options(row_index: int, options: list[str], answer: str) -> Callable[[Rows], Rows]:
    def edit(rows: Rows) -> Rows:
        rows[row_index].update(zip(LETTERS, options, strict=True), answer=answer)
        return rows

    return edit


# Option lengths 10, 11, 12 and 13 (r = 1.3), and 10, 11, 12 and 14 (r = 1.4).
R_1_3 = ["about 30 s", "about 300 s", "about 3000 s", "about 30000 s"]
R_1_4 = ["about 30 s", "about 300 s", "about 3000 s", "about 300000 s"]


def test_the_demo_passes_every_rule(demo_source: Path) -> None:
    result = invoke("qc", "trip", "--source", str(demo_source))
    assert result.exit_code == 0, result.output
    assert "quality checks passed" in result.output
    for rule in ("option-length", "answer-balance", "duplicate", "schema"):
        assert rule in result.output
    code, rules = _qc(demo_source)
    assert code == 0
    assert list(rules) == [
        "option-length",
        "answer-balance",
        "duplicate",
        "ids",
        "media",
        "schema",
    ]
    assert {rule["status"] for rule in rules.values()} == {"pass"}
    assert {rule["count"] for rule in rules.values()} == {0}


def test_ratio_1_3_fails_when_the_answer_is_the_longest(edited: Edited) -> None:
    code, rules = _qc(edited(_with_options(0, R_1_3, "D")))
    assert code == 1
    assert rules["option-length"]["status"] == "fail"
    (example,) = rules["option-length"]["findings"]
    assert example["item_id"] == "V_t_1"
    assert "r = 1.300" in example["message"]
    assert "correct option is the longest" in example["message"]


def test_ratio_1_3_warns_when_the_answer_is_not_the_longest(edited: Edited) -> None:
    code, rules = _qc(edited(_with_options(0, R_1_3, "B")))
    assert code == 0
    assert rules["option-length"]["status"] == "warn"
    assert rules["option-length"]["findings"][0]["message"] == "soft pass, r = 1.300"


def test_ratio_1_33_fails_when_the_shortest_option_is_perfunctory(edited: Edited) -> None:
    # r = 4 / 3 and the answer is not the longest, but the shortest option is filler.
    options = ["N/A", "3 s", "45 s", "60 s"]
    code, rules = _qc(edited(_with_options(0, options, "B")))
    assert rules["option-length"]["status"] == "fail"
    assert "perfunctory" in rules["option-length"]["findings"][0]["message"]
    assert code == 1


def test_ratio_1_4_fails_hard_and_the_table_names_the_item(edited: Edited) -> None:
    source = edited(_with_options(0, R_1_4, "A"))
    code, rules = _qc(source)
    assert code == 1
    assert rules["option-length"]["status"] == "fail"
    assert "r = 1.400 > 1.25" in rules["option-length"]["findings"][0]["message"]
    result = invoke("qc", "trip", "--source", str(source))
    assert result.exit_code == 1
    assert "quality checks failed: option-length" in result.output
    assert "V_t_1 (fail): r = 1.400" in result.output


def test_duplicates_are_reported_against_the_item_they_repeat(edited: Edited) -> None:
    def add_copies(rows: Rows) -> Rows:
        first = rows[0]
        # The same question (case and spacing changed) with the options in another order.
        repeat = {**first, "id": "V_t_99", "question": "  " + first["question"].upper()}
        repeat.update(zip(LETTERS, [first[letter] for letter in reversed(LETTERS)], strict=True))
        # The same question with other options: for a reviewer.
        other = [
            "Stopping within 70 m needs dry asphalt",
            "Braking at 5 m/s^2 would lock the wheels",
            "Reaction time of 1.5 s is not realistic",
            "The car cannot stop before the crossing",
        ]
        reworded = {**first, "id": "V_t_98", **dict(zip(LETTERS, other, strict=True))}
        return [*rows, repeat, reworded]

    code, rules = _qc(edited(add_copies))
    assert code == 1
    duplicate = rules["duplicate"]
    assert duplicate["status"] == "fail" and duplicate["count"] == 2
    first, second = duplicate["findings"]
    assert (first["item_id"], first["status"]) == ("V_t_99", "fail")
    assert first["message"] == "same question and options as 'V_t_1'"
    assert (second["item_id"], second["status"]) == ("V_t_98", "warn")
    assert "same question as 'V_t_1'" in second["message"]


def _answers_moved_to_a(count: int | None, spread: list[str]) -> Callable[[Rows], Rows]:
    """Move the gold option of the first `count` rows not answered A (all, for None) to A,
    swapping it with option A; `spread` gets the gold letters' counts as the report prints
    them."""

    def edit(rows: Rows) -> Rows:
        moved = [row for row in rows if row["answer"] != "A"][:count]
        for row in moved:
            gold = row["answer"]
            row[gold], row["A"] = row["A"], row[gold]
            row["answer"] = "A"
        counts = Counter(row["answer"] for row in rows)
        spread.append(", ".join(f"{letter}={counts[letter]}" for letter in LETTERS))
        return rows

    return edit


def test_a_skewed_answer_set_fails_the_balance_rule(edited: Edited) -> None:
    spread: list[str] = []
    code, rules = _qc(edited(_answers_moved_to_a(None, spread)))
    assert code == 1
    balance = rules["answer-balance"]
    assert balance["status"] == "fail"
    (example,) = balance["findings"]
    assert example["item_id"] is None
    assert spread[0].endswith("B=0, C=0, D=0") and spread[0] in example["message"]


def test_a_skew_within_chance_only_warns(edited: Edited) -> None:
    # Six answers moved to A in the demo's ~40 rotated answers: A's share is over 5 points off
    # 25% (A=16, B=C=D=8 of 40), but a chi-square test does not reject uniform (p = 0.19).
    spread: list[str] = []
    code, rules = _qc(edited(_answers_moved_to_a(6, spread)))
    balance = rules["answer-balance"]
    (example,) = balance["findings"]
    assert spread[0] in example["message"]
    assert balance["status"] == "warn", example["message"]
    assert code == 0


def test_rows_the_loader_refuses_fail_the_schema_rule(edited: Edited) -> None:
    broken: list[str] = []

    def break_rows(rows: Rows) -> Rows:
        rows[3]["answer"] = "E"
        rows[5]["colour"] = "red"
        broken.append(rows[3]["id"])
        return rows

    code, rules = _qc(edited(break_rows))
    assert code == 1
    schema = rules["schema"]
    assert schema["status"] == "fail" and schema["count"] == 2
    refused, unknown = schema["findings"]
    assert refused["item_id"] == broken[0] and refused["status"] == "fail"
    assert refused["message"] == "'E' is not one of A, B, C, D"
    assert (refused["line"], refused["field"]) == (4, "answer")
    assert refused["file"].endswith("items.jsonl")
    assert unknown["status"] == "warn" and "'colour' (1 row)" in unknown["message"]


def test_missing_source_exits_2_with_one_line(tmp_path: Path) -> None:
    result = invoke("qc", "trip", "--source", str(tmp_path / "absent"))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {tmp_path / 'absent'}: no such file or folder"
    ]
    empty = invoke("qc", "trip", "--source", str(tmp_path))
    assert empty.exit_code == 2 and "no items.jsonl found" in empty.output
    assert "Traceback" not in empty.output
    unknown = invoke("qc", "nosuch", "--source", str(tmp_path))
    assert unknown.exit_code == 2 and "unknown suite 'nosuch'" in unknown.output


def test_a_rule_fails_on_any_failing_finding_and_shows_failures_first() -> None:
    found = [
        *(Example(f"w{n}", RuleStatus.WARN, "look") for n in range(3)),
        Example("f", RuleStatus.FAIL, "broken"),
    ]
    result = RuleResult.from_examples("r", "d", found)
    assert result.status is RuleStatus.FAIL and result.count == 4
    assert [example.item_id for example in result.examples] == ["f", "w0", "w1"]
    assert RuleResult.from_examples("r", "d", found[:1]).status is RuleStatus.WARN
    assert RuleResult.from_examples("r", "d", []).status is RuleStatus.PASS
