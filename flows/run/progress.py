"""The live display of a run on stderr: what stage it is at, and one line per model with its
calls done and left, USD spent (against the budget when there is one), its current rate per
minute and its 429s, read from each client's live counters (`tasks.calls.stats`); answering on
a cluster, the calls each node has made.

Drawn only when stderr is a terminal (or ROADEVAL_PROGRESS=1 forces it; 0 turns it off), and
transient: it is gone when the run ends, leaving the report.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from roadeval.tasks.calls.budget import Budget
    from roadeval.tasks.calls.gateway import ModelClient
    from roadeval.tasks.calls.stats import StatsSnapshot


def forced() -> bool | None:
    """ROADEVAL_PROGRESS: 1 draws the display whatever stderr is, 0 never; None when unset."""
    value = os.environ.get("ROADEVAL_PROGRESS")
    if value in ("1", "0"):
        return value == "1"
    if value:
        raise ValueError(f"ROADEVAL_PROGRESS={value!r}: use 1 (always) or 0 (never)")
    return None


def progress_wanted(stream: object = None) -> bool:
    """Forced on or off, else whether stderr is a terminal."""
    choice = forced()
    if choice is not None:
        return choice
    isatty = getattr(stream if stream is not None else sys.stderr, "isatty", None)
    return bool(isatty is not None and isatty())


def usd(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def model_line(snapshot: StatsSnapshot, limit_usd: float | None) -> tuple[str, ...]:
    """One model's cells: name, calls done / left, USD (against the budget), rate, 429s."""
    spent = usd(snapshot.spent_usd)
    if limit_usd is not None:
        spent = f"{spent} / {usd(limit_usd)}"
    return (
        snapshot.model,
        f"{snapshot.done} done",
        f"{snapshot.left} left",
        spent,
        f"{snapshot.per_minute:,.0f}/min",
        f"{snapshot.rate_limited} x 429",
    )


def nodes_line(calls: Mapping[str, int]) -> str:
    """The answering cluster's calls so far, per node."""
    each = ", ".join(f"{node} {n:,}" for node, n in sorted(calls.items()))
    return f"calls per node ({len(calls)} nodes): {each or 'none yet'}"


class RunProgress:
    """A context manager: while inside, the display redraws a few times a second."""

    def __init__(
        self,
        clients: Sequence[ModelClient],
        budget: Budget | None = None,
        *,
        console: Console | None = None,
        enabled: bool | None = None,
        nodes: Callable[[], Mapping[str, int]] | None = None,
    ) -> None:
        self.clients = list(clients)
        # Calls ended per node of the answering cluster so far (None: answered here).
        self.nodes = nodes
        self.budget = budget
        # Forced on, the display is drawn as on a terminal (tests read it from captured stderr).
        self.console = console or Console(stderr=True, force_terminal=forced() or None)
        self.enabled = progress_wanted(self.console.file) if enabled is None else enabled
        self._lock = threading.Lock()
        self._doing = "starting"
        self._done = 0
        self._total = 0
        self._live: Live | None = None

    def phase(self, doing: str, total: int) -> None:
        """A new stage: `total` shards to go through."""
        with self._lock:
            self._doing, self._done, self._total = doing, 0, total

    def advance(self) -> None:
        """One more shard through the current stage."""
        with self._lock:
            self._done += 1

    def render(self) -> Group:
        with self._lock:
            head = Text(f"{self._doing}: {self._done}/{self._total} shards")
        limit = self.budget.limit_usd if self.budget is not None else None
        table = Table.grid(padding=(0, 2))
        for _ in range(6):
            table.add_column(justify="right")
        for client in self.clients:
            table.add_row(*model_line(client.stats.snapshot(), limit))
        if self.nodes is None:
            return Group(head, table)
        return Group(head, table, Text(nodes_line(self.nodes())))

    def __enter__(self) -> RunProgress:
        if self.enabled:
            self._live = Live(
                console=self.console,
                transient=True,
                refresh_per_second=4,
                redirect_stdout=False,
                redirect_stderr=False,
                get_renderable=self.render,
            )
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
