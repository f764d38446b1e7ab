"""docs/scheduling.md's alarms section says what Prefect and a receiver get: its automation is
one `prefect automation create` takes (Prefect's own model of it), and its JSON example has
the alarm's fields, no more and no fewer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from roadeval.flows.run.alarm import Alarm, DriftFlag

DOC = Path(__file__).resolve().parents[2] / "docs" / "scheduling.md"


def _block(kind: str, after: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(rf"```{kind}\n(.*?)```", text[text.index(after) :], re.S)
    assert found, f"no {kind} block after {after!r} in {DOC}"
    return found.group(1)


def test_the_drift_automation_is_one_prefect_takes() -> None:
    from prefect.events.schemas.automations import AutomationCore, EventTrigger

    data = yaml.safe_load(_block("yaml", "### As Prefect events, for an automation"))
    automation = AutomationCore.model_validate(data)
    trigger = automation.trigger
    assert isinstance(trigger, EventTrigger)
    assert trigger.expect == {"roadeval.run.drift"}
    assert automation.actions[0].type == "send-notification"


def test_the_webhook_json_example_has_the_alarms_fields() -> None:
    example = json.loads(_block("json", "The JSON (a drift alarm"))
    assert set(example) == set(Alarm.model_fields)
    assert set(example["drift"][0]) == set(DriftFlag.model_fields)
    Alarm.model_validate(example)
