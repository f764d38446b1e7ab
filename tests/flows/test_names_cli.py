"""Names are data, never terminal control: a panel, model, suite or item name holding a control
character (ESC, a line break, NUL, C1, a bidirectional override) is refused at load naming the
file and the field, with the name escaped in the message; a blank panel name is refused. A name
in a script the plotting font has no glyphs for draws in the report without a warning, and reads
as text in the HTML."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from roadeval.benchmarks.registry import get_suite
from roadeval.flows.cli.main import app
from roadeval.names import refused_character

pytestmark = pytest.mark.usefixtures("inline")

runner = CliRunner()
LOCAL = {"scoring": {"engine": "local"}, "render": {"engine": "local"}}


def write_panel(path: Path, body: dict[str, Any]) -> Path:
    panel = {
        "name": "names",
        "suites": [{"name": "trip", "demo": True}],
        "models": [{"model": "roadeval/random"}],
        **LOCAL,
        **body,
    }
    path.write_text(yaml.safe_dump(panel), encoding="utf-8")
    return path


def run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"name": ""}, "name: '' is blank: a name needs a visible character"),
        # Blanks run together here: the output's spaces are collapsed before comparing.
        ({"name": "   "}, "name: ' ' is blank"),
        ({"name": "nightly\x1b[2J"}, "name: 'nightly\\x1b[2J' holds U+001B: names are shown"),
        ({"name": "a\nb"}, "name: 'a\\nb' holds U+000A"),
        ({"name": "a\x85b"}, "name: 'a\\x85b' holds U+0085"),
        (
            {"models": [{"model": "roadeval/random", "name": "gpt\u202e4o"}]},
            "models[0] ('gpt\\u202e4o').name: 'gpt\\u202e4o' holds U+202E RIGHT-TO-LEFT OVERRIDE",
        ),
        (
            {"models": [{"model": "roadeval/ran\x1bdom"}]},
            "models[0] ('roadeval/ran\\x1bdom').model: 'roadeval/ran\\x1bdom' holds U+001B",
        ),
        (
            {"models": [{"model": "roadeval/random", "name": "nul\x00"}]},
            "models[0] ('nul\\x00').name: 'nul\\x00' holds U+0000",
        ),
        (
            {"suites": [{"name": "trip\x1b[31m", "demo": True}]},
            "suites[0] ('trip\\x1b[31m').name: 'trip\\x1b[31m' holds U+001B",
        ),
        (
            {"judge": {"model": "roadeval/midpoint-judge", "name": "judge\r"}},
            "judge.name: 'judge\\r' holds U+000D",
        ),
    ],
)
def test_a_name_with_control_characters_or_blank_is_refused_at_load(
    tmp_path: Path, body: dict[str, Any], expected: str
) -> None:
    panel = write_panel(tmp_path / "panel.yaml", body)
    store = tmp_path / "store"
    code, output = run("run", "--panel", str(panel), "--store", str(store))
    assert code == 2, output
    assert " ".join(output.split()).startswith(f"error: {panel}: {expected}"), output
    # Printed escaped: not one character a terminal would act on reaches it.
    assert refused_character(output.replace("\n", "")) is None, repr(output)
    assert not store.exists()


@pytest.fixture(scope="module")
def trip_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return get_suite("trip").generate_demo(tmp_path_factory.mktemp("trip") / "trip")


def test_an_item_id_with_control_characters_is_refused_naming_file_line_and_field(
    tmp_path: Path, trip_source: Path
) -> None:
    """Item ids come from the suite's files: an id that would set the terminal's title (OSC)
    is a bad row, named by file, line and field; skipped, it is listed escaped."""
    source = Path(shutil.copytree(trip_source, tmp_path / "trip"))
    items = source / "items.jsonl"
    lines = items.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    lines[2] = json.dumps({**row, "id": "q\x1b]0;pwned\x07-3"})
    items.write_text("\n".join(lines) + "\n", encoding="utf-8")
    panel = write_panel(
        tmp_path / "panel.yaml", {"suites": [{"name": "trip", "source": str(source)}]}
    )
    store = tmp_path / "store"
    code, output = run("run", "--panel", str(panel), "--store", str(store))
    assert code == 2, output
    assert " ".join(output.split()).startswith(
        f"error: {items}, line 3, field 'id': the item id 'q\\x1b]0;pwned\\x07-3' holds U+001B"
    ), output
    assert refused_character(output.replace("\n", "")) is None, repr(output)
    code, output = run(
        "run", "--panel", str(panel), "--store", str(store), "--on-bad-item", "skip", "--no-report"
    )
    assert code == 0, output
    assert "trip: 1 bad rows skipped" in output and "'q\\x1b]0;pwned\\x07-3'" in output
    assert refused_character(output.replace("\n", "")) is None, repr(output)


def test_a_name_the_plotting_font_cannot_draw_reads_in_the_report_without_warnings(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """CJK and emoji are not in DejaVu Sans: before, the report's figures filled stderr with a
    'Glyph ... missing from font(s)' warning per character per figure. The name is kept as text
    (the browser draws it), in the tables and in the figures, and never read as math ($)."""
    name = "模型-随机-\U0001f600 $x$"
    panel = write_panel(
        tmp_path / "panel.yaml", {"models": [{"model": "roadeval/random", "name": name}]}
    )
    store = tmp_path / "store"
    code, output = run("run", "--panel", str(panel), "--store", str(store), "--no-report")
    assert code == 0, output
    capfd.readouterr()
    # The figures are drawn here and in helper processes, which write to this process's stderr.
    code, output = run("report", "--store", str(store))
    warnings = output + capfd.readouterr().err
    assert code == 0, output
    assert "Glyph" not in warnings and "missing from font" not in warnings, warnings
    [report] = (store / "reports").glob("*.html")
    html = report.read_text(encoding="utf-8")
    assert re.search(rf"<td[^>]*>\s*{re.escape(name)}\s*</td>", html), "no table cell names it"
    assert re.search(rf"<text[^>]*>{re.escape(name)}</text>", html), "no figure label names it"
    assert "font-family: 'DejaVu Sans', sans-serif" in html
