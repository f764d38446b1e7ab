"""Reading model replies by the release's rules: YAML from the first ```yaml fence, else the
whole text; then each task's value exactly as its script extracts it (its `llm_value`)."""

from __future__ import annotations

import re
from typing import Any

import yaml
from shapely import Point

from roadeval.benchmarks.roadbench.network_geometry import load_wkt
from roadeval.benchmarks.roadbench.tasks import (
    DIRECTION_LETTERS,
    LANE_COUNTING_TASKS,
    LANE_DESIGNATION_TASKS,
    ROAD_TYPES,
    ROADNET_TASK,
)
from roadeval.benchmarks.suite import ParsedAnswer, ParseStatus

YAML_FENCE = re.compile(r"```yaml\s*(.*?)\s*```", re.DOTALL)

# Rules after which the release asks again: its retry loop catches exactly ValueError (an empty
# reply, a bad YAML timestamp) and YAML errors; a reply whose YAML reads is never re-asked.
REASK_RULES = frozenset({"empty_reply", "yaml_error"})


class ReplyError(Exception):
    """The reply gives no value; `rule` names the release's failure for reports."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(detail)
        self.rule = rule
        self.detail = detail


def unwrap_yaml(text: str) -> tuple[Any, str]:
    """(document, rule): the fenced block when there is one, else the whole text, as YAML."""
    if text == "":
        raise ReplyError("empty_reply", "the reply is empty")
    fenced = YAML_FENCE.search(text)
    body, rule = (fenced.group(1), "yaml_fenced") if fenced else (text, "yaml_whole_text")
    try:
        return yaml.safe_load(body), rule
    except (yaml.YAMLError, ValueError) as exc:
        raise ReplyError("yaml_error", f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:
        # Anything else escapes the release's retry loop and fails the item without a retry.
        raise ReplyError("yaml_failure", f"{type(exc).__name__}: {exc}") from exc


def field(document: Any, key: str) -> Any:
    """document[key] as the release reads it: only a mapping has keys."""
    if not isinstance(document, dict):
        raise ReplyError("not_a_mapping", f"the YAML is a {type(document).__name__}, not a mapping")
    if key not in document:
        raise ReplyError("missing_key", f"no `{key}` in the YAML")
    return document[key]


def lane_count_value(document: Any) -> int:
    """int(num_lanes), Python's int(): "3" and 3.7 (-> 3) pass, "3.5" and null do not."""
    value = field(document, "num_lanes")
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ReplyError("bad_value", f"num_lanes {value!r}: {exc}") from exc


def designation_value(document: Any, letters: dict[str, str]) -> tuple[list[str], list[Any]]:
    """The release's conversion: per lane, the letters of the recognised terms (case-insensitive),
    sorted and joined; other terms are dropped. Returns (lanes, dropped terms)."""
    lanes = field(document, "lane_designations")
    converted: list[str] = []
    dropped: list[Any] = []
    try:
        for lane in lanes:
            found: list[str] = []
            for term in lane:
                if isinstance(term, str) and term.lower() in letters:
                    found.append(letters[term.lower()])
                else:
                    dropped.append(term)
            converted.append("".join(sorted(found)))
    except TypeError as exc:
        raise ReplyError("bad_value", f"lane_designations {lanes!r}: {exc}") from exc
    return converted, dropped


def network_value(document: Any) -> tuple[dict[str, Any], list[str]]:
    """junctions and lines as given, each entry checked with shapely's WKT reader as the release
    does. Returns (value, entries its metric script cannot use: empty points)."""
    value: dict[str, Any] = {}
    empty_points: list[str] = []
    for key in ("junctions", "lines"):
        entries = field(document, key)
        try:
            for entry in entries:
                geom = load_wkt(entry)
                if key == "junctions" and isinstance(geom, Point) and geom.is_empty:
                    empty_points.append(str(entry))
        except Exception as exc:
            raise ReplyError("bad_value", f"{key}: {type(exc).__name__}: {exc}") from exc
        value[key] = list(entries) if isinstance(entries, dict) else entries
    return value, empty_points


def road_type_value(document: Any) -> str:
    value = field(document, "road_type")
    if value not in ROAD_TYPES:
        raise ReplyError("bad_value", f"road_type {value!r} is not 'main' or 'service'")
    return value


def read_reply(task: str, text: str) -> ParsedAnswer:
    """The parse of one reply: ok, abnormal (read, but the release then counts it as an error or
    fails on it) or unparsed (the release's error value applies)."""
    try:
        document, rule = unwrap_yaml(text)
        if task in LANE_COUNTING_TASKS:
            count = lane_count_value(document)
            if count < 0:
                return ParsedAnswer(ParseStatus.ABNORMAL, count, "negative_count", "scored as 0")
            return ParsedAnswer(ParseStatus.OK, count, rule)
        if task in LANE_DESIGNATION_TASKS:
            lanes, dropped = designation_value(document, DIRECTION_LETTERS[task])
            if dropped:
                detail = f"terms not recognised, dropped: {dropped!r}"
                return ParsedAnswer(ParseStatus.ABNORMAL, lanes, "unknown_terms_dropped", detail)
            return ParsedAnswer(ParseStatus.OK, lanes, rule)
        if task == ROADNET_TASK:
            network, empty_points = network_value(document)
            if empty_points:
                detail = f"empty junction points {empty_points!r}: the release drops the item"
                return ParsedAnswer(ParseStatus.ABNORMAL, network, "empty_point", detail)
            return ParsedAnswer(ParseStatus.OK, network, rule)
        return ParsedAnswer(ParseStatus.OK, road_type_value(document), rule)
    except ReplyError as exc:
        return ParsedAnswer(ParseStatus.UNPARSED, None, exc.rule, exc.detail)


def should_reask(parsed: ParsedAnswer) -> bool:
    """Whether the release would ask again after this reply (YAML failures only)."""
    return parsed.status is ParseStatus.UNPARSED and parsed.rule in REASK_RULES
