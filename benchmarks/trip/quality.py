"""TRIP's item quality rules as checks: option-length bias, answer balance, duplicates, schema.

Each check returns findings instead of raising, so a whole suite can be audited in one pass. An
ERROR breaks a rule of the paper (a set that has one should not be published); a WARNING is a
rule's allowed exception (the soft-pass window) or something a reviewer should look at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from roadeval.benchmarks.item import Item, MediaKind
from roadeval.benchmarks.item_checks import normalized_text
from roadeval.benchmarks.trip.taxonomy import CAPABILITIES, LETTERS, ROLES, Modality

HARD_LENGTH_RATIO = 1.25
SOFT_LENGTH_RATIO = 1.35
# Below this many items a chi-square test of A-D balance says nothing.
MIN_ITEMS_FOR_BALANCE = 20
BALANCE_P_VALUE = 0.01
# "Approximate" balance: each gold letter's share within 25% +/- 5 percentage points.
BALANCE_SHARE_TOLERANCE = 0.05
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
        filled = [
            normalized_text(item.options[letter]) for letter in LETTERS if letter not in blank
        ]
        if len(set(filled)) < len(filled):
            problems.append((Severity.ERROR, "two options have the same text"))
    if not str(item.extra.get("explanation", "")).strip():
        problems.append((Severity.WARNING, "no explanation for audit"))
    problems.extend(_media_problems(item))
    return [_finding(item, "schema", severity, message) for severity, message in problems]


def _media_problems(item: Item) -> list[tuple[Severity, str]]:
    """What the modality shows: a text item nothing, an image item one image, a point-cloud
    item either its scan (the render stage draws its two views) or its two views, not both."""
    images = sum(1 for media in item.media if media.kind is MediaKind.IMAGE)
    scans = sum(1 for media in item.media if media.kind is MediaKind.POINT_CLOUD)
    modality = Modality(item.labels["modality"])
    shown = {
        Modality.TEXT: [(0, 0)],
        Modality.IMAGE: [(1, 0)],
        Modality.POINT_CLOUD: [(0, 1), (2, 0)],
    }
    if (images, scans) in shown[modality]:
        return []
    expected = " or ".join(f"{i} images and {n} scans" for i, n in shown[modality])
    message = f"{modality.value} item has {images} images and {scans} scans, expected {expected}"
    return [(Severity.ERROR, message)]


def check_answer_balance(items: Sequence[Item]) -> list[QualityFinding]:
    """Approximate A/B/C/D balance, judged on sets of 20 items or more. The tolerance: every gold
    letter's share within 25% +/- 5 percentage points. Off by more, and a chi-square test against
    uniform rejecting at p < 0.01 as well, fails (the skew is both material and not chance); only
    one of the two is a warning (a small set off by chance, or a large one skewed a little)."""
    if len(items) < MIN_ITEMS_FOR_BALANCE:
        return []
    # scipy only for `roadeval qc`: a run imports this module with its suite and never checks.
    from scipy.stats import chisquare

    counts = Counter(item.reference for item in items)
    observed = [counts.get(letter, 0) for letter in LETTERS]
    p_value = float(chisquare(observed).pvalue)
    worst = max(abs(count / len(items) - 1 / len(LETTERS)) for count in observed)
    significant = p_value < BALANCE_P_VALUE
    material = worst > BALANCE_SHARE_TOLERANCE
    if not significant and not material:
        return []
    spread = ", ".join(f"{letter}={count}" for letter, count in zip(LETTERS, observed, strict=True))
    message = (
        f"gold letters unbalanced ({spread}; a share is {100 * worst:.1f} points off 25%, "
        f"tolerance {100 * BALANCE_SHARE_TOLERANCE:.0f}; chi-square p = {p_value:.2g})"
    )
    severity = Severity.ERROR if significant and material else Severity.WARNING
    return [QualityFinding(None, "answer-balance", severity, message)]


def check_duplicates(items: Sequence[Item]) -> list[QualityFinding]:
    """Screen items that show the same media (none, for text items). The same question and
    options after normalisation (case, width, punctuation and spacing folded; options in any
    order) is a duplicate; near-identical text (3-gram Jaccard >= 0.85), or the same question with
    other options, is flagged for a reviewer."""
    found: list[QualityFinding] = []
    by_media: dict[tuple[str, ...], list[Item]] = {}
    for item in items:
        by_media.setdefault(tuple(media.sha256 for media in item.media), []).append(item)
    for group in by_media.values():
        texts = [_item_text(item) for item in group]
        similarity = _jaccard_matrix([_trigrams(text) for text in texts])
        flagged: set[int] = set()
        for first, second in np.argwhere(np.triu(similarity >= NEAR_DUPLICATE_JACCARD, k=1)):
            if second in flagged:
                continue  # reported against the first item it repeats
            flagged.add(int(second))
            earlier, later = group[first], group[second]
            if texts[first] == texts[second]:
                message = f"same question and options as {earlier.item_id!r}"
                found.append(_finding(later, "duplicate", Severity.ERROR, message))
            else:
                score = similarity[first, second]
                message = f"near-duplicate of {earlier.item_id!r} (Jaccard {score:.2f})"
                found.append(_finding(later, "duplicate", Severity.WARNING, message))
        found.extend(_same_questions(group, flagged))
    return found


def _same_questions(group: list[Item], flagged: set[int]) -> list[QualityFinding]:
    """Items of one media group that repeat an earlier item's question with other options."""
    found: list[QualityFinding] = []
    first_with: dict[str, Item] = {}
    for index, item in enumerate(group):
        question = normalized_text(item.question)
        earlier = first_with.setdefault(question, item)
        if earlier is not item and index not in flagged:
            message = f"same question as {earlier.item_id!r}, other options"
            found.append(_finding(item, "duplicate", Severity.WARNING, message))
    return found


def _item_text(item: Item) -> str:
    options = sorted(normalized_text(text) for text in item.options.values())
    return " | ".join([normalized_text(item.question), *options])


def _trigrams(text: str) -> set[str]:
    return {text[index : index + 3] for index in range(max(len(text) - 2, 1))}


def _jaccard_matrix(gram_sets: list[set[str]]) -> np.ndarray:
    """Pairwise Jaccard similarity of sets, through one sparse product (fast for ~1000 items)."""
    from scipy.sparse import csr_matrix

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
