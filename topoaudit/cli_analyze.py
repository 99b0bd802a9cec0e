"""`topoaudit analyze`: judge a captured machine (pasted topo -m, snapshot, saved report, example)."""

from __future__ import annotations

import dataclasses
import sys

import click

from topoaudit.cli import audit_options_from, gate_options, output_options
from topoaudit.cli_plan import attach_plan_from_options, plan_options
from topoaudit.cli_report import bundle_options, finish_report, input_evidence
from topoaudit.errors import InputError
from topoaudit.loaders import Loaded, examples, load_example, load_path, load_text
from topoaudit.model.bench import BenchResult
from topoaudit.model.report import Report
from topoaudit.pipeline import analyze as run_analysis
from topoaudit.pipeline import rejudge


@click.command()
@click.argument("path", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--example", metavar="NAME", help="Analyse a bundled example box; `--example list` names them.")
@gate_options
@plan_options
@output_options
@bundle_options
@click.pass_context
def analyze(ctx: click.Context, path: str | None, example: str | None, **kw: object) -> None:
    """Analyse PATH: `nvidia-smi topo -m` text, a snapshot or report JSON (or - for stdin).

    \b
    Examples:
      nvidia-smi topo -m > topo.txt && topoaudit analyze topo.txt
      topoaudit analyze topo.txt --expect-domain 8 --tp 8     # gate: exit 1 if TP=8 leaves NVLink
      topoaudit analyze --example h200-nvl-split --format json
    """
    if example == "list":
        for name, ex in sorted(examples().items()):
            click.echo(f"{name:16} {ex.description}")
        ctx.exit(0)
    if bool(path) == bool(example):
        raise click.UsageError("give either PATH or --example NAME (see --example list)")
    evidence: dict[str, str | bytes] = {}
    if example:
        loaded = load_example(example)
    elif path == "-" and kw.get("out_dir"):  # stdin can be read once: keep the text for the bundle
        stdin_text = sys.stdin.read()
        loaded, evidence = load_text(stdin_text, "<stdin>"), {"stdin.txt": stdin_text}
    else:
        loaded = load_path(str(path))
    if kw.get("out_dir") and not evidence:
        evidence = input_evidence(path, example)
    report = judge(loaded, kw)
    finish_report(report, kw, evidence)  # --out bundle, --redact, then the usual output
    ctx.exit(report.gate.exit_code)


def judge(loaded: Loaded, kw: dict[str, object]) -> Report:
    """Loaded input + click options -> Report (shared by analyze and the commands built on it)."""
    options = audit_options_from(kw)
    if not loaded.machine.gpus:
        raise InputError(f"{loaded.source.name}: no GPUs in the input")
    report = run_analysis(
        loaded.machine,
        source=loaded.source,
        options=options,
        input_issues=loaded.issues,
        extras=loaded.extras,
        extra_findings=loaded.findings,
    )
    if isinstance(loaded.bench, BenchResult):  # an imported nccl-tests run (topoaudit/bench)
        report = rejudge(dataclasses.replace(report, bench=loaded.bench))  # the policy sees the bench
    return attach_plan_from_options(report, kw)  # --plan-params/--plan-weights-gb: the deploy plan section
