"""Contender (c): inspect_ai's own multiple-choice task over the bench's questions, run with
`inspect eval` in inspect_ai's venv. The path of the prompts file is in BENCH_PROMPTS.

inspect_ai builds its own prompt from the question and the four options (its `multiple_choice`
solver) and scores with its `choice` scorer: the task as an inspect_ai user would write it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice


@task
def trip_text() -> Task:
    path = Path(os.environ["BENCH_PROMPTS"])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    samples = [
        Sample(
            id=row["id"],
            input=row["question"],
            choices=[row["options"][letter] for letter in "ABCD"],
            target=row["answer"],
        )
        for row in rows
    ]
    return Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
