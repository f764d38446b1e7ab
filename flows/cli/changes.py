"""The commands that compare runs: `changes` (a run against its baseline run) and `compare`
(any two runs of one panel; `diff` is its former name). Both print the same: each suite x
model's headline metrics paired over the unchanged items (`rerun.compare`), then items per
suite and kind of change, score changes and flipped verdicts per suite x model, and the metrics
that moved (`rerun.diff`); `changes RUN` and `compare BASELINE RUN` print the same."""

from __future__ import annotations

import json
import sys
from contextlib import closing
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from roadeval.flows.cli.app import app, consoles, fail, printable, reading_store
from roadeval.flows.cli.store import StoreOption, open_present

if TYPE_CHECKING:
    from roadeval.flows.rerun.compare import Compared
    from roadeval.flows.rerun.diff import RunDiff
    from roadeval.storage.store import Store

AllOption = Annotated[
    bool, typer.Option("--all", help="list every metric that moved, not only the first ones")
]


class CompareFormat(StrEnum):
    table = "table"
    json = "json"


FormatOption = Annotated[
    CompareFormat, typer.Option("--format", "-f", help="tables, or one JSON object")
]


@app.command()
def changes(
    run: Annotated[
        str | None, typer.Argument(help="the run (default: the latest run in the store)")
    ] = None,
    store: StoreOption = None,
    show_all: AllOption = False,
    format: FormatOption = CompareFormat.table,
) -> None:
    """What a run changed against its baseline run: its headline metrics paired over the
    unchanged items, items added, removed and changed, verdicts that flipped, metrics that
    moved (`compare BASELINE RUN` prints the same)."""
    from roadeval.flows.rerun.compare import compared
    from roadeval.flows.rerun.diff import NoBaseline, landed

    with reading_store():
        opened = open_present(store)
        try:
            found = landed(opened, run if run is not None else _latest_run(opened))
        except NoBaseline as exc:
            # Not an error: the run was its panel's first, there is nothing to show.
            consoles.out.print(printable(str(exc)))
            return
        result = compared(opened, found.run_a, found.run_b, found)
    print_compared(result, show_all, format)


def compare(
    run_a: Annotated[str, typer.Argument(help="the run compared with (the older, say)")],
    run_b: Annotated[str, typer.Argument(help="the run compared, of the same panel")],
    store: StoreOption = None,
    show_all: AllOption = False,
    format: FormatOption = CompareFormat.table,
) -> None:
    """Compare two runs of one panel: per suite x model x headline metric the two values and
    their paired difference over the items both scored with unchanged inputs (its 95% interval
    and whether it is beyond noise), the items that regressed and improved, then RUN_B's items,
    scores and metrics against RUN_A's as a rerun is compared with its baseline run."""
    from roadeval.flows.rerun.compare import compared

    with reading_store():
        result = compared(open_present(store), run_a, run_b)
    print_compared(result, show_all, format)


app.command("compare")(compare)
# `diff` was the command before `compare` grew out of it: the same command under its old name.
app.command("diff", help="The same as `compare` (its former name).")(compare)


def print_compared(result: Compared, show_all: bool, format: CompareFormat) -> None:
    if format is CompareFormat.json:
        from roadeval.flows.rerun.compare import as_json

        sys.stdout.write(json.dumps(as_json(result), indent=2, ensure_ascii=False) + "\n")
        return
    print_headlines(result, show_all)
    print_diff(result.diff, show_all)


def print_headlines(result: Compared, show_all: bool) -> None:
    """The paired headline rows, one table; then per suite x model the items that regressed
    and improved (the first ones, unless `show_all`)."""
    from roadeval.flows.rerun.diff import header, more_text
    from roadeval.tasks.rerun.changes import CHANGED_SHOWN
    from roadeval.tasks.results.compare_text import (
        difference_text,
        items_text,
        legend,
        metric_text,
        verdict,
    )

    out = consoles.out
    rules = result.rules
    rows = [row for _, m in sorted(result.models.items()) for row in m.rows]
    out.print(printable(header(result.diff)))
    problems = [
        f"{suite} x {model}: not compared: {found.problem}"
        for (suite, model), found in sorted(result.models.items())
        if found.problem
    ]
    if not rows:
        out.print("headline metrics: no item scored by both runs with unchanged inputs")
        for line in problems:
            out.print(printable(line))
        return
    a, b = result.diff.run_a, result.diff.run_b
    table = Table(
        "suite",
        "task",
        "model",
        "metric",
        "A",
        "B",
        "B - A [95% CI]",
        "items",
        "beyond noise",
        "regressed",
        "improved",
        title="headline metrics, paired over the items both runs scored unchanged",
        title_justify="left",
        caption=legend(f"A ({a})", f"B ({b})"),
        caption_justify="left",
    )
    for row in rows:
        way = verdict(row, rules)
        style = {"better": "green", "worse": "red"}.get(way, "")
        table.add_row(
            *map(printable, (row.suite, row.task, row.model, metric_text(row, rules))),
            f"{row.baseline_value:.4g}",
            f"{row.new_value:.4g}",
            difference_text(row),
            items_text(row),
            f"[{style}]{way}[/]" if style else way,
            str(row.regressed),
            str(row.improved),
        )
    out.print(table)
    for line in problems:
        out.print(printable(line))
    for (suite, model), found in sorted(result.models.items()):
        for what, ids in (("regressed", found.regressed), ("improved", found.improved)):
            if not ids:
                continue
            shown = ids if show_all else ids[:CHANGED_SHOWN]
            listed = ", ".join(shown)
            out.print(printable(f"{suite} x {model}: {len(ids)} items {what}: {listed}"))
            if len(ids) > len(shown):
                out.print(printable(more_text(len(ids) - len(shown))))


def _latest_run(store: Store) -> str:
    """The run started last in the store (whatever its status)."""
    from roadeval.storage.catalog import connect

    with closing(connect(store, tables=["run_events"])) as con:
        row = con.execute(
            "select run_id from runs order by started_at desc, run_id desc"
        ).fetchone()
    if row is None:
        fail(f"no run in the store {store.uri}: nothing to show the changes of")
    return str(row[0])


def print_diff(diff: RunDiff, show_all: bool = False) -> None:
    """The diff as rich tables, under the header `print_headlines` printed: items, score
    changes, the items that changed by id, the metrics that moved (each marked better or worse
    by its direction)."""
    from roadeval.flows.rerun.diff import (
        KINDS,
        METRIC_LIMIT,
        change_text,
        changed_items,
        diff_rules,
        item_counts,
        metric_texts,
        more_text,
        moved_metrics,
        score_lines,
    )
    from roadeval.tasks.rerun.changes import CHANGED_SHOWN
    from roadeval.tasks.results.manifest import shown_as

    out = consoles.out
    items = Table("suite", *KINDS, title="items", title_justify="left")
    for suite, counts in item_counts(diff).items():
        items.add_row(printable(suite), *(str(counts[kind]) for kind in KINDS))
    out.print(items)
    scores = score_lines(diff)
    if not scores:
        out.print("scores: none changed")
    else:
        columns = ("suite", "model", "flipped", "1 to 0", "0 to 1", "score changes", "items")
        table = Table(*columns, title="score changes", title_justify="left")
        for s in scores:
            numbers = (s.flipped, s.lost, s.gained, s.changes, s.items)
            table.add_row(printable(s.suite), printable(s.model), *map(str, numbers))
        out.print(table)
    changed = changed_items(diff)
    if changed:
        listed = changed if show_all else changed[:CHANGED_SHOWN]
        table = Table(
            "suite", "item", "change", title=f"items changed: {len(changed)}", title_justify="left"
        )
        for item in listed:
            table.add_row(
                printable(item.suite), printable(item.item_id), printable(change_text(item))
            )
        out.print(table)
        if len(changed) > len(listed):
            out.print(printable(more_text(len(changed) - len(listed))))
    print_served(diff)
    moved = moved_metrics(diff)
    if not moved:
        out.print("metrics moved: none")
        return
    rules = diff_rules(diff)
    shown = moved if show_all else moved[:METRIC_LIMIT]
    headings = (
        "suite",
        "task",
        "model",
        "metric",
        "slice",
        "baseline",
        "new",
        "delta",
        "which way",
    )
    table = Table(*headings, title=f"metrics moved: {len(moved)}", title_justify="left")
    for row in shown:
        where, old, new, delta, verdict = metric_texts(row, rules)
        names = (row.suite, row.task, shown_as(row.model, row.variant), row.metric, where)
        style = {"better": "green", "worse": "red"}.get(verdict, "")
        table.add_row(
            *map(printable, names), old, new, delta, f"[{style}]{verdict}[/]" if style else verdict
        )
    out.print(table)
    if len(moved) > len(shown):
        out.print(printable(more_text(len(moved) - len(shown))))


def print_served(diff: RunDiff) -> None:
    """What the providers said served each model's answers in both runs, where they said."""
    from roadeval.flows.rerun.diff import served_cells, served_shown

    served = served_shown(diff)
    if not served:
        return
    changed = sum(change.changed for change in served)
    headings = (
        "model",
        "role",
        f"served model in {diff.run_a}",
        "its system_fingerprint",
        f"served model in {diff.run_b}",
        "its system_fingerprint",
        "what served",
    )
    table = Table(
        *headings,
        title=f"what served the answers: changed for {changed} of {len(served)}",
        title_justify="left",
        caption="as each reply named it (bought and reused answers alike); a change with "
        "unchanged items and model string points at the provider's model, not noise",
    )
    for change in served:
        cells = served_cells(change)
        verdict = f"[red]{cells[-1]}[/]" if change.changed else cells[-1]
        table.add_row(printable(change.model), change.role, *map(printable, cells[:-1]), verdict)
    consoles.out.print(table)
