"""TRIP's item quality rules as checks: option-length bias, answer balance, duplicates, schema.

Each check returns findings instead of raising, so a whole suite can be audited in one pass. An
ERROR breaks a rule of the paper (a set that has one should not be published); a WARNING is a
rule's allowed exception (the soft-pass window) or something a reviewer should look at.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy.sparse import csr_matrix
from scipy.stats import chisquare

from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.trip.taxonomy import CAPABILITIES, LETTERS, ROLES, Modality

HARD_LENGTH_RATIO = 1.25
SOFT_LENGTH_RATIO = 1.35
# Below this many items a chi-square test of A-D balance says nothing.
MIN_ITEMS_FOR_BALANCE = 20
BALANCE_P_VALUE = 0.01
NEAR_DUPLICATE_JACCARD = 0.85

# Options a writer falls back on when out of ideas; as the shortest option they void a soft pass.
PERFUNCTORY_OPTIONS = frozenset(
    {
        "none",
        "n/a",
        "na",
        "-",
        "none of the above",
        "all of the above",
        "not sure",
        "unknown",
        "以上都不是",
        "以上都对",
        "无",
    }
)


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class QualityFinding:
    """One problem found: which item (None for suite-wide findings), which check, and why."""

    item_id: str | None
    check: str
    severity: Severity
    message: str


def check_quality(items: Sequence[Item]) -> list[QualityFinding]:
    """Run every quality check over a suite's items; the suite passes with no ERROR finding."""
    findings: list[QualityFinding] = []
    for item in items:
        findings.extend(check_option_lengths(item))
        findings.extend(check_schema(item))
    findings.extend(check_answer_balance(items))
    findings.extend(check_duplicates(items))
    return findings


def option_length_ratio(options: dict[str, str]) -> float:
    """r = max(l) / min(l) over the lengths (in characters, trimmed) of the non-blank options."""
    lengths = [len(text.strip()) for text in options.values() if text.strip()]
    # Without two non-blank options there is no bias to measure; blank options are a schema error.
    return max(lengths) / min(lengths) if lengths else 1.0


def check_option_lengths(item: Item) -> list[QualityFinding]:
    """The length-bias rule: r <= 1.25, or r <= 1.35 when the answer is not the longest option
    and the shortest option is not perfunctory."""
    ratio = option_length_ratio(item.options)
    if ratio <= HARD_LENGTH_RATIO:
        return []
    lengths = {letter: len(text.strip()) for letter, text in item.options.items() if text.strip()}
    longest = max(lengths.values())
    shortest_letter = min(lengths, key=lambda letter: (lengths[letter], letter))
    answer_is_longest = lengths.get(item.reference) == longest
    shortest_perfunctory = is_perfunctory(item.options[shortest_letter])
    if ratio <= SOFT_LENGTH_RATIO and not answer_is_longest and not shortest_perfunctory:
        return [_finding(item, "option-length", Severity.WARNING, f"soft pass, r = {ratio:.3f}")]
    reasons = [f"r = {ratio:.3f} > {HARD_LENGTH_RATIO}"]
    if ratio <= SOFT_LENGTH_RATIO:
        if answer_is_longest:
            reasons.append("the correct option is the longest")
        if shortest_perfunctory:
            reasons.append(f"the shortest option {item.options[shortest_letter]!r} is perfunctory")
    return [_finding(item, "option-length", Severity.ERROR, "; ".join(reasons))]


def is_perfunctory(option: str) -> bool:
    """A filler option ("None", "N/A", "-") or one without a single letter or digit."""
    text = option.strip().casefold().rstrip(".")
    return text in PERFUNCTORY_OPTIONS or not any(char.isalnum() for char in text)


def check_schema(item: Item) -> list[QualityFinding]:
    """Taxonomy values, options, explanation, and media that match the modality."""
    problems: list[tuple[Severity, str]] = []
    for label, allowed in (("role", ROLES), ("capability", CAPABILITIES)):
        value = item.labels.get(label)
        if value not in allowed:
            names = ", ".join(allowed)
            problems.append((Severity.ERROR, f"{label} {value!r} is not one of {names}"))
    if sorted(item.options) != list(LETTERS) or item.reference not in LETTERS:
        problems.append((Severity.ERROR, "options must be exactly A-D, the answer among them"))
    else:
        blank = [letter for letter in LETTERS if not item.options[letter].strip()]
        if blank:
            problems.append((Severity.ERROR, f"blank options: {', '.join(blank)}"))
        filled = [_normalized(item.options[letter]) for letter in LETTERS if letter not in blank]
        if len(set(filled)) < len(filled):
            problems.append((Severity.ERROR, "two options have the same text"))
    if not str(item.extra.get("explanation", "")).strip():
        problems.append((Severity.WARNING, "no explanation for audit"))
    problems.extend(_media_problems(item))
    return [_finding(item, "schema", severity, message) for severity, message in problems]


def _media_problems(item: Item) -> list[tuple[Severity, str]]:
    images = sum(1 for media in item.media if media.kind is MediaKind.IMAGE)
    expected = {Modality.TEXT: 0, Modality.IMAGE: 1, Modality.POINT_CLOUD: 2}
    modality = Modality(item.labels["modality"])
    if images != expected[modality]:
        message = f"{modality.value} item has {images} images, expected {expected[modality]}"
        return [(Severity.ERROR, message)]
    return []


def check_answer_balance(items: Sequence[Item]) -> list[QualityFinding]:
    """Approximate A/B/C/D balance: a chi-square test against uniform at p < 0.01 fails."""
    if len(items) < MIN_ITEMS_FOR_BALANCE:
        return []
    counts = Counter(item.reference for item in items)
    observed = [counts.get(letter, 0) for letter in LETTERS]
    p_value = float(chisquare(observed).pvalue)
    if p_value >= BALANCE_P_VALUE:
        return []
    spread = ", ".join(f"{letter}={count}" for letter, count in zip(LETTERS, observed, strict=True))
    message = f"gold letters unbalanced ({spread}; chi-square p = {p_value:.2g})"
    return [QualityFinding(None, "answer-balance", Severity.ERROR, message)]


def check_duplicates(items: Sequence[Item]) -> list[QualityFinding]:
    """Items with the same media and the same question and options (after normalisation) are
    duplicates; the same media with near-identical text (3-gram Jaccard >= 0.85) is flagged."""
    found: list[QualityFinding] = []
    by_media: dict[tuple[str, ...], list[Item]] = {}
    for item in items:
        by_media.setdefault(tuple(media.sha256 for media in item.media), []).append(item)
    for group in by_media.values():
        texts = [_item_text(item) for item in group]
        similarity = _jaccard_matrix([_trigrams(text) for text in texts])
        for first, second in np.argwhere(np.triu(similarity >= NEAR_DUPLICATE_JACCARD, k=1)):
            earlier, later = group[first], group[second]
            if texts[first] == texts[second]:
                message = f"same question and options as {earlier.item_id!r}"
                found.append(_finding(later, "duplicate", Severity.ERROR, message))
            else:
                score = similarity[first, second]
                message = f"near-duplicate of {earlier.item_id!r} (Jaccard {score:.2f})"
                found.append(_finding(later, "duplicate", Severity.WARNING, message))
    return found


def _item_text(item: Item) -> str:
    options = sorted(_normalized(text) for text in item.options.values())
    return " | ".join([_normalized(item.question), *options])


def _normalized(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", folded)).strip()


def _trigrams(text: str) -> set[str]:
    return {text[index : index + 3] for index in range(max(len(text) - 2, 1))}


def _jaccard_matrix(gram_sets: list[set[str]]) -> np.ndarray:
    """Pairwise Jaccard similarity of sets, through one sparse product (fast for ~1000 items)."""
    vocabulary: dict[str, int] = {}
    rows: list[int] = []
    columns: list[int] = []
    for row, grams in enumerate(gram_sets):
        for gram in grams:
            rows.append(row)
            columns.append(vocabulary.setdefault(gram, len(vocabulary)))
    shape = (len(gram_sets), max(len(vocabulary), 1))
    incidence = csr_matrix((np.ones(len(rows)), (rows, columns)), shape=shape)
    shared = (incidence @ incidence.T).toarray()
    sizes = np.diag(shared)
    union = sizes[:, None] + sizes[None, :] - shared
    return shared / np.maximum(union, 1)


def _finding(item: Item, check: str, severity: Severity, message: str) -> QualityFinding:
    return QualityFinding(item.item_id, check, severity, message)
