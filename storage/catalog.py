"""The DuckDB catalogue: one view per table over the store's landed Parquet parts, local or S3.

Only landed parts are visible (see `landing`), so a crash never makes a query count half a shard.
The views are listed in one place, `view_names`: a view per registered table (the shared ones and
every registered suite's own), `runs`, and the views derived from them (`DERIVED_VIEWS`). A
suite's own table is known once the suite is registered (imported); `roadeval query` loads every
installed suite first.
Queries are read-only: a statement that would write a file or change anything is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from roadeval.storage.heartbeats import run_liveness
from roadeval.storage.index_digests import WHOLE, read_whole
from roadeval.storage.landing import listed_parts
from roadeval.storage.part_files import parts_dataset
from roadeval.storage.part_index import PartIndex
from roadeval.storage.records import SCHEMAS, TABLES, reserve_names
from roadeval.storage.store import LocalStore, Store

# Each run's latest event, its status `died` when its heartbeat stopped.
RUNS_VIEW = "runs"
# Where the catalogue keeps its helpers: a schema off the search path, so `show tables` lists
# the views alone.
_INTERNAL = "_internal"

_Read = TypeVar("_Read")

# Derived views, defined over the base tables so they never disagree with them.
DERIVED_VIEWS: dict[str, str] = {
    # Every request sent and every answer reused, with what it cost this run (0 when reused);
    # `variant` 'blind' for the vision ablation's requests ('' as released).
    "costs": (
        "select run_id, suite, model, model_string, api_base, role, request_key, attempt, "
        "try_number, tokens_in, tokens_out, cost_usd, original_cost_usd, may_be_billed, cached, "
        "origin_run_id, error_kind, created_at, coalesce(variant, '') as variant from responses"
    ),
    # The ledger's totals per run, model, suite, role and variant: HTTP requests sent (retries
    # included; a call skipped as unreachable was not sent), answers reused, tokens, USD this
    # run, and the sent requests whose cost is not known: `unknown_cost` (no price: cost_usd
    # null) and `may_be_billed` (a timeout or cut-off reply, recorded at 0 but possibly billed).
    # Where either is above 0, cost_usd is a floor.
    "cost_totals": (
        "select run_id, model, suite, role, "
        "count(*) filter (where not cached and try_number > 0) as requests, "
        "count(*) filter (where cached) as cached, "
        "coalesce(sum(tokens_in) filter (where not cached), 0) as tokens_in, "
        "coalesce(sum(tokens_out) filter (where not cached), 0) as tokens_out, "
        "coalesce(sum(cost_usd), 0) as cost_usd, "
        "count(*) filter (where not cached and try_number > 0 and cost_usd is null) "
        "as unknown_cost, "
        "count(*) filter (where may_be_billed) as may_be_billed, "
        "coalesce(variant, '') as variant "
        "from responses group by run_id, model, suite, role, coalesce(variant, '')"
    ),
}

reserve_names((RUNS_VIEW, *DERIVED_VIEWS))

# What `roadeval query` runs: statements that only read. DuckDB parses DESCRIBE, SHOW and
# SUMMARIZE as selects; an EXPLAIN is allowed when what it explains is (EXPLAIN ANALYZE runs it).
# Anything else (INSTALL, LOAD, ATTACH, COPY, SET, CREATE, PRAGMA, CALL, ...) is refused.
_READ_ONLY = "SELECT, EXPLAIN, DESCRIBE and SHOW"


def view_names() -> list[str]:
    """Every view `connect` makes, in order: one per table registered now (the shared tables,
    then each registered suite's own), `runs`, then the derived views."""
    return [*TABLES, RUNS_VIEW, *DERIVED_VIEWS]


class QueryRefused(ValueError):
    """A statement that `roadeval query` will not run, because it would write or change state."""


@dataclass(frozen=True)
class _TableParts:
    """One table's visible parts: their keys, schema fingerprints (None: not known) and index
    numbers (None: listed), and the index snapshot they were loaded from (None: none)."""

    keys: list[str]
    fingerprints: list[str | None]
    numbers: list[int | None]
    base: int | None = None

    def index_rows(self, table: str) -> pa.Table:
        return pa.table(
            {
                "table": pa.array([table] * len(self.keys), pa.string()),
                "key": pa.array(self.keys, pa.string()),
                "number": pa.array(self.numbers, pa.int64()),
            }
        )


def _parts(
    store: Store, tables: list[str], runs: Iterable[str] | None, include_unlanded: bool
) -> dict[str, _TableParts]:
    """Each table's visible parts, from the part index; by a listing where the store keeps
    none, or unlanded parts are asked for."""
    view = None if include_unlanded else PartIndex(store).load(tables)
    if view is None:
        listed = listed_parts(store, tables=tables, runs=runs, include_unlanded=include_unlanded)
        return {
            table: _TableParts(keys, [None] * len(keys), [None] * len(keys))
            for table, keys in listed.items()
        }
    found: dict[str, _TableParts] = {}
    for table in tables:
        rows = view.of(table, runs).sort_by("key")
        found[table] = _TableParts(
            rows.column("key").to_pylist(),
            rows.column("fingerprint").to_pylist(),
            rows.column("number").to_pylist(),
            view.base,
        )
    return found


def _table_view(
    con: duckdb.DuckDBPyConnection,
    store: Store,
    table: str,
    parts: _TableParts,
    *,
    whole: bool = False,
) -> None:
    """The view of one table. In a folder: DuckDB's own Parquet reader over the files, one
    scan per schema the parts were written with (parts of an unknown schema matched by
    column name), each under the table's declared columns (a column a part predates reads as
    null). On S3: a lazy pyarrow dataset (DuckDB reads no s3:// here without an extension
    from the internet), projections and filters pushed down, its parts read `whole` once per
    process where a connection reads named runs (`part_cache`); a table every reader wants
    whole (`run_events`) from its digest and the parts landed since (`index_digests`)."""
    if not isinstance(store, LocalStore):
        if table in WHOLE:
            con.register(table, read_whole(store, table, parts.index_rows(table), parts.base))
        else:
            # Lazy, with the declared schema: DuckDB pushes projections and filters down.
            # Parts read whole (and once per process) where a run's are read, not a store's.
            dataset = parts_dataset(store, SCHEMAS[table], parts.keys, whole=whole)
            con.register(table, dataset)
        return
    empty = f"{_INTERNAL}.{table}_columns"
    con.register(f"_{table}_columns", SCHEMAS[table].empty_table())
    con.execute(f"create table {empty} as select * from _{table}_columns")
    con.unregister(f"_{table}_columns")
    scans = [f"select * from {empty}"]
    groups: dict[str | None, list[str]] = {}
    for key, fingerprint in zip(parts.keys, parts.fingerprints, strict=True):
        groups.setdefault(fingerprint, []).append(str(store.root / key))
    for n, (fingerprint, paths) in enumerate(sorted(groups.items(), key=lambda g: g[0] or "")):
        variable = f"_parts_{table}_{n}"
        con.execute(f"set variable {variable} = ?", [paths])
        by_name = ", union_by_name = true" if fingerprint is None else ""
        scans.append(f"select * from read_parquet(getvariable('{variable}'){by_name})")
    con.execute(f"create view {table} as " + " union all by name ".join(scans))


def tables_named(sql: str) -> list[str] | None:
    """The tables a statement's views read (the views it names, and what they are made of), or
    None when it names no view (`show tables`: every view is made)."""
    words = {word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", sql)}
    named = [name for name in view_names() if name in words]
    if not named:
        return None
    tables = {name for name in named if name in TABLES}
    if RUNS_VIEW in named:
        tables.add("run_events")
    if any(name in DERIVED_VIEWS for name in named):
        tables.add("responses")
    return [table for table in TABLES if table in tables]


def _runs_view(con: duckdb.DuckDBPyConnection, store: Store) -> None:
    """`runs`: each run's latest event; a `running` run whose heartbeat stopped reads `died`."""
    con.execute(
        f"create view {_INTERNAL}.latest_runs as select * from run_events "
        "qualify row_number() over (partition by run_id order by seq desc) = 1"
    )
    running = con.execute(
        f"select run_id, started_at, heartbeat_s from {_INTERNAL}.latest_runs "
        "where status = 'running'"
    ).fetchall()
    now = datetime.now(UTC)
    liveness: list[tuple[str, datetime, bool]] = []
    for run_id, started_at, heartbeat_s in running:
        liveness.append((run_id, *run_liveness(store, run_id, started_at, heartbeat_s, now)))
    con.execute(
        f"create table {_INTERNAL}.liveness "
        "(run_id varchar, heartbeat_at timestamp with time zone, alive boolean)"
    )
    if liveness:
        con.executemany(f"insert into {_INTERNAL}.liveness values (?, ?, ?)", liveness)
    columns = ", ".join(
        "case when l.alive = false then 'died' else e.status end as status"
        if name == "status"
        else f"e.{name}"
        for name in SCHEMAS["run_events"].names
    )
    con.execute(
        f"create view {RUNS_VIEW} as select {columns}, l.heartbeat_at "
        f"from {_INTERNAL}.latest_runs e left join {_INTERNAL}.liveness l using (run_id)"
    )


# Times a reader finds the parts it reads again when one is gone: a compaction removes the parts
# it replaced once its own are published, so the index, loaded again, no longer names them.
_LOADS = 3


def connect(
    store: Store,
    *,
    include_unlanded: bool = False,
    runs: Iterable[str] | None = None,
    tables: Iterable[str] | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the views of `view_names()` over the store (a view per table
    registered now, `runs`, and the derived views), over the parts of the `runs` named (and
    the suites' items) or of all; only the views of `tables` and what derives from them when
    named (a query pays for the tables it reads). `include_unlanded` also shows parts no
    landing published."""
    return _reading(store, include_unlanded, runs, tables, lambda con: con)


def read_views(
    store: Store,
    use: Callable[[duckdb.DuckDBPyConnection], _Read],
    *,
    include_unlanded: bool = False,
    runs: Iterable[str] | None = None,
    tables: Iterable[str] | None = None,
) -> _Read:
    """`use` over a connection of the views (`connect`'s), closed after. When a statement of
    it fails on a part gone (a compaction removed it, having published its replacement), `use`
    runs again, whole, over the parts the store shows then: a reader of several statements
    (`show`, `report`, `diff`) never mixes what it read before the compaction with after."""

    def closed(con: duckdb.DuckDBPyConnection) -> _Read:
        with closing(con):
            return use(con)

    return _reading(store, include_unlanded, runs, tables, closed)


def _reading(
    store: Store,
    include_unlanded: bool,
    runs: Iterable[str] | None,
    tables: Iterable[str] | None,
    read: Callable[[duckdb.DuckDBPyConnection], _Read],
) -> _Read:
    """`read` over a connection of the views; when it fails and the parts readers see have
    changed meanwhile (a part it was to read is gone: see `_LOADS`), again over the new ones."""
    wanted = list(TABLES) if tables is None else [t for t in TABLES if t in set(tables)]
    runs = None if runs is None else list(runs)
    load = 0
    while True:
        load += 1
        parts = _parts(store, wanted, runs, include_unlanded)
        try:
            return read(_views(store, parts, whole=runs is not None))
        except (duckdb.Error, OSError):
            if load == _LOADS or not _moved(store, parts, runs, include_unlanded):
                raise


def _moved(
    store: Store, parts: dict[str, _TableParts], runs: list[str] | None, include_unlanded: bool
) -> bool:
    """Whether the parts readers see of these tables changed since `parts` were found."""
    now = _parts(store, list(parts), runs, include_unlanded)
    return any(now[table].keys != found.keys for table, found in parts.items())


def _views(
    store: Store, parts: dict[str, _TableParts], *, whole: bool
) -> duckdb.DuckDBPyConnection:
    """A connection with the views over `parts` (see `connect`)."""
    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    )
    try:
        con.execute(f"create schema {_INTERNAL}")
        for table, found in parts.items():
            _table_view(con, store, table, found, whole=whole)
        if "run_events" in parts:
            _runs_view(con, store)
        if "responses" in parts:
            for name, sql in DERIVED_VIEWS.items():
                con.execute(f"create view {name} as {sql}")
        # From here on SQL reads no file but the store's parts, and writes none.
        if isinstance(store, LocalStore):
            con.execute("set allowed_directories = ?", [[f"{store.root / 'tables'}/"]])
        con.execute("set enable_external_access = false")
        con.execute("set lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


# Whitespace and comments, between the words that open a statement.
_GAP = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*", re.DOTALL)
_WORD = re.compile(r"[A-Za-z_]+")
# EXPLAIN's options: bare words only, e.g. (analyze, format json).
_EXPLAIN_OPTIONS = re.compile(r"\(\s*\w+(?:\s+\w+)?(?:\s*,\s*\w+(?:\s+\w+)?)*\s*\)")


def _skip_gap(sql: str, pos: int) -> int:
    gap = _GAP.match(sql, pos)
    return gap.end() if gap else pos


def _word_at(sql: str, pos: int) -> tuple[str, int]:
    """The word at `pos` (after any whitespace and comments), upper-cased, and where it ends;
    '' when no word is there."""
    pos = _skip_gap(sql, pos)
    word = _WORD.match(sql, pos)
    return (word.group().upper(), word.end()) if word else ("", pos)


def statement_kind(sql: str) -> str:
    """What a statement is, by the words it opens with: INSTALL, FORCE INSTALL, COPY, ..."""
    word, end = _word_at(sql, 0)
    if word == "FORCE":
        word = f"FORCE {_word_at(sql, end)[0]}".strip()
    return word or "unnamed"


def _explained(sql: str) -> tuple[bool, str]:
    """An EXPLAIN's statement: whether it is EXPLAIN ANALYZE, and the statement explained."""
    _, end = _word_at(sql, 0)
    word, after = _word_at(sql, end)
    analyze = word in ("ANALYZE", "ANALYSE")
    if analyze:
        end = after
    start = _skip_gap(sql, end)
    options = _EXPLAIN_OPTIONS.match(sql, start)
    if options is not None:
        analyze = analyze or re.search(r"\banaly[sz]e\b", options.group(), re.I) is not None
        start = options.end()
    return analyze, sql[start:]


def _article(kind: str) -> str:
    # By sound: "an INSTALL", "an UPDATE", but "a USE".
    vowel = kind[:1] in "AEIOU" and not kind.startswith("USE")
    return f"{'an' if vowel else 'a'} {kind}"


def _refused(statement: Any) -> str | None:
    """None for a statement that only reads, else what it is, for the message ("an INSTALL
    statement", "an EXPLAIN ANALYZE of a CREATE statement")."""
    if statement.type == duckdb.StatementType.SELECT:
        return None
    if statement.type == duckdb.StatementType.EXPLAIN:
        analyze, explained = _explained(statement.query)
        inner = duckdb.extract_statements(explained)
        kind = "EXPLAIN ANALYZE" if analyze else "EXPLAIN"
        if len(inner) != 1:
            return f"{_article(kind)} of no single statement"
        what = _refused(inner[0])
        return None if what is None else f"{_article(kind)} of {what}"
    return f"{_article(statement_kind(statement.query))} statement"


def check_read_only(sql: str) -> None:
    """Refuse anything but statements that only read: SELECT (DESCRIBE, SHOW and SUMMARIZE
    among them) and EXPLAIN of one."""
    try:
        for statement in duckdb.extract_statements(sql):
            what = _refused(statement)
            if what is not None:
                raise QueryRefused(
                    f"query refused: roadeval query is read-only (it runs {_READ_ONLY}), "
                    f"and this is {what}"
                )
    except duckdb.Error as exc:
        raise QueryRefused(f"query does not parse: {exc}") from None


def query(
    store: Store,
    sql: str,
    *,
    include_unlanded: bool = False,
    runs: Iterable[str] | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only SQL over the store (the parts of the `runs` named, or all); returns
    column names and rows. Only the views the statement names are made. A part removed while
    the statement ran (by a compaction, which published its replacement first) has it run
    again over the parts the store shows then."""
    check_read_only(sql)

    def rows(con: duckdb.DuckDBPyConnection) -> tuple[list[str], list[tuple[Any, ...]]]:
        result = con.execute(sql)
        columns = [d[0] for d in result.description] if result.description else []
        return columns, result.fetchall()

    return read_views(
        store, rows, include_unlanded=include_unlanded, runs=runs, tables=tables_named(sql)
    )
