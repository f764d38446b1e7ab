"""TRIP's quality rules: length bias with its soft-pass window, balance, duplicates, schema."""

from __future__ import annotations

from itertools import cycle, islice

import pytest

from roadeval.benchmarks.item import AnswerKind, Item, Media, MediaKind
from roadeval.benchmarks.trip.quality import (
    Severity,
    check_answer_balance,
    check_duplicates,
    check_option_lengths,
    check_quality,
    check_schema,
    option_length_ratio,
)


def _item(options: dict[str, str], answer: str = "A", item_id: str = "x", **fields) -> Item:
    labels = {
        "role": "vehicle",
        "subject": "s",
        "knowledge_point": "k",
        "capability": "knowledge memory",
        "difficulty": "easy",
        "modality": "text",
    }
    labels.update(fields.pop("labels", {}))
    return Item(
        suite="trip",
        suite_version="t",
        item_id=item_id,
        task="mcq",
        question=fields.pop("question", "Which one?"),
        options=options,
        answer_kind=AnswerKind.CHOICE,
        reference=answer,
        labels=labels,
        extra={"explanation": fields.pop("explanation", "because")},
        media=fields.pop("media", ()),
    )


def _checks(item: Item) -> list[tuple[str, Severity]]:
    return [(finding.check, finding.severity) for finding in check_option_lengths(item)]


def test_ratio_is_over_non_blank_trimmed_lengths() -> None:
    assert option_length_ratio({"A": "abcd ", "B": "abcde", "C": "", "D": "abcd"}) == 1.25


def test_balanced_lengths_pass_and_a_biased_set_fails() -> None:
    assert _checks(_item({"A": "20 m", "B": "40 m", "C": "60 m", "D": "180 m"})) == []
    biased = _item(
        {
            "A": "Keep steering control while braking",
            "B": "Stop sooner",
            "C": "Save pads",
            "D": "Lock wheels",
        }
    )
    assert _checks(biased) == [("option-length", Severity.ERROR)]


def test_soft_pass_window_needs_a_short_answer_and_a_real_shortest_option() -> None:
    # r = 13 / 10 = 1.3: inside the soft window.
    options = {"A": "abcdefghij", "B": "abcdefghijk", "C": "abcdefghijkl", "D": "abcdefghijklm"}
    assert _checks(_item(options, answer="A")) == [("option-length", Severity.WARNING)]
    longest_is_answer = check_option_lengths(_item(options, answer="D"))
    assert longest_is_answer[0].severity is Severity.ERROR
    assert "correct option is the longest" in longest_is_answer[0].message
    filler = {"A": "None.", "B": "abcdef", "C": "abcdef", "D": "abcdef"}  # r = 6 / 5 = 1.2
    assert _checks(_item(filler, answer="B")) == []
    perfunctory = {"A": "N/A", "B": "abcd", "C": "abcd", "D": "abc"}  # r = 4 / 3
    found = check_option_lengths(_item(perfunctory, answer="C"))
    assert found[0].severity is Severity.ERROR and "perfunctory" in found[0].message
    assert _checks(_item({"A": "abc", "B": "abcde", "C": "abcd", "D": "abcd"})) == [
        ("option-length", Severity.ERROR)  # r = 1.67, beyond the soft window
    ]


def test_answer_balance_flags_a_skewed_set_only() -> None:
    options = {"A": "a", "B": "b", "C": "c", "D": "d"}
    even = [_item(options, letter, f"e{n}") for n, letter in enumerate(islice(cycle("ABCD"), 40))]
    assert check_answer_balance(even) == []
    skewed = [_item(options, "A" if n < 25 else "BCD"[n % 3], f"s{n}") for n in range(40)]
    (finding,) = check_answer_balance(skewed)
    assert finding.item_id is None and finding.severity is Severity.ERROR
    assert "A=25" in finding.message
    assert check_answer_balance(skewed[:10]) == []  # too few items to test


def test_duplicates_and_near_duplicates_are_screened() -> None:
    options = {"A": "20 m", "B": "40 m", "C": "60 m", "D": "80 m"}
    first = _item(options, question="How far does the car travel in 2 s at 10 m/s?", item_id="a")
    same = _item(
        dict(reversed(options.items())),
        question="How far does the car travel in 2 s at 10 m/s ?",
        item_id="b",
    )
    near = _item(options, question="How far does a car travel in 2 s at 10 m/s?", item_id="c")
    other = _item(options, question="What is the headway at 1800 veh/h?", item_id="d")
    found = {(f.item_id, f.severity) for f in check_duplicates([first, same, near, other])}
    assert ("b", Severity.ERROR) in found
    assert ("c", Severity.WARNING) in found
    assert not any(item_id == "d" for item_id, _ in found)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"labels": {"role": "pilot"}}, "role 'pilot'"),
        ({"labels": {"capability": "guessing"}}, "capability 'guessing'"),
        ({"labels": {"modality": "image"}}, "image item has 0 images"),
        ({"explanation": " "}, "no explanation"),
    ],
)
def test_schema_findings(changes: dict, message: str) -> None:
    options = {"A": "20 m", "B": "40 m", "C": "60 m", "D": "80 m"}
    found = check_schema(_item(options, **changes))
    assert [f.check for f in found] == ["schema"] and message in found[0].message


def _media(kind: MediaKind, name: str) -> Media:
    return Media(kind=kind, path=name, sha256=name)


@pytest.mark.parametrize(
    ("kinds", "passes"),
    [
        ((MediaKind.POINT_CLOUD,), True),  # the scan: the render stage draws its two views
        ((MediaKind.IMAGE, MediaKind.IMAGE), True),  # two views rendered elsewhere
        ((MediaKind.IMAGE, MediaKind.IMAGE, MediaKind.POINT_CLOUD), False),  # both
        ((MediaKind.IMAGE,), False),
        ((), False),
    ],
)
def test_a_point_cloud_item_shows_its_scan_or_its_two_views(
    kinds: tuple[MediaKind, ...], passes: bool
) -> None:
    options = {"A": "20 m", "B": "40 m", "C": "60 m", "D": "80 m"}
    media = tuple(_media(kind, f"m{n}") for n, kind in enumerate(kinds))
    found = check_schema(_item(options, labels={"modality": "point cloud"}, media=media))
    assert (found == []) is passes, found
    if not passes:
        assert "expected 0 images and 1 scans or 2 images and 0 scans" in found[0].message


def test_schema_flags_blank_and_repeated_options() -> None:
    blank = check_schema(_item({"A": "20 m", "B": " ", "C": "60 m", "D": "80 m"}))
    assert [f.message for f in blank] == ["blank options: B"]
    repeated = check_schema(_item({"A": "20 m", "B": "20 M", "C": "60 m", "D": "80 m"}))
    assert [f.message for f in repeated] == ["two options have the same text"]


def test_check_quality_collects_every_check() -> None:
    options = {"A": "20 m", "B": "40 m", "C": "60 m", "D": "80 m"}
    clean = [
        _item(options, "ABCD"[n % 4], f"i{n}", question=f"Question number {n}?") for n in range(4)
    ]
    assert check_quality(clean) == []
    biased = _item(
        {"A": "a much longer correct answer", "B": "no", "C": "yes", "D": "maybe"}, item_id="bias"
    )
    assert [f.item_id for f in check_quality([*clean, biased])] == ["bias"]
