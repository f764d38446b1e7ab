"""How long a stored answer may be reused (`reuse_for`), and whether one still may.

A model's answers are reused for as long as its `reuse_for` says, measured back from the start
of the run that would reuse them: `forever` (every stored answer, the default), `never` (only
what this run itself bought), or a duration (`12h`, `7d`, `30d`): an answer bought longer ago
than that is asked again. An answer's age is when it was bought (`answered_at`, kept with it in
the store); one kept before answers had a time is of unknown age, reused only `forever`.

Built-in baselines answer a request the same way every time: nothing but their own entry's
`reuse_for` makes them ask again (`effective_reuse_for`).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import BeforeValidator

from roadeval.bounds import DAY_S, Bound

FOREVER = "forever"
NEVER = "never"
UNITS = {"s": 1, "m": 60, "h": 3_600, "d": DAY_S, "w": 7 * DAY_S}
_DURATION = re.compile(r"([0-9]{1,12})([smhdw])")
_SPELLING = "a whole number and a unit (s, m, h, d or w: 12h, 7d, 30d), 'forever' or 'never'"
REUSE_FOR_S = Bound(
    1,
    3_650 * DAY_S,
    "seconds a stored answer may be reused: from 1 (for none, write 'never') to ten years "
    "(longer is 'forever')",
)


def reuse_seconds(text: str) -> float | None:
    """The seconds `text` (a checked `reuse_for`) allows: None for forever, 0 for never."""
    if text == FOREVER:
        return None
    if text == NEVER:
        return 0.0
    found = _DURATION.fullmatch(text)
    if found is None:
        raise ValueError(f"{text!r} is not a reuse_for: {_SPELLING}")
    return float(int(found.group(1)) * UNITS[found.group(2)])


def reuse_for_problem(value: object) -> str | None:
    """Why `value` cannot be a `reuse_for`, in a line, or None."""
    if not isinstance(value, str):
        return f"{value!r} is not a duration: give {_SPELLING}"
    if value in (FOREVER, NEVER):
        return None
    if _DURATION.fullmatch(value) is None:
        return f"{value!r} is not a duration: give {_SPELLING}"
    seconds = reuse_seconds(value)
    assert seconds is not None
    problem = REUSE_FOR_S.problem(seconds)
    return None if problem is None else f"{value} ({problem})"


def _checked(value: object) -> str:
    """The pydantic validator: `value` itself, or a ValueError saying what is wrong."""
    if (problem := reuse_for_problem(value)) is not None:
        raise ValueError(problem)
    assert isinstance(value, str)
    return value


# A `reuse_for` as the panel file spells it, checked where it is read.
ReuseFor = Annotated[str, BeforeValidator(_checked)]


def effective_reuse_for(
    own: str | None, panel: str | None, default: str | None, *, baseline: bool
) -> str:
    """A model's `reuse_for` in force: its own entry's; else, for a model called over the
    network, the panel's, else the run's `default` (the scheduled deployment's `never`); else
    forever. A built-in baseline reuses forever unless its own entry says otherwise: it would
    answer the same request the same way again."""
    if own is not None:
        return own
    if baseline:
        return FOREVER
    return panel or default or FOREVER


def fresh_since(reuse_for: str | None, started: datetime) -> datetime | None:
    """The oldest an answer may have been bought to be reused by a run that began at
    `started`; None when any may (forever)."""
    seconds = reuse_seconds(reuse_for or FOREVER)
    return None if seconds is None else started - timedelta(seconds=seconds)


def is_fresh(answered_at: datetime | None, since: datetime | None) -> bool:
    """Whether an answer bought at `answered_at` may be reused when answers are fresh `since`
    then: always with no limit; never when its time is unknown (kept before answers had one)."""
    if since is None:
        return True
    return answered_at is not None and answered_at >= since


def run_start(run_id: str) -> datetime | None:
    """When a run began, from its id (`20260101T120000Z-1a2b3c4d`: to the second); None if its
    id does not say."""
    try:
        return datetime.strptime(run_id[:16], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def now() -> datetime:
    """The time an answer is bought at: the clock every answer's `answered_at` is read from (a
    test moves it to make answers old)."""
    return datetime.now(UTC)
