"""Where roadeval's CPU per model call goes: the staged call path in process (plan_shard +
run_shard over N TRIP text items) and the whole `roadeval run` command, each under cProfile, against
the instant local server of `gateway_contenders.py` (a process of its own, not profiled).

    .venv/bin/python bench/profile_gateway.py [staged|command|both] [--items 2000] [--dump DIR]
    .venv/bin/python bench/profile_gateway.py report FILE.prof --items N

Every thread is profiled (one cProfile per thread, merged: the calls run on the gateway's loop
thread, store I/O in asyncio.to_thread workers, shards in Prefect's task threads), with each
thread's CPU clock (time.thread_time) as the timer, so waiting costs nothing and only CPU is
counted. Printed: the CPU grouped by what it is for (litellm's logging, cost calculation, client
creation, response building; our request hashing, store writes, claims, parse/score, landing;
Prefect, thread hops, the event loop), the top functions by self and by cumulative time, and
probes of named functions, all in ms per call. cProfile inflates small calls: the staged mode also
measures the same pass unprofiled and prints the factor. Built-ins and generic standard library
(json, hashlib, socket, logging, ...) are charged to whoever called them.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gateway_contenders import (  # noqa: E402
    Setup,
    base_env,
    roadeval_command,
    start_server,
    warm_prefect_home,
    write_panel,
    write_suite,
)

Func = tuple[str, int, str]  # pstats' key: file, line, function name
STDLIB = sysconfig.get_paths()["stdlib"] + "/"


# -- profiling every thread --


class _Snapshot:
    """What pstats needs of a profile: its stats, taken without disabling it from another
    thread (cProfile's create_stats would switch off the calling thread's profiler instead)."""

    def __init__(self, profile: cProfile.Profile) -> None:
        profile.snapshot_stats()
        self.stats = profile.stats

    def create_stats(self) -> None:
        pass


class ThreadProfiles:
    """A cProfile per thread: this one from `start`, and every thread started after it."""

    def __init__(self) -> None:
        self.profiles: list[cProfile.Profile] = []
        self._lock = threading.Lock()

    def _new(self) -> cProfile.Profile:
        profile = cProfile.Profile(time.thread_time)
        with self._lock:
            self.profiles.append(profile)
        return profile

    def _hook(self, frame: Any, event: str, arg: Any) -> None:
        # Runs once, on a new thread's first event: hand the thread over to its own cProfile.
        sys.setprofile(None)
        self._new().enable()

    def start(self) -> None:
        threading.setprofile(self._hook)
        self._main = self._new()
        self._main.enable()

    def stop(self) -> pstats.Stats:
        threading.setprofile(None)
        self._main.disable()
        with self._lock:
            snapshots = [_Snapshot(p) for p in self.profiles]
        # pstats takes anything with `create_stats` and `stats`; its stubs name only profiles.
        stats = pstats.Stats(cast(cProfile.Profile, snapshots[0]))
        for snapshot in snapshots[1:]:
            stats.add(cast(cProfile.Profile, snapshot))
        return stats


# -- grouping --

Rule = tuple[str, Callable[[str, str], bool]]


def _ours(path: str) -> bool:
    return "site-packages" not in path and any(
        f"/{folder}/" in path for folder in ("tasks", "storage", "benchmarks", "flows", "roadeval")
    )


def _has(*parts: str) -> Callable[[str, str], bool]:
    return lambda path, name: any(part in path for part in parts)


RULES: list[Rule] = [
    (
        "litellm: logging, success/failure handlers",
        lambda p, n: (
            "litellm/" in p
            and (
                "litellm_logging" in p
                or "logging_utils" in p
                or "logging_worker" in p
                or "/integrations/" in p
                or "logging_callback" in p
                or "_service_logger" in p
                or "success_handler" in n
                or "failure_handler" in n
            )
        ),
    ),
    (
        "litellm: cost calculation",
        lambda p, n: (
            "litellm/" in p
            and ("cost_calculator" in p or "llm_cost_calc" in p or "cost" in n or "pricing" in p)
        ),
    ),
    (
        "litellm: client creation",
        lambda p, n: (
            "litellm/" in p
            and ("client" in n.lower() and ("get" in n or "create" in n or "init" in n))
        ),
    ),
    (
        "litellm: response building (pydantic objects)",
        lambda p, n: (
            "litellm/" in p
            and ("litellm/types/" in p or "llm_response_utils" in p or "convert_to" in n)
        ),
    ),
    ("litellm: token counting (plan estimate)", _has("token_counter", "tiktoken", "tokenizers")),
    (
        "litellm: model/provider look-ups",
        lambda p, n: (
            "litellm/" in p
            and ("get_llm_provider" in p or "get_model_info" in n or "model_info" in n)
        ),
    ),
    ("litellm: request path, other", _has("/litellm/")),
    ("openai SDK", _has("/openai/")),
    (
        "HTTP transport (aiohttp, httpx, sockets)",
        _has("/aiohttp/", "/httpx/", "/httpcore/", "/h11/", "/anyio/", "/multidict/", "/yarl/"),
    ),
    ("pydantic (outside litellm)", _has("/pydantic/", "pydantic_core")),
    (
        "roadeval: request hashing",
        lambda p, n: (
            _ours(p) and "tasks/requests/request.py" in p and ("key" in n or "default" in n)
        ),
    ),
    (
        "roadeval: response cache and store writes",
        lambda p, n: _ours(p) and ("cache/responses.py" in p or "storage/store.py" in p),
    ),
    (
        "roadeval: claims (leases)",
        lambda p, n: _ours(p) and ("claims.py" in p or "liveness.py" in p),
    ),
    (
        "roadeval: parse and score",
        lambda p, n: (
            _ours(p)
            and (
                "trip/answers.py" in p
                or "tasks/shard/scoring.py" in p
                or "tasks/shard/answer.py" in p
                or ("benchmarks/" in p and ("parse" in n or "score" in n))
            )
        ),
    ),
    (
        "roadeval: landing (rows, Parquet)",
        lambda p, n: (
            (_ours(p) and any(s in p for s in ("landing", "tables.py", "records.py")))
            or "shard/rows.py" in p
            or "/pyarrow/" in p
        ),
    ),
    (
        "roadeval: plan (prompts, requests)",
        lambda p, n: (
            _ours(p)
            and any(
                s in p for s in ("tasks/shard/plan.py", "prompt.py", "generation.py", "messages.py")
            )
        ),
    ),
    (
        "roadeval: gateway and asking",
        lambda p, n: (
            _ours(p)
            and any(
                s in p
                for s in (
                    "gateway.py",
                    "provider_output",
                    "limits.py",
                    "call_stats",
                    "secrets.py",
                    "asking.py",
                    "stopping.py",
                    "reachability",
                    "tasks/requests/request.py",
                    "call_errors",
                )
            )
        ),
    ),
    ("Prefect task machinery", _has("/prefect/")),
    (
        "thread hops (to_thread, executors, futures)",
        lambda p, n: (
            p.startswith(STDLIB)
            and any(s in p for s in ("asyncio/threads.py", "concurrent/futures", "threading.py"))
        ),
    ),
    (
        "event loop (asyncio)",
        lambda p, n: p.startswith(STDLIB) and ("asyncio/" in p or "selectors.py" in p),
    ),
    ("imports (start-up)", _has("importlib", "<frozen")),
    ("roadeval: other", lambda p, n: _ours(p)),
    ("rich (terminal output)", _has("/rich/")),
    ("yaml, typer, click", _has("/yaml/", "/typer/", "/click/")),
    ("other libraries", _has("site-packages")),
]
# Standard-library modules with no purpose of their own here: charged to their callers.
_GENERIC_STDLIB = (
    "json/",
    "hashlib",
    "copy.py",
    "re/",
    "typing.py",
    "dataclasses.py",
    "enum.py",
    "functools.py",
    "abc.py",
    "contextlib.py",
    "collections/",
    "uuid.py",
    "datetime.py",
    "posixpath.py",
    "genericpath.py",
    "os.py",
    "inspect.py",
    "weakref.py",
    "_weakrefset.py",
    "base64.py",
    "logging/",
    "socket.py",
    "ssl.py",
    "tempfile.py",
    "pathlib.py",
    "shutil.py",
    "random.py",
    "string.py",
    "urllib/",
    "http/",
    "email/",
    "traceback.py",
    "linecache.py",
    "tokenize.py",
    "types.py",
    "operator.py",
    "warnings.py",
    "queue.py",
    "struct.py",
    "codecs.py",
    "encodings/",
    "locale.py",
    "platform.py",
    "textwrap.py",
    "ast.py",
)


# LiteLLM's look-ups of a model's facts (its price-map entry, and for a model not in the map a
# scan of the generalisation rules) serve many purposes: charged to whoever asked.
_GENERIC_LITELLM = ("fallback_generalizations.py", "model_info", "model_cost_key")


def _generic(func: Func) -> bool:
    path, _, name = func
    if path == "~" or (path.startswith("<") and "importlib" not in path):
        return True
    if "litellm/" in path and any(g in path or g in name for g in _GENERIC_LITELLM):
        return True
    return path.startswith(STDLIB) and any(
        path[len(STDLIB) :].startswith(g) for g in _GENERIC_STDLIB
    )


def _own_group(func: Func) -> str:
    path, _, name = func
    for group, matches in RULES:
        if matches(path, name):
            return group
    return "other (standard library)"


class Grouper:
    """Charges each function's self time to a group, and generic functions' self time to the
    groups of their callers, in proportion to the time spent under each caller."""

    def __init__(self, stats: dict[Func, Any]) -> None:
        self.stats = stats
        self._memo: dict[Func, dict[str, float]] = {}

    def shares(self, func: Func, depth: int = 0) -> dict[str, float]:
        """How `func`'s time splits over groups (fractions summing to 1)."""
        if func in self._memo:
            return self._memo[func]
        if not _generic(func):
            result = {_own_group(func): 1.0}
        else:
            callers = self.stats[func][4] if func in self.stats else {}
            weights = {c: edge[3] for c, edge in callers.items() if c != func}
            total = sum(weights.values())
            if depth > 12 or not weights or total <= 0:
                result = {"other (standard library)": 1.0}
            else:
                self._memo[func] = {"other (standard library)": 1.0}  # cycles end here
                result = defaultdict(float)
                for caller, weight in weights.items():
                    for group, share in self.shares(caller, depth + 1).items():
                        result[group] += share * weight / total
                result = dict(result)
        self._memo[func] = result
        return result

    def groups(self) -> dict[str, float]:
        totals: dict[str, float] = defaultdict(float)
        for func, (_, _, tottime, _, _) in self.stats.items():
            for group, share in self.shares(func).items():
                totals[group] += tottime * share
        return dict(totals)


# -- the report --

PROBES: list[tuple[str, Callable[[Func], bool]]] = [
    (
        "litellm.acompletion (whole call)",
        lambda f: f[2] == "acompletion" and "litellm/main" in f[0],
    ),
    ("litellm Logging.async_success_handler", lambda f: f[2] == "async_success_handler"),
    ("litellm Logging.success_handler (threads)", lambda f: f[2] == "success_handler"),
    ("litellm _success_handler_helper_fn", lambda f: f[2] == "_success_handler_helper_fn"),
    ("litellm.completion_cost", lambda f: f[2] == "completion_cost"),
    ("litellm response_cost_calculator", lambda f: f[2] == "response_cost_calculator"),
    ("litellm convert_to_model_response_object", lambda f: "convert_to_model_response" in f[2]),
    ("litellm get_llm_provider", lambda f: f[2] == "get_llm_provider"),
    ("litellm function_setup", lambda f: f[2] == "function_setup"),
    ("litellm post_call_processing / client wrapper", lambda f: f[2] == "wrapper_async"),
    ("litellm.token_counter (plan)", lambda f: f[2] == "token_counter"),
    ("roadeval ModelClient._cost", lambda f: f[2] == "_cost" and "gateway" in f[0]),
    ("roadeval ModelClient._try", lambda f: f[2] == "_try" and "gateway" in f[0]),
    ("roadeval read_output", lambda f: f[2] == "read_output"),
    ("roadeval request_key", lambda f: f[2] == "request_key" and "request.py" in f[0]),
    ("roadeval ResponseCache.put", lambda f: f[2] == "put" and "response_cache" in f[0]),
    (
        "roadeval ResponseCache.get/lookup",
        lambda f: f[2] in ("get", "lookup") and "response_cache" in f[0],
    ),
    ("roadeval ClaimBook.claim", lambda f: f[2] == "claim" and "claims" in f[0]),
    ("roadeval ClaimBook.finish", lambda f: f[2] == "finish" and "claims" in f[0]),
    ("roadeval Asker._store (to_thread hop)", lambda f: f[2] == "_store" and "asking" in f[0]),
    ("asyncio.to_thread", lambda f: f[2] == "to_thread"),
    ("roadeval plan_shard", lambda f: f[2] == "plan_shard"),
    ("roadeval answer_item", lambda f: f[2] == "answer_item"),
    ("roadeval score_all", lambda f: f[2] == "score_all"),
    ("roadeval storage land", lambda f: f[2] == "land" and "landing" in f[0]),
    (
        "roadeval shard response_rows/parse_rows/score_rows",
        lambda f: f[2].endswith("_rows") and "shard_rows" in f[0],
    ),
]


def _where(func: Func) -> str:
    path, line, name = func
    if path == "~":
        return name
    for marker in ("site-packages/", STDLIB, "/work/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{line}({name})"


def report(stats: pstats.Stats, items: int, title: str, reference_cpu_s: float | None) -> None:
    raw: dict[Func, Any] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in raw.values())
    per = 1000 / items
    print(
        f"\n=== {title}: {items} items, {total:.2f} s CPU profiled, {total * per:.3f} ms/call ==="
    )
    if reference_cpu_s is not None:
        factor = total / reference_cpu_s
        print(
            f"unprofiled, the same pass took {reference_cpu_s:.2f} s CPU "
            f"({reference_cpu_s * per:.3f} ms/call): cProfile inflates by {factor:.2f}x"
        )
    groups = Grouper(raw).groups()
    print("\nCPU by group (self time; built-ins and generic stdlib charged to callers)")
    print(f"{'group':<48} {'CPU s':>7} {'ms/call':>8} {'share':>6}")
    for group, seconds in sorted(groups.items(), key=lambda kv: -kv[1]):
        if seconds * per < 0.001:
            continue
        print(f"{group:<48} {seconds:7.2f} {seconds * per:8.3f} {100 * seconds / total:5.1f}%")
    for label, index in (("self", 2), ("cumulative", 3)):
        print(f"\ntop 15 functions by {label} time")
        print(f"{'function':<90} {'calls':>8} {'ms/call':>8} {'group'}")
        top = sorted(raw.items(), key=lambda kv: -kv[1][index])[:15]
        for func, entry in top:
            group = max(Grouper(raw).shares(func).items(), key=lambda kv: kv[1])[0]
            print(f"{_where(func)[:90]:<90} {entry[1]:8d} {entry[index] * per:8.3f} {group}")
    print("\nprobes (cumulative time, ms per call; 0 calls: not on this path)")
    for label, matches in PROBES:
        hits = [(f, e) for f, e in raw.items() if matches(f)]
        calls = sum(e[1] for _, e in hits)
        cum = sum(e[3] for _, e in hits)
        print(f"{label:<52} {calls:8d} calls {cum * per:8.3f} ms/call")
    sys.stdout.flush()


# -- the two paths --


# Panel prices for `--priced`: LiteLLM then prices each response itself (see hidden_cost_probe).
PRICES = {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6}


def staged_pass(api_base: str, items: int, concurrency: int, chunk: int, priced: bool) -> Any:
    """Write `items` text items, then return a function that runs plan_shard + run_shard over
    them into a fresh store, shard after shard (as gateway_throughput.py does)."""
    from roadeval.benchmarks.registry import get_suite
    from roadeval.storage.store import LocalStore
    from roadeval.tasks.cache.responses import ResponseCache
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.render.stage import render_items
    from roadeval.tasks.requests.model_spec import ModelSpec
    from roadeval.tasks.shard.plan import Shard, plan_shard
    from roadeval.tasks.shard.stages import run_shard

    folder = Path(tempfile.mkdtemp(prefix="profile-staged-"))
    source, _ = write_suite(items, folder)
    suite = get_suite("trip")
    all_items = suite.load(source).items
    spec = ModelSpec(
        model="openai/instant",
        api_base=api_base,
        max_concurrency=concurrency,
        input_cost_per_token=PRICES["input_cost_per_token"] if priced else None,
        output_cost_per_token=PRICES["output_cost_per_token"] if priced else None,
    )

    def one_pass(name: str) -> None:
        client = ModelClient(spec)
        store = LocalStore(folder / name)
        try:
            for index, start in enumerate(range(0, len(all_items), chunk)):
                shard = Shard("bench", index, suite, client, all_items[start : start + chunk])
                renders = render_items(suite, shard.items).renders
                run_shard(plan_shard(shard, renders, ResponseCache(store)), store)
        finally:
            shutil.rmtree(folder / name, ignore_errors=True)

    return one_pass


def reference(items: int, concurrency: int, chunk: int, priced: bool) -> None:
    """(A fresh process.) The staged pass unprofiled: prints its CPU seconds."""
    one_pass = staged_pass(
        os.environ["PROFILE_GATEWAY_API_BASE"], items, concurrency, chunk, priced
    )
    started = time.process_time()
    one_pass("reference")
    print(f"{time.process_time() - started:.4f}")


def staged(items: int, concurrency: int, chunk: int, priced: bool, dump: Path | None) -> None:
    """The staged path in this process under the profiler, then unprofiled in another."""
    import roadeval

    tree = Path(roadeval.__file__).resolve().parents[1]
    server = start_server(sys.executable, tree / "tests")
    try:
        one_pass = staged_pass(server.api_base, items, concurrency, chunk, priced)
        # Imports are done: the profile holds the calls (every thread is born under it).
        profiles = ThreadProfiles()
        profiles.start()
        one_pass("profiled")
        stats = profiles.stop()
        # Unprofiled in a fresh process: the threads here keep their profilers.
        argv = [sys.executable, __file__, "_reference", str(items), str(concurrency), str(chunk)]
        done = subprocess.run(
            [*argv, *(["priced"] if priced else [])],
            env={**os.environ, "PROFILE_GATEWAY_API_BASE": server.api_base},
            check=True,
            capture_output=True,
            text=True,
        )
        reference_cpu = float(done.stdout.split()[-1])
        if dump is not None:
            stats.dump_stats(str(dump / f"staged{'-priced' if priced else ''}.prof"))
        prices = "with panel prices" if priced else "unpriced model"
        title = f"staged path (plan_shard + run_shard) in process, {prices}"
        report(stats, items, title, reference_cpu)
        hidden_cost_probe(server.api_base)
    finally:
        server.process.kill()
        server.process.wait()


def hidden_cost_probe(api_base: str) -> None:
    """Does LiteLLM already price a response (`_hidden_params['response_cost']`), unpriced and
    with the panel's per-token prices, so that our `_cost` need not call completion_cost?"""
    import litellm

    async def one(**prices: float) -> Any:
        return await litellm.acompletion(
            model="openai/instant",
            messages=[{"role": "user", "content": "hi"}],
            api_base=api_base,
            api_key="no-key",
            temperature=0,
            **prices,
        )

    print("\n_hidden_params['response_cost'] as LiteLLM returns it")
    for label, prices in (
        ("unpriced model (openai/instant)", {}),
        (
            "panel prices (input/output_cost_per_token)",
            {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
        ),
    ):
        response = asyncio.run(one(**prices))
        hidden = getattr(response, "_hidden_params", {}) or {}
        print(f"  {label:<46} response_cost={hidden.get('response_cost')!r}")
    priced = asyncio.run(one())
    try:
        cost: Any = litellm.completion_cost(completion_response=priced)
    except Exception as exc:
        cost = f"raises {type(exc).__name__}"
    print(f"  {'completion_cost() on the unpriced response':<46} {cost}")


def command(items: int, concurrency: int, dump: Path | None) -> None:
    """The whole `roadeval run` under cProfile (every thread), in a process of its own."""
    workdir = Path(tempfile.mkdtemp(prefix="profile-gateway-"))
    (workdir / "home").mkdir()
    import roadeval

    tree = Path(roadeval.__file__).resolve().parents[1]
    setup = Setup(items, concurrency, sys.executable, os.environ.get("PYTHONPATH"), "", workdir)
    server = start_server(sys.executable, tree / "tests")
    try:
        warm_prefect_home(setup)
        source, _ = write_suite(items, workdir / "data")
        panel = write_panel(workdir / "panel.yaml", source, server.api_base, concurrency)
        out = (dump or workdir) / "command.prof"
        args = ["run", "--panel", str(panel), "--store", str(workdir / "store")]
        env = base_env(setup)
        if setup.roadeval_tree:
            env["PYTHONPATH"] = setup.roadeval_tree
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, __file__, "_child", str(out), *args],
            env=env,
            cwd=workdir,  # out of any checkout, whose roadeval would shadow the tree's
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"\n`roadeval run` under the profiler took {time.perf_counter() - started:.1f} s")
        print(f"(the command: {' '.join(roadeval_command(sys.executable))} {' '.join(args)})")
        report(pstats.Stats(str(out)), items, "`roadeval run`, the whole command", None)
    finally:
        server.process.kill()
        server.process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def child(out: str, args: list[str]) -> None:
    """(In the profiled process.) Run the CLI with every thread profiled; dump the stats."""
    profiles = ThreadProfiles()
    profiles.start()
    code: Any = 0
    try:
        from roadeval.flows.cli.main import app

        app(args, prog_name="roadeval")
    except SystemExit as exc:
        code = exc.code
    finally:
        profiles.stop().dump_stats(out)
    if code not in (0, None):
        raise SystemExit(code)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "_child":
        child(sys.argv[2], sys.argv[3:])
        return
    if len(sys.argv) > 4 and sys.argv[1] == "_reference":
        items, concurrency, chunk = (int(a) for a in sys.argv[2:5])
        reference(items, concurrency, chunk, priced=sys.argv[5:] == ["priced"])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "mode", nargs="?", default="both", choices=("staged", "command", "both", "report")
    )
    parser.add_argument("file", nargs="?", help="with `report`: a .prof file")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--chunk", type=int, default=500, help="items per shard (staged mode)")
    parser.add_argument(
        "--priced",
        action="store_true",
        help="staged mode: give the model panel prices (LiteLLM then prices each response)",
    )
    parser.add_argument("--dump", type=Path, default=None, help="keep the .prof files here")
    args = parser.parse_args()
    if args.dump is not None:
        args.dump.mkdir(parents=True, exist_ok=True)
    if args.mode == "report":
        if not args.file:
            parser.error("report needs a .prof file")
        report(pstats.Stats(args.file), args.items, args.file, None)
        return
    if args.mode in ("staged", "both"):
        staged(args.items, args.concurrency, args.chunk, args.priced, args.dump)
    if args.mode in ("command", "both"):
        command(args.items, args.concurrency, args.dump)


if __name__ == "__main__":
    main()
