"""`topoaudit report`: re-render a saved report.json on any machine (no GPU, no torch)."""

from __future__ import annotations

import click

from topoaudit.app.common import OutputRequest
from topoaudit.cli.options import output_options, show_report


@click.command()
@click.argument("path", type=click.Path(allow_dash=True))
@output_options
@click.pass_context
def report(ctx: click.Context, path: str, out: OutputRequest) -> None:
    """Re-render a saved report (report.json, the --out bundle directory holding it, or - for standard input)
    on any machine: no GPU, no torch.

    The verdict is the one recorded in the report, and so is the exit code: re-rendering a report whose
    audit failed exits 1, so a CI step that only renders still fails the job. Any report JSON topoaudit
    writes works, `plan --format json` included.

    \b
    Examples:
      topoaudit report report.json --format html -o report.html
      topoaudit report report.json --format junit -o topoaudit-junit.xml
      topoaudit report report.json --redact --out ticket/     # bundle for a public ticket
    """
    from topoaudit.app import report as use_case
    from topoaudit.app.common import publish

    saved = use_case.load_saved_report(path)
    published = publish(saved, out)
    show_report(published, out)
    ctx.exit(saved.gate.exit_code)
