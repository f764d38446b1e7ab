"""One authority per model across processes: callers in other processes are admitted and
settled by the driver's gate, so the budget and the limits hold over all of them; a stop reaches
them."""

from __future__ import annotations

import threading
import time

import pytest

from roadeval.tasks.calls.admission import Cost, Gate
from roadeval.tasks.calls.authority import AuthorityLink, AuthorityServer
from roadeval.tasks.calls.budget import OUT_OF_BUDGET, Budget
from roadeval.tasks.calls.gateway import run_on_gateway
from roadeval.tasks.calls.limits import CallLimiter
from roadeval.tasks.calls.stats import CallStats
from roadeval.tasks.calls.stopping import StopReason, StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec
from roadeval.tasks.requests.request import ErrorKind

from support.authority_callers import callers
from support.cli_process import wait_until
from support.clusters import free_port
from support.model_server import ModelServer, Reply, ServerLimits


def spec_for(server: ModelServer, name: str) -> ModelSpec:
    return ModelSpec(
        model=f"openai/{name}",
        api_base=server.api_base,
        params={"max_tokens": 10},
        input_cost_per_token=0.001,
        output_cost_per_token=0.002,
        max_concurrency=4,
        retry_backoff_s=0.0,
    )


def test_one_budget_holds_over_callers_in_two_processes(server: ModelServer) -> None:
    # Each answer costs $0.02 and reserves $0.03 before it is sent: $0.1 pays for 4, in all.
    server.rules["shared"] = lambda body, hit: Reply("A", prompt_tokens=10, completion_tokens=5)
    spec = spec_for(server, "shared")
    stop = StopSignal()
    budget = Budget(0.1)
    authority = AuthorityServer({spec.label: Gate(spec, stop, budget)}, stop)
    results = callers(spec, authority, 6, 2)
    assert sum(int(r["answered"]) for r in results) == 4  # type: ignore[call-overload]
    assert len(server.hits_for("shared")) == 4
    spent = sum(float(r["cost"]) for r in results)  # type: ignore[arg-type]
    assert spent == pytest.approx(0.08) and spent <= 0.1
    assert budget.spent_usd == pytest.approx(spent)
    assert stop.reason is not None and stop.reason.status == OUT_OF_BUDGET
    assert {r["reason"] for r in results} == {OUT_OF_BUDGET}  # the stop reached both


def test_one_token_limit_holds_over_callers_in_two_processes(server: ModelServer) -> None:
    server.rules["windowed"] = lambda body, hit: Reply("A", prompt_tokens=10, completion_tokens=5)
    server.limits["windowed"] = ServerLimits(tpm=100, enforce=False, window_s=1.0)
    spec = spec_for(server, "windowed")
    stop = StopSignal()
    gate = Gate(spec, stop, Budget(100.0))
    # 20 tokens a request (10 prompt + 10 max output): 5 per 1-s window, over both processes.
    gate.limiter = CallLimiter(4, None, 100, window_s=1.0, guard_s=0.05)
    results = callers(spec, AuthorityServer({spec.label: gate}, stop), 8, 2)
    assert sum(int(r["answered"]) for r in results) == 16  # type: ignore[call-overload]
    assert server.window_peaks("windowed").tokens <= 100


def test_a_stop_in_the_driver_reaches_the_callers(server: ModelServer) -> None:
    server.rules["long"] = lambda body, hit: Reply("A", delay_s=0.3)
    spec = spec_for(server, "long")
    stop = StopSignal()
    gate = Gate(spec, stop, Budget(100.0))
    gate.limiter = CallLimiter(1, None, None)
    authority = AuthorityServer({spec.label: gate}, stop)

    def stop_once_answering() -> None:
        while len(server.hits_for("long")) < 3:
            time.sleep(0.05)
        stop.request(StopReason("stopped by SIGINT", 130, "interrupted"))

    threading.Thread(target=stop_once_answering, daemon=True).start()
    (result,) = callers(spec, authority, 40, 1)
    assert result["reason"] == "interrupted"
    assert 0 < int(result["answered"]) < 40  # type: ignore[call-overload]
    assert int(result["stopped"]) > 0  # type: ignore[call-overload]


def test_refused_keys_are_counted_over_callers_in_two_processes(server: ModelServer) -> None:
    server.rules["revoked"] = lambda body, hit: Reply(status=401, text="Invalid API key")
    spec = spec_for(server, "revoked")
    stop = StopSignal()
    gate = Gate(spec, stop, Budget(100.0))
    gate.limiter = CallLimiter(1, None, None)  # one request at a time, over both processes
    results = callers(spec, AuthorityServer({spec.label: gate}, stop), 5, 2)
    # Three refusals in all (not three a process), then every other request is not sent.
    assert len(server.hits_for("revoked")) == 3 and gate.keys.failed
    kinds = [kind for r in results for kind in r["kinds"]]  # type: ignore[attr-defined]
    assert kinds.count(ErrorKind.AUTH) == 3 and kinds.count(ErrorKind.AUTH_FAILED) == 7


def test_a_stopped_run_admits_no_caller_even_to_a_free_slot(server: ModelServer) -> None:
    stop = StopSignal()
    gate = Gate(spec_for(server, "free"), stop)
    assert run_on_gateway(gate.admit(Cost(0, None, None))) is not None
    stop.request(StopReason("store x: No space left on device", 1, "failed"))
    # Three slots are free: the request is refused all the same, the slot left free.
    assert run_on_gateway(gate.admit(Cost(0, None, None))) is None
    assert gate.in_flight == 1


def test_a_stop_in_one_caller_reaches_the_run_and_every_other_caller_at_once(
    server: ModelServer,
) -> None:
    spec = spec_for(server, "shared")
    stop = StopSignal()
    authority = AuthorityServer({spec.label: Gate(spec, stop)}, stop)
    address = run_on_gateway(authority.start())
    failing, other = AuthorityLink(address, StopSignal()), AuthorityLink(address, StopSignal())
    cost = Cost(0, None, None)
    try:
        for link in (failing, other):
            assert "pass" in run_on_gateway(link.enter(spec.label, cost))
        full = StopReason("store x: No space left on device", 1, "failed")
        # As `call_store` requests it: on the loop, where the caller's answers are kept.
        run_on_gateway(_request(failing.stop, full))
        wait_until(lambda: other.stop.requested, timeout=5, what="the other caller's stop")
        assert stop.reason == full and other.stop.reason == full
        assert "pass" not in run_on_gateway(other.enter(spec.label, cost))
        # Told once: neither the run nor the caller that failed cancel their requests now.
        assert not stop.aborted and not failing.stop.aborted and failing.stop.reason == full
    finally:
        for link in (failing, other):
            run_on_gateway(link.close())
        run_on_gateway(authority.close())


async def _request(stop: StopSignal, reason: StopReason) -> None:
    stop.request(reason)


def test_an_unreachable_verdict_in_one_caller_reaches_every_caller(server: ModelServer) -> None:
    # Nobody listens at the model's address: the first request that fails declares it
    # unreachable for the whole run, so no other process sends one to find out again.
    dead = spec_for(server, "gone").model_copy(
        update={"api_base": f"http://127.0.0.1:{free_port()}/v1", "num_retries": 0}
    )
    stop = StopSignal()
    gate = Gate(dead, stop, Budget(100.0))
    gate.limiter = CallLimiter(1, None, None)  # one request at a time, over both processes
    results = callers(dead, AuthorityServer({dead.label: gate}, stop), 5, 2)
    kinds = [kind for r in results for kind in r["kinds"]]  # type: ignore[attr-defined]
    assert kinds.count(ErrorKind.CONNECTION) == 1, kinds
    assert kinds.count(ErrorKind.UNREACHABLE) == 9 and gate.unreachable is not None


def test_the_authority_counts_each_named_nodes_calls(server: ModelServer) -> None:
    stop = StopSignal()
    spec = spec_for(server, "counted")
    authority = AuthorityServer({spec.label: Gate(spec, stop)}, stop, stats={})
    address = run_on_gateway(authority.start())
    links = [AuthorityLink(address, StopSignal(), node=f"node-{k}") for k in range(2)]

    async def calls(link: AuthorityLink, n: int) -> None:
        await link.ping(5.0)
        for _ in range(n):
            link.tally(spec.label, ok=True, cost_usd=None, rate_limited=0)
        await link.close()

    try:
        authority.stats[spec.label] = CallStats(spec.label)
        run_on_gateway(calls(links[0], 3))
        run_on_gateway(calls(links[1], 2))
        wait_until(lambda: sum(authority.node_calls.values()) == 5, timeout=10)
        assert authority.node_calls == {"node-0": 3, "node-1": 2}
    finally:
        run_on_gateway(authority.close())
