"""A panel file's YAML read into plain data, whatever the file holds: every way it cannot be read
(not UTF-8, not YAML, too big, nested too deep, aliases that expand past any panel, an integer
Python will not read, a key given twice in one mapping) is a PanelError naming the file, never a
traceback or a hang.

YAML aliases make one value stand for many (`&a [*b, *b]`), and may refer to themselves: the
data is walked once, counting every value as often as it is reached, so a panel that expands past
MAX_VALUES (or nests past MAX_DEPTH through its aliases) is refused before anything reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from roadeval.names import quoted

# A panel file's size: a panel of a thousand models is a tenth of it.
MAX_BYTES = 2**20
# Levels of nesting, the top mapping being 1: a panel's deepest key (a model's params holding
# a JSON schema) is a few levels deep.
MAX_DEPTH = 64
# Values, once aliases are expanded: a thousand models of a hundred keys each.
MAX_VALUES = 100_000
# libyaml's parser where PyYAML was built with it (it is, in the wheels): the pure-Python scanner
# takes seconds over a few thousand unclosed brackets, libyaml milliseconds.
_PARSER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# A merge key (`<<: *defaults`) brings in keys that the mapping's own may override: not a repeat.
_MERGE = "tag:yaml.org,2002:merge"


class PanelError(ValueError):
    """A panel file that cannot be used; the message names the file and the field."""


class _RepeatedKey(yaml.YAMLError):
    """A key given twice in one mapping, with the lines (from 1) of both."""

    def __init__(self, key: object, line: int, first: int) -> None:
        super().__init__(key, line, first)
        self.key, self.line, self.first = key, line, first


class _PanelLoader(_PARSER):
    """The safe loader, refusing a key given twice in one mapping: YAML keeps the last one
    silently, so `models:` written twice would drop the first list of models."""

    def construct_document(self, node: yaml.Node) -> Any:
        # Checked on the nodes as composed, before construction merges `<<` keys into them.
        _check_repeated_keys(self, node)
        return super().construct_document(node)


def _check_repeated_keys(loader: yaml.SafeLoader, root: yaml.Node) -> None:
    """Every mapping under `root` (each node once, however many aliases reach it): its keys,
    as constructed (`yes` and `true` are one key), each once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        if not isinstance(node, yaml.MappingNode):
            continue
        first: dict[Any, yaml.Node] = {}
        for key_node, value_node in node.value:
            stack.append(value_node)
            if key_node.tag == _MERGE or not isinstance(key_node, yaml.ScalarNode):
                stack.append(key_node)
                continue
            key = loader.construct_object(key_node)
            try:
                earlier = first.setdefault(key, key_node)
            except TypeError:  # unhashable: the constructor refuses it in its own words
                continue
            if earlier is not key_node:
                raise _RepeatedKey(key, _line(key_node), _line(earlier))


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def panel_data(path: Path) -> dict[str, Any]:
    """The panel file at `path` as a mapping (not checked against the panel's fields yet)."""
    return parse_panel(_read_bytes(path), str(path))


def parse_panel(raw: bytes, source: str) -> dict[str, Any]:
    """`raw` (the panel file named `source`) as a mapping; a PanelError otherwise."""
    if len(raw) > MAX_BYTES:
        raise PanelError(
            f"{source}: larger than {MAX_BYTES:,} bytes; a panel file is far smaller (a "
            "thousand models take a tenth of that)"
        )
    text = _decoded(raw, source)
    try:
        _check_nesting(text, source)
        data = yaml.load(text, Loader=_PanelLoader)
    except PanelError:
        raise
    except _RepeatedKey as exc:
        raise PanelError(
            f"{source}: line {exc.line}: key {_shown_key(exc.key)} is given again (first on line "
            f"{exc.first}) in the same mapping; YAML would keep only the last one silently"
        ) from None
    except yaml.YAMLError as exc:
        raise PanelError(f"{source}: {_yaml_problem(exc)}") from None
    except ValueError as exc:
        # The constructors' own refusals: an integer of thousands of digits, a bad timestamp
        # (without Python's advice to raise its integer limit).
        reason = str(exc).split(";")[0]
        raise PanelError(f"{source}: not valid YAML: a value cannot be read: {reason}") from None
    if not isinstance(data, dict):
        raise PanelError(f"{source}: a panel file is a mapping with 'suites' and 'models'")
    _check_expansion(data, source)
    return data


def _shown_key(key: object) -> str:
    """A key as a message names it: quoted, a control character escaped."""
    return quoted(key) if isinstance(key, str) else repr(key)


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's error as one line: where (line and column) and what, without its quoted
    snippet of the file (several lines, and the file's own characters)."""
    if not isinstance(exc, yaml.MarkedYAMLError):
        return f"not valid YAML: {' '.join(str(exc).split())}"
    mark = exc.problem_mark or exc.context_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    what = "; ".join(text for text in (exc.context, exc.problem) if text)
    return f"{where}not valid YAML: {' '.join(what.split())}"


def _check_nesting(text: str, source: str) -> None:
    """Refuse text nested past MAX_DEPTH from its events, before PyYAML's composer (which
    recurses once per level) builds anything."""
    depth = 0
    for event in yaml.parse(text, Loader=_PARSER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark is not None else "?"
                raise PanelError(
                    f"{source}: line {line}: nested deeper than {MAX_DEPTH} levels (a panel's "
                    "deepest key is a few levels down)"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_expansion(data: dict[str, Any], source: str) -> None:
    """Walk `data` as its readers will (each alias as often as it is used), without recursion:
    past MAX_VALUES values or MAX_DEPTH levels it is refused."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise PanelError(
                f"{source}: holds more than {MAX_VALUES:,} values once its YAML aliases are "
                "expanded (or an alias that contains itself)"
            )
        if depth > MAX_DEPTH:
            raise PanelError(
                f"{source}: nested deeper than {MAX_DEPTH} levels once its YAML aliases are "
                "expanded"
            )
        if isinstance(value, dict):
            stack.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes (at most one past MAX_BYTES); a folder or an unreadable file is a
    PanelError."""
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise PanelError(f"{path}: no such panel file") from None
    except IsADirectoryError:
        raise PanelError(f"{path}: is a folder, not a panel file") from None
    except OSError as exc:
        raise PanelError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _decoded(raw: bytes, source: str) -> str:
    """`raw` as UTF-8 text; else a PanelError naming the line and byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1)
        bad = raw[exc.start : exc.end]
        raise PanelError(
            f"{source}: line {line}: not UTF-8: {bad!r} at byte {column} of the line "
            f"(byte {exc.start} of the file): {exc.reason}"
        ) from None
