"""TRIP's diagnostics on a hand-built set: penalties per capability, and the Pareto rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.suite import GroupValue, ParsedAnswer, ParseStatus, ScoredItem
from roadeval.benchmarks.trip.records import ErrorParetoRow
from roadeval.benchmarks.trip.suite import TripSuite
from roadeval.storage.records import SCHEMAS, TABLES
from roadeval.tasks.results.aggregate import aggregate
from roadeval.tasks.results.suite_tables import suite_table_parts

KM, LR = "knowledge memory", "logical reasoning"

# (id, capability, modality, difficulty, role, knowledge point, answered correctly)
ROWS = [
    ("k1", KM, "text", "easy", "vehicle", "kpA", True),
    ("k2", KM, "text", "hard", "vehicle", "kpA", False),
    ("k3", KM, "image", "easy", "vehicle", "kpB", False),
    ("k4", KM, "point cloud", "hard", "traveler", "kpA", True),
    ("l1", LR, "text", "easy", "traveler", "kpC", False),
    ("l2", LR, "text", "easy", "traveler", "kpC", False),
    ("l3", LR, "text", "medium", "vehicle", "kpB", False),
]


def _scored() -> list[ScoredItem]:
    scored = []
    for item_id, capability, modality, difficulty, role, point, right in ROWS:
        labels = {
            "role": role,
            "subject": "s",
            "knowledge_point": point,
            "capability": capability,
            "difficulty": difficulty,
            "modality": modality,
        }
        item = Item(
            suite="trip",
            suite_version="t",
            item_id=item_id,
            task="mcq",
            question=f"q {item_id}",
            options={"A": "a", "B": "b", "C": "c", "D": "d"},
            answer_kind=AnswerKind.CHOICE,
            reference="A",
            labels=labels,
        )
        parsed = ParsedAnswer(ParseStatus.OK, "A" if right else "B", "single-letter")
        scored.append(ScoredItem(item, parsed, {"correct": 1.0 if right else 0.0}))
    return scored


def test_penalties_per_capability_are_the_hand_computed_gaps() -> None:
    values = TripSuite().group_values(_scored())
    # Knowledge memory: text 1/2, image 0/1, point cloud 1/1 -> 0.5 - 0.0; easy 1/2, hard 1/2.
    # Logical reasoning has text items only and no hard item: neither penalty is defined.
    assert values == [
        GroupValue("mcq", "capability", KM, "modality_penalty", pytest.approx(0.5), 4),
        GroupValue("mcq", "capability", KM, "difficulty_penalty", pytest.approx(0.0), 4),
    ]


def test_penalties_per_capability_land_as_slice_metrics_beside_accuracy() -> None:
    rows = aggregate(TripSuite(), "m", "run", _scored())
    by_key = {(r.slice, r.slice_value, r.metric): (r.value, r.n) for r in rows if r.task == "mcq"}
    assert by_key[("capability", KM, "correct")] == (pytest.approx(0.5), 4)
    assert by_key[("capability", KM, "modality_penalty")] == (pytest.approx(0.5), 4)
    assert by_key[("capability", KM, "difficulty_penalty")] == (pytest.approx(0.0), 4)
    assert ("capability", LR, "modality_penalty") not in by_key


def test_pareto_rows_rank_each_roles_errors_by_knowledge_point() -> None:
    rows = TripSuite().extra_tables("run", "m", _scored())
    # Vehicle errors: k2 (kpA), k3 and l3 (kpB); traveler errors: l1 and l2 (kpC).
    expected = [
        ("traveler", "kpC", 1, 2, 1.0, 1.0),
        ("vehicle", "kpB", 1, 2, 2 / 3, 2 / 3),
        ("vehicle", "kpA", 2, 1, 1 / 3, 1.0),
    ]
    assert rows == [
        ErrorParetoRow("run", "trip", "m", role, point, rank, errors, share, cumulative)
        for role, point, rank, errors, share, cumulative in expected
    ]


def test_pareto_rows_become_one_part_of_the_pareto_table_per_suite_and_model() -> None:
    (part,) = suite_table_parts(TripSuite(), "m", "run", _scored())
    assert (part.table, part.suite, part.model, len(part.rows)) == ("pareto", "trip", "m", 3)
    everything_right = [ScoredItem(row.item, row.parsed, {"correct": 1.0}) for row in _scored()]
    assert suite_table_parts(TripSuite(), "m", "run", everything_right) == []


def test_the_suite_declares_pareto_with_the_columns_stores_already_hold() -> None:
    # Declared on the suite, registered with it: the table runs have always landed, so a store
    # written while the record lived in storage reads the same (name, columns and types).
    assert TripSuite.tables == {"pareto": ErrorParetoRow}
    assert TABLES["pareto"] is ErrorParetoRow
    assert SCHEMAS["pareto"] == pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("model", pa.string()),
            ("role", pa.string()),
            ("knowledge_point", pa.string()),
            ("rank", pa.int32()),
            ("errors", pa.int64()),
            ("share", pa.float64()),
            ("cumulative_share", pa.float64()),
        ]
    )
