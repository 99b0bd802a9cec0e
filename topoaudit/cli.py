"""The command line: a thin click layer over load -> analyze -> render -> exit code.

Subcommands live in their own modules and load lazily (``_COMMAND_MODULES``), so ``topoaudit --help``
and ``topoaudit analyze`` import neither torch nor pynvml.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from topoaudit import __version__
from topoaudit.errors import TopoauditError
from topoaudit.exitcodes import ExitCode
from topoaudit.model.finding import Severity
from topoaudit.model.policy import Policy
from topoaudit.model.report import NOT_REQUESTED, AuditOptions, Report
from topoaudit.policy import load_policy
from topoaudit.render import FORMATS, RenderOptions, render

_COMMAND_MODULES: dict[str, tuple[str, str]] = {
    # command name -> (module, attribute); one line per command
    "analyze": ("topoaudit.cli_analyze", "analyze"),
    "plan": ("topoaudit.cli_plan", "plan"),
    "report": ("topoaudit.cli_report", "report"),
    "bench": ("topoaudit.cli_bench", "bench"),
    "probe": ("topoaudit.cli_probe", "probe_cmd"),  # topoaudit/probe (issue 3)
    "audit": ("topoaudit.cli_probe", "audit"),
}

F = TypeVar("F", bound=Callable[..., Any])


class LazyGroup(click.Group):
    """A group whose commands are imported only when invoked or listed (click's documented pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _COMMAND_MODULES:
            module_name, attr = _COMMAND_MODULES[cmd_name]
            command: click.Command = getattr(importlib.import_module(module_name), attr)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="topoaudit")
@click.option("--debug", is_flag=True, help="Show tracebacks of internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Audit the GPU interconnect of a machine: which GPUs share a fast fabric, how fast it is, and
    whether this box fits the deployment you are about to run.

    \b
    Exit codes: 0 pass, 1 findings at/above --fail-on, 2 usage error,
                3 incomplete audit under --strict, 4 input or environment unusable, 5 internal error.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def gate_options(fn: F) -> F:
    """Options shared by every command that judges a machine."""
    decorators = [
        click.option("--expect-gpus", type=click.IntRange(min=1), help="Fail unless the box has exactly N GPUs."),
        click.option(
            "--expect-domain", type=click.IntRange(min=1), help="Fail unless one NVLink domain has at least N GPUs."
        ),
        click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size to place on NVLink domains."),
        click.option("--gpu-model", help="GPU product name when the input lacks it, e.g. 'NVIDIA H200'."),
        click.option(
            "--fail-on",
            type=click.Choice([s.value for s in Severity]),
            default=None,
            help="Lowest severity that makes the exit code 1.  [default: fail, or the policy's]",
        ),
        click.option(
            "--strict", is_flag=True, help="Exit 3 when the audit is incomplete (skipped rules, recovered input)."
        ),
        click.option(
            "--policy",
            metavar="FILE|builtin:NAME",
            help="Judge by a policy (expectations, severity overrides, ignores; docs/policy.md). Built in: "
            "builtin:hgx-8gpu, builtin:nvl72-tray, builtin:bridged-workstation.",
        ),
    ]
    for decorator in reversed(decorators):
        fn = decorator(fn)
    return fn


def output_options(fn: F) -> F:
    """Options shared by every command that prints a report."""
    decorators = [
        click.option(
            "--format",
            "fmt",
            type=click.Choice(sorted(FORMATS)),
            default="console",
            show_default=True,
            help="Report format.",
        ),
        click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE."),
        click.option("-v", "--verbose", is_flag=True, help="List every fact the source could not give."),
        click.option("--color/--no-color", default=None, help="Colour the console format (default: on a TTY)."),
    ]
    for decorator in reversed(decorators):
        fn = decorator(fn)
    return fn


def audit_options_from(kw: Mapping[str, Any]) -> AuditOptions:
    """Click values of ``gate_options`` -> AuditOptions (options not given stay 'not requested', never None)."""

    def given(name: str) -> Any:
        value = kw.get(name)
        return NOT_REQUESTED if value is None or value == "" else value

    policy = load_policy(str(kw["policy"])) if kw.get("policy") else NOT_REQUESTED
    fail_on = kw.get("fail_on") or (policy.fail_on if isinstance(policy, Policy) else None)
    return AuditOptions(
        expect_gpus=given("expect_gpus"),
        expect_domain=given("expect_domain"),
        tp=given("tp"),
        gpu_model=given("gpu_model"),
        fail_on=Severity(str(fail_on if isinstance(fail_on, (str, Severity)) else "fail")),
        strict=bool(kw.get("strict")) or (isinstance(policy, Policy) and policy.strict),
        policy=policy,
    )


def emit(report: Report, fmt: str, output: str | None, verbose: bool, color: bool | None) -> None:
    """Render the report to stdout or a file (written atomically), and the one-line verdict to stderr."""
    to_tty = output is None and sys.stdout.isatty()
    use_color = color if color is not None else (to_tty and "NO_COLOR" not in os.environ)
    width = _terminal_width() if to_tty else 120
    text = render(report, fmt, RenderOptions(color=bool(use_color and fmt == "console"), width=width, verbose=verbose))
    if output:
        write_atomic(Path(output), text)
        click.echo(
            f"topoaudit: {report.gate.verdict.upper()} (exit {report.gate.exit_code}); report written to {output}",
            err=True,
        )
    else:
        click.echo(text, nl=False)
        if fmt != "console":
            click.echo(
                f"topoaudit: {report.gate.verdict.upper()} (exit {report.gate.exit_code}): {report.gate.reason}",
                err=True,
            )


def _terminal_width() -> int:
    try:
        return max(80, min(os.get_terminal_size().columns, 200))
    except OSError:
        return 120


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so an interrupted run never leaves half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: maps every outcome to the documented exit codes."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        code = cli.main(args=args, prog_name="topoaudit", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.Abort:
        click.echo("topoaudit: aborted", err=True)
        code = 130
    except click.ClickException as exc:
        exc.show()
        code = ExitCode.USAGE if isinstance(exc, click.UsageError) else ExitCode.UNUSABLE
    except TopoauditError as exc:
        click.echo(f"topoaudit: error: {exc}", err=True)
        if exc.hint:
            click.echo(f"topoaudit: hint: {exc.hint}", err=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        click.echo("topoaudit: interrupted", err=True)
        code = 130
    except Exception as exc:  # a bug: say so plainly, keep the traceback for --debug
        if debug:
            traceback.print_exc()
        click.echo(
            f"topoaudit: internal error: {type(exc).__name__}: {exc} (a bug; rerun with --debug and report it)",
            err=True,
        )
        code = ExitCode.INTERNAL
    sys.exit(int(code or 0))
