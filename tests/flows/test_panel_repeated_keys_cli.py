"""A key given twice in one mapping of a panel file is refused at load, through the real command:
exit 2, one line naming the file, the line and the key, and nothing in the store. YAML itself
keeps the last one silently (a second `models:` dropped the first list of models). A merge key's
keys (`<<: *defaults`) overridden by the mapping's own are not repeats."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from roadeval.flows.cli.main import app

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()

HEAD = """\
name: repeated
scoring: {engine: local}
render: {engine: local}
suites:
  - name: trip
    demo: true
"""


def dry_run(tmp_path: Path, text: str) -> tuple[int, str, Path]:
    panel = tmp_path / "panel.yaml"
    panel.write_text(text, encoding="utf-8")
    store = tmp_path / "store"
    result = runner.invoke(
        app, ["campaign", "--panel", str(panel), "--dry-run", "--store", str(store)]
    )
    # Rich wraps long lines; the message is compared with its line breaks undone.
    return result.exit_code, " ".join(result.output.split()), store


@pytest.mark.parametrize(
    ("body", "line", "key", "first"),
    [
        # The cases: the whole list of models, and a model's name.
        (
            "models:\n  - model: roadeval/random\nmodels:\n  - model: roadeval/always-a\n",
            9,
            "'models'",
            7,
        ),
        ("models:\n  - model: roadeval/random\n    name: a\n    name: b\n", 10, "'name'", 9),
        # In a flow mapping on one line, deeper down.
        ("models:\n  - {model: roadeval/random, params: {seed: 1, seed: 2}}\n", 8, "'seed'", 8),
        # `yes` and `true` are one key once read.
        ("models:\n  - model: roadeval/random\n    params: {yes: 1, true: 2}\n", 9, "True", 9),
    ],
)
def test_a_key_given_twice_is_exit_2_naming_file_line_and_key(
    tmp_path: Path, body: str, line: int, key: str, first: int
) -> None:
    code, message, store = dry_run(tmp_path, HEAD + body)
    assert code == 2, message
    assert message == (
        f"error: {tmp_path / 'panel.yaml'}: line {line}: key {key} is given again (first on "
        f"line {first}) in the same mapping; YAML would keep only the last one silently"
    )
    assert not store.exists()


def test_a_repeated_key_with_a_control_character_is_named_escaped(tmp_path: Path) -> None:
    body = 'models:\n  - model: roadeval/random\n    "n\\e": 1\n    "n\\e": 2\n'
    code, message, _ = dry_run(tmp_path, HEAD + body)
    assert code == 2, message
    assert "line 10: key 'n\\x1b' is given again (first on line 9)" in message, message
    assert "\x1b" not in message


def test_a_merge_keys_values_overridden_by_the_mappings_own_are_not_repeats(
    tmp_path: Path,
) -> None:
    # Merges of merges: `third` takes `second`'s keys, which took `first`'s.
    body = (
        "models:\n"
        "  - &first {model: roadeval/random, name: first, params: {seed: 1}}\n"
        "  - &second\n    <<: *first\n    name: second\n"
        "  - <<: *second\n    name: third\n"
    )
    code, message, _ = dry_run(tmp_path, HEAD + body)
    assert code == 0, message
    for name in ("first", "second", "third"):
        assert f"trip │ {name} │ answer" in message, message
