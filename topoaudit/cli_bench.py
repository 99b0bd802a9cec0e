"""`topoaudit bench`: measure all-reduce over every GPU (or CPU ranks with gloo) and judge the numbers.

torch is imported only when this command runs (``topoaudit.bench`` imports it inside functions).
Also :func:`bench_options` / :func:`run_bench_for` for commands that add ``--bench`` (``audit``).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from topoaudit.cli import audit_options_from, emit, gate_options, output_options
from topoaudit.errors import ConfigError, TopoauditError
from topoaudit.model.bench import BenchResult
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.report import Report, SourceInfo

F = TypeVar("F", bound=Callable[..., Any])


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from topoaudit.bench.formulas import parse_size

    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _groups(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    from topoaudit.bench.groups import parse_groups

    try:
        return parse_groups(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def bench_options(fn: F) -> F:
    decorators = [
        click.option(
            "--groups",
            default="all",
            show_default=True,
            callback=_groups,
            help="Comma list: all, domains (each NVLink domain), cross (one GPU per domain), pairs (every pair "
            "alone: the pairwise matrix and measured islands), tp=N (the TP placements).",
        ),
        click.option(
            "--backend",
            type=click.Choice(["auto", "nccl", "gloo"]),
            default="auto",
            show_default=True,
            help="auto: NCCL when a CUDA GPU and NCCL are present, else gloo on CPU.",
        ),
        click.option("--nproc", type=click.IntRange(min=1), help="Ranks to spawn (default: one per GPU; gloo: 2)."),
        click.option("--min-bytes", default="8", callback=_size, show_default=True, help="Smallest message (8, 64K)."),
        click.option(
            "--max-bytes",
            default="4G",
            callback=_size,
            show_default=True,
            help="Largest message (capped by free memory; sizes that do not fit are skipped and reported).",
        ),
        click.option(
            "--pair-bytes", callback=_size, help="Message size for the pairwise matrix (default: largest <= 256M)."
        ),
        click.option(
            "--expect-busbw",
            type=click.FloatRange(min=0, min_open=True),
            help="Fail unless the 'all' group's large-message busbw reaches X GB/s.",
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(min=1),
            default=60.0,
            show_default=True,
            help="Seconds one collective may take before the bench stops with bench-timeout.",
        ),
        click.option(
            "--topology",
            type=click.Path(dir_okay=False, exists=True),
            help="`nvidia-smi topo -m` text, snapshot or report of this machine: NVLink domains, expected busbw.",
        ),
    ]
    for decorator in reversed(decorators):
        fn = decorator(fn)
    return fn


@click.command()
@bench_options
@gate_options
@output_options
@click.pass_context
def bench(ctx: click.Context, **kw: Any) -> None:
    """Measure all-reduce bus bandwidth over the GPUs of this machine (or a torchrun job).

    \b
    Examples:
      topoaudit bench                                   # all GPUs, NCCL, 8 B .. 4 GiB
      topoaudit bench --groups all,domains,cross,pairs  # localise a slow path
      topoaudit bench --backend gloo --nproc 4 --max-bytes 16M
      torchrun --nnodes 2 --nproc-per-node 8 --rdzv-endpoint HOST:29500 -m topoaudit bench
    """
    report = run_bench_for(kw)
    if report is None:  # a launched rank other than 0: rank 0 reports for the job
        ctx.exit(0)
    emit(report, str(kw["fmt"]), kw.get("output"), bool(kw["verbose"]), kw.get("color"))
    assert report is not None
    if isinstance(report.bench, BenchResult) and report.bench.status != "complete":
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(report.gate.exit_code)  # a wedged communicator must not hang interpreter teardown
    ctx.exit(report.gate.exit_code)


def run_bench_for(kw: dict[str, Any], base: Report | None = None) -> Report | None:
    """Run the bench from click values; a report (``base`` with its bench section, or a new one)."""
    from topoaudit.bench import BenchConfig, judge_bench, launched_env, run_bench

    if kw["min_bytes"] > kw["max_bytes"]:
        raise ConfigError(f"--min-bytes {kw['min_bytes']} is above --max-bytes {kw['max_bytes']}")
    machine = base.machine if base is not None else _topology(kw.get("topology")) or _probed_machine()
    config = BenchConfig(
        groups=tuple(kw["groups"]),
        backend=str(kw["backend"]),
        nproc=int(kw.get("nproc") or 0),
        min_bytes=int(kw["min_bytes"]),
        max_bytes=int(kw["max_bytes"]),
        pair_bytes=int(kw.get("pair_bytes") or 0),
        timeout_s=float(kw["timeout_s"]),
        machine=machine if machine is not None and machine.gpus else None,
    )
    launched = launched_env()
    show = str(kw.get("fmt")) != "json" and sys.stderr.isatty() and (launched is None or launched["rank"] == 0)
    result = _with_progress(lambda cb: run_bench(config, cb), show)
    if result is None:
        return None
    findings = judge_bench(result, expect_busbw_gbps=kw.get("expect_busbw"))
    if base is not None:
        return _merge(base, result, findings, kw)
    from topoaudit.pipeline import analyze, rejudge

    options = audit_options_from(kw)  # --policy, --expect-*, --fail-on, --strict as on every judging command
    report = analyze(
        machine or _machine_from(result),
        source=SourceInfo("bench", "live", description=f"all-reduce bench over {result.world_size} rank(s)"),
        options=options,
        extra_findings=findings,
    )
    return rejudge(dataclasses.replace(report, bench=result))


def _merge(base: Report, result: BenchResult, findings: tuple[Any, ...], kw: dict[str, Any]) -> Report:
    """Add the bench section and its findings to an existing report (``audit --bench``), re-deciding the gate."""
    from topoaudit.pipeline import rejudge

    all_findings = tuple(sorted((*base.findings, *findings), key=lambda f: -f.severity.rank))
    # rejudge: the policy's busbw/latency expectations and overrides see the bench results
    return rejudge(dataclasses.replace(base, findings=all_findings, bench=result))


def _topology(path: str | None) -> Machine | None:
    if not path:
        return None
    from topoaudit.loaders import load_path

    return load_path(path).machine


def _probed_machine() -> Machine | None:
    """This machine's topology from NVML when a driver is there (domains and expected busbw); else None."""
    try:
        from topoaudit.loaders import loaded_from_snapshot
        from topoaudit.probe.collect import probe

        return loaded_from_snapshot(probe("/"), "this machine", kind="live").machine
    except (ImportError, TopoauditError):  # no pynvml, no driver, no GPU: the bench runs without expectations
        return None


def _machine_from(result: BenchResult) -> Machine:
    """Rank 0's host as far as the bench saw it: its GPUs by CUDA index (no links: the bench does not probe)."""
    host = result.ranks[0].host if result.ranks else "unknown"
    gpus = tuple(
        Gpu(index=r.local_rank, name=r.name, pci_bus_id=r.pci_bus_id)
        for r in result.ranks
        if r.host == host and r.device != "cpu"
    )
    return Machine(source="bench", gpus=gpus, host=Host(hostname=host))


def _with_progress(run: Callable[[Any], BenchResult | None], show: bool) -> BenchResult | None:
    """A rich progress bar on stderr while sweeping (only on a terminal, never with --format json)."""
    if not show:
        return run(None)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("[bold]bench[/] {task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("starting ranks", total=None)

        def update(done: int, total: int, what: str) -> None:
            bar.update(task, completed=done, total=total, description=what)

        return run(update)


__all__ = ["bench", "bench_options", "run_bench_for"]
