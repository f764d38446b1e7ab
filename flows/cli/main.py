"""The `roadeval` app assembled: every command module registers its commands on the one Typer app
(`cli.app`) when imported here, and `main` is the console script."""

from __future__ import annotations

# isort: off
# Each module registers its commands when imported, in the order `--help` lists them: the
# commands that run a panel first.
from roadeval.flows.cli import run  # noqa: F401
from roadeval.flows.cli import changes, deploy, history, report, store, suite_tools  # noqa: F401

# isort: on
from roadeval.flows.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    """The console script: the app, its output guarded (`cli.output`: output that cannot be
    written ends any command non-zero, without a traceback), then the quick exit
    (`run.quick_exit`), which skips freeing a finished run's objects; an embedding caller of
    `app` exits as usual."""
    from roadeval.flows.cli.output import OutputLost, guard_stdout
    from roadeval.flows.process.quick_exit import arm, disarm, leave

    arm()
    output = guard_stdout()
    try:
        app()
    except SystemExit as exc:
        leave(output.exit_code(exc.code))
    except OutputLost:
        leave(output.exit_code(None))
    disarm()


if __name__ == "__main__":
    main()
