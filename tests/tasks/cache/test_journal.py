"""Answers kept in packs on a remote store: what arrives while a pack is written goes into the
next (a request per pack, not per answer), an answer's keeper returns only once its pack is in
the store, a closed journal is read from its index and an open one pack by pack, an answer
packed elsewhere after this process read the packs is found when a claim says it exists, and a
process killed while a pack is being written leaves exactly the answers whose keepers returned
(and, whole or not at all, the pack in flight).

The store here is a folder that says it is remote (its operations run in threads, as S3's do):
what is tested is the journal and the catalogue, not the wire (tests/flows/test_s3_runs.py
runs them on moto)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from roadeval.benchmarks.output import ModelOutput
from roadeval.storage.part_cache import forget_parts
from roadeval.storage.store import LocalStore, StoreError
from roadeval.tasks.cache import pack_indexes
from roadeval.tasks.cache.journal import Journal, close_journals, journal_for
from roadeval.tasks.cache.pack_indexes import FAN_IN
from roadeval.tasks.cache.packs import JOURNALS, PACKS, forget_catalogues
from roadeval.tasks.cache.responses import ResponseCache, stored_request_keys
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.request import ModelCall

from support.cli_process import wait_until


def key(n: int) -> str:
    return f"{n:064x}"


def answer(n: int) -> ModelCall:
    return ModelCall(request_key=key(n), model="m", attempt=1, output=ModelOutput(text=f"A{n}"))


class RemoteFolder(LocalStore):
    """A folder whose operations run off the loop, as a remote store's do; counts its reads
    and writes, and can hold the writes of packs until `release` is set."""

    runs_inline = False

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gets: Counter[str] = Counter()
        self.puts: list[str] = []
        self.hold = threading.Event()
        self.holding = threading.Event()  # a pack write is being held
        self.release = threading.Event()
        self.release.set()
        self.fail = False
        self.held_marker: Path | None = None  # touched when a write is held

    def put(self, key: str, data: bytes) -> None:
        if key.startswith(PACKS) and self.hold.is_set():
            self.holding.set()
            if self.held_marker is not None:
                self.held_marker.touch()
            self.release.wait(10)
        if self.fail:
            raise OSError(28, "No space left on device")
        self.puts.append(key)
        super().put(key, data)

    def get(self, key: str) -> bytes:
        self.gets[key.split("/")[1]] += 1
        return super().get(key)


@pytest.fixture(autouse=True)
def cold_process() -> None:
    _as_another_process()


def test_answers_arriving_while_a_pack_is_written_go_together_into_the_next(
    tmp_path: Path,
) -> None:
    store = RemoteFolder(tmp_path / "store")
    cache, stop = ResponseCache(store), StopSignal()
    store.hold.set()
    store.release.clear()

    async def scenario() -> list[int]:
        first = asyncio.ensure_future(cache.keep(answer(0), stop))
        await asyncio.to_thread(store.holding.wait, 10)  # the first pack is being written
        rest = [asyncio.ensure_future(cache.keep(answer(n), stop)) for n in range(1, 51)]
        await asyncio.sleep(0.05)
        # Nobody's answer is kept yet, so no keeper has returned.
        assert not first.done() and not any(task.done() for task in rest)
        store.hold.clear()
        store.release.set()
        await asyncio.gather(first, *rest)
        await close_journals()
        return [len(body.splitlines()) for body in _packs(store)]

    sizes = asyncio.run(scenario())
    assert sizes == [1, 50]  # two requests for 51 answers
    opened = [k for k in store.puts if k.startswith(JOURNALS)]
    assert len(opened) == 2 and opened[0].endswith(".open") and opened[1].endswith(".json")
    # A reader in another process finds each answer, whole.
    _as_another_process()
    reader = ResponseCache(store)
    assert [reader.get(key(n)) for n in (0, 37)] == [
        ModelCall.from_cache(answer(n).to_cache(), key(n)) for n in (0, 37)
    ]


def _as_another_process(store: RemoteFolder | None = None) -> None:
    """Forget what this process read of the stores (catalogues, parts), and the reads `store`
    counted so far: what follows reads as a process of its own would."""
    forget_catalogues()
    forget_parts()
    if store is not None:
        store.gets.clear()


def _packs(store: LocalStore) -> list[bytes]:
    return [store.get(k) for k in store.list(PACKS)]


def test_a_closed_journal_is_read_from_its_index_and_an_open_one_pack_by_pack(
    tmp_path: Path,
) -> None:
    store = RemoteFolder(tmp_path / "store")
    stop = StopSignal()

    async def write() -> None:
        closed, left_open = Journal(store), Journal(store)
        for n in range(6):
            await closed.keep(key(n), answer(n).to_cache(), stop)
        for n in range(6, 9):
            await left_open.keep(key(n), answer(n).to_cache(), stop)
        await closed.close()  # the other one's process died

    asyncio.run(write())
    _as_another_process(store)
    assert stored_request_keys(store) == {key(n) for n in range(9)}
    # The closed journal: its index, none of its six packs; the open one: its three packs.
    assert store.gets == Counter({"journals": 1, "packs": 3})
    cache = ResponseCache(store)
    found = [cache.get(key(n)) for n in range(10)]
    assert [f.output.text if f else None for f in found] == [*(f"A{n}" for n in range(9)), None]


def test_an_answer_kept_as_its_journal_closes_goes_to_a_journal_whose_index_has_it(
    tmp_path: Path,
) -> None:
    store = RemoteFolder(tmp_path / "store")
    stop = StopSignal()

    async def scenario() -> None:
        journal = journal_for(store)
        await journal.keep(key(0), answer(0).to_cache(), stop)
        await close_journals()
        await journal.keep(key(1), answer(1).to_cache(), stop)  # a caller that held it
        await close_journals()

    asyncio.run(scenario())
    indexes = [k for k in store.list(JOURNALS) if k.endswith(".json")]
    assert len(indexes) == 2
    forget_catalogues()
    store.gets.clear()
    assert stored_request_keys(store) == {key(0), key(1)}
    assert store.gets == Counter({"journals": 2})  # found from the indexes alone


def test_an_answer_packed_elsewhere_since_the_packs_were_read_is_found_when_recent(
    tmp_path: Path,
) -> None:
    store = RemoteFolder(tmp_path / "store")
    cache = ResponseCache(store)
    assert cache.get(key(1)) is None  # the packs are read: there are none
    _pack_elsewhere(store, 1)
    # A plan's look-up stands by what it read; a claim's word that it was answered does not.
    assert cache.get(key(1)) is None
    recent = cache.get(key(1), recent=True)
    assert recent is not None and recent.output.text == "A1"


def test_a_store_that_fails_stops_the_run_and_fails_every_keeper_of_the_pack(
    tmp_path: Path,
) -> None:
    store = RemoteFolder(tmp_path / "store")
    store.fail = True
    cache, stop = ResponseCache(store), StopSignal()

    async def scenario() -> list[BaseException | None]:
        results = await asyncio.gather(
            *(cache.keep(answer(n), stop) for n in range(3)), return_exceptions=True
        )
        return [r if isinstance(r, BaseException) else None for r in results]

    errors = asyncio.run(scenario())
    assert all(isinstance(e, StoreError) and "No space left" in str(e) for e in errors), errors
    assert stop.requested and stop.reason is not None and stop.reason.status == "failed"


def test_a_process_killed_while_a_pack_is_written_leaves_what_its_keepers_were_told(
    tmp_path: Path,
) -> None:
    """The journal's promise under SIGKILL: every answer whose keeper returned is in the store;
    of the others (in flight: their askers still held their slots and claims) a pack is there
    whole or not at all."""
    root = tmp_path / "store"
    returned, held = tmp_path / "returned", tmp_path / "held"
    script = f"""
import asyncio, os, sys, time
sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(Path(__file__).parents[2])!r}]
from test_journal import RemoteFolder, answer
from roadeval.tasks.cache.responses import ResponseCache
from roadeval.tasks.calls.stopping import StopSignal

store = RemoteFolder(__import__('pathlib').Path({str(root)!r}))
store.held_marker = __import__('pathlib').Path({str(held)!r})
cache, stop = ResponseCache(store), StopSignal()
out = open({str(returned)!r}, 'w')

async def keep(n):
    await asyncio.sleep(n * 0.002)
    if n == 120:
        store.hold.set()  # from here on, a pack's write never ends: the kill lands in it
        store.release.clear()
    await cache.keep(answer(n), stop)
    out.write(f'{{n}}\\n')
    out.flush()

async def main():
    await asyncio.gather(*(keep(n) for n in range(200)))

asyncio.run(main())
"""
    process = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, start_new_session=True)
    try:
        wait_until(
            lambda: held.exists() or process.poll() is not None, timeout=30, what="a held write"
        )
        assert process.poll() is None, "the writer ended before its pack was held"
        time.sleep(0.3)  # the keepers of every pack written before it have been told
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    told = {key(int(n)) for n in returned.read_text().split()}
    kept = stored_request_keys(LocalStore(root))
    # Kept: exactly what keepers were told; the held pack and those after it: nothing of them.
    assert kept == told
    assert key(0) in told and 100 <= len(told) < 200
    for body in _packs(LocalStore(root)):
        assert all(line.startswith(b"{") and line.endswith(b"}") for line in body.splitlines())


def _close_journals_keeping(store: RemoteFolder, first: int, count: int) -> None:
    """`count` journals, one after another, each keeping two answers and closing."""
    stop = StopSignal()

    async def scenario() -> None:
        for n in range(first, first + 2 * count, 2):
            journal = Journal(store)
            await journal.keep(key(n), answer(n).to_cache(), stop)
            await journal.keep(key(n + 1), answer(n + 1).to_cache(), stop)
            await journal.close()

    asyncio.run(scenario())


def _index_names(store: LocalStore) -> list[str]:
    return [k.removeprefix(JOURNALS) for k in store.list(JOURNALS)]


def test_closed_journals_indexes_are_folded_so_that_a_reader_reads_a_few(tmp_path: Path) -> None:
    store = RemoteFolder(tmp_path / "store")
    _close_journals_keeping(store, 0, FAN_IN - 1)
    assert len(_index_names(store)) == 2 * (FAN_IN - 1)  # each journal's .open and .json
    _close_journals_keeping(store, 100, 1)  # the FAN_IN-th: its closer folds them all
    [merged] = _index_names(store)
    assert merged.startswith("merged-1-") and merged.endswith(".json")
    asyncio.run(_keep_one_open(store, 500))  # and one journal is left open
    _as_another_process(store)
    every = {key(n) for n in (*range(2 * (FAN_IN - 1)), 100, 101, 500)}
    assert stored_request_keys(store) == every
    assert store.gets == Counter({"journals": 1, "packs": 1})  # the merged index, the open pack
    folded = ResponseCache(store).get(key(7))
    assert folded is not None and folded.output.text == "A7"


async def _keep_one_open(store: LocalStore, n: int) -> None:
    await Journal(store).keep(key(n), answer(n).to_cache(), StopSignal())


def test_folding_goes_up_a_tier_when_a_tier_fills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pack_indexes, "FAN_IN", 2)
    store = RemoteFolder(tmp_path / "store")
    _close_journals_keeping(store, 0, 4)  # 2 + 2 journals -> two tier-1 -> one tier-2
    [merged] = _index_names(store)
    assert merged.startswith("merged-2-")
    forget_catalogues()
    assert stored_request_keys(store) == {key(n) for n in range(8)}


def test_an_index_folded_away_while_a_reader_lists_is_found_in_its_successor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pack_indexes, "FAN_IN", 2)
    store = RemoteFolder(tmp_path / "store")
    _close_journals_keeping(store, 0, 1)  # one journal's index: under the fan-in

    class FoldingUnderIt(RemoteFolder):
        """Another closer folds the indexes just as this reader goes to read one."""

        folded = False

        def get(self, key: str) -> bytes:
            if key.startswith(JOURNALS) and not self.folded:
                self.folded = True
                _close_journals_keeping(store, 100, 1)  # the second closes, and folds
            return super().get(key)

    reader = FoldingUnderIt(store.root)
    forget_catalogues()
    assert stored_request_keys(reader) == {key(n) for n in (0, 1, 100, 101)}
    assert reader.gets["packs"] == 0  # found in the merged index, no pack read


def test_a_broken_line_in_an_open_journals_pack_is_a_reported_miss(tmp_path: Path) -> None:
    store = RemoteFolder(tmp_path / "store")
    stop = StopSignal()

    async def keep_three() -> None:
        journal = Journal(store)  # never closed: read pack by pack
        await asyncio.gather(*(journal.keep(key(n), answer(n).to_cache(), stop) for n in range(3)))

    asyncio.run(keep_three())
    [pack] = store.list(PACKS)
    lines = store.get(pack).split(b"\n")
    lines[1] = lines[1][:100]  # cut off mid-entry, its request key still legible
    store.put(pack, b"\n".join(lines))
    _as_another_process()
    cache = ResponseCache(store)
    assert cache.get(key(1)) is None
    assert [c.output.text for c in (cache.get(key(0)), cache.get(key(2))) if c] == ["A0", "A2"]
    [corrupt] = cache.corrupt
    assert corrupt.request_key == key(1) and pack in corrupt.location


def test_a_process_that_runs_again_reads_what_was_packed_since_its_last_run(
    tmp_path: Path,
) -> None:
    """A long-lived process (a server that runs panels, a test session): its catalogue of
    packs was read in an earlier run; a later run's look-ups see what was packed in between."""
    store = RemoteFolder(tmp_path / "store")
    assert ResponseCache(store, run_id="20260101T000000Z-aaaaaaaa").get(key(1)) is None
    _pack_elsewhere(store, 1)
    for cache in (ResponseCache(store, run_id="20260101T010000Z-bbbbbbbb"), ResponseCache(store)):
        found = cache.get(key(1))
        assert found is not None and found.output.text == "A1"


def _pack_elsewhere(store: LocalStore, n: int, call: ModelCall | None = None) -> None:
    """Another process packs the answer to request `n` (`call`, else `answer(n)`; its journal
    left open)."""
    script = (
        "import asyncio, sys\n"
        "from roadeval.storage.store import LocalStore\n"
        "from roadeval.tasks.cache.journal import Journal\n"
        "from roadeval.tasks.calls.stopping import StopSignal\n"
        "store = LocalStore(__import__('pathlib').Path(sys.argv[1]))\n"
        "asyncio.run(Journal(store).keep(sys.argv[2], sys.stdin.buffer.read(), StopSignal()))\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(store.root), key(n)],
        input=(call or answer(n)).to_cache(),
        check=True,
    )


def test_a_process_never_reads_back_the_packs_it_wrote(tmp_path: Path) -> None:
    store = RemoteFolder(tmp_path / "store")
    stop = StopSignal()

    async def keep_two() -> None:
        journal = Journal(store)  # open while the reader below looks
        for n in range(2):
            await journal.keep(key(n), answer(n).to_cache(), stop)

    asyncio.run(keep_two())
    store.gets.clear()
    cache = ResponseCache(store)
    assert cache.get(key(9), recent=True) is None  # a refresh: lists, reads no pack of its own
    found = cache.get(key(1))
    assert found is not None and found.output.text == "A1"
    assert store.gets["packs"] == 0  # its bytes were kept as they were written


def test_the_packs_give_back_every_request_key_they_hold_as_it_was_written(
    tmp_path: Path,
) -> None:
    # Request keys are lowercase hex digests and are held as bytes; any other key is held as
    # its text, never made into another key.
    store = RemoteFolder(tmp_path / "store")
    stop = StopSignal()
    odd = ["not-a-digest", "ABCDEF", key(0)]

    async def write() -> None:
        journal = Journal(store)
        for n, request_key in enumerate(odd):
            call = replace(answer(n), request_key=request_key)
            await journal.keep(request_key, call.to_cache(), stop)

    asyncio.run(write())
    forget_catalogues()
    assert stored_request_keys(store) == set(odd)


def _asked_again(n: int, when: datetime) -> ModelCall:
    return replace(answer(n), output=ModelOutput(text=f"again {n}"), answered_at=when)


def test_an_answer_asked_again_wins_over_the_older_one_a_folded_index_holds(
    tmp_path: Path,
) -> None:
    """A request whose answer grew older than its model's `reuse_for` is asked again: its
    store then holds two answers. A reader takes the later, although the journal's own index
    (read first: its name sorts before `merged-`) is followed by the folded one of the old."""
    store = RemoteFolder(tmp_path / "store")
    _close_journals_keeping(store, 0, FAN_IN)  # key 7's first answer, folded into merged-1
    now = datetime.now(UTC)

    async def again() -> None:
        journal = Journal(store)
        await journal.keep(key(7), _asked_again(7, now).to_cache(), StopSignal())
        await journal.close()

    asyncio.run(again())
    assert (
        sorted(name.split("-")[0] for name in _index_names(store) if name.endswith(".json"))[-1]
        == "merged"
    )
    _as_another_process(store)
    found = ResponseCache(store, fresh_since=now - timedelta(hours=1)).find(key(7))
    assert found.answer is not None and found.answer.output.text == "again 7"
    assert found.answer.answered_at == now and found.stale is None


def test_a_stale_answer_is_passed_over_and_a_later_one_found_when_recent(
    tmp_path: Path,
) -> None:
    """A claim says the request was answered since the run began: the answer this process
    read is too old, so the packs are read again for the later one, not asked a third time."""
    store = RemoteFolder(tmp_path / "store")
    since = datetime.now(UTC) - timedelta(days=1)
    _close_journals_keeping(store, 0, 1)  # answers with no time: of unknown age
    cache = ResponseCache(store, fresh_since=since)
    stale = cache.find(key(1))
    assert stale.answer is None and stale.stale is not None and stale.stale.answered_at is None
    assert ResponseCache(store).get(key(1)) is not None  # reused forever all the same
    _pack_elsewhere(store, 1, _asked_again(1, datetime.now(UTC)))
    assert cache.get(key(1)) is None  # a plan's look-up stands by what it read
    recent = cache.get(key(1), recent=True)
    assert recent is not None and recent.output.text == "again 1"
