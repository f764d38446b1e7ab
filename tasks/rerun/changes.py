"""Which items changed since the baseline run, from content and prompt hashes, per suite.

Every run lands a row per item (its ledger: content hash and prompt hash), so the next run
compares with it in one read per suite. An item id that disappears and another that appears
are a removal and an addition, never a change.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from roadeval.benchmarks.item import Item
from roadeval.benchmarks.messages import Message
from roadeval.storage.landing import Part, land
from roadeval.storage.records import ChangeRow, ItemRow
from roadeval.storage.store import Store
from roadeval.tasks.requests.request import messages_key_json


class ChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    UNCHANGED = "unchanged"


# Changed items a page lists by id before it names the query that lists every one.
CHANGED_SHOWN = 200


def describe_change(kind: str, what: str | None, fields: str | None) -> str:
    """What happened to an item: added, removed, or changed, in what and which fields."""
    if kind != ChangeKind.CHANGED:
        return kind
    named = fields and fields != what
    return f"changed:{what}" + (f" ({fields})" if named else "")


def changed_items_query(run_id: str) -> str:
    """The `roadeval query` SQL listing every item run `run_id` added, removed or changed
    against its baseline run, with what changed."""
    return (
        "select suite, item_id, kind, what, fields from changes "
        f"where run_id = '{run_id}' and kind <> 'unchanged' order by suite, kind, what, item_id"
    )


class ChangeWhat(StrEnum):
    """What a changed item changed in: what the model is sent, or only what it is scored by."""

    PROMPT = "prompt"
    REFERENCE = "reference"


# Item fields as the items table keeps them; media compared by their bytes' digests.
_FIELDS = ("task", "answer_kind", "question", "options", "reference", "media", "labels", "extra")
# Fields a model never sees: a change to these alone is a `reference` change when the prompt
# hash cannot tell (a baseline landed before runs kept their prompt hashes).
_SCORING_FIELDS = frozenset({"reference", "labels"})


def prompt_hash(messages: Sequence[Message], messages_json: str | None = None) -> str:
    """sha256 of the messages as sent (each image by its bytes' digest): what a model sees of
    an item, whichever model it is. `messages_json`: the same messages already encoded."""
    text = messages_json if messages_json is not None else messages_key_json(messages)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    """One item of a run as the next run compares it."""

    item_id: str
    task: str
    content_hash: str
    prompt_hash: str | None


def item_fields(row: ItemRow) -> dict[str, object]:
    """An items-table row's fields as compared (media by digest, role and index)."""
    media = [
        {k: v for k, v in entry.items() if k in ("kind", "sha256", "role", "index")}
        for entry in json.loads(row.media_json)
    ]
    return {
        "task": row.task,
        "answer_kind": row.answer_kind,
        "question": row.question,
        "options": json.loads(row.options_json),
        "reference": json.loads(row.reference_json),
        "media": media,
        "labels": json.loads(row.labels_json),
        "extra": json.loads(row.extra_json),
    }


def differing_fields(old: ItemRow | None, new: ItemRow | None) -> list[str]:
    """The item fields that differ between two versions of an item ([] when either is
    unknown)."""
    if old is None or new is None:
        return []
    a, b = item_fields(old), item_fields(new)
    return [name for name in _FIELDS if a[name] != b[name]]


def item_changes(
    run_id: str,
    baseline_run_id: str | None,
    suite: str,
    new: Sequence[LedgerEntry],
    old: Mapping[str, LedgerEntry],
    new_rows: Mapping[str, ItemRow],
    old_rows: Mapping[str, ItemRow],
) -> list[ChangeRow]:
    """The run's ledger rows for one suite: each new item added, changed or unchanged against
    the baseline's (`old`, by item id), then each baseline item that is gone. Without a
    baseline, every item is added."""
    rows: list[ChangeRow] = []
    seen: set[str] = set()
    for entry in new:
        seen.add(entry.item_id)
        before = old.get(entry.item_id)
        kind, what, fields = _compare(
            before, entry, old_rows.get(entry.item_id), new_rows.get(entry.item_id)
        )
        rows.append(
            ChangeRow(
                run_id=run_id,
                baseline_run_id=baseline_run_id,
                suite=suite,
                item_id=entry.item_id,
                task=entry.task,
                kind=kind,
                what=what,
                fields=fields,
                old_content_hash=before.content_hash if before else None,
                new_content_hash=entry.content_hash,
                old_prompt_hash=before.prompt_hash if before else None,
                new_prompt_hash=entry.prompt_hash,
            )
        )
    for item_id in sorted(set(old) - seen):
        gone = old[item_id]
        rows.append(
            ChangeRow(
                run_id=run_id,
                baseline_run_id=baseline_run_id,
                suite=suite,
                item_id=item_id,
                task=gone.task,
                kind=ChangeKind.REMOVED,
                what=None,
                fields=None,
                old_content_hash=gone.content_hash,
                new_content_hash=None,
                old_prompt_hash=gone.prompt_hash,
                new_prompt_hash=None,
            )
        )
    return rows


def _compare(
    before: LedgerEntry | None,
    after: LedgerEntry,
    old_row: ItemRow | None,
    new_row: ItemRow | None,
) -> tuple[str, str | None, str | None]:
    if before is None:
        return ChangeKind.ADDED, None, None
    same_content = before.content_hash == after.content_hash
    known = before.prompt_hash is not None and after.prompt_hash is not None
    same_prompt = before.prompt_hash == after.prompt_hash if known else same_content
    if same_content and same_prompt:
        return ChangeKind.UNCHANGED, None, None
    fields = differing_fields(old_row, new_row) if not same_content else []
    if known:
        what = ChangeWhat.REFERENCE if same_prompt else ChangeWhat.PROMPT
    else:
        what = (
            ChangeWhat.REFERENCE if set(fields) <= _SCORING_FIELDS and fields else ChangeWhat.PROMPT
        )
    if same_content:
        # Nothing of the item moved, yet its prompt did: a new drawing or prompt wording.
        fields = ["render"]
    return ChangeKind.CHANGED, what, ",".join(fields) or None


def ledger_of(rows: Iterable[ChangeRow]) -> dict[str, LedgerEntry]:
    """A run's ledger for one suite, from the change rows it landed (its removed items left
    out: they were not the run's)."""
    return {
        row.item_id: LedgerEntry(row.item_id, row.task, row.new_content_hash, row.new_prompt_hash)
        for row in rows
        if row.new_content_hash is not None
    }


def ledger_from_items(items: Iterable[Item], hashes: Mapping[str, str | None]) -> list[LedgerEntry]:
    """A run's own ledger: its items with the prompt hash of each (by item id)."""
    return [
        LedgerEntry(item.item_id, item.task, item.content_hash, hashes.get(item.item_id))
        for item in items
    ]


def changes_name(run_id: str) -> str:
    """The landing (and part name) of a run's `changes` rows."""
    return f"{run_id}-changes"


def land_changes(run_id: str, store: Store, changes: Mapping[str, list[ChangeRow]]) -> None:
    """Every suite's ledger rows (`flows.rerun.changes.suite_changes`), landed at once before
    the first call; the next run reads them back as its baseline's ledger (`ledger_of`)."""
    land(
        store,
        changes_name(run_id),
        [Part("changes", rows, suite=name) for name, rows in changes.items()],
    )
