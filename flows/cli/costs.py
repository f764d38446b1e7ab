"""A run's final cost table, per model x suite x role, read back from what it landed (the store's
`costs` view for the run id): requests sent, answers reused, tokens in and out, USD. A cost
nobody knows (an unpriced model) shows as unknown, never as $0."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table

from roadeval.storage.store import Store
from roadeval.tasks.results.fitting import FitColumn, captioned, fitted_table
from roadeval.tasks.results.manifest import shown_as
from roadeval.tasks.results.money import cost_text

_SQL = """
select model, suite, role, variant,
       count(*) filter (where not cached and try_number > 0) as requests,
       count(*) filter (where cached) as reused,
       coalesce(sum(tokens_in) filter (where not cached), 0) as tokens_in,
       coalesce(sum(tokens_out) filter (where not cached), 0) as tokens_out,
       coalesce(sum(cost_usd), 0) as known_usd,
       count(*) filter (where cost_usd is null) as unknown
from costs where run_id = $run_id
group by all order by model, suite, role, variant
"""

# The numbers of a line, as headed, in the order they give way to a narrow terminal.
_COUNTED = ("requests", "reused", "tokens in", "tokens out", "USD")
_SUMMED = ("requests", "reused", "tokens_in", "tokens_out")


@dataclass(frozen=True)
class CostLine:
    """One model x suite x role of a run (x variant: a blind ablation's requests apart)."""

    model: str
    suite: str
    role: str
    variant: str
    requests: int
    reused: int
    tokens_in: int
    tokens_out: int
    known_usd: float
    # Requests whose cost is not known (no price for the model, or a reply without usage).
    unknown: int

    @property
    def usd(self) -> str:
        return cost_text(self.known_usd, self.unknown)


def cost_lines(store: Store, run_id: str) -> list[CostLine]:
    """The run's cost lines, from the landed responses (retries and judge calls included)."""
    from roadeval.storage.catalog import read_views

    rows = read_views(
        store,
        lambda con: con.execute(_SQL, {"run_id": run_id}).fetchall(),
        runs=[run_id],
        tables=["responses"],
    )
    return [
        CostLine(str(m), str(s), str(r), str(v), int(q), int(c), int(i), int(o), float(u), int(n))
        for m, s, r, v, q, c, i, o, u, n in rows
    ]


def cost_table(lines: list[CostLine], width: int) -> Table:
    """The cost lines and their total at most `width` wide: model and suite whole, the
    columns that do not fit named under the table."""
    rows: list[tuple[str, ...]] = [
        (
            shown_as(line.model, line.variant),
            line.suite,
            line.role,
            f"{line.requests:,}",
            f"{line.reused:,}",
            f"{line.tokens_in:,}",
            f"{line.tokens_out:,}",
            line.usd,
        )
        for line in lines
    ]
    if lines:
        total = cost_text(
            sum(line.known_usd for line in lines), sum(line.unknown for line in lines)
        )
        sums = (sum(getattr(line, name) for line in lines) for name in _SUMMED)
        rows.append(("total", "", "", *(f"{n:,}" for n in sums), total))
    columns = [
        FitColumn(heading, tuple(row[at] for row in rows), whole=at < 2, kept=at < 2)
        for at, heading in enumerate(("model", "suite", "role"))
    ]
    columns += [
        FitColumn(heading, tuple(row[at] for row in rows), numeric=True)
        for at, heading in enumerate(_COUNTED, start=3)
    ]
    fitted = fitted_table(columns, width, "cost per model, suite and role", edge=True)
    if lines:
        fitted.table.rows[-1].style = "bold"
    return captioned(fitted, width)
