"""roadeval against a bare LiteLLM loop and inspect_ai, side by side in one session: N TRIP-shaped
single-choice text items, an instant local OpenAI-compatible server (a process of its own, so its
CPU is nobody's), 32 requests at a time for every contender. Issue #21's targets.

    .venv/bin/python bench/gateway_contenders.py [--items 2000] [--rounds 3] [--small-items 200]
        [--contenders bare,roadeval,inspect] [--roadeval-python PY] [--roadeval-tree DIR]
        [--base-tree DIR] [--latency-ms 0] [--concurrency 32]

    # the "before" figures: the committed code, side by side with edits in progress
    git archive HEAD | tar -x -C /tmp/head && .venv/bin/python bench/gateway_contenders.py \
        --base-tree /tmp/head
    # a remote vLLM: 200 ms a reply, 128 requests at a time
    .venv/bin/python bench/gateway_contenders.py --latency-ms 200 --concurrency 128

Contenders, each a process tree of its own, measured the same way:
  bare      `litellm.acompletion` under an asyncio.Semaphore(C) (bench/contenders/bare_loop.py)
  bare2     (only if asked) two bare loops at once, each over half the items at C/2: the
            machine's limit on 2 cores, for context: the targets are against one bare loop
  roadeval  the real command `roadeval run --panel P --store DIR`, a fresh store each round
  inspect   `inspect eval` of inspect_ai's multiple-choice task (bench/contenders/inspect_task.py)
  base      (with `--base-tree DIR`) roadeval's command on another checkout's code (a `git
            archive` of the commit before a change), so before and after share every round

Per contender and round: wall time, items/s (the whole command), calls/s (first to last request),
CPU seconds of the process tree (getrusage(RUSAGE_CHILDREN) deltas, so Prefect's temporary server,
which roadeval waits for, is counted; this process is also a child subreaper, so descendants that
outlive their parent are reaped here and counted too: the `orphans` column), CPU ms per call,
the time from launch to the first request the server saw, and the most requests the server was
answering at once (`peak`; with `--latency-ms`, also the mean in flight between the first request
and the last reply, `mean`: calls x latency / that span). The 1-minute load average is printed
after each round: compare ratios within a round, never figures across sessions.
Each round also runs every contender over `--small-items` items: the extra CPU of the N items over
those, per extra item, is the marginal CPU per call, start-up (imports, Prefect's server) taken out.
The rounds alternate the order of the contenders (the machine is noisy: compare ratios). Every
contender shares one warmed PREFECT_HOME (a fresh one pays Prefect's migrations, see STACK.md)
and one temporary HOME, and does one untimed warm-up pass before the rounds.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from roadeval.benchmarks.generation import effective_params
from roadeval.benchmarks.registry import get_suite
from roadeval.benchmarks.trip.demo import generate_demo

BENCH = Path(__file__).resolve().parent
CONTENDERS = ("bare", "bare2", "roadeval", "inspect", "base")
DEFAULT_INSPECT_PYTHON = "/work/bench-venvs/inspect/bin/python"
_PR_SET_CHILD_SUBREAPER = 36
# Targets of issue #21: CPU per call and time to the first request against the bare loop and
# inspect_ai; items/s against one bare loop (at 20,000 items, on 2 cores).
CPU_TARGET, START_TARGET, BARE_RATE_TARGET = 1.15, 1.0, 1.6


@dataclass(frozen=True)
class Measure:
    """One contender's pass over the items."""

    contender: str
    round: int
    items: int
    wall_s: float
    cpu_s: float
    first_request_s: float
    calls_s: float  # from the first request to the last, as the server saw them
    orphans: int  # descendants that outlived the contender's process, reaped and counted here
    peak: int = 0  # the most requests the server answered at once
    latency_s: float = 0.0  # the server's delay before each reply

    @property
    def mean_in_flight(self) -> float:
        """Requests in flight on average, from the first request's arrival to the last reply."""
        span = self.calls_s + self.latency_s
        return self.items * self.latency_s / span if span > 0 else float("nan")

    @property
    def items_per_s(self) -> float:
        return self.items / self.wall_s

    @property
    def calls_per_s(self) -> float:
        return self.items / self.calls_s if self.calls_s > 0 else float("nan")

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.items


class ContenderFailed(RuntimeError):
    """A contender exited non-zero or did not send one request per item."""


# -- the data: one TRIP release-layout folder, and the same prompts as JSONL for the others --


def write_suite(n: int, folder: Path) -> tuple[Path, Path]:
    """`n` distinct text items in TRIP's release layout (items.jsonl + VERSION) made from the
    demo's text questions, and `prompts.jsonl`: per item the question, options, gold letter, and
    the exact messages and parameters roadeval sends, for the bare loop and inspect_ai."""
    demo_root = generate_demo(folder / "demo")
    demo_rows = [
        json.loads(line)
        for line in (demo_root / "items.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    text_rows = [row for row in demo_rows if row["modality"] == "text"]
    source = folder / "suite"
    source.mkdir(parents=True)
    rows = []
    for k in range(n):
        row = dict(text_rows[k % len(text_rows)])
        row["id"] = f"bench_{k}"
        row["question"] = f"{row['question']} (#{k})"  # every request distinct: no cache hits
        rows.append(json.dumps(row, ensure_ascii=False))
    (source / "items.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (source / "VERSION").write_text(f"bench-{n}\n", encoding="utf-8")
    suite = get_suite("trip")
    prompts = folder / "prompts.jsonl"
    with prompts.open("w", encoding="utf-8") as out:
        for item in suite.load(source).items:
            record = {
                "id": item.item_id,
                "question": item.question,
                "options": item.options,
                "answer": item.reference,
                "messages": suite.prompt(item, ()),
                "params": effective_params(suite.generation_for(item), {}),
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return source, prompts


def write_panel(path: Path, source: Path, api_base: str, concurrency: int) -> Path:
    panel = {
        "name": "gateway-contenders",
        "suites": [{"name": "trip", "source": str(source)}],
        "models": [
            {"model": "openai/instant", "api_base": api_base, "max_concurrency": concurrency}
        ],
        # Text items only: nothing is drawn, nothing is heavy; no Ray (and no namespace for it).
        "scoring": {"engine": "local"},
    }
    path.write_text(yaml.safe_dump(panel, sort_keys=False), encoding="utf-8")
    return path


# -- processes --


@dataclass(frozen=True)
class Server:
    process: subprocess.Popen[str]
    api_base: str
    control: str
    latency_s: float = 0.0

    def watch_from(self, when: float) -> None:
        """Start counting the peak of requests in flight from `when`."""
        with urllib.request.urlopen(f"{self.control}/watch?from={when!r}") as reply:
            reply.read()

    def arrivals(self, after: float) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.control}/arrivals?after={after!r}") as reply:
            result: dict[str, Any] = json.load(reply)
        return result

    def keys(self) -> dict[str, Any]:
        """How often each distinct request arrived (a server started with `--count-keys`)."""
        with urllib.request.urlopen(f"{self.control}/keys") as reply:
            result: dict[str, Any] = json.load(reply)
        return result


def start_server(python: str, tests: Path, *options: str) -> Server:
    """The instant server, on `tests/support/model_server.py` of the `tests` folder given."""
    process = subprocess.Popen(
        [python, str(BENCH / "contenders" / "instant_server.py"), str(tests), *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().split()
    if len(line) != 2:
        process.kill()
        raise RuntimeError("the instant server did not start (see its stderr above)")
    latency = 0.0
    if "--latency-ms" in options:
        latency = float(options[options.index("--latency-ms") + 1]) / 1000
    return Server(process, line[0], line[1], latency)


def _children_of(pid: int) -> list[int]:
    """Live processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: fields follow the last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def reap_orphans(keep: set[int], timeout_s: float = 30.0) -> tuple[int, list[str]]:
    """Wait for every descendant a contender left behind (reparented to this subreaper), so that
    its CPU lands in RUSAGE_CHILDREN; one still alive after `timeout_s` is sent SIGTERM, then
    SIGKILL, and named in the notes. Returns how many were reaped, and the notes."""
    notes: list[str] = []
    reaped: set[int] = set()
    deadline = time.monotonic() + timeout_s
    while orphans := [p for p in _children_of(os.getpid()) if p not in keep]:
        for pid in orphans:
            if os.waitpid(pid, os.WNOHANG)[0]:
                reaped.add(pid)
                continue
            if time.monotonic() > deadline:
                notes.append(f"pid {pid} outlived its contender by {timeout_s:g} s: terminated")
                os.kill(pid, signal.SIGTERM)
                time.sleep(2)
                if not os.waitpid(pid, os.WNOHANG)[0]:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                reaped.add(pid)
        time.sleep(0.05)
    return len(reaped), notes


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class Contender:
    name: str
    tag: str  # the pass it belongs to: names its store and its log
    argv: list[str]
    env: dict[str, str]
    cwd: Path | None = None


def measure(contender: Contender, server: Server, items: int, round_no: int, logs: Path) -> Measure:
    """Run one contender to its end and measure it; ContenderFailed unless it exited 0 having
    sent exactly one request per item."""
    log = logs / f"{contender.name}-{contender.tag}.log"
    cpu_before = _cpu_of_children()
    launched = time.time()
    server.watch_from(launched)
    start = time.perf_counter()
    with log.open("wb") as out:
        code = subprocess.Popen(
            contender.argv,
            env=contender.env,
            cwd=contender.cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
        ).wait()
    wall = time.perf_counter() - start
    orphans, notes = reap_orphans(keep={server.process.pid})
    cpu = _cpu_of_children() - cpu_before
    seen = server.arrivals(launched)
    if code != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise ContenderFailed(f"{contender.name} exited {code}; the end of {log}:\n{tail}")
    if seen["count"] != items:
        raise ContenderFailed(
            f"{contender.name}: the server saw {seen['count']} requests for {items} items ({log})"
        )
    for note in notes:
        print(f"  note: {contender.name}: {note}", flush=True)
    return Measure(
        contender.name,
        round_no,
        items,
        wall,
        cpu,
        seen["first"] - launched,
        seen["last"] - seen["first"],
        orphans,
        int(seen["peak"] or 0),
        server.latency_s,
    )


# -- the session --


@dataclass(frozen=True)
class Setup:
    items: int
    concurrency: int
    roadeval_python: str
    roadeval_tree: str | None
    inspect_python: str
    workdir: Path
    base_tree: str | None = None


def base_env(setup: Setup) -> dict[str, str]:
    """What every contender runs with: offline price map, telemetry off, one warmed Prefect home,
    a temporary HOME, and no Prefect server from outside (each run starts its own, as a user's
    does)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "INSPECT_"))}
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_HOME=str(setup.workdir / "prefect-home"),
        HOME=str(setup.workdir / "home"),
        COLUMNS="200",
    )
    return env


def roadeval_command(python: str) -> list[str]:
    """The `roadeval` console script beside `python` (that venv's install), as a user runs it."""
    script = Path(python).parent / "roadeval"
    return [str(script)] if script.is_file() else [python, "-m", "roadeval.flows.cli.main"]


def contenders_for(
    setup: Setup, server: Server, source: Path, prompts: Path, tag: str
) -> dict[str, Contender]:
    """The three contenders over one data set (the suite folder `source` and the same items'
    `prompts`); `tag` names this pass's store and logs."""
    env = base_env(setup)
    roadeval_env = dict(env)
    if setup.roadeval_tree:
        roadeval_env["PYTHONPATH"] = setup.roadeval_tree
    base_env_ = dict(env)
    if setup.base_tree:
        base_env_["PYTHONPATH"] = setup.base_tree
    panel = write_panel(source.parent / "panel.yaml", source, server.api_base, setup.concurrency)
    store = setup.workdir / "stores" / tag
    inspect_env = {
        **env,
        "BENCH_PROMPTS": str(prompts),
        "BENCH_BASE_URL": server.api_base,
        "BENCH_API_KEY": "no-key",
    }
    # Absolute: inspect runs in its task's folder.
    inspect_bin = Path(os.path.abspath(setup.inspect_python)).parent / "inspect"
    bare = [
        setup.roadeval_python,
        str(BENCH / "contenders" / "bare_loop.py"),
        str(prompts),
        server.api_base,
        str(setup.concurrency),
    ]
    return {
        "bare": Contender("bare", tag, bare, env),
        "bare2": Contender("bare2", tag, [*bare, "2"], env),
        "roadeval": Contender(
            "roadeval",
            tag,
            [
                *roadeval_command(setup.roadeval_python),
                "run",
                "--panel",
                str(panel),
                "--store",
                str(store),
            ],
            roadeval_env,
            # Out of any checkout: a roadeval from before the forkserver's fix (a `--base-tree`)
            # imported its workers' code from the current directory, not its tree.
            cwd=setup.workdir,
        ),
        "base": Contender(
            "base",
            tag,
            [
                *roadeval_command(setup.roadeval_python),
                "run",
                "--panel",
                str(panel),
                "--store",
                str(setup.workdir / "stores" / f"{tag}-base"),
            ],
            base_env_,
            cwd=setup.workdir,
        ),
        "inspect": Contender(
            "inspect",
            tag,
            [
                str(inspect_bin),
                "eval",
                "inspect_task.py",  # inspect_ai takes task files relative to its folder
                "--model",
                "openai-api/bench/instant",
                "--max-connections",
                str(setup.concurrency),
                "--temperature",
                "0",
                "--display",
                "plain",
                "--log-dir",
                str(setup.workdir / "inspect-logs" / tag),
            ],
            inspect_env,
            cwd=BENCH / "contenders",
        ),
    }


PACKAGE_FOLDERS = ("roadeval", "benchmarks", "tasks", "flows", "storage", "deployments")


def compile_tree(python: str, tree: Path) -> None:
    """Byte-compile a roadeval checkout's code, as installing a package does: an editable tree
    under PYTHONDONTWRITEBYTECODE (or a read-only one) would otherwise compile every module
    from source in each process of each run, a cost no installed contender pays."""
    folders = [str(tree / name) for name in PACKAGE_FOLDERS if (tree / name).is_dir()]
    subprocess.run([python, "-m", "compileall", "-q", *folders], check=True)


def warm_prefect_home(setup: Setup) -> None:
    """Prefect's database migrations once, before anything is timed."""
    env = base_env(setup)
    if setup.roadeval_tree or setup.base_tree:
        env["PYTHONPATH"] = setup.roadeval_tree or setup.base_tree or ""
    started = time.perf_counter()
    subprocess.run(
        [setup.roadeval_python, "-m", "prefect", "server", "database", "upgrade", "-y"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"PREFECT_HOME warmed (migrations {time.perf_counter() - started:.1f} s)", flush=True)


@dataclass(frozen=True)
class Round:
    """One round: every contender over the N items and, for the marginal cost, over a few."""

    number: int
    full: dict[str, Measure]
    small: dict[str, Measure]

    def marginal_ms_per_call(self, name: str) -> float | None:
        """CPU per call with start-up taken out: the extra CPU of N items over the small pass,
        per extra item (imports, Prefect's server and the first connection cost the same in
        both, so they cancel)."""
        if name not in self.full or name not in self.small:
            return None
        full, small = self.full[name], self.small[name]
        return 1000 * (full.cpu_s - small.cpu_s) / (full.items - small.items)


_HEADER = (
    f"{'contender':<10} {'items':>6} {'wall s':>7} {'items/s':>8} {'calls/s':>8} {'CPU s':>7} "
    f"{'CPU ms/call':>11} {'1st req s':>9} {'orphans':>7} {'peak':>5} {'mean':>6}"
)


def _row(name: str, m: Measure) -> str:
    mean = f"{m.mean_in_flight:6.1f}" if m.latency_s else f"{'-':>6}"
    return (
        f"{name:<10} {m.items:6d} {m.wall_s:7.2f} {m.items_per_s:8.1f} {m.calls_per_s:8.1f} "
        f"{m.cpu_s:7.2f} {m.cpu_ms_per_call:11.3f} {m.first_request_s:9.2f} {m.orphans:7d} "
        f"{m.peak:5d} {mean}"
    )


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes), to print beside every figure."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def print_round(done: Round, order: Sequence[str]) -> None:
    print(_HEADER)
    for name in order:
        for measures in (done.small, done.full):
            if name in measures:
                print(_row(name, measures[name]))
    for name in order:
        marginal = done.marginal_ms_per_call(name)
        if marginal is not None:
            print(f"{name:<10} marginal CPU ms/call {marginal:.3f}")
    print(f"load average after the round: {load_average()}")
    sys.stdout.flush()


def _median_ratio(values: list[float]) -> tuple[float, str]:
    return statistics.median(values), ", ".join(f"{v:.2f}" for v in values)


def print_summary(rounds: Sequence[Round]) -> dict[str, Any]:
    """Medians per contender, and the targets' ratios (each the median of the per-round
    ratios: contenders in one round shared the machine's state)."""
    names = [n for n in CONTENDERS if any(n in r.full for r in rounds)]
    print(
        f"\nsummary: medians over {len(rounds)} round(s) of {rounds[0].full[names[0]].items} items"
    )
    keys = (
        "wall_s",
        "items_per_s",
        "calls_per_s",
        "cpu_s",
        "cpu_ms_per_call",
        "first_request_s",
        "peak",
        "mean_in_flight",
    )
    medians: dict[str, dict[str, float]] = {}
    print(_HEADER + f" {'marginal':>9}")
    for name in names:
        ms = [r.full[name] for r in rounds if name in r.full]
        medians[name] = {key: statistics.median(getattr(m, key) for m in ms) for key in keys}
        marginals = [v for r in rounds if (v := r.marginal_ms_per_call(name)) is not None]
        marginal = f"{statistics.median(marginals):9.3f}" if marginals else f"{'-':>9}"
        if marginals:
            medians[name]["marginal_cpu_ms_per_call"] = statistics.median(marginals)
        m = medians[name]
        print(
            f"{name:<10} {ms[0].items:6d} {m['wall_s']:7.2f} {m['items_per_s']:8.1f} "
            f"{m['calls_per_s']:8.1f} {m['cpu_s']:7.2f} {m['cpu_ms_per_call']:11.3f} "
            f"{m['first_request_s']:9.2f} {'':>7} {m['peak']:5.0f} {m['mean_in_flight']:6.1f} "
            f"{marginal}"
        )
    ratios: dict[str, float] = {}
    targets = (
        ("CPU/call / bare's", "bare", "cpu_ms_per_call", "<=", CPU_TARGET),
        ("items/s / bare's", "bare", "items_per_s", ">=", BARE_RATE_TARGET),
        ("CPU/call / two bare loops'", "bare2", "cpu_ms_per_call", None, None),
        ("items/s / two bare loops'", "bare2", "items_per_s", None, None),
        ("1st request / inspect's", "inspect", "first_request_s", "<=", START_TARGET),
        ("items/s / inspect's", "inspect", "items_per_s", None, None),
        ("calls/s / inspect's", "inspect", "calls_per_s", None, None),
    )
    for subject in ("roadeval", "base", "bare2"):
        for label, other, field, sense, target in targets:
            if subject == other:
                continue
            values = [
                getattr(r.full[subject], field) / getattr(r.full[other], field)
                for r in rounds
                if subject in r.full and other in r.full
            ]
            if not values:
                continue
            ratio, spread = _median_ratio(values)
            ratios[f"{subject} {label}"] = ratio
            verdict = ""
            if sense is not None and target is not None and subject != "bare2":
                met = ratio <= target if sense == "<=" else ratio >= target
                verdict = f"  (target {sense} {target:g}: {'met' if met else 'NOT met'})"
            print(f"{subject + ' ' + label:<44} {ratio:6.2f}   rounds: {spread}{verdict}")
        marginal_ratios = [
            top / bottom
            for r in rounds
            if (top := r.marginal_ms_per_call(subject)) is not None
            and (bottom := r.marginal_ms_per_call("bare")) is not None
        ]
        if marginal_ratios:
            label = f"{subject} marginal CPU/call / bare's"
            ratio, spread = _median_ratio(marginal_ratios)
            ratios[label] = ratio
            print(f"{label:<44} {ratio:6.2f}   rounds: {spread}  (start-up taken out)")
    return {"medians": medians, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--contenders",
        default=None,
        help=f"a comma-separated subset of {', '.join(CONTENDERS)} (default: bare, roadeval, "
        "inspect, and base with --base-tree)",
    )
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="the server's delay before each reply (a remote server), in milliseconds",
    )
    parser.add_argument(
        "--base-tree",
        default=None,
        help="the contender `base`: roadeval's command on this checkout's code (a `git archive` "
        "of the commit before a change), measured in the same rounds as `roadeval`",
    )
    parser.add_argument(
        "--small-items",
        type=int,
        default=200,
        help="also run this many items per contender and round, for the marginal CPU per call "
        "(start-up taken out); 0 skips it",
    )
    parser.add_argument(
        "--roadeval-python",
        default=sys.executable,
        help="the Python (venv) whose roadeval install runs; its `roadeval` script is used",
    )
    parser.add_argument(
        "--roadeval-tree",
        default=None,
        help="a checkout whose code roadeval runs (put first on PYTHONPATH), e.g. a `git archive`",
    )
    parser.add_argument("--inspect-python", default=DEFAULT_INSPECT_PYTHON)
    parser.add_argument("--json", type=Path, default=None, help="also write every measure here")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, stores)")
    args = parser.parse_args()
    if not 0 <= args.small_items < args.items:
        parser.error("--small-items must be at least 0 and fewer than --items")
    default = ["bare", "roadeval", "inspect"] + (["base"] if args.base_tree else [])
    chosen = (
        [c.strip() for c in args.contenders.split(",") if c.strip()] if args.contenders else default
    )
    unknown = sorted(set(chosen) - set(CONTENDERS))
    if unknown or not chosen:
        parser.error(f"--contenders: unknown {', '.join(unknown)}; choose from {CONTENDERS}")
    if "base" in chosen and not args.base_tree:
        parser.error("the contender base needs --base-tree")
    if "inspect" in chosen and not Path(args.inspect_python).is_file():
        parser.error(
            f"--inspect-python {args.inspect_python} does not exist; install inspect_ai with "
            "`python3 -m venv /work/bench-venvs/inspect && "
            "/work/bench-venvs/inspect/bin/pip install inspect_ai openai`"
        )
    # Descendants a contender leaves behind become this process's children, so they are reaped
    # (and their CPU counted) here instead of by init.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")

    workdir = Path(tempfile.mkdtemp(prefix="gateway-contenders-"))
    setup = Setup(
        args.items,
        args.concurrency,
        args.roadeval_python,
        args.roadeval_tree,
        args.inspect_python,
        workdir,
        args.base_tree,
    )
    (workdir / "home").mkdir()
    logs = workdir / "logs"
    logs.mkdir()
    # The server comes from the same checkout as the code under test, so that edits in progress
    # in this tree's tests/support cannot change a baseline's server.
    tree = Path(args.roadeval_tree) if args.roadeval_tree else BENCH.parent
    latency = ["--latency-ms", f"{args.latency_ms:g}"] if args.latency_ms else []
    server = start_server(args.roadeval_python, tree / "tests", *latency)
    try:
        print(
            f"{args.items} single-choice text items, concurrency {args.concurrency}, instant "
            f"server at {server.api_base}; contenders {', '.join(chosen)}; work folder {workdir}",
            flush=True,
        )
        if args.roadeval_tree:
            print(f"roadeval code from {args.roadeval_tree}", flush=True)
        if args.base_tree:
            print(f"base: roadeval code from {args.base_tree}", flush=True)
        if args.latency_ms:
            print(f"the server answers after {args.latency_ms:g} ms", flush=True)
        print(f"load average at the start: {load_average()}", flush=True)
        if "roadeval" in chosen:
            compile_tree(args.roadeval_python, tree)
        if "base" in chosen:
            compile_tree(args.roadeval_python, Path(args.base_tree))
        if "roadeval" in chosen or "base" in chosen:
            warm_prefect_home(setup)
        warm_n = min(50, args.items)
        warm_data, warm_prompts = write_suite(warm_n, workdir / "warm")
        real_data = write_suite(args.items, workdir / "data")
        small_data = (
            write_suite(args.small_items, workdir / "small") if args.small_items > 0 else None
        )
        warm = contenders_for(setup, server, warm_data, warm_prompts, "warm")
        for name in chosen:
            measure(warm[name], server, warm_n, 0, logs)
        print(f"warm-up pass of {warm_n} items done for every contender", flush=True)
        rounds: list[Round] = []
        for number in range(1, args.rounds + 1):
            shift = (number - 1) % len(chosen)
            order = chosen[shift:] + chosen[:shift]
            print(f"\nround {number} (order: {', '.join(order)})", flush=True)
            small: dict[str, Measure] = {}
            if small_data is not None:
                runs = contenders_for(setup, server, *small_data, f"round{number}-small")
                small = {
                    name: measure(runs[name], server, args.small_items, number, logs)
                    for name in order
                }
            runs = contenders_for(setup, server, *real_data, f"round{number}")
            full = {name: measure(runs[name], server, args.items, number, logs) for name in order}
            done = Round(number, full, small)
            print_round(done, order)
            rounds.append(done)
        summary = print_summary(rounds)
        if args.json is not None:
            record = {
                "items": args.items,
                "concurrency": args.concurrency,
                "roadeval_python": args.roadeval_python,
                "roadeval_tree": args.roadeval_tree,
                "base_tree": args.base_tree,
                "latency_ms": args.latency_ms,
                "small_items": args.small_items,
                "measures": [
                    asdict(m) for r in rounds for m in (*r.small.values(), *r.full.values())
                ],
                **summary,
            }
            args.json.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    finally:
        server.process.kill()
        server.process.wait()
        if not args.keep:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept {workdir}")


if __name__ == "__main__":
    main()
