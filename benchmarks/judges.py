"""An offline judge, so that a panel with judged suites runs without a network: it gives every
answer the middle of the 0-10 rubric, in the JSON a judge is asked for. Its scores measure
nothing; it is there to run the pipeline end to end (demos, tests, dry runs)."""

from __future__ import annotations

import json

from roadeval.benchmarks.registry import ANY_SUITE, BaselineCall, register_baseline

MIDPOINT = 5
PLACEHOLDER = (
    "an offline placeholder judge: it gives every answer the rubric's midpoint, so its scores "
    "measure nothing"
)


@register_baseline("midpoint-judge", suite=ANY_SUITE, placeholder=PLACEHOLDER)
def midpoint_judge(call: BaselineCall) -> str:
    return json.dumps({"score": MIDPOINT, "rationale": "offline baseline judge: the midpoint"})
