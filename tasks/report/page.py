"""The report page: its sections from the run's data, each only where the run has the data, in
one HTML file (the template, its style and its one script are package data, inlined)."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from markupsafe import Markup

from roadeval.tasks.report.blocks import Block, Section, kind_of
from roadeval.tasks.report.heatmaps import metric_maps, slice_maps
from roadeval.tasks.report.reading import ReportData
from roadeval.tasks.report.run_sections import change_blocks, cost_blocks, identity_blocks
from roadeval.tasks.report.score_sections import (
    blind_blocks,
    leaderboard_blocks,
    left_out_blocks,
)
from roadeval.tasks.report.suite_sections import (
    roadbench_blocks,
    stride_blocks,
    trip_blocks,
    v2xqa_blocks,
)
from roadeval.tasks.results.ablation import blind_tables
from roadeval.tasks.results.formats import SuiteRules, judge_placeholder
from roadeval.tasks.results.leaderboard import leaderboards
from roadeval.tasks.results.report import manifest_baselines

_TEMPLATES = "templates"


def sections(data: ReportData) -> list[Section]:
    """The report's sections in page order, those without blocks left out."""
    manifest = data.run.manifest
    placeholder = judge_placeholder(manifest) if manifest is not None else None
    rules = SuiteRules(data.suites, placeholder)
    baselines = manifest_baselines(manifest) if manifest is not None else set()
    found = leaderboards(
        data.metrics, rules, health=data.health, baselines=baselines, pairs=data.pairs
    )
    order = {b.suite: [row.model for row in b.lead.rows] for b in found}
    lead = {b.suite: b.lead for b in found}
    blind = blind_tables(data.metrics, rules, baselines=baselines)
    task_maps = [m for b in found if b.per_task is None for m in metric_maps(b.lead, rules)]
    suite_figures: list[Block] = [
        *trip_blocks(data, rules, order.get("trip", [])),
        *v2xqa_blocks(data, rules, order.get("v2xqa", [])),
        *stride_blocks(data, rules, order.get("stride", [])),
        *roadbench_blocks(lead.get("roadbench")),
    ]
    made = [
        Section(
            "leaderboards",
            "Leaderboards",
            tuple(
                [
                    *left_out_blocks(manifest),
                    *leaderboard_blocks(found, rules, manifest.intervals if manifest else None),
                ]
            ),
        ),
        Section("blind", "With vision and blind", tuple(blind_blocks(blind, rules))),
        Section(
            "slices",
            "Slices",
            tuple([*slice_maps(data.metrics, rules, order), *task_maps]),
        ),
        Section("suites", "Suite figures", tuple(suite_figures)),
        Section("cost", "Cost, tokens and health", tuple(cost_blocks(data))),
        Section(
            "changes",
            "Since the baseline run",
            tuple(change_blocks(data.changes, rules, data.run.run_id)),
        ),
        Section("run", "The run", tuple(identity_blocks(data))),
    ]
    return [section for section in made if section.blocks]


def _asset(name: str) -> str:
    return files("roadeval.tasks.report").joinpath(_TEMPLATES, name).read_text(encoding="utf-8")


def environment() -> Any:
    """The Jinja environment of the store's pages: templates and assets from package data."""
    import jinja2

    found = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: _asset(name)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    found.globals["kind_of"] = kind_of
    found.globals["style"] = Markup(_asset("report.css"))
    found.globals["script"] = Markup(_asset("sortable.js"))
    return found


def render(data: ReportData) -> str:
    """The whole page as one string: no external script, style, font or image."""
    template = environment().get_template("report.html.j2")
    return str(template.render(run=data.run, sections=sections(data)))
