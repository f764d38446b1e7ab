"""What served each model's answers in two runs, side by side: the served models and system
fingerprints the provider named (from each run's manifest), per model and role, and whether
they changed, so a score that moved between the runs can be put down to a changed model behind
the same name rather than to noise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roadeval.tasks.results.manifest import ServedRecord

Identity = tuple[str | None, str | None]


@dataclass(frozen=True)
class ServedChange:
    """One model in one role: what served its answers in run A and in run B (the answers a run
    bought and those it reused alike: what its scores rest on)."""

    model: str
    role: str
    before: tuple[ServedRecord, ...]
    after: tuple[ServedRecord, ...]

    @staticmethod
    def _identities(records: Sequence[ServedRecord]) -> frozenset[Identity]:
        return frozenset(
            (r.served_model, r.system_fingerprint) for r in records if r.answers or r.reused
        )

    @property
    def changed(self) -> bool:
        """Whether run B's answers were served by another set than run A's (a model missing
        from either run is no change of what served it)."""
        if not self.before or not self.after:
            return False
        return self._identities(self.before) != self._identities(self.after)

    @property
    def named(self) -> bool:
        """Whether the provider named anything in either run."""
        both = self._identities(self.before) | self._identities(self.after)
        return any(served or fingerprint for served, fingerprint in both)


def served_changes(
    before: Sequence[ServedRecord], after: Sequence[ServedRecord]
) -> list[ServedChange]:
    """Per model and role of either run (by name, then role), what served it in each."""
    keys = sorted({(r.model, r.role) for r in [*before, *after]})
    return [
        ServedChange(
            model,
            role,
            tuple(r for r in before if (r.model, r.role) == (model, role)),
            tuple(r for r in after if (r.model, r.role) == (model, role)),
        )
        for model, role in keys
    ]
