"""A run's hard dollar cap: every request (retries and judge calls included) reserves its worst
case before it is sent, and settles at its real cost when it ends. When the next reservation would
cross the cap, the run stops cleanly instead: spending can never exceed the budget.

One Budget per run, held by the driver; callers in other processes reach it through the run's
authority (`tasks.calls.authority`)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

OUT_OF_BUDGET = "out_of_budget"
# The exit code of a run stopped by its budget: not a failure, not finished either.
OUT_OF_BUDGET_EXIT = 3


@dataclass(frozen=True)
class Reservation:
    """A worst case held against the budget until the request it is for settles."""

    number: int
    usd: float


class BudgetExhausted(Exception):
    """The next request's worst case would cross the budget: nothing more may be sent."""

    def __init__(self, limit_usd: float, spent_usd: float, asked_usd: float):
        self.limit_usd = limit_usd
        self.spent_usd = spent_usd
        self.asked_usd = asked_usd
        super().__init__(
            f"budget reached: ${spent_usd:.4f} spent of ${limit_usd:.4f}; the next request's "
            f"worst case (${asked_usd:.4f}) would cross it"
        )


class Budget:
    """Reservations against a cap, under a lock: safe from any thread of the driver."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.held_usd = 0.0
        self._held: dict[int, float] = {}
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self.exhausted: BudgetExhausted | None = None

    @property
    def capped(self) -> bool:
        return self.limit_usd is not None

    def try_reserve(self, usd: float) -> Reservation | None:
        """Hold `usd` (a request's worst case). None while it would cross the cap only because
        of requests in flight, which may settle for less: wait and ask again. BudgetExhausted
        once it would cross with nothing in flight, and from then on for every caller, so that
        no smaller request slips in after the stop."""
        with self._lock:
            if self.exhausted is not None:
                raise self.exhausted
            if self.limit_usd is not None and self.spent_usd + self.held_usd + usd > self.limit_usd:
                if self._held:
                    return None
                self.exhausted = BudgetExhausted(self.limit_usd, self.spent_usd, usd)
                raise self.exhausted
            reservation = Reservation(next(self._numbers), usd)
            self._held[reservation.number] = usd
            self.held_usd += usd
            return reservation

    def settle(self, reservation: Reservation, actual_usd: float | None) -> None:
        """The request ended at `actual_usd`; None (a cost nobody can know, e.g. a timeout the
        provider may still bill) keeps the whole worst case as spent."""
        with self._lock:
            held = self._held.pop(reservation.number, None)
            if held is None:
                return
            # Summed afresh when nothing is held: no float residue may hold back a reservation.
            self.held_usd = self.held_usd - held if self._held else 0.0
            self.spent_usd += held if actual_usd is None else actual_usd

    @property
    def left_usd(self) -> float | None:
        if self.limit_usd is None:
            return None
        with self._lock:
            return self.limit_usd - self.spent_usd - self.held_usd
