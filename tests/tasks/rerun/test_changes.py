"""Item changes from content and prompt hashes: added, removed, changed (prompt or reference,
with the fields), unchanged."""

from __future__ import annotations

from roadeval.benchmarks.item import AnswerKind, Item
from roadeval.benchmarks.messages import user_message
from roadeval.tasks.rerun.changes import LedgerEntry, item_changes, ledger_of, prompt_hash
from roadeval.tasks.results.items import item_row


def _item(item_id: str, question: str = "Q?", reference: str = "A") -> Item:
    return Item(
        suite="s",
        suite_version="1",
        item_id=item_id,
        task="t",
        question=question,
        options={"A": "x", "B": "y"},
        answer_kind=AnswerKind.CHOICE,
        reference=reference,
    )


def _entry(item: Item, prompt: str | None = None) -> LedgerEntry:
    return LedgerEntry(item.item_id, item.task, item.content_hash, prompt or item.question)


def test_each_kind_of_change_is_named_with_its_fields() -> None:
    old = {i.item_id: i for i in [_item("same"), _item("gold"), _item("text"), _item("gone")]}
    new = [_item("same"), _item("gold", reference="B"), _item("text", question="Q2?"), _item("new")]
    old_ledger = {i.item_id: _entry(i) for i in old.values()}
    rows = item_changes(
        "r2",
        "r1",
        "s",
        [_entry(i) for i in new],
        old_ledger,
        {i.item_id: item_row(i) for i in new},
        {i.item_id: item_row(i) for i in old.values()},
    )
    got = {row.item_id: (row.kind, row.what, row.fields) for row in rows}
    assert got == {
        "same": ("unchanged", None, None),
        "gold": ("changed", "reference", "reference"),
        "text": ("changed", "prompt", "question"),
        "new": ("added", None, None),
        "gone": ("removed", None, None),
    }
    gone = next(row for row in rows if row.item_id == "gone")
    assert gone.old_content_hash == old["gone"].content_hash and gone.new_content_hash is None
    # A run's ledger, read back from its rows, leaves its removed items out.
    assert set(ledger_of(rows)) == {"same", "gold", "text", "new"}


def test_a_new_drawing_alone_is_a_prompt_change_of_the_render() -> None:
    item = _item("drawn")
    [row] = item_changes(
        "r2", "r1", "s", [_entry(item, "new-view")], {"drawn": _entry(item, "old-view")}, {}, {}
    )
    assert (row.kind, row.what, row.fields) == ("changed", "prompt", "render")


def test_without_a_baseline_every_item_is_added() -> None:
    rows = item_changes("r1", None, "s", [_entry(_item("a"))], {}, {}, {})
    assert [(row.kind, row.baseline_run_id) for row in rows] == [("added", None)]


def test_a_baseline_without_prompt_hashes_is_judged_by_the_fields() -> None:
    old, new = _item("g"), _item("g", reference="B")
    before = LedgerEntry("g", "t", old.content_hash, None)
    [row] = item_changes(
        "r2", "r1", "s", [_entry(new)], {"g": before}, {"g": item_row(new)}, {"g": item_row(old)}
    )
    assert (row.what, row.fields) == ("reference", "reference")


def test_the_prompt_hash_is_of_the_messages_as_sent() -> None:
    assert prompt_hash([user_message("a")]) == prompt_hash([user_message("a")])
    assert prompt_hash([user_message("a")]) != prompt_hash([user_message("b")])
