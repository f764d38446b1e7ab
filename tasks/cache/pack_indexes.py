"""The indexes of closed journals, folded as they accumulate so that a reader reads a few.

A journal that closes writes its index (`cache/journals/<journal>.json`: which of its packs
holds which answer). Every process that looks answers up reads the store's indexes, so one
index per process-run ever would cost each run a read per earlier process. So the closer
folds: when `FAN_IN` indexes of one tier are there (a journal's is tier 0), it writes one index
of the next tier holding all their entries (`cache/journals/merged-<tier>-<time>-<id>.json`),
then deletes them (a journal's `.open` before its index, so that no reader ever takes a folded
journal for one still open). An answer's entry is rewritten at most once a tier, and a store of
J journals keeps at most (FAN_IN - 1) indexes per tier, log_FAN_IN(J) tiers. Two closers that
fold at once write the same entries twice, which readers take either way; a reader whose index
was folded away under it lists again.
"""

from __future__ import annotations

import itertools
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from roadeval.storage.store import Store

JOURNALS = "cache/journals/"
OPENED = ".open"
INDEX = ".json"
MERGED = "merged-"
FAN_IN = 16


@dataclass(frozen=True)
class AnswerIndex:
    """Where answers are: per entry its request key, its pack (a position in `packs`), and the
    span of its line there; `journals` are those whose answers it holds, all of them."""

    journals: tuple[str, ...]
    packs: tuple[str, ...]
    entries: tuple[tuple[str, int, int, int], ...]

    def to_json(self) -> bytes:
        body = {"journals": self.journals, "packs": self.packs, "entries": self.entries}
        return json.dumps(body, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, data: bytes) -> AnswerIndex:
        """The index in `data`; ValueError when it is not one."""
        try:
            body = json.loads(data)
            packs = tuple(str(pack) for pack in body["packs"])
            entries = tuple(
                (str(key), int(pack), int(offset), int(length))
                for key, pack, offset, length in body["entries"]
            )
            journals = tuple(str(journal) for journal in body["journals"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not an index of answers: {exc}") from None
        if any(not 0 <= entry[1] < len(packs) for entry in entries):
            raise ValueError("not an index of answers: an entry names no pack")
        return cls(journals, packs, entries)


def index_name(name: str) -> str:
    """The key of the index named `name` (a journal's name, or a merged index's)."""
    return f"{JOURNALS}{name}{INDEX}"


def tier_of(name: str) -> int:
    """The tier of the index named `name`: 0 for a journal's, else as its name says."""
    if not name.startswith(MERGED):
        return 0
    try:
        return int(name.split("-")[1])
    except (IndexError, ValueError):
        return 0


def fold_indexes(store: Store) -> None:
    """Fold every tier holding `FAN_IN` indexes or more into one index of the next tier, from
    tier 0 up. An index gone before it was read (another closer folded it) ends the folding."""
    names = [
        key[len(JOURNALS) : -len(INDEX)] for key in store.list(JOURNALS) if key.endswith(INDEX)
    ]
    for tier in itertools.count():
        those = sorted(name for name in names if tier_of(name) == tier)
        if len(those) < FAN_IN:
            return
        try:
            indexes = [AnswerIndex.from_json(store.get(index_name(name))) for name in those]
        except FileNotFoundError:
            return
        merged = _merged(indexes)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{MERGED}{tier + 1}-{stamp}-{uuid.uuid4().hex[:8]}"
        store.put(index_name(name), merged.to_json())
        if tier == 0:
            store.delete_many(f"{JOURNALS}{journal}{OPENED}" for journal in those)
        store.delete_many(index_name(folded) for folded in those)
        names = [n for n in names if n not in set(those)] + [name]


def _merged(indexes: list[AnswerIndex]) -> AnswerIndex:
    packs: dict[str, int] = {}
    entries: list[tuple[str, int, int, int]] = []
    for index in indexes:
        for key, pack, offset, length in index.entries:
            number = packs.setdefault(index.packs[pack], len(packs))
            entries.append((key, number, offset, length))
    journals = sorted({journal for index in indexes for journal in index.journals})
    return AnswerIndex(tuple(journals), tuple(packs), tuple(entries))
