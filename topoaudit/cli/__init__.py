"""The command line: a thin click layer that turns options into typed requests for :mod:`topoaudit.app`.

Each command lives in its own module, loaded only when it runs or when ``--help`` lists it; command
modules import click, :mod:`topoaudit.cli.options` and (inside the command) the application layer, never
each other. :func:`main` maps every outcome to the documented exit codes.
"""

from __future__ import annotations

import importlib
import sys
import traceback

import click

from topoaudit import __version__
from topoaudit.errors import TopoauditError
from topoaudit.exitcodes import ExitCode

COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("topoaudit.cli.analyze", "analyze"),
    "audit": ("topoaudit.cli.audit", "audit"),
    "bench": ("topoaudit.cli.bench", "bench"),
    "examples": ("topoaudit.cli.examples", "examples"),
    "healthcheck": ("topoaudit.cli.healthcheck", "healthcheck"),
    "fleet": ("topoaudit.cli.fleet", "fleet"),
    "nccl-topo": ("topoaudit.cli.nccl_topo", "nccl_topo"),
    "plan": ("topoaudit.cli.plan", "plan"),
    "probe": ("topoaudit.cli.audit", "probe"),
    "report": ("topoaudit.cli.report", "report"),
}
"""Command name -> (module, attribute) of its click command."""


class LazyGroup(click.Group):
    """A group whose commands are imported only when invoked or listed (click's documented pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attribute = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """An unknown command names the closest ones (``analyse`` -> ``analyze``), exit 2."""
        name = click.utils.make_str(args[0]) if args else ""
        if args and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name.lower(), COMMANDS, n=3, cutoff=0.6)
            if close:
                maybe = " or ".join(repr(c) for c in close)
                ctx.fail(f"No such command {name!r}. Did you mean {maybe}?")
        return super().resolve_command(ctx, args)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="topoaudit")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors (before or after the command).")
def cli(debug: bool) -> None:
    """Audit the GPU interconnect of a machine: which GPUs share a fast fabric, how fast it is, and
    whether this box fits the deployment you are about to run.

    \b
    Exit codes: 0 pass, 1 findings at/above --fail-on, 2 usage error,
                3 incomplete audit under --strict, 4 input or environment unusable, 5 internal error,
                130 interrupted.
    """


def _split_debug(args: list[str]) -> tuple[bool, list[str]]:
    """``--debug`` anywhere before a ``--`` separator: moved in front of the command, where the group reads it."""
    cut = args.index("--") if "--" in args else len(args)
    debug = "--debug" in args[:cut]
    rest = [a for a in args[:cut] if a != "--debug"] + args[cut:]
    return debug, (["--debug", *rest] if debug else rest)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: maps every outcome to the documented exit codes."""
    debug, args = _split_debug(sys.argv[1:] if argv is None else list(argv))
    try:
        code = cli.main(args=args, prog_name="topoaudit", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.Abort:
        click.echo("topoaudit: interrupted", err=True)
        code = ExitCode.INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        code = ExitCode.USAGE if isinstance(exc, click.UsageError) else ExitCode.UNUSABLE
    except TopoauditError as exc:
        click.echo(f"topoaudit: error: {_shown(str(exc))}", err=True)
        if exc.hint:
            click.echo(f"topoaudit: hint: {_shown(exc.hint)}", err=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        click.echo("topoaudit: interrupted", err=True)
        code = ExitCode.INTERRUPTED
    except Exception as exc:  # a bug: say so plainly, keep the traceback for --debug
        if debug:
            traceback.print_exc()
        hint = "" if debug else "; rerun with --debug for the traceback"
        said = _shown(f"{type(exc).__name__}: {exc}")
        click.echo(f"topoaudit: internal error: {said} (a bug{hint}; please report it)", err=True)
        code = ExitCode.INTERNAL
    sys.exit(int(code or 0))


def _shown(text: str) -> str:
    """A sentence fit for the terminal: an input's escape sequences or control characters quoted in it replaced."""
    from topoaudit.parse.text import printable

    return printable(text, limit=_SENTENCE_CHARS)


_SENTENCE_CHARS = 4000  # an error sentence is one line; a quoted input line in it is already cut shorter


__all__ = ["cli", "main"]
