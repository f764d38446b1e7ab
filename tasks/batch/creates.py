"""Creating a batch so that no outcome of the create is lost: a `submitting` record is written
before the create and replaced by the batch's record after it. A submitting record found later
(its writer crashed, or the create's reply was lost on the way) is settled by asking the
provider for the batch made from its input file: found, it is polled like any pending batch;
surely never made, its requests are free to be sent. Never are they paid for twice.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from roadeval.storage.liveness import writer_alive
from roadeval.tasks.batch.api import BatchApi
from roadeval.tasks.batch.records import BatchRecord, BatchRecords, BatchState, now_iso
from roadeval.tasks.calls.errors import classify
from roadeval.tasks.requests.request import MAY_BE_BILLED, ModelRequest

# How long past the model's timeout_s a create found in a submitting record may still be under
# way at its writer (clocks, a slow store write).
CREATE_GRACE_S = 30.0

# Input file ids whose batch some batcher of this process is creating: a submitting record of
# this process that is not here is over (its create failed and may yet have made the batch).
_CREATING: set[str] = set()

StoreCall = Callable[..., Awaitable[Any]]
# Sleeps the given seconds; True if the run stopped meanwhile.
SleepOrStop = Callable[[float], Awaitable[bool]]


class BatchCreates:
    """One batcher's creates, and the submitting records it finds."""

    def __init__(
        self, api: BatchApi, records: BatchRecords, store: StoreCall, sleep_or_stop: SleepOrStop
    ) -> None:
        self.api = api
        self.records = records
        self._store = store
        self._sleep_or_stop = sleep_or_stop

    async def create(
        self, requests: Sequence[ModelRequest], input_file_id: str, run_id: str | None
    ) -> BatchRecord:
        """Create the batch over the uploaded file; its pending record, written. A create that
        fails raises; its submitting record stays unless the provider surely made nothing."""
        client = self.api.client
        submitting = BatchRecord(
            batch_id="",
            input_file_id=input_file_id,
            model=client.spec.model,
            api_base=client.api_base,
            run_id=run_id,
            request_keys=tuple(r.key for r in requests),
            attempts=tuple(r.attempt for r in requests),
            submitted_at=now_iso(),
            state=BatchState.SUBMITTING,
            host=socket.gethostname(),
            pid=os.getpid(),
        )
        _CREATING.add(input_file_id)
        try:
            await self._store(self.records.write, submitting)
            try:
                batch_id = await self.api.create(requests[0], input_file_id, run_id)
            except Exception as exc:
                if classify(exc) not in MAY_BE_BILLED:  # refused: no batch was made
                    await self._store(self.records.delete, submitting)
                raise
        finally:
            _CREATING.discard(input_file_id)
        record = submitting.created(batch_id)
        await self._store(self.records.write, record)
        await self._store(self.records.delete, submitting)
        return record

    @staticmethod
    def creating(record: BatchRecord) -> bool:
        """Whether this process is creating the submitting record's batch right now."""
        return record.input_file_id in _CREATING

    async def settle(self, record: BatchRecord) -> BatchRecord | None:
        """A submitting record not being created here: the pending record of the batch its
        create made; or None once no batch can have been made (the record is dropped) or the
        run stops. While its writer may still be creating, wait for it."""
        request = self.api.client.request([])
        since = record.submitted.timestamp()
        poll_s = self.api.client.spec.batch_poll_s
        while True:
            batch_id = await self.api.find(request, record.input_file_id, since)
            if batch_id is not None:
                pending = record.created(batch_id)
                await self._store(self.records.write, pending)
                await self._store(self.records.delete, record)
                return pending
            if not self._may_be_creating(record):
                await self._store(self.records.delete, record)
                return None
            if await self._sleep_or_stop(poll_s):
                return None
            if await self._store(self.records.read, self.records.key(record)) is None:
                return await self._recorded_from(record.input_file_id)  # its writer ended it

    def _may_be_creating(self, record: BatchRecord) -> bool:
        """Whether a submitting record's create may still be under way: its writer is not
        known dead nor this process (whose creates are known: `creating`), and the create's
        deadline (the model's timeout_s) has not passed."""
        if writer_alive(record.host, record.pid) is False:
            return False
        if record.host == socket.gethostname() and record.pid == os.getpid():
            return False
        age = time.time() - record.submitted.timestamp()
        return age < self.api.client.spec.timeout_s + CREATE_GRACE_S

    async def _recorded_from(self, input_file_id: str) -> BatchRecord | None:
        """The batch record its writer made from `input_file_id`, if it made one."""
        for key in await self._store(self.records.keys):
            record = await self._store(self.records.read, key)
            if (
                record is not None
                and record.input_file_id == input_file_id
                and record.state is not BatchState.SUBMITTING
            ):
                return record
        return None
