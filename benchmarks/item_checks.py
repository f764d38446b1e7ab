"""Item checks every suite's `roadeval qc` runs the same way: repeated ids, a question asked twice
of the same media, options that cannot be told apart; and the report of a suite that declares
no rules of its own (these checks over what its loader accepts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from roadeval.benchmarks.audit import (
    FORMAT,
    IDS,
    REPEATS,
    Audit,
    AuditedSuite,
    Classifier,
    Rule,
    suite_rules,
)
from roadeval.benchmarks.errors import BadItemPolicy
from roadeval.benchmarks.item import Item
from roadeval.benchmarks.quality_report import QualityReport

# What a model is shown for an item, as far as telling two items apart goes.
ShownKey = Callable[[Item], Hashable]


def normalized_text(text: str) -> str:
    """Text folded for comparison: width and case (NFKC, casefold), punctuation and spacing."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", folded)).strip()


def shown_input(item: Item) -> tuple[Hashable, ...]:
    """The task, the question (normalised) and the media's digests, in order."""
    return (item.task, normalized_text(item.question), tuple(m.sha256 for m in item.media))


def check_ids(audit: Audit) -> None:
    """Items whose id an earlier item has (a loader that refuses repeats leaves none)."""
    seen: set[str] = set()
    for item in audit.items:
        if item.item_id in seen:
            audit.add(IDS, item, "the id of an earlier item", field="id")
        seen.add(item.item_id)


def check_repeated_questions(audit: Audit, shown: ShownKey = shown_input) -> None:
    """A question asked again of the same media (`shown`: what the model sees, options aside):
    with the same options it fails (with another gold, the two contradict each other); with
    other options it warns, for a reviewer. Each repeat is reported against the first item."""
    groups: dict[Hashable, list[Item]] = {}
    for item in audit.items:
        groups.setdefault(shown(item), []).append(item)
    for group in groups.values():
        if len(group) < 2:
            continue
        first_with: dict[tuple[str, ...], Item] = {}
        for item in group:
            options = tuple(sorted(normalized_text(text) for text in item.options.values()))
            earlier = first_with.setdefault(options, item)
            if earlier is not item:
                audit.add(REPEATS, item, _repeat_message(item, earlier), field="question")
            elif group[0] is not item:
                message = f"the same question and media as {group[0].item_id!r}, other options"
                audit.warn(REPEATS, item, message, field="question")


def _repeat_message(item: Item, earlier: Item) -> str:
    what = "question, options and media" if item.options else "question and media"
    if item.reference == earlier.reference:
        return f"asks again what {earlier.item_id!r} asks (the same {what})"
    return (
        f"the same {what} as {earlier.item_id!r}, with another gold: "
        f"{short(item.reference)} here, {short(earlier.reference)} there"
    )


def option_problems(options: Mapping[str, str]) -> list[str]:
    """Why a model could not tell the options apart: blank ones, and texts that repeat
    (normalised)."""
    problems: list[str] = []
    blank = [key for key, text in options.items() if not text.strip()]
    if blank:
        problems.append(f"blank option(s): {', '.join(blank)}")
    first_of: dict[str, str] = {}
    for key, text in options.items():
        if key in blank:
            continue
        earlier = first_of.setdefault(normalized_text(text), key)
        if earlier != key:
            problems.append(f"options {earlier} and {key} have the same text ({text.strip()!r})")
    return problems


def short(value: Any, limit: int = 60) -> str:
    """A gold or a field's value for a message, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


STANDARD_RULES = suite_rules("what the suite's loader accepts", "item ids")


def begin_audit(
    suite: AuditedSuite,
    source: Path,
    rules: Sequence[Rule],
    rule_of_field: Mapping[str, str],
    *,
    classify: Classifier | None = None,
    fallback: str = FORMAT,
    shown_as: Path | None = None,
) -> Audit:
    """The audit of `source` under `rules`: the suite's load of it with bad rows skipped, each
    refused row filed by its field (`Audit.refused`), and repeated ids found. `shown_as`: the
    path the report names (a source's main file), else `source`."""
    loaded = suite.load(source, on_bad_item=BadItemPolicy.SKIP)
    audit = Audit(suite.name, shown_as or source, rules, loaded, fallback=fallback)
    audit.refused(rule_of_field, classify)
    check_ids(audit)
    return audit


def standard_report(suite: AuditedSuite, source: Path) -> QualityReport:
    """The checks of this module over what a suite's loader accepts from `source`: a suite with
    no rules of its own still gets its refused rows, repeated ids and repeated questions."""
    audit = begin_audit(suite, source, STANDARD_RULES, {"id": IDS})
    check_repeated_questions(audit)
    return audit.report()
