"""`topoaudit report`: re-render a saved report.json (no GPU, no torch), and the bundle/redaction options
every judging command shares (``--out DIR``, ``--redact``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from topoaudit.cli import emit, output_options
from topoaudit.errors import InputError
from topoaudit.model.report import Report, report_from_dict

F = TypeVar("F", bound=Callable[..., Any])


def bundle_options(fn: F) -> F:
    """``--out DIR`` and ``--redact`` for commands that produce a report (analyze, audit, report)."""
    fn = click.option(
        "--redact",
        is_flag=True,
        help="Replace hostnames, serials, UUIDs, IP and MAC addresses by stable tokens (for public tickets).",
    )(fn)
    fn = click.option(
        "--out",
        "out_dir",
        type=click.Path(file_okay=False),
        help="Also write a bundle to DIR: report.json/.md/.html, topology.svg, evidence/, SHA256SUMS.",
    )(fn)
    return fn


def finish_report(
    report: Report, kw: Mapping[str, object], evidence: Mapping[str, str | bytes] | None = None
) -> Report:
    """Write the bundle (``--out``), redact (``--redact``) and print/write the report; returns what was shown.

    Call it where a command would call :func:`topoaudit.cli.emit`; ``evidence`` maps file names to the raw
    inputs (topo -m text, snapshot JSON, nvidia-smi outputs) to keep in the bundle.
    """
    redact = bool(kw.get("redact"))
    out_dir = kw.get("out_dir")
    if out_dir:
        from topoaudit.bundle import write_bundle

        bundle = write_bundle(report, str(out_dir), evidence or {}, redact=redact)
        report = bundle.report
        click.echo(
            f"topoaudit: bundle written to {out_dir} ({len(bundle.files)} files; SHA256SUMS last)"
            + (" [redacted]" if redact else ""),
            err=True,
        )
    elif redact:
        from topoaudit.redact import redact_report

        report = redact_report(report)
    emit(report, str(kw.get("fmt", "console")), kw.get("output"), bool(kw.get("verbose")), kw.get("color"))  # type: ignore[arg-type]
    return report


def load_report(path: str) -> Report:
    """A saved report.json (or ``-``); InputError with a sentence when it is not one."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such file") from exc
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({type(exc).__name__})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON (line {exc.lineno}: {exc.msg}); give a topoaudit report.json") from exc
    return report_from_dict(data)


@click.command()
@click.argument("path", type=click.Path(dir_okay=False, allow_dash=True))
@output_options
@bundle_options
@click.pass_context
def report(ctx: click.Context, path: str, **kw: object) -> None:
    """Re-render a saved report (report.json, or - for stdin) on any machine: no GPU, no torch.

    The verdict is the one recorded in the report; the command exits 0 once it has rendered it.

    \b
    Examples:
      topoaudit report report.json --format html -o report.html
      topoaudit report report.json --format junit -o topoaudit-junit.xml
      topoaudit report report.json --redact --out ticket/     # bundle for a public ticket
    """
    finish_report(load_report(path), kw)
    ctx.exit(0)


def input_evidence(path: str | None, example: str | None) -> dict[str, str | bytes]:
    """The raw input of analyze, for the bundle's evidence/ directory."""
    if example:
        from importlib import resources

        from topoaudit.loaders import examples

        known = examples().get(example)
        if known is None:
            return {}
        text = resources.files("topoaudit.examples").joinpath(known.file).read_text(encoding="utf-8")
        return {f"example-{known.file}": text}
    if path and path != "-":
        try:
            return {Path(path).name: Path(path).read_bytes()}
        except OSError:
            return {}
    return {}
