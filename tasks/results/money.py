"""Dollars as people read them, the same in every table that shows a cost: rounded to what
matters ($0.0052, not 0.005207999999), with enough digits that a tiny cost is not $0.0000, and a
cost nobody knows (an unpriced model) said to be unknown, never shown as $0."""

from __future__ import annotations

import math

UNKNOWN = "unknown"
# Below a dollar: at least this many decimals, and more where the amount needs them to keep
# `SIGNIFICANT` digits ($0.000031).
_DECIMALS = 4
_SIGNIFICANT = 2


def usd(amount: float) -> str:
    """`amount` in dollars: cents from a dollar up ($1,234.57); below, 4 decimals or as many
    as two significant digits need ($0.0052, $0.000031); nothing is $0."""
    if amount == 0:
        return "$0"
    size = abs(amount)
    if size >= 1:
        return f"${amount:,.2f}"
    leading = -math.floor(math.log10(size))  # 0.0052 -> 3: its first digit is the 3rd decimal
    return f"${amount:.{max(_DECIMALS, leading + _SIGNIFICANT - 1)}f}"


def cost_text(known_usd: float, unknown: int | None) -> str:
    """A cost of which `unknown` requests have no known price (None: some, how many was not
    recorded): `usd(known_usd)` when every cost is known; `unknown` when nothing of it is (no
    known dollar); else the known part as a floor, `$0.0052 + 3 unknown`."""
    if unknown == 0:
        return usd(known_usd)
    if known_usd == 0:
        return UNKNOWN
    return f"{usd(known_usd)} + {'some' if unknown is None else f'{unknown:,}'} {UNKNOWN}"
