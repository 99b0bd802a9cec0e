"""Options shared by several commands, each group turned into one typed request where it is parsed.

A decorator here adds its click options and hands the command one frozen value instead of loose keyword
arguments: ``gate=GateRequest``, ``out=OutputRequest``, ``plan=PlanRequest | None``, ``sweep=SweepRequest``,
``probe_request=ProbeRequest``. Also the few edge helpers every command shares: the terminal's width and
colour, printing a published report, listing the bundled examples.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from topoaudit import formats
from topoaudit.app.common import GateRequest, OutputRequest
from topoaudit.errors import ConfigError

if TYPE_CHECKING:
    from topoaudit.app.audit import ProbeRequest
    from topoaudit.app.bench import SweepRequest
    from topoaudit.app.common import Progress, Published
    from topoaudit.model.plan import PlanRequest

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
T = TypeVar("T")

REPORT_FORMATS = formats.choices(formats.REPORT_FORMATS)
"""The ``--format`` choices of the commands that judge one machine (``topoaudit.formats``)."""
SEVERITIES = ("info", "warn", "fail")
DEFAULT_KV_HEADROOM = 0.25
DEFAULT_RESERVE_GB = 2.0


def typed(name: str, options: Sequence[Decorator], build: Callable[[dict[str, Any]], object]) -> Decorator:
    """Add ``options`` to a command and pass it ``name=build(their values)`` in their place."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            values = {key: kwargs.pop(key) for key in keys}
            return fn(*args, **kwargs, **{name: build(values)})

        command: Callable[..., Any] = functools.wraps(fn)(call)
        before = len(getattr(command, "__click_params__", []))
        for option in reversed(options):
            command = option(command)
        keys = [p.name for p in getattr(command, "__click_params__", [])[before:] if p.name]
        return command

    return decorate


# --- judging: the gate ---------------------------------------------------------------------------------


def _gate(values: dict[str, Any]) -> GateRequest:
    return GateRequest(
        expect_gpus=values["expect_gpus"],
        expect_domain=values["expect_domain"],
        tp=values["tp"],
        gpu_model=values["gpu_model"] or None,
        fail_on=values["fail_on"],
        strict=bool(values["strict"]),
        policy=values["policy"] or None,
        nics=values["nics"],
    )


gate_options = typed(
    "gate",
    [
        click.option("--expect-gpus", type=click.IntRange(min=1), help="Fail unless the box has exactly N GPUs."),
        click.option(
            "--expect-domain", type=click.IntRange(min=1), help="Fail unless one NVLink domain has at least N GPUs."
        ),
        click.option("--tp", type=click.IntRange(min=1), help="Tensor-parallel size to place on NVLink domains."),
        click.option("--gpu-model", help="GPU product name when the input lacks it, e.g. 'NVIDIA H200'."),
        click.option(
            "--fail-on",
            type=click.Choice(SEVERITIES),
            default=None,
            help="Lowest severity that makes the exit code 1.  [default: fail, or the policy's]",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Exit 3 when the audit is incomplete (skipped rules, recovered or cut input) or not judged.",
        ),
        click.option(
            "--policy",
            metavar="FILE|builtin:NAME",
            help="Judge by a policy (expectations, severity overrides, ignores). Built in: "
            "builtin:hgx-8gpu, builtin:nvl72-tray, builtin:bridged-workstation.",
        ),
        click.option(
            "--nics",
            metavar="COUNTxGBITS",
            help="One node's NICs, for runs across nodes: 8x400, 4x200:RoCE. Default: the NICs NCCL's log lists, "
            "else the model's reference node, assumed (a run judged on it warns at most).",
        ),
    ],
    _gate,
)
"""``gate=GateRequest``: the options of every command that judges a machine."""


# --- output: format, file, bundle ----------------------------------------------------------------------


def terminal_width(to_terminal: bool) -> int:
    """``COLUMNS`` when set, else the terminal's width, else 120 columns for a file or a pipe."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdecimal() and int(columns) > 0:
        return int(columns)
    if to_terminal:
        try:
            return os.get_terminal_size(sys.stdout.fileno()).columns
        except (OSError, ValueError):
            return 120
    return 120


def use_color(choice: bool | None, to_terminal: bool) -> bool:
    """``--color``/``--no-color`` when given; else colour on a terminal unless ``NO_COLOR`` is set."""
    if choice is not None:
        return choice
    return to_terminal and "NO_COLOR" not in os.environ


def _output(values: dict[str, Any]) -> OutputRequest:
    output = values["output"]
    to_terminal = output is None and sys.stdout.isatty()
    return OutputRequest(
        fmt=values["fmt"],
        output=output,
        verbose=bool(values.get("verbose")),
        color=use_color(values["color"], to_terminal),
        width=terminal_width(to_terminal),
        out_dir=values.get("out_dir"),
        redact=bool(values.get("redact")),
        force=bool(values.get("force")),
    )


def format_option(choices: tuple[str, ...]) -> Decorator:
    """``--format`` among a command's ``choices``, console by default."""
    return click.option(
        "--format", "fmt", type=click.Choice(choices), default="console", show_default=True, help="Report format."
    )


_COLOR = click.option("--color/--no-color", default=None, help="Colour the console format (default: on a terminal).")

output_options = typed(
    "out",
    [
        format_option(REPORT_FORMATS),
        click.option("-o", "--output", type=click.Path(), help="Write the report to FILE."),
        click.option("-v", "--verbose", is_flag=True, help="List every fact the source could not give."),
        _COLOR,
        click.option(
            "--out",
            "out_dir",
            type=click.Path(file_okay=False),
            help="Also write a bundle to DIR: report.json/.md/.html, topology.svg, evidence/, SHA256SUMS.",
        ),
        click.option(
            "--force",
            is_flag=True,
            help="Let --out replace a bundle of another host (or one whose host cannot be told).",
        ),
        click.option(
            "--redact",
            is_flag=True,
            help="Replace hostnames, serials, UUIDs, IP and MAC addresses by stable tokens (for public tickets).",
        ),
    ],
    _output,
)
"""``out=OutputRequest``: format, ``-o`` FILE, ``--out`` bundle and ``--redact`` of every report command."""


def plan_output_options(choices: tuple[str, ...]) -> Decorator:
    """``out=OutputRequest`` for `plan`: its formats, ``-o`` and colour."""
    return typed(
        "out",
        [
            format_option(choices),
            click.option("-o", "--output", type=click.Path(), help="Write the plan to FILE."),
            _COLOR,
        ],
        _output,
    )


def show_report(published: Published, out: OutputRequest) -> None:
    """Print the rendered report (or where it went) and the one-line verdict on standard error."""
    report = published.report
    verdict = f"{report.gate.verdict.upper()} (exit {report.gate.exit_code})"
    if published.bundle_files:
        click.echo(
            f"topoaudit: bundle written to {out.out_dir} ({published.bundle_files} files; SHA256SUMS last)"
            + (" [redacted]" if out.redact else ""),
            err=True,
        )
    if published.written_to:
        click.echo(f"topoaudit: {verdict}; report written to {published.written_to}", err=True)
        return
    click.echo(published.text, nl=False)
    if out.fmt != "console":
        click.echo(f"topoaudit: {verdict}: {report.gate.reason}", err=True)


# --- the planner's sizes -------------------------------------------------------------------------------


def _planner_value(parse: Callable[[str], object]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback: the planner's own parser, its refusal shown as a bad option value (exit 2)."""

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> object:
        if value is None:
            return None
        try:
            return parse(value)
        except ConfigError as exc:
            raise click.BadParameter(f"{exc}; {exc.hint}" if exc.hint else str(exc)) from exc

    return callback


def _params(text: str) -> float:
    from topoaudit.plan.sizing import parse_params

    return parse_params(text)


def _precision(text: str) -> str:
    from topoaudit.plan.precision import find_precision

    return find_precision(text).key


def _kv_precision(text: str) -> str:
    from topoaudit.plan.precision import kv_bytes_per_element

    kv_bytes_per_element(text)
    return text


def _gpu(text: str) -> str:
    from topoaudit.plan.target import target_name

    return target_name(text)


_FRACTION = click.FloatRange(min=0.0, max=10.0)
_POSITIVE = click.IntRange(min=1)
_SHAPE = ("context", "layers", "kv_heads", "head_dim")


def _size_options(flag: str, full: bool) -> Sequence[Decorator]:
    """The model-size and serving options; ``flag`` is "--" for `plan`, "--plan-" for the judging commands."""
    core: list[Decorator] = [
        click.option(
            f"{flag}params",
            "params",
            callback=_planner_value(_params),
            metavar="N",
            help="Total parameters: 744B, 1.6T, 70b (all experts of a MoE stay in memory).",
        ),
        click.option(
            f"{flag}active",
            "active",
            callback=_planner_value(_params),
            metavar="N",
            help="Active parameters per token (MoE).",
        ),
        click.option(
            f"{flag}precision",
            "precision",
            callback=_planner_value(_precision),
            metavar="FMT",
            help="Weight format: fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4, q8_0, q6_k, q5_k_m, q4_k_m, "
            "q3_k_m, q2_k ...",
        ),
        click.option(
            f"{flag}weights-gb",
            "weights_gb",
            type=click.FloatRange(min=0.0, min_open=True),
            metavar="GB",
            help=f"Weights in GB, instead of {flag}params x {flag}precision (e.g. the checkpoint's size).",
        ),
        click.option(
            f"{flag}gpu",
            "gpu",
            callback=_planner_value(_gpu),
            metavar="MODEL",
            help="Card or machine to size on (H200, B200, GB300, 'DGX Station GB300' ...); default: the audited "
            "machine's model.",
        ),
        click.option(
            f"{flag}kv-headroom",
            "kv_headroom",
            type=_FRACTION,
            metavar="FRACTION",
            help=f"KV cache + activations as a fraction of the weights [default: {DEFAULT_KV_HEADROOM}].",
        ),
    ]
    if not full:
        return core
    return [
        *core,
        click.option(
            f"{flag}safety-margin",
            "safety_margin",
            type=_FRACTION,
            metavar="FRACTION",
            help="Extra margin on weights + KV [default: 0 with --kv-headroom, 0.1 with a KV shape].",
        ),
        click.option(
            f"{flag}reserve-gb",
            "reserve_gb",
            type=click.FloatRange(min=0.0),
            default=DEFAULT_RESERVE_GB,
            show_default=True,
            metavar="GB",
            help="Per card, held back for the CUDA context, NCCL buffers and allocator slack.",
        ),
        click.option(f"{flag}heads", "heads", type=_POSITIVE, help="Attention heads (TP must divide them)."),
        click.option(f"{flag}context", "context", type=_POSITIVE, help="KV shape: context length in tokens."),
        click.option(
            f"{flag}layers",
            "layers",
            type=_POSITIVE,
            help="Transformer layers (the KV shape; with --hidden, the all-reduce cost per decode step).",
        ),
        click.option(
            f"{flag}hidden",
            "hidden",
            type=_POSITIVE,
            help="Hidden size: with --layers and --batch, what the TP group's all-reduces cost per decode step, "
            "inside one NVLink domain and across the split or network.",
        ),
        click.option(f"{flag}kv-heads", "kv_heads", type=_POSITIVE, help="KV shape: key/value heads (GQA)."),
        click.option(f"{flag}head-dim", "head_dim", type=_POSITIVE, help="KV shape: head dimension."),
        click.option(
            f"{flag}batch",
            f"{flag}concurrency",
            "batch",
            type=_POSITIVE,
            default=1,
            show_default=True,
            help="Sequences served together (the KV shape, and each decode step's all-reduce).",
        ),
        click.option(
            f"{flag}kv-precision",
            "kv_precision",
            default="bf16",
            show_default=True,
            callback=_planner_value(_kv_precision),
            help="KV shape: cache precision (bf16, fp8, ...).",
        ),
    ]


def plan_request(values: dict[str, Any], flag: str) -> PlanRequest | None:
    """The planner's options -> PlanRequest; None when no size was given (no plan asked for)."""

    def name(key: str) -> str:
        return flag + key.replace("_", "-")

    params, weights, precision = values["params"], values["weights_gb"], values["precision"]
    if params is None and weights is None:
        asked = [k for k in ("precision", "active", "gpu", "kv_headroom") if values[k] is not None]
        if asked:
            raise click.UsageError(f"{name(asked[0])} needs the model size: {name('params')} or {name('weights_gb')}")
        return None
    from topoaudit.model.plan import KvShape, ModelShape, PlanRequest

    if params is not None and weights is not None and precision is not None:
        raise click.UsageError(f"give {name('params')} with {name('precision')}, or {name('weights_gb')}, not both")
    if weights is None and precision is None:
        raise click.UsageError(f"{name('params')} needs {name('precision')} (e.g. int4, fp8, bf16, q4_k_m)")
    shape = None
    given = [k for k in _SHAPE if values.get(k) is not None and (k != "layers" or values.get("hidden") is None)]
    if given:
        missing = ", ".join(name(k) for k in _SHAPE if values.get(k) is None)
        if missing:
            raise click.UsageError(f"a KV shape needs all of context, layers, kv-heads and head-dim; missing {missing}")
        if values["kv_headroom"] is not None:
            raise click.UsageError(f"give {name('kv_headroom')} or the KV shape ({name('context')} ...), not both")
        shape = KvShape(
            context_tokens=values["context"],
            layers=values["layers"],
            kv_heads=values["kv_heads"],
            head_dim=values["head_dim"],
            batch=values["batch"],
            kv_precision=values["kv_precision"],
        )
    model_shape = None
    if values.get("hidden") is not None:
        if values.get("layers") is None:
            raise click.UsageError(
                f"{name('hidden')} needs {name('layers')}: the all-reduces per decode step are 2 per layer"
            )
        model_shape = ModelShape(values["layers"], values["hidden"], values.get("batch", 1))
    headroom = values["kv_headroom"]
    return PlanRequest(
        params_b=params,
        active_params_b=values["active"],
        precision=precision,
        weights_gb=weights,
        kv_headroom=DEFAULT_KV_HEADROOM if headroom is None else float(headroom),
        kv_shape=shape,
        safety_margin=values.get("safety_margin"),
        reserve_gb=float(values.get("reserve_gb", DEFAULT_RESERVE_GB)),
        attention_heads=values.get("heads"),
        gpu=values["gpu"],
        shape=model_shape,
    )


plan_options = typed("plan", _size_options("--plan-", full=False), lambda values: plan_request(values, "--plan-"))
"""``plan=PlanRequest | None``: ``--plan-*`` on the commands that judge a machine."""

planner_options = typed("plan", _size_options("--", full=True), lambda values: plan_request(values, "--"))
"""``plan=PlanRequest | None``: the `plan` command's own size options."""


# --- the bench's sweep, the probe ----------------------------------------------------------------------


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    from topoaudit.units import parse_size

    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _groups(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    from topoaudit.bench.groups import parse_groups

    try:
        return tuple(parse_groups(value))
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _sweep(values: dict[str, Any]) -> SweepRequest:
    from topoaudit.app.bench import SweepRequest

    return SweepRequest(
        groups=values["groups"],
        backend=values["backend"],
        nproc=values["nproc"] or 0,
        min_bytes=values["min_bytes"],
        max_bytes=values["max_bytes"],
        pair_bytes=values["pair_bytes"] or 0,
        timeout_s=values["timeout_s"],
        expect_busbw_gbps=values["expect_busbw"],
        topology=values["topology"],
    )


def sweep_options(with_topology: bool) -> Decorator:
    """``sweep=SweepRequest``: what an all-reduce sweep measures (``--topology`` only on `bench`)."""
    options: list[Decorator] = [
        click.option(
            "--groups",
            default="all",
            show_default=True,
            callback=_groups,
            help="Comma list: all, domains (each NVLink domain), cross (one GPU per domain), pairs (every pair "
            "alone: the pairwise matrix and measured islands), tp=N (the TP placements), nodepairs (across "
            "nodes: rounds of disjoint node pairs that name a slow node; nodepairs=ref: each node with rank 0's).",
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
    ]
    if with_topology:
        options.append(
            click.option(
                "--topology",
                type=click.Path(dir_okay=False, exists=True),
                help="`nvidia-smi topo -m` text, snapshot or report of this machine: NVLink domains, expected busbw.",
            )
        )
    return typed("sweep", options, lambda values: _sweep({"topology": None, **values}))


probe_options = typed(
    "probe_request",
    [
        click.option(
            "--sysfs-root",
            default="/",
            show_default=True,
            hidden=True,
            type=click.Path(file_okay=False),
            help="Read sysfs and /proc under this root (tests).",
        ),
        click.option(
            "--call-timeout",
            type=click.FloatRange(min=0.1),
            default=10.0,
            show_default=True,
            help="Seconds one NVML call may take before it counts as failed.",
        ),
        click.option(
            "--smi-timeout",
            type=click.FloatRange(min=0.1),
            default=20.0,
            show_default=True,
            help="Seconds one nvidia-smi run may take before it counts as failed.",
        ),
    ],
    lambda values: _probe_request(values),
)
"""``probe_request=ProbeRequest``: how patiently to probe this machine."""


def _probe_request(values: dict[str, Any]) -> ProbeRequest:
    from topoaudit.app.audit import ProbeRequest

    return ProbeRequest(values["sysfs_root"], values["call_timeout"], values["smi_timeout"])


# --- bundled examples ----------------------------------------------------------------------------------

EXAMPLE_HELP = "Judge a bundled example box instead of a capture; `--example list` names them."


def print_examples(fmt: str) -> None:
    """The bundled example boxes: JSON for ``--format json``, else one aligned line each."""
    from topoaudit.app.common import example_list

    found = example_list()
    if fmt == "json":
        import json

        rows = [
            {"name": e.name, "gpu_model": e.gpu_model, "description": e.description, "provenance": e.provenance}
            for e in found
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for example in found:
        click.echo(f"{example.name:16} {example.description}")


# --- progress of a sweep -------------------------------------------------------------------------------


def with_progress(run: Callable[[Progress | None], T], fmt: str) -> T:
    """``run(progress)`` under a progress bar on standard error: only on a terminal, never for JSON, and only
    on the rank that reports (rank 0 of a torchrun job). Elsewhere the bench prints plain progress lines."""
    from topoaudit.app.bench import bench_rank

    if fmt == "json" or not sys.stderr.isatty() or bench_rank() not in (None, 0):
        return run(None)
    bar, update = progress_bar()
    with bar:
        return run(update)


def progress_bar(console: Any = None) -> tuple[Any, Progress]:
    """The bench's progress bar (rich, transient) and the callback that moves it. Until the first step is
    measured it says "starting ranks" with no count (the number of steps is not known yet)."""
    from rich.markup import escape
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    bar = Bar(
        TextColumn("[bold]bench[/] {task.description}"),
        BarColumn(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        transient=True,
        console=console,
    )
    task = bar.add_task("starting ranks", total=None, count="")

    def update(done: int, total: int, what: str) -> None:
        bar.update(task, completed=done, total=total, description=escape(what), count=f"{done}/{total}")

    return bar, update
