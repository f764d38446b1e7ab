"""Landing a suite's items in the store once per content version."""

from __future__ import annotations

import json
from typing import Any

from roadeval.benchmarks.item import Item
from roadeval.storage.store import Store
from roadeval.storage.tables import part_key, write_part


def item_row(item: Item) -> dict[str, Any]:
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    return {
        "suite": item.suite,
        "suite_version": item.suite_version,
        "item_id": item.item_id,
        "task": item.task,
        "content_hash": item.content_hash,
        "answer_kind": str(item.answer_kind),
        "question": item.question,
        "options_json": dumps(item.options),
        "reference_json": dumps(item.reference),
        "media_json": dumps([m.model_dump(mode="json") for m in item.media]),
        "labels_json": dumps(item.labels),
        "extra_json": dumps(item.extra),
    }


def land_items(store: Store, suite: str, items: list[Item], version_hash: str) -> str:
    """Write the items under their suite hash unless that exact version is already landed."""
    key = part_key("items", version_hash, suite=suite)
    if not store.exists(key):
        write_part(store, "items", version_hash, (item_row(i) for i in items), suite=suite)
    return key
