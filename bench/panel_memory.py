"""Memory of a big offline panel: `--models` seeded `roadeval/random` baselines (each its own
panel entry) over a TRIP-layout suite of `--items` text items, through the real `roadeval run`
command. Polls /proc for the memory of the command's whole process tree (Prefect's server and the
answer workers included) and prints its peak, the command's own peak, and the wall time. The
tree's memory is its PSS (each page shared by n processes counted 1/n in each): the answer
workers are forked from a server that imported LiteLLM, and share those pages with it, so the sum
of their RSS counts the same pages three times; that sum is printed too.

    .venv/bin/python bench/panel_memory.py [--models 20] [--items 10000]
    .venv/bin/python bench/panel_memory.py --models 5 --items 2000 --tracemalloc 25

`--tracemalloc N` runs the same command in this process instead, under tracemalloc, and prints
the N largest holders (by allocation site) in the snapshot taken when traced memory peaked.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

import yaml
from trip_text_suite import ROADEVAL, query, write_text_suite

PAGE = os.sysconf("SC_PAGE_SIZE")
TARGET_BYTES = 2**30  # issue 21


def write_panel(path: Path, source: Path, models: int) -> Path:
    panel = {
        "name": "panel-memory",
        "scoring": {"engine": "local"},
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {"name": f"random-{seed}", "model": "roadeval/random", "params": {"seed": seed}}
            for seed in range(models)
        ],
    }
    path.write_text(yaml.safe_dump(panel, sort_keys=False))
    return path


def _children() -> dict[int, list[int]]:
    """Every process's children, read from /proc/<pid>/stat."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        # The command name is in parentheses and may hold spaces: fields follow the last ')'.
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError):
        return 0


def _pss(pid: int) -> int:
    """The process's proportional set size (smaps_rollup), in bytes."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


class TreeSampler:
    """Samples the resident memory of a process and all its descendants every `every_s`; past
    `abort_above` bytes it kills the process group (the machine is shared) and says so."""

    def __init__(self, root: int, abort_above: int, every_s: float = 0.2) -> None:
        self.root = root
        self.abort_above = abort_above
        self.aborted = False
        self.every_s = every_s
        self.peak_tree = 0
        self.peak_tree_rss = 0
        self.peak_root = 0
        self.peak_processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.is_set():
            tree = _children()
            pids, frontier = [self.root], [self.root]
            while frontier:
                frontier = [c for p in frontier for c in tree.get(p, [])]
                pids.extend(frontier)
            sizes = [_rss(pid) for pid in pids]
            self.peak_tree_rss = max(self.peak_tree_rss, sum(sizes))
            self.peak_tree = max(self.peak_tree, sum(_pss(pid) for pid in pids))
            self.peak_root = max(self.peak_root, sizes[0])
            self.peak_processes = max(self.peak_processes, sum(1 for s in sizes if s))
            if self.peak_tree_rss > self.abort_above and not self.aborted:
                self.aborted = True
                os.killpg(self.root, signal.SIGKILL)
            self._stop.wait(self.every_s)


def run_command(
    panel: Path, store: Path, log: Path, abort_above: int
) -> tuple[int, float, TreeSampler]:
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(ROADEVAL), "run", "--panel", str(panel), "--store", str(store)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so an abort takes the whole tree
        )
        with TreeSampler(process.pid, abort_above) as sampler:
            code = process.wait()
    return code, time.monotonic() - started, sampler


def run_traced(panel: Path, store: Path, top: int) -> None:
    """The command in this process under tracemalloc; the largest holders at the traced peak."""
    from roadeval.flows.cli.main import app

    tracemalloc.start(6)
    best: list[tracemalloc.Snapshot] = []
    stop = threading.Event()

    def watch() -> None:
        # A snapshot costs seconds on a big heap (and holds the GIL): take a new one only when
        # traced memory has grown by a quarter since the last.
        high = 0
        while not stop.wait(5.0):
            current, _ = tracemalloc.get_traced_memory()
            if current > 1.25 * high:
                best[:] = [tracemalloc.take_snapshot()]
                high, _ = tracemalloc.get_traced_memory()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        app(["run", "--panel", str(panel), "--store", str(store)], standalone_mode=False)
    finally:
        stop.set()
        watcher.join()
    _, peak = tracemalloc.get_traced_memory()
    wall = time.monotonic() - started
    print(f"in process: {wall:.1f} s, traced peak {peak / 2**20:.0f} MiB")
    if not best:
        print("no snapshot taken (the run was shorter than the sampling interval)")
        return
    snapshot = best[0].filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    total = sum(s.size for s in snapshot.statistics("filename"))
    print(f"largest snapshot: {total / 2**20:.0f} MiB traced; top holders by line:")
    for stat in snapshot.statistics("lineno")[:top]:
        frame = stat.traceback[0]
        print(
            f"{stat.size / 2**20:8.1f} MiB {stat.count:9d} blocks  {frame.filename}:{frame.lineno}"
        )
    print("top holders by call site (6 frames):")
    for stat in snapshot.statistics("traceback")[: max(5, top // 3)]:
        print(f"{stat.size / 2**20:8.1f} MiB {stat.count:9d} blocks")
        for line in stat.traceback.format()[-16:]:
            print(f"      {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--tracemalloc", type=int, default=0, metavar="TOP")
    parser.add_argument(
        "--abort-above-gib", type=float, default=12.0, help="kill the run past this much RSS"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = write_text_suite(work / "suite", args.items)
        panel = write_panel(work / "panel.yaml", source, args.models)
        store = work / "store"
        print(
            f"{args.models} models x {args.items} TRIP text items (offline baselines)",
            flush=True,
        )
        if args.tracemalloc:
            run_traced(panel, store, args.tracemalloc)
            return
        abort_above = int(args.abort_above_gib * 2**30)
        code, wall, sampler = run_command(panel, store, work / "out.txt", abort_above)
        if sampler.aborted:
            raise SystemExit(
                f"aborted after {wall:.0f} s: the process tree passed "
                f"{args.abort_above_gib} GiB (peak sampled {sampler.peak_tree_rss / 2**20:.0f} MiB)"
            )
        if code != 0:
            print((work / "out.txt").read_text()[-4000:])
            raise SystemExit(f"roadeval run exited {code}")
        run = query(store, "select n_items, n_scored, n_errors from runs")[0]
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        verdict = "under" if sampler.peak_tree < TARGET_BYTES else "OVER"
        print(f"wall time                  {wall:8.1f} s")
        print(
            f"peak PSS, process tree     {sampler.peak_tree / 2**20:8.0f} MiB "
            f"({verdict} the 1 GiB target; up to {sampler.peak_processes} processes)"
        )
        print(f"peak RSS summed, tree      {sampler.peak_tree_rss / 2**20:8.0f} MiB")
        print(f"peak RSS, roadeval itself  {sampler.peak_root / 2**20:8.0f} MiB (sampled)")
        print(f"largest child (getrusage)  {children / 2**20:8.0f} MiB")
        print(f"run: {run['n_items']} items, {run['n_scored']} scored, {run['n_errors']} errors")


if __name__ == "__main__":
    main()
