"""The S3 requests a store's client makes, counted by operation at the client (HEADs included,
which counting `Store.get` would miss)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from roadeval.storage.store import Store


def counted_s3_calls(store: Store, folder: str | None = None) -> Counter[str]:
    """From now on, `store`'s requests by operation (`GetObject`, ...); with `folder`, only
    those for keys under it (`tables/`)."""
    seen: Counter[str] = Counter()

    def count(model: Any, params: dict[str, Any], **_: Any) -> None:
        if folder is None or f"/{folder}" in f"/{params.get('Key', '')}":
            seen[model.name] += 1

    client: Any = store._client  # type: ignore[attr-defined]
    client.meta.events.register("before-parameter-build.s3", count)
    return seen
