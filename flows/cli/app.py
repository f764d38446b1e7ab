"""What every `roadeval` command shares: the Typer app, consoles made at print time, and the
one-line error exit (secrets redacted, markup escaped)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from roadeval.storage.store import Store

app = typer.Typer(
    help="Evaluate multimodal models on transportation benchmarks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _width(stream: object) -> int | None:
    # Piped output (CI logs, files) gets wide tables instead of rich's 80-column default,
    # unless COLUMNS says how wide (rich reads it, as it reads a terminal's size).
    isatty = getattr(stream, "isatty", None)
    if (isatty is not None and isatty()) or os.environ.get("COLUMNS", "").isdigit():
        return None
    return 200


class _Consoles:
    """Consoles made at print time, so they follow whatever stdout/stderr are then."""

    @property
    def out(self) -> Console:
        return Console(width=_width(sys.stdout))

    @property
    def err(self) -> Console:
        return Console(stderr=True, width=_width(sys.stderr))


consoles = _Consoles()


def fail(message: str, code: int = 2) -> NoReturn:
    # One line however long (paths are): a terminal wraps it, a log or a grep keeps it whole.
    consoles.err.print(f"[bold red]error:[/bold red] {printable(message)}", soft_wrap=True)
    raise typer.Exit(code=code)


def interrupted(message: str, code: int) -> NoReturn:
    consoles.err.print(
        f"[bold yellow]interrupted:[/bold yellow] {printable(message)}", soft_wrap=True
    )
    raise typer.Exit(code=code)


def printable(message: str) -> str:
    """A message as the terminal gets it: any secret of the environment redacted, and rich's
    markup characters escaped (a file name or a reply may hold brackets)."""
    from roadeval.tasks.calls.secrets import Redactor

    return escape(Redactor.from_environment().text(message))


def outside_store(flag: str, path: Path, store: Store) -> Path:
    """`path`, a file a command writes where its user says (`report --out`), checked: one
    line and exit 2 when it lies inside the store, where it would replace what roadeval keeps
    there (a run's manifest, a landed Parquet part that every later query reads)."""
    if store.holds_file(path):
        where = path.resolve()
        shown = f"{path}" if where == path.absolute() else f"{path} (that is {where})"
        fail(
            f"{flag} {shown}: inside the store {store.uri}, where only roadeval writes; "
            "give a path outside it"
        )
    return path


@contextmanager
def reading_store() -> Iterator[None]:
    """A store that cannot be read, or what a command reads there cannot be used (a
    ValueError: an unknown run, runs that cannot be compared, a run with nothing to report),
    or a file that cannot be written: one line, exit 2."""
    import duckdb

    try:
        yield
    except duckdb.Error as exc:
        fail(f"the store could not be read: {exc}")
    except (OSError, ValueError) as exc:
        fail(str(exc))
