"""A rerun's copied outcomes landed again by column: the baseline's rows, taken from its Arrow
tables by row number, with this run's id, model names, sample and variant on them, and the answers
marked reused (cost 0, nothing sent). No record is made of them: a rerun of 10,000 items x 5
models copies some 150,000 rows, and making each a record, then a Parquet row again, was most of
the time of a rerun that asks little.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from roadeval.storage.records import SCHEMAS
from roadeval.tasks.calls.gateway import ModelClient
from roadeval.tasks.rerun.answers import OUTCOME_TABLES, StoredOutcome


def copied_tables(
    copied: Sequence[StoredOutcome],
    run_id: str,
    client: ModelClient,
    judge: ModelClient | None,
    sample: int,
    variant: str,
    now: datetime,
) -> dict[str, pa.Table]:
    """Per outcome table, the rows of `copied` as this run lands them (the rows `rows.py`
    makes of a fresh outcome's reused answers: same columns, same values)."""
    if not copied:
        return {}
    tables = copied[0].landed.tables
    if any(outcome.landed.tables is not tables for outcome in copied):
        raise ValueError("a shard's copies come from one baseline table per outcome table")
    landed: dict[str, pa.Table] = {}
    for name in OUTCOME_TABLES:
        at = [row for outcome in copied for row in outcome.landed.at[name]]
        taken = tables[name].take(pa.array(at, pa.int64()))
        mine: dict[str, Any] = {
            "run_id": run_id,
            "model": client.spec.label,
            "sample": sample,
            # Rows landed before variants were kept read as null: said here, as released.
            "variant": variant,
        }
        if name == "responses":
            taken, mine = _responses(taken, mine, client, judge, now)
        landed[name] = _set(name, taken, mine)
    return landed


def _responses(
    taken: pa.Table,
    mine: dict[str, Any],
    client: ModelClient,
    judge: ModelClient | None,
    now: datetime,
) -> tuple[pa.Table, dict[str, Any]]:
    """The answer and judge rows: each under the model that answered it in this run."""
    judged = pc.fill_null(pc.equal(taken.column("role"), "judge"), False)
    if judge is None and pc.any(judged).as_py():
        raise ValueError(f"copied judge answers of {client.spec.label} with no judge in the run")
    asked = judge or client

    def by_role(of_client: str | None, of_judge: str | None) -> pa.ChunkedArray:
        return pc.if_else(
            judged, pa.scalar(of_judge, pa.string()), pa.scalar(of_client, pa.string())
        )

    # Before run_id is replaced: an answer's origin is the run that paid for it.
    origin = pc.coalesce(taken.column("origin_run_id"), taken.column("run_id"))
    taken = _set("responses", taken, {"origin_run_id": origin})
    mine |= {
        "model": by_role(client.spec.label, asked.spec.label),
        "model_string": by_role(client.spec.model, asked.spec.model),
        "api_base": by_role(client.api_base, asked.api_base),
        "try_number": 0,
        "cost_usd": 0.0,
        "may_be_billed": False,
        "cached": True,
        "replaced_stale": False,
        "created_at": now,
    }
    return taken, mine


def _set(name: str, table: pa.Table, values: dict[str, Any]) -> pa.Table:
    """`table` with the given columns replaced: by an array, or by one value for every row."""
    schema = SCHEMAS[name]
    for column, value in values.items():
        kind = schema.field(column).type
        if isinstance(value, pa.Array | pa.ChunkedArray):
            array = value.cast(kind)
        else:
            array = pa.array([value] * table.num_rows, type=kind)
        table = table.set_column(schema.get_field_index(column), column, array)
    return table
