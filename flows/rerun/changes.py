"""The plan stage's first step on every run: each suite's item ledger (content and prompt hash
per item) against the baseline's, landed as the `changes` table before the first call."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from roadeval.flows.rerun.baseline import BaselineRun
from roadeval.flows.stages.load import LoadedSuite
from roadeval.storage.landing import read_rows
from roadeval.storage.records import ChangeRow, ItemRow
from roadeval.storage.store import Store
from roadeval.storage.tables import part_key
from roadeval.tasks.rerun.changes import (
    ChangeKind,
    LedgerEntry,
    changes_name,
    item_changes,
    ledger_from_items,
    ledger_of,
    prompt_hash,
)

if TYPE_CHECKING:
    from roadeval.tasks.render.stage import Renders


def _baseline_ledger(
    store: Store, baseline: BaselineRun, suite: str
) -> tuple[dict[str, LedgerEntry], str | None]:
    """The baseline's ledger of a suite (from its `changes` rows; from its items, without
    prompt hashes, for a baseline that landed none), and the key of its items part."""
    record = baseline.suite(suite)
    if record is None:
        return {}, None
    items_key = part_key("items", f"items-{record.hash}", suite=suite)
    changes_key = part_key("changes", changes_name(baseline.run_id), suite=suite)
    # Read, not checked first: a baseline has its changes (older ones have not), and a check
    # is one more request per suite on S3.
    with contextlib.suppress(FileNotFoundError):
        return ledger_of(read_rows(store, "changes", [changes_key])), items_key
    if not store.exists(items_key):
        return {}, None
    rows: list[ItemRow] = read_rows(store, "items", [items_key])
    return {
        row.item_id: LedgerEntry(row.item_id, row.task, row.content_hash, None) for row in rows
    }, items_key


def suite_changes(
    run_id: str,
    store: Store,
    loaded: LoadedSuite,
    renders: Renders,
    baseline: BaselineRun | None,
) -> list[ChangeRow]:
    """One suite's ledger rows: every item of the run, then the baseline's items now gone."""
    from roadeval.tasks.results.items import item_row
    from roadeval.tasks.shard.plan import shared_prompt

    suite = loaded.suite
    prompts = {
        item.item_id: shared_prompt(suite, item, renders.get(item.item_id, ()))
        for item in loaded.items
    }
    hashes = {item_id: prompt_hash(p.messages, p.json) for item_id, p in prompts.items()}
    new = ledger_from_items(loaded.items, hashes)
    if baseline is None:
        return item_changes(run_id, None, suite.name, new, {}, {}, {})
    old, items_key = _baseline_ledger(store, baseline, suite.name)
    moved = [
        entry.item_id
        for entry in new
        if entry.item_id in old and old[entry.item_id].content_hash != entry.content_hash
    ]
    old_rows: dict[str, ItemRow] = {}
    new_rows: dict[str, ItemRow] = {}
    if moved and items_key is not None:
        # The fields that moved, read from the baseline's items only when some did.
        wanted = set(moved)
        old_rows = {
            row.item_id: row
            for row in read_rows(store, "items", [items_key])
            if row.item_id in wanted and row.content_hash == old[row.item_id].content_hash
        }
        new_rows = {item.item_id: item_row(item) for item in loaded.items if item.item_id in wanted}
    return item_changes(run_id, baseline.run_id, suite.name, new, old, new_rows, old_rows)


def count_changes(rows: list[ChangeRow]) -> dict[str, int]:
    """Items per kind of change (a changed item under `changed:<what>`)."""
    counts: dict[str, int] = {}
    for row in rows:
        name = f"{row.kind}:{row.what}" if row.kind == ChangeKind.CHANGED else row.kind
        counts[name] = counts.get(name, 0) + 1
    return counts
