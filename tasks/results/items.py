"""Landing a suite's items in the store once per content version."""

from __future__ import annotations

import json
from typing import Any

from roadeval.benchmarks.item import Item
from roadeval.storage.landing import Part, is_landed, land
from roadeval.storage.records import ItemRow
from roadeval.storage.store import Store


def item_row(item: Item) -> ItemRow:
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)

    return ItemRow(
        suite=item.suite,
        suite_version=item.suite_version,
        item_id=item.item_id,
        task=item.task,
        content_hash=item.content_hash,
        answer_kind=str(item.answer_kind),
        question=item.question,
        options_json=dumps(item.options),
        reference_json=dumps(item.reference),
        media_json=dumps([m.model_dump(mode="json") for m in item.media]),
        labels_json=dumps(item.labels),
        extra_json=dumps(item.extra),
    )


def land_items(store: Store, suite: str, items: list[Item], version_hash: str) -> None:
    """Land the items under their suite hash unless that exact version is already landed."""
    name = f"items-{version_hash}"
    if not is_landed(store, name):
        land(store, name, [Part("items", [item_row(i) for i in items], suite=suite)])
