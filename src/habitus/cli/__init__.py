"""The ``habitus`` command line: click commands that parse options, call one library
function, and print. Exit codes: 0 ok, 1 expected error, 2 usage, 130 interrupted.
Unexpected errors are re-raised with ``HABITUS_DEBUG=1`` (and under tests)."""

from __future__ import annotations

import os
import sys

import click

from habitus import __version__
from habitus.errors import HabitusError

#: Each command by the module that defines it, imported only when the command runs (or help
#: lists it), so `habitus distill` and `habitus --version` do not load what `eval` or
#: `redact` need.
LAZY_COMMANDS = {
    "distill": "distill",
    "candidates": "review",
    "approve": "review",
    "reject": "review",
    "revoke": "review",
    "inspect": "inspect",
    "status": "status",
    "config": "config_cmd",
    "redact": "redact_cmd",
    "eval": "eval_cmd",
}


class HabitusGroup(click.Group):
    """The top-level group: loads its commands on first use (see ``LAZY_COMMANDS``) and
    turns library errors into messages and exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            # An unknown name loads every command, so click's "Did you mean …?" sees them all.
            for module_name in [LAZY_COMMANDS[cmd_name]] if cmd_name in LAZY_COMMANDS else sorted(set(LAZY_COMMANDS.values())):
                self._load(module_name)
            command = super().get_command(ctx, cmd_name)
        return command

    def _load(self, module_name: str) -> None:
        import importlib

        for found in importlib.import_module(f"habitus.cli.{module_name}").COMMANDS:
            if found.name not in self.commands:
                self.add_command(found)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except HabitusError as exc:
            click.echo(f"habitus: error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("habitus: interrupted", err=True)
            ctx.exit(130)
        except BrokenPipeError:
            # The reader went away (`habitus candidates | head -1`): stop quietly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(1)
        except OSError as exc:
            if os.environ.get("HABITUS_DEBUG"):
                raise
            where = f": {exc.filename}" if exc.filename else ""
            click.echo(f"habitus: error: {exc.strerror or exc}{where}", err=True)
            ctx.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            store_problem = _store_problem(exc)
            if store_problem is not None and not os.environ.get("HABITUS_DEBUG"):
                click.echo(f"habitus: error: {store_problem}", err=True)
                ctx.exit(1)
            if os.environ.get("HABITUS_DEBUG") or os.environ.get("PYTEST_CURRENT_TEST"):
                raise
            click.echo(
                f"habitus: internal error: {type(exc).__name__}: {exc}\n"
                "Run again with HABITUS_DEBUG=1 for the traceback.",
                err=True,
            )
            ctx.exit(1)
        return None


def _store_problem(exc: BaseException) -> str | None:
    """A message for a database error from the store (read-only file or folder, a revision
    this version does not know after a downgrade), without the SQL and its parameters
    (they hold transcript paths); ``None`` for anything else."""
    module = type(exc).__module__
    if module.startswith("sqlalchemy"):
        original = getattr(exc, "orig", None) or exc
        return f"the store ({_db_path()}) cannot be used: {original}"
    if module.startswith("alembic"):
        return f"the store ({_db_path()}) is at a revision this habitus does not know (made by a newer version?): {exc}"
    return None


def _db_path() -> str:
    try:
        from habitus.store import default_db_path

        return str(default_db_path())
    except Exception:  # noqa: BLE001 - only for the message
        return "habitus.db"


@click.group(cls=HabitusGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="habitus")
def cli() -> None:
    """habitus learns your stable habits from your coding agents' transcripts (Claude Code,
    Codex, Factory Droid) and keeps them where the agents read them: a ledger with
    provenance, and a small budgeted block in ~/.claude/CLAUDE.md.

    Start with `habitus distill --dry-run`, then `habitus distill`, `habitus candidates`,
    `habitus approve ID`.
    """


@cli.command(name="help")
@click.argument("command", required=False)
@click.pass_context
def help_command(ctx: click.Context, command: str | None) -> None:
    """Show the help of habitus, or of COMMAND (the same as `habitus COMMAND --help`)."""
    parent = ctx.parent
    assert parent is not None
    if command is None:
        click.echo(parent.get_help())
        return
    found = cli.get_command(parent, command)
    if found is None:
        raise click.UsageError(f"No such command {command!r}.", ctx)
    with click.Context(found, info_name=command, parent=parent) as sub:
        click.echo(found.get_help(sub))


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="habitus", standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - raised outside a command
        click.echo("habitus: interrupted", err=True)
        sys.exit(130)
