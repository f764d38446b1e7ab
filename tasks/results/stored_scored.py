"""A landed run's scored items of one suite x model, read back from the store as the run held
them (`ScoredItem`: the item, its final parse, its score values), so that a later command can
recompute its headline statistics over any subset of items (`run_compare`). Read through the
catalogue in three queries per suite x model: its score rows, its final parses, its items."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

import duckdb

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus, ScoredItem
from roadeval.storage.records import EVERY_METRIC


@dataclass(frozen=True)
class Landed:
    """What a run scored of one suite x model (released items, first sample): by item id, its
    content hash and score values."""

    run_id: str
    suite: str
    model: str
    values: dict[str, tuple[str, dict[str, float]]]


_WHOSE = (
    "run_id = $run and suite = $suite and model = $model "
    "and coalesce(sample, 1) = 1 and coalesce(variant, '') = ''"
)


def landed_scores(con: duckdb.DuckDBPyConnection, run_id: str, suite: str, model: str) -> Landed:
    """The run's score values of `suite` x `model` by item (an item whose scorer raised, or
    whose every metric went unscored, has none: it was not scored)."""
    params = {"run": run_id, "suite": suite, "model": model}
    rows = con.execute(
        f"select item_id, content_hash, metric, value from scores where {_WHOSE} "
        f"and metric <> '{EVERY_METRIC}' and value is not null and not isnan(value)",
        params,
    ).fetchall()
    values: dict[str, tuple[str, dict[str, float]]] = {}
    for item_id, content_hash, metric, value in rows:
        values.setdefault(item_id, (content_hash, {}))[1][metric] = value
    return Landed(run_id, suite, model, values)


def scored_items(
    con: duckdb.DuckDBPyConnection, landed: Landed, ids: Collection[str]
) -> list[ScoredItem]:
    """The items of `ids` (of `landed`) as the run scored them, by item id: the item read
    from the items table by its content hash, its last attempt's parse, its values."""
    wanted = sorted(i for i in ids if i in landed.values)
    if not wanted:
        return []
    params = {
        "run": landed.run_id,
        "suite": landed.suite,
        "model": landed.model,
        "ids": wanted,
    }
    parses = {
        row[0]: ParsedAnswer(ParseStatus(row[1]), json.loads(row[2]), row[3], row[4] or "")
        for row in con.execute(
            f"select item_id, status, value_json, rule, detail from parses where {_WHOSE} "
            "and list_contains($ids, item_id) "
            "qualify row_number() over (partition by item_id order by attempt desc) = 1",
            params,
        ).fetchall()
    }
    hashes = sorted({landed.values[i][0] for i in wanted})
    items = {
        row[2]: _item(row)
        for row in con.execute(
            "select suite, suite_version, item_id, task, content_hash, answer_kind, question, "
            "options_json, reference_json, media_json, labels_json, extra_json from items "
            "where suite = $suite and list_contains($hashes, content_hash)",
            {"suite": landed.suite, "hashes": hashes},
        ).fetchall()
        if row[2] in landed.values and row[4] == landed.values[row[2]][0]
    }
    missing = [i for i in wanted if i not in items or i not in parses]
    if missing:
        raise ValueError(
            f"run {landed.run_id}, {landed.suite} x {landed.model}: item {missing[0]!r} has "
            f"score rows but no {'item row' if missing[0] not in items else 'parse'} in the "
            f"store ({len(missing)} such items)"
        )
    return [ScoredItem(items[i], parses[i], landed.values[i][1]) for i in wanted]


def _item(row: tuple[object, ...]) -> Item:
    """An item row as the Item it was landed from (its content hash kept as landed)."""
    suite, version, item_id, task, content_hash, kind, question, *encoded = row
    options, reference, media, labels, extra = (json.loads(str(text)) for text in encoded)
    return Item.model_validate(
        {
            "suite": suite,
            "suite_version": version,
            "item_id": item_id,
            "task": task,
            "content_hash": content_hash,
            "answer_kind": kind,
            "question": question,
            "options": options,
            "reference": reference,
            "media": media,
            "labels": labels,
            "extra": extra,
        }
    )
