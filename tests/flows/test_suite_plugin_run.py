"""A suite from another distribution: installed by its `roadeval.suites` entry point alone (no
edit to roadeval), found by `roadeval suites`, and run by `roadeval run` with its own baseline,
its scores landed in the store."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml

from support.cli_process import run_cli
from support.plugin_dist import install_plugin
from support.trip_panel import query_csv

pytestmark = pytest.mark.usefixtures("inline")

# Neither the suite nor its baseline is registered by decorator: the entry point's load
# registers the suite, and importing its module registers the baseline.
QUIZ_MODULE = '''
    """Two-option questions, answered with a letter: a suite roadeval has never heard of."""

    from __future__ import annotations

    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any, ClassVar

    from roadeval import (
        AnswerKind,
        BadItemPolicy,
        BaselineCall,
        ImageRef,
        Item,
        ModelOutput,
        ParsedAnswer,
        ParseStatus,
        Suite,
        register_baseline,
    )
    from roadeval.benchmarks.loading import LoadReport, collect, read_jsonl
    from roadeval.benchmarks.messages import Message, user_message


    class QuizSuite(Suite):
        name: ClassVar[str] = "plugin-quiz"
        prompt_version: ClassVar[str] = "plugin-quiz-1"

        def load(
            self, source: Path, *, on_bad_item: BadItemPolicy = BadItemPolicy.ERROR
        ) -> LoadReport:
            report = LoadReport()

            def build(line: int, row: dict[str, Any]) -> Item:
                return Item(
                    suite=self.name,
                    suite_version="quiz-1",
                    item_id=row["id"],
                    task="quiz",
                    question=row["question"],
                    options={"A": "yes", "B": "no"},
                    answer_kind=AnswerKind.CHOICE,
                    reference=row["answer"],
                )

            fields = ("id", "question", "answer")
            rows = read_jsonl(source)
            collect(rows, build, on_bad_item, report, file=source, known_fields=fields)
            return report

        def prompt(self, item: Item, images: Sequence[ImageRef]) -> list[Message]:
            return [user_message(f"{item.question} A. yes B. no", images)]

        def parse(self, item: Item, output: ModelOutput) -> ParsedAnswer:
            letter = output.text.strip()
            if letter in ("A", "B"):
                return ParsedAnswer(ParseStatus.OK, letter, "letter")
            return ParsedAnswer(ParseStatus.UNPARSED, None, "no-letter")

        def score(self, item: Item, parsed: ParsedAnswer) -> dict[str, float]:
            return {"correct": 1.0 if parsed.value == item.reference else 0.0}


    @register_baseline("always-b", suite=QuizSuite.name)
    def always_b(call: BaselineCall) -> str:
        return "B"
'''

ITEMS = [
    {"id": "q1", "question": "Is a red light a stop?", "answer": "A"},
    {"id": "q2", "question": "Is a one-way street two-way?", "answer": "B"},
    {"id": "q3", "question": "Does a zebra crossing give way to cars?", "answer": "B"},
]


def _env(plugin: Path) -> dict[str, str]:
    """The CLI's environment: the plugin installed through PYTHONPATH, nothing else."""
    return {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(plugin), os.environ.get("PYTHONPATH")]))
    }


def test_a_suite_installed_by_entry_point_runs_with_its_baseline(tmp_path: Path) -> None:
    plugin = install_plugin(
        tmp_path / "site",
        "roadeval-quiz",
        {"roadeval_quiz": QUIZ_MODULE},
        {"roadeval.suites": {"plugin-quiz": "roadeval_quiz:QuizSuite"}},
    )
    env = _env(plugin)
    source = tmp_path / "quiz.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ITEMS))
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        yaml.safe_dump(
            {
                "name": "plugin",
                "suites": [{"name": "plugin-quiz", "source": str(source)}],
                "models": [{"model": "roadeval/always-b"}],
                "scoring": {"engine": "local"},
                "render": {"engine": "local"},
            }
        )
    )

    listed = run_cli(["suites"], tmp_path / "suites", env)
    assert listed.process.returncode == 0, listed.stderr
    assert "plugin-quiz" in listed.stdout and "always-b@plugin-quiz" in listed.stdout

    store = str(tmp_path / "store")
    run = run_cli(["run", "--panel", str(panel), "--store", store], tmp_path / "run", env)
    assert run.process.returncode == 0, run.stdout + run.stderr

    rows = query_csv(
        store,
        "select item_id, value from scores where suite = 'plugin-quiz' "
        "and model = 'roadeval/always-b' and metric = 'correct' order by item_id",
    )
    assert rows[1:] == ["q1,0.0", "q2,1.0", "q3,1.0"]
    [orchestrator] = query_csv(store, "select orchestrator, status from runs")[1:]
    assert orchestrator == "inline,finished"
