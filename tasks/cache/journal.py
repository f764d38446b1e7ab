"""One process's journal of answers on a remote store: answers kept in packs, a request per pack.

`keep` returns once the answer's pack is written (an asker holds its slot and its claim until
then, so a crash still loses only what was in flight). While a pack is being written, the
answers that arrive wait and go together into the next: the store takes one request per pack
however fast the answers come, and an answer that arrives alone is written alone at once.
`close` writes the journal's index and folds the store's indexes as they accumulate (see
`packs`, `pack_indexes`); a journal never closed (its process died) is read pack by pack.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import socket
import uuid
import weakref
from datetime import UTC, datetime

from roadeval.storage.part_cache import keep_part
from roadeval.storage.store import Store
from roadeval.tasks.cache.pack_indexes import (
    JOURNALS,
    OPENED,
    AnswerIndex,
    fold_indexes,
    index_name,
)
from roadeval.tasks.cache.packs import Spot, journal_index, pack_body, pack_catalogue, pack_key
from roadeval.tasks.cache.store_calls import call_store
from roadeval.tasks.calls.stopping import StopSignal

_log = logging.getLogger(__name__)

# Answers a pack holds at most (a pack is read whole when one of its answers is wanted).
MAX_PACK = 256


def _journal_name() -> str:
    """Unique, and in the order journals began: `<UTC time>-<host>-<pid>-<random>`."""
    host = re.sub(r"[^A-Za-z0-9.-]", "-", socket.gethostname())[:40] or "host"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


_Waiting = tuple[str, bytes, asyncio.Future[None], StopSignal]


class Journal:
    """A process's packs of answers in one store, written from one event loop."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.name = _journal_name()
        self._catalogue = pack_catalogue(store)
        self._catalogue.mine(self.name)
        self._waiting: list[_Waiting] = []
        self._writer: asyncio.Future[None] | None = None
        self._opened = False
        self._closed = False
        self._written = 0
        self._packs: dict[int, list[tuple[str, int, int]]] = {}

    async def keep(self, request_key: str, entry: bytes, stop: StopSignal) -> None:
        """Write `entry` (the cache entry of `request_key`) into the next pack; returns when it
        is in the store. A store failure stops the run (`call_store`) and is raised here."""
        if self._closed:  # closed while its caller held it: the loop's next journal keeps it
            await journal_for(self.store).keep(request_key, entry, stop)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((request_key, entry, future, stop))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_packs())
        await future

    async def _write_packs(self) -> None:
        while self._waiting:
            batch, self._waiting = self._waiting[:MAX_PACK], self._waiting[MAX_PACK:]
            stop = batch[0][3]
            try:
                await self._write_pack(batch, stop)
            except BaseException as exc:
                for _, _, future, _ in batch:
                    if not future.done():
                        future.set_exception(exc)
                        future.exception()  # a waiter that gave up leaves no stray error
                if not isinstance(exc, Exception):
                    raise

    async def _write_pack(self, batch: list[_Waiting], stop: StopSignal) -> None:
        if not self._opened:
            # Before any pack: a reader finds the packs of every journal it lists.
            opened = f"{JOURNALS}{self.name}{OPENED}"
            await call_store(self.store, stop, self.store.put, opened, b"")
            self._opened = True
        number = self._written + 1
        key = pack_key(self.name, number)
        body, spans = pack_body(entry for _, entry, _, _ in batch)
        await call_store(self.store, stop, self.store.put, key, body)
        self._written = number
        keep_part(self.store, key, body)
        entries = [
            (rk, offset, length)
            for (rk, _, _, _), (offset, length) in zip(batch, spans, strict=True)
        ]
        self._packs[number] = entries
        for request_key, offset, length in entries:
            self._catalogue.add(request_key, Spot(key, offset, length))
        for _, _, future, _ in batch:
            if not future.done():
                future.set_result(None)

    async def close(self) -> None:
        """Once every answer waiting is written: the index, so readers need not list the
        packs. A failure is logged: the packs are read one by one instead."""
        self._closed = True  # what is kept from now on goes to a journal of its own
        while self._writer is not None and not self._writer.done():
            await asyncio.wait([self._writer])
        if not self._packs:
            return
        index = journal_index(self.name, self._packs)
        try:
            await asyncio.to_thread(self._write_index, index)
        except Exception as exc:
            _log.warning("the index of journal %s could not be written: %s", self.name, exc)

    def _write_index(self, index: AnswerIndex) -> None:
        self.store.put(index_name(self.name), index.to_json())
        fold_indexes(self.store)


# Per event loop (the gateway's, or a test's), per store.
_JOURNALS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Journal]] = (
    weakref.WeakKeyDictionary()
)


def journal_for(store: Store) -> Journal:
    """This loop's open journal on `store` (a new one after `close_journals`)."""
    journals = _JOURNALS.setdefault(asyncio.get_running_loop(), {})
    found = journals.get(store.uri)
    if found is None:
        found = journals[store.uri] = Journal(store)
    return found


def journals_open() -> bool:
    return any(_JOURNALS.values())


async def close_journals() -> None:
    """Close this loop's journals (a run's answers are all kept): each writes its index. An
    answer kept later opens a new journal."""
    journals = _JOURNALS.pop(asyncio.get_running_loop(), {})
    for journal in journals.values():
        await journal.close()


def close_gateway_journals() -> None:
    """`close_journals` on the gateway loop, where a process's model calls keep their answers
    (from any thread; nothing to do if none was opened)."""
    if journals_open():
        from roadeval.tasks.calls.gateway import run_on_gateway

        run_on_gateway(close_journals())
