"""The hard budget through the real call path: every try reserves its worst case first, the run
stops between two calls when the next could cross the cap, and spending never exceeds it."""

from __future__ import annotations

import asyncio

import pytest

from roadeval.benchmarks.messages import user_message
from roadeval.tasks.calls.budget import OUT_OF_BUDGET, OUT_OF_BUDGET_EXIT, Budget, BudgetExhausted
from roadeval.tasks.calls.gateway import CallOutcome, ModelClient, run_on_gateway
from roadeval.tasks.calls.stopping import StopSignal
from roadeval.tasks.requests.model_spec import ModelSpec

from support.model_server import ModelServer, Reply

# 10 prompt tokens at $0.001 and at most 10 output tokens at $0.002: a worst case of $0.03; the
# server's replies use 5 output tokens, so each answer really costs $0.02.
PRICES = {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002}
WORST, REAL = 0.03, 0.02


def priced(server: ModelServer, name: str, budget: Budget, **spec: object) -> ModelClient:
    model = ModelSpec(
        model=f"openai/{name}",
        api_base=server.api_base,
        params={"max_tokens": 10},
        retry_backoff_s=0.0,
        **PRICES,
        **spec,  # type: ignore[arg-type]
    )
    return ModelClient(model, stop=StopSignal(grace=0.5), budget=budget)


def ask_many(client: ModelClient, n: int) -> list[CallOutcome]:
    async def every() -> list[CallOutcome]:
        requests = [client.request([user_message(f"Q{k}?")], 1, tokens_in_est=10) for k in range(n)]
        return list(await asyncio.gather(*(client.complete(r) for r in requests)))

    return run_on_gateway(every())


def test_reservations_wait_for_calls_in_flight_then_stop_for_good() -> None:
    budget = Budget(0.1)
    first = budget.try_reserve(0.06)
    assert first is not None
    assert budget.try_reserve(0.05) is None  # might fit once the first settles for less
    budget.settle(first, 0.02)
    second = budget.try_reserve(0.05)
    assert second is not None
    budget.settle(second, 0.05)
    with pytest.raises(BudgetExhausted, match=r"\$0\.0700 spent of \$0\.1000"):
        budget.try_reserve(0.05)  # nothing in flight: it would cross for good
    with pytest.raises(BudgetExhausted):
        budget.try_reserve(0.0001)  # and from then on, however small


def test_an_unknown_cost_keeps_its_worst_case_spent() -> None:
    budget = Budget(1.0)
    reservation = budget.try_reserve(0.3)
    assert reservation is not None
    budget.settle(reservation, None)
    assert budget.spent_usd == pytest.approx(0.3) and budget.held_usd == 0.0


@pytest.mark.parametrize("concurrency", [1, 8])
def test_the_run_stops_between_two_calls_at_the_budget(
    server: ModelServer, concurrency: int
) -> None:
    server.rules["paid"] = lambda body, hit: Reply("A", prompt_tokens=10, completion_tokens=5)
    budget = Budget(0.1)
    client = priced(server, "paid", budget, max_concurrency=concurrency)
    outcomes = ask_many(client, 10)
    answered = [o for o in outcomes if o.final is not None and o.final.ok]
    # After 3 answers $0.06 is spent and a 4th worst case fits ($0.09); after the 4th ($0.08)
    # a 5th would reach $0.11: it is never sent.
    assert len(answered) == 4 and len(server.hits_for("paid")) == 4
    assert sum(o.stopped for o in outcomes) == 6
    spent = sum(call.cost_usd or 0.0 for o in outcomes for call in o.tries)
    assert spent == pytest.approx(4 * REAL) and spent <= 0.1
    assert budget.spent_usd == pytest.approx(spent)
    reason = client.stop.reason
    assert reason is not None and reason.status == OUT_OF_BUDGET
    assert reason.exit_code == OUT_OF_BUDGET_EXIT and "budget reached" in reason.message


def test_a_try_that_may_be_billed_is_counted_at_its_worst(server: ModelServer) -> None:
    # The first try times out (a provider may still bill it); the retry answers.
    server.rules["slow"] = lambda body, hit: (
        Reply("A", delay_s=2.0) if hit == 1 else Reply("A", prompt_tokens=10, completion_tokens=5)
    )
    budget = Budget(1.0)
    client = priced(server, "slow", budget, timeout_s=0.5, num_retries=1)
    (outcome,) = ask_many(client, 1)
    assert [t.error_kind for t in outcome.tries] == ["timeout", None]
    assert budget.spent_usd == pytest.approx(WORST + REAL)


def test_a_budget_with_an_unpriced_model_is_refused_before_a_call(server: ModelServer) -> None:
    server.rules["free"] = lambda body, hit: Reply("A")
    model = ModelSpec(model="openai/free", api_base=server.api_base, params={"max_tokens": 5})
    client = ModelClient(model, stop=StopSignal(), budget=Budget(1.0))
    (outcome,) = ask_many(client, 1)
    assert outcome.stopped and server.hits_for("free") == []
    reason = client.stop.reason
    assert reason is not None and reason.status == "failed"
    assert "has no price" in reason.message
