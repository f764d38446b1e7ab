"""A rescore: every stored answer of a panel scored again, no model asked (the judge included).
It is refused, exit 2, before the run is recorded when the store lacks an answer it needs: a
refusal is bad input, and leaves no `failed` run behind."""

from __future__ import annotations

from collections.abc import Sequence

from roadeval.tasks.results.manifest import shown_as
from roadeval.tasks.shard.plan import ShardPlan


class RescoreRefused(ValueError):
    """A rescore whose plans ask for answers the store does not hold."""


def unanswered(plans: Sequence[ShardPlan]) -> RescoreRefused | None:
    """The refusal of a rescore of these plans, naming how many items have no stored answer
    to their first request and the first of them; None when the store answers every one."""
    missing = [
        (plan.shard, planned.item)
        for plan in plans
        for planned in plan.items
        if not planned.answered(0)
    ]
    if not missing:
        return None
    shard, item = missing[0]
    who = shown_as(shard.client.spec.label, shard.variant)
    return RescoreRefused(
        f"rescore: {len(missing)} items have no stored answer (first: {shard.suite.name} x "
        f"{who}, item {item.item_id}); a rescore asks no model: run the panel to ask them"
    )
