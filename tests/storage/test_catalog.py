"""The table registry is open (a table registered at any time is written, landed and queried
like the shared ones), the catalogue's views come from one list, and queries only read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pytest

from roadeval.storage import landing, tables
from roadeval.storage.catalog import (
    DERIVED_VIEWS,
    RUNS_VIEW,
    QueryRefused,
    check_read_only,
    connect,
    query,
    view_names,
)
from roadeval.storage.landing import Part, land, read_table
from roadeval.storage.records import SCHEMAS, TABLES, Int32, register_tables, table_of
from roadeval.storage.store import LocalStore

from support.rows import record


@dataclass(frozen=True)
class TallyRow:
    run_id: str
    suite: str
    model: str
    bucket: str
    count: Int32
    share: float | None


SHARED = (
    "items",
    "plan",
    "estimates",
    "responses",
    "parses",
    "scores",
    "metrics",
    "metric_pairs",
    "run_events",
)


def test_a_table_registered_late_is_written_landed_and_queried(
    tmp_path: Path, temporary_tables
) -> None:
    assert "tallies" not in SCHEMAS and "tallies" not in view_names()
    temporary_tables({"tallies": TallyRow})
    # Every lookup sees it at once: no copy of the registry made at import went stale.
    assert tables.SCHEMAS["tallies"] == pa.schema(
        [
            ("run_id", pa.string()),
            ("suite", pa.string()),
            ("model", pa.string()),
            ("bucket", pa.string()),
            ("count", pa.int32()),
            ("share", pa.float64()),
        ]
    )
    assert landing.SCHEMAS is SCHEMAS is tables.SCHEMAS
    assert "tallies" in view_names()
    row = TallyRow("r1", "s", "m/x", "a", 3, 0.75)
    assert table_of(row) == "tallies"
    assert tables.part_key("tallies", "p", suite="s", model="m/x") == (
        "tables/tallies/suite=s/model=m%2Fx/p.parquet"
    )
    store = LocalStore(tmp_path)
    land(store, "r1-metrics", [Part("tallies", [row], suite="s", model="m/x")])
    assert read_table(store, "tallies").to_pylist() == [dataclasses.asdict(row)]
    assert query(store, "select bucket, count, share from tallies") == (
        ["bucket", "count", "share"],
        [("a", 3, 0.75)],
    )


def test_registration_checks_everything_before_adding_anything(temporary_tables) -> None:
    @dataclass
    class Mutable:
        a: str

    @dataclass(frozen=True)
    class Untyped:
        a: list[str]

    @dataclass(frozen=True)
    class Fine:
        a: str

    cases = [
        ({"scores": Fine}, ValueError, "already has a record: ScoreRow"),
        ({RUNS_VIEW: Fine}, ValueError, "taken by a view"),
        ({"cost_totals": Fine}, ValueError, "taken by a view"),
        ({"Bad-Name": Fine}, ValueError, "not a lowercase identifier"),
        ({"mutable": Mutable}, TypeError, "must be frozen"),
        ({"plain": int}, TypeError, "must be a dataclass"),
        ({"fine": Fine, "untyped": Untyped}, TypeError, "no Arrow type"),
        ({"fine": Fine, "again": Fine}, ValueError, "already the record of table 'fine'"),
        ({"fine": Fine, "scores_too": TABLES["scores"]}, ValueError, "already the record"),
    ]
    for given, error, message in cases:
        with pytest.raises(error, match=message):
            register_tables(given)
        assert "fine" not in TABLES
    # The same record under the same name again (a suite registered twice) changes nothing.
    temporary_tables({"fine": Fine})
    register_tables({"fine": Fine})
    assert TABLES["fine"] is Fine


def test_views_are_listed_in_one_place_and_connect_makes_exactly_those(tmp_path: Path) -> None:
    assert view_names()[: len(SHARED)] == list(SHARED)
    assert view_names()[-3:] == [RUNS_VIEW, *DERIVED_VIEWS] == ["runs", "costs", "cost_totals"]
    con = connect(LocalStore(tmp_path))
    try:
        shown = {name for (name,) in con.execute("show tables").fetchall()}
    finally:
        con.close()
    # No helper of the catalogue (an Arrow registration, the latest-run view, the liveness
    # table) is listed: the views alone.
    assert shown == set(view_names())
    assert not [name for name in shown if name.startswith("_") or name.endswith("_arrow")]


def test_describe_and_show_run_and_name_the_declared_columns(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    for sql in ("describe scores", "show scores"):
        columns, rows = query(store, sql)
        assert columns[:2] == ["column_name", "column_type"]
        assert [row[0] for row in rows] == SCHEMAS["scores"].names
    _, described = query(store, "describe runs")
    assert [row[0] for row in described] == [*SCHEMAS["run_events"].names, "heartbeat_at"]
    _, tables_shown = query(store, "show tables")
    assert sorted(name for (name,) in tables_shown) == sorted(view_names())
    assert query(store, "summarize metrics")[0][0] == "column_name"
    assert query(store, "explain select count(*) from scores")[1]


@pytest.mark.parametrize(
    "sql",
    [
        "select 1",
        "from scores",
        "with t as (select 1 as a) select a from t",
        "describe scores",
        "describe select 1",
        "show tables",
        "show all tables",
        "show scores",
        "summarize scores",
        "explain select 1",
        "explain analyze select * from scores",
        "explain (format json) select 1",
        "-- a comment first\n  select 1; select 2",
    ],
)
def test_reads_are_allowed(sql: str) -> None:
    check_read_only(sql)


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        # DuckDB parses INSTALL as a LOAD statement: the message names what was written.
        ("install httpfs", "an INSTALL statement"),
        ("force install httpfs", "a FORCE INSTALL statement"),
        ("load httpfs", "a LOAD statement"),
        ("attach 'x.db' as other", "an ATTACH statement"),
        ("copy (select 1) to 'x.csv'", "a COPY statement"),
        ("set threads = 1", "a SET statement"),
        ("reset threads", "a RESET statement"),
        ("use memory", "a USE statement"),
        ("create table t as select 1", "a CREATE statement"),
        ("/* first */ update t set a = 1", "an UPDATE statement"),
        ("pragma version", "a PRAGMA statement"),
        ("call pragma_version()", "a CALL statement"),
        ("select 1; install httpfs", "an INSTALL statement"),
        # EXPLAIN ANALYZE runs what it explains: only a read may be explained.
        ("explain analyze create table t as select 1", "an EXPLAIN ANALYZE of a CREATE statement"),
        ("explain (analyze) copy (select 1) to 'x'", "an EXPLAIN ANALYZE of a COPY statement"),
        ("explain create table t as select 1", "an EXPLAIN of a CREATE statement"),
    ],
)
def test_everything_else_is_refused_by_name(sql: str, kind: str) -> None:
    with pytest.raises(QueryRefused) as refused:
        check_read_only(sql)
    assert str(refused.value) == (
        "query refused: roadeval query is read-only (it runs SELECT, EXPLAIN, DESCRIBE and "
        f"SHOW), and this is {kind}"
    )


def test_a_refused_explain_analyze_creates_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(QueryRefused):
        query(store, "explain analyze create table made as select 1")
    _, shown = query(store, "show all tables")
    assert "made" not in {row[2] for row in shown}


def test_runs_reads_a_silent_running_run_as_died(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    started = datetime.now(UTC) - timedelta(hours=1)
    event = record(
        "run_events", run_id="r1", seq=0, status="running", started_at=started, heartbeat_s=5.0
    )
    land(store, "r1-start", [Part("run_events", [event])])
    _, rows = query(store, "select run_id, status, heartbeat_at from runs")
    # No heartbeat was ever written: judged by its start, an hour ago, with 5 s beats.
    assert rows == [("r1", "died", started)]
