"""What reaches a render worker: a scan's file, where the worker finds that very file (its
sha256 checked), else its bytes, read where the run is and drawn from (the same views as from
the file), a few tasks' worth at a time, within a task's byte budget; a scan that cannot be
read is its job's outcome, never sent."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from roadeval.benchmarks.drawing import DrawError, job_key
from roadeval.benchmarks.pointcloud import (
    DEFAULT_FRAME,
    RENDER_VERSION,
    load_point_cloud,
    read_point_cloud,
    synthetic_scan,
)
from roadeval.benchmarks.trip.scan_views import SCAN_FIELD, ScanViews
from roadeval.tasks.render import cluster
from roadeval.tasks.render.cluster import (
    Drawn,
    RenderClusterError,
    RenderConfig,
    dask_address_problem,
    draw_all,
    draw_seen,
    draw_shipped,
)

from support.model_server import ModelServer


def _scan(
    folder: Path, seed: int, suffix: str = ".bin", points: int = 2000, digest: bool = False
) -> ScanViews:
    path = folder / f"scan_{seed}{suffix}"
    cloud = synthetic_scan(seed, points).astype("<f4")
    if suffix == ".npy":
        np.save(path, cloud)
    else:
        path.write_bytes(cloud.tobytes())
    key = job_key(RENDER_VERSION, f"test-{seed}", DEFAULT_FRAME.name)
    sha256 = hashlib.sha256(path.read_bytes()).hexdigest() if digest else None
    views = ("bev", "front")
    return ScanViews(key, str(path), SCAN_FIELD, views, DEFAULT_FRAME, input_sha256=sha256)


def test_a_scan_drawn_from_its_bytes_is_the_scan_drawn_from_its_file(tmp_path: Path) -> None:
    for suffix in (".bin", ".npy"):
        job = _scan(tmp_path, 1, suffix)
        data = job.read_input()
        assert np.array_equal(
            read_point_cloud(Path(job.source), data), load_point_cloud(Path(job.source))
        )
        # Elsewhere the path names no file: only the bytes are used.
        moved = replace(job, source="/nowhere/" + Path(job.source).name)
        assert draw_shipped([(moved, data)]) == [job.draw()]


def test_bad_bytes_are_the_jobs_outcome_and_the_batch_draws_on(tmp_path: Path) -> None:
    good, bad = _scan(tmp_path, 1), _scan(tmp_path, 2)
    drawn = draw_shipped([(bad, bad.read_input()[:-3]), (good, good.read_input())])
    assert isinstance(drawn[0], DrawError) and "not a multiple of 16" in str(drawn[0])
    assert drawn[1] == good.draw()


def test_inputs_go_in_tasks_by_count_and_bytes_and_unreadable_ones_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster, "JOBS_PER_TASK", 4)
    jobs = [_scan(tmp_path, seed) for seed in range(7)]
    Path(jobs[2].source).unlink()
    size = len(jobs[0].read_input())
    outcomes: list[Drawn | None] = [None] * len(jobs)
    batches = list(cluster._batches(jobs, outcomes))
    assert [indices for indices, _ in batches] == [[0, 1, 3, 4], [5, 6]]
    assert isinstance(outcomes[2], DrawError) and "cannot read the file" in str(outcomes[2])
    assert all(data == job.read_input() for _, batch in batches for job, data in batch)
    # Fewer per task when the scans are large: a task's inputs stay within BATCH_BYTES.
    monkeypatch.setattr(cluster, "BATCH_BYTES", 2 * size)
    outcomes = [None] * len(jobs)
    assert [len(batch) for _, batch in cluster._batches(jobs, outcomes)] == [2, 2, 2]


def test_a_worker_reads_an_input_itself_only_where_it_finds_the_very_file(
    tmp_path: Path,
) -> None:
    seen = _scan(tmp_path, 1, digest=True)
    assert seen.read_seen() == seen.read_input()
    elsewhere = replace(seen, source=str(tmp_path / "nowhere.bin"))
    other_file = replace(seen, input_sha256="0" * 64)  # another file at the same path
    untrusted = _scan(tmp_path, 2)  # no digest: never read by a worker
    for job in (elsewhere, other_file, untrusted):
        assert job.read_seen() is None
    assert draw_seen([seen, elsewhere, other_file, untrusted]) == [seen.draw(), None, None, None]


def test_only_the_inputs_the_workers_do_not_find_are_sent(
    tmp_path: Path, dask_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = [_scan(tmp_path, seed, digest=True) for seed in range(6)]
    stale = replace(_scan(tmp_path, 6, digest=True), input_sha256="0" * 64)
    untrusted = _scan(tmp_path, 7)
    broken = _scan(tmp_path, 8, digest=True)
    Path(broken.source).write_bytes(b"\0" * 7)  # not the file its digest names: sent, and bad
    jobs = [*seen[:3], stale, *seen[3:], untrusted, broken]
    sent: list[list[int]] = []
    shipped_on = cluster._draw_shipped_on

    def record(
        client: object,
        jobs: Sequence[ScanViews],
        outcomes: list[Drawn | None],
        among: Sequence[int],
        where: str,
    ) -> None:
        sent.append(list(among))
        shipped_on(client, jobs, outcomes, among, where)

    monkeypatch.setattr(cluster, "_draw_shipped_on", record)
    drawn = draw_all(jobs, RenderConfig(address=dask_address))
    assert sent == [[3, 7, 8]]
    assert drawn[:-1] == [job.draw() for job in jobs[:-1]]
    assert isinstance(drawn[-1], DrawError) and "not a multiple of 16" in str(drawn[-1])


def test_dask_addresses() -> None:
    for good in ("tcp://10.0.0.5:8786", "tls://sched.example:8786", "127.0.0.1:8786"):
        assert dask_address_problem(good) is None, good
    for bad in ("sched", "tcp://sched", "http://sched:8786", "tcp://:8786", "sched:99999"):
        assert dask_address_problem(bad) is not None, bad


def test_an_address_where_no_scheduler_answers_is_named_in_seconds(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Something listens there (an HTTP server), but Dask's handshake would wait forever.
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    monkeypatch.setattr(cluster, "CONNECT_GRACE_S", 1)
    address = server.root.replace("http://", "tcp://")
    started = time.monotonic()
    with pytest.raises(RenderClusterError) as raised:
        cluster._connect(address)
    assert time.monotonic() - started < 5
    assert str(raised.value) == (
        f"Dask scheduler {address} (render.address, --dask-address): no Dask scheduler "
        "answered there in 2 s (something else listens at that address?)"
    )


def test_the_last_tasks_taper_so_that_the_workers_finish_together() -> None:
    # 200 drawings on 2 worker threads: tasks of JOBS_PER_TASK, then smaller and smaller, each
    # drawing in exactly one task, in order.
    tasks = list(cluster._tapered(list(range(200)), 2))
    sizes = [len(task) for task in tasks]
    assert [index for task in tasks for index in task] == list(range(200))
    assert sizes[0] == cluster.JOBS_PER_TASK and sizes[-1] == 1
    assert sizes == sorted(sizes, reverse=True)
    # A task is at most 1 / TAPER of what is left per thread, so no thread waits long on
    # another's last task.
    left = 200
    for size in sizes:
        assert size <= -(-left // (cluster.TAPER * 2))
        left -= size
    assert len(tasks) < 200 / cluster.JOBS_PER_TASK + 8
    assert [len(task) for task in cluster._tapered([7], 4)] == [1]
