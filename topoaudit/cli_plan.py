"""`topoaudit plan`: size a model, count the cards, and check the TP group against an NVLink domain.

Also the ``--plan-*`` options other commands (``analyze``, ``audit``) add with :func:`plan_options` and
turn into a report section with :func:`attach_plan_from_options`.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from topoaudit import __version__
from topoaudit.errors import ConfigError
from topoaudit.exitcodes import ExitCode
from topoaudit.model.codec import encode
from topoaudit.model.report import Report
from topoaudit.plan import DEFAULT_KV_HEADROOM, DEFAULT_RESERVE_GB, KvShape, Plan, PlanRequest, make_plan
from topoaudit.plan.attach import attach_plan, plan_finding, resolve_gpu
from topoaudit.plan.precision import find_precision, kv_bytes_per_element
from topoaudit.plan.sizing import parse_params

F = TypeVar("F", bound=Callable[..., Any])


def _params(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return parse_params(value)
    except ConfigError as exc:
        raise click.BadParameter(f"{exc}; {exc.hint}" if exc.hint else str(exc)) from exc


def _precision(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return find_precision(value).key
    except ConfigError as exc:
        raise click.BadParameter(f"{exc}; {exc.hint}") from exc


def _gpu(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return resolve_gpu(value).key
    except ConfigError as exc:
        raise click.BadParameter(f"{exc}; {exc.hint}") from exc


def _usage(exc: ConfigError) -> click.UsageError:
    """A planner refusal caused by option values is a usage error (exit 2), said in one sentence."""
    return click.UsageError(f"{exc}" + (f" ({exc.hint})" if exc.hint else ""))


def _kv_precision(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        kv_bytes_per_element(value)
    except ConfigError as exc:
        raise click.BadParameter(f"{exc}; {exc.hint}") from exc
    return value


_FRACTION = click.FloatRange(min=0.0, max=10.0)
_POSITIVE = click.IntRange(min=1)


def _size_options(prefix: str, full: bool = True) -> list[Callable[[F], F]]:
    """The model-size and serving options; ``prefix`` is "" for `plan`, "plan-" for other commands.

    Other commands get the core six (``full=False``); the KV-shape and reserve knobs are `plan`'s.
    """
    p = prefix
    core = [
        click.option(
            f"--{p}params",
            "plan_params",
            callback=_params,
            metavar="N",
            help="Total parameters: 744B, 1.6T, 70b (all experts of a MoE stay in memory).",
        ),
        click.option(
            f"--{p}active", "plan_active", callback=_params, metavar="N", help="Active parameters per token (MoE)."
        ),
        click.option(
            f"--{p}precision",
            "plan_precision",
            callback=_precision,
            metavar="FMT",
            help="Weight format: fp32, bf16, fp16, fp8, int8, int4, nvfp4, mxfp4, q8_0, q6_k, q5_k_m, q4_k_m, "
            "q3_k_m, q2_k ...",
        ),
        click.option(
            f"--{p}weights-gb",
            "plan_weights_gb",
            type=click.FloatRange(min=0.0, min_open=True),
            metavar="GB",
            help=f"Weights in GB, instead of --{p}params x --{p}precision (e.g. the checkpoint's size).",
        ),
        click.option(
            f"--{p}gpu",
            "plan_gpu",
            callback=_gpu,
            metavar="MODEL",
            help="Card to size on (H200, B200, GB300 ...); default: the audited machine's model.",
        ),
        click.option(
            f"--{p}kv-headroom",
            "plan_kv_headroom",
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
            f"--{p}safety-margin",
            "plan_safety_margin",
            type=_FRACTION,
            metavar="FRACTION",
            help="Extra margin on weights + KV [default: 0 with --kv-headroom, 0.1 with a KV shape].",
        ),
        click.option(
            f"--{p}reserve-gb",
            "plan_reserve_gb",
            type=click.FloatRange(min=0.0),
            default=DEFAULT_RESERVE_GB,
            show_default=True,
            metavar="GB",
            help="Per card, held back for the CUDA context, NCCL buffers and allocator slack.",
        ),
        click.option(f"--{p}heads", "plan_heads", type=_POSITIVE, help="Attention heads (TP must divide them)."),
        click.option(f"--{p}context", "plan_context", type=_POSITIVE, help="KV shape: context length in tokens."),
        click.option(f"--{p}layers", "plan_layers", type=_POSITIVE, help="KV shape: transformer layers."),
        click.option(f"--{p}kv-heads", "plan_kv_heads", type=_POSITIVE, help="KV shape: key/value heads (GQA)."),
        click.option(f"--{p}head-dim", "plan_head_dim", type=_POSITIVE, help="KV shape: head dimension."),
        click.option(
            f"--{p}batch", "plan_batch", type=_POSITIVE, default=1, show_default=True, help="KV shape: sequences."
        ),
        click.option(
            f"--{p}kv-precision",
            "plan_kv_precision",
            default="bf16",
            show_default=True,
            callback=_kv_precision,
            help="KV shape: cache precision (bf16, fp8, ...).",
        ),
    ]


def _own_options(fn: F) -> F:
    for decorator in reversed(_size_options("")):
        fn = decorator(fn)
    return fn


def plan_options(fn: F) -> F:
    """The ``--plan-*`` options for commands that audit a machine (analyze, audit)."""
    for decorator in reversed(_size_options("plan-", full=False)):
        fn = decorator(fn)
    return fn


def request_from_options(kw: dict[str, Any], flag: str = "--") -> PlanRequest | None:
    """Click values -> PlanRequest; None when no size was given (no plan requested)."""
    params, weights, precision = kw.get("plan_params"), kw.get("plan_weights_gb"), kw.get("plan_precision")
    if params is None and weights is None:
        asked = [k for k in ("plan_precision", "plan_active", "plan_gpu", "plan_kv_headroom") if kw.get(k) is not None]
        if asked:
            raise click.UsageError(
                f"{flag}{asked[0][5:].replace('_', '-')} needs the model size: {flag}params or {flag}weights-gb"
            )
        return None
    if params is not None and weights is not None and precision is not None:
        raise click.UsageError(f"give {flag}params with {flag}precision, or {flag}weights-gb, not both")
    if weights is None and precision is None:
        raise click.UsageError(f"{flag}params needs {flag}precision (e.g. int4, fp8, bf16, q4_k_m)")
    shape_keys = ("plan_context", "plan_layers", "plan_kv_heads", "plan_head_dim")
    given = [k for k in shape_keys if kw.get(k) is not None]
    shape = None
    if given:
        missing = [k for k in shape_keys if kw.get(k) is None]
        if missing:
            names = ", ".join(flag + k[5:].replace("_", "-") for k in missing)
            raise click.UsageError(f"a KV shape needs all of context, layers, kv-heads and head-dim; missing {names}")
        if kw.get("plan_kv_headroom") is not None:
            raise click.UsageError(f"give {flag}kv-headroom or the KV shape ({flag}context ...), not both")
        shape = KvShape(
            context_tokens=int(kw["plan_context"]),
            layers=int(kw["plan_layers"]),
            kv_heads=int(kw["plan_kv_heads"]),
            head_dim=int(kw["plan_head_dim"]),
            batch=int(kw.get("plan_batch") or 1),
            kv_precision=str(kw.get("plan_kv_precision") or "bf16"),
        )
    headroom = kw.get("plan_kv_headroom")
    return PlanRequest(
        params_b=params,
        active_params_b=kw.get("plan_active"),
        precision=precision,
        weights_gb=weights,
        kv_headroom=DEFAULT_KV_HEADROOM if headroom is None else float(headroom),
        kv_shape=shape,
        safety_margin=kw.get("plan_safety_margin"),
        reserve_gb=float(kw.get("plan_reserve_gb", DEFAULT_RESERVE_GB)),
        attention_heads=kw.get("plan_heads"),
    )


def attach_plan_from_options(report: Report, kw: dict[str, Any]) -> Report:
    """``analyze``/``audit``: the report with a ``plan`` section when ``--plan-params``/``--plan-weights-gb``."""
    request = request_from_options(kw, flag="--plan-")
    if request is None:
        return report
    spec = resolve_gpu(kw.get("plan_gpu"), report)  # ConfigError (exit 4): the box's model cannot be sized
    try:
        return attach_plan(report, request, spec.key)
    except ConfigError as exc:
        raise _usage(exc) from exc


# --- the `plan` command -----------------------------------------------------------------------------


@click.command("plan")
@_own_options
@click.option(
    "--from",
    "from_path",
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="PATH",
    help="Check the plan against this machine: a snapshot, a saved report or `nvidia-smi topo -m` text.",
)
@click.option("--example", metavar="NAME", help="Check the plan against a bundled example box (see analyze).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["console", "json", "markdown"]),
    default="console",
    show_default=True,
    help="Output format.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the plan to FILE.")
@click.option("--color/--no-color", default=None, help="Colour the console format (default: on a TTY).")
@click.pass_context
def plan(ctx: click.Context, from_path: str | None, example: str | None, fmt: str, **kw: Any) -> None:
    """Size a model and check that its tensor-parallel group fits one NVLink domain.

    The footprint is weights (parameters x bytes per parameter) + KV-cache headroom (25% by default) +
    a safety margin; the card count and TP size follow from the card's memory. The TP group is checked
    against the GPU model's standard node and, with --from/--example, against that machine's real
    NVLink domains. Exit 1 when the group cannot stay inside one domain; 2 on a bad option value or
    combination; 4 when the --from input is unreadable or its GPU model cannot be sized (pass --gpu).

    \b
    Examples:
      topoaudit plan --params 744B --precision int4 --gpu H200
      topoaudit plan --params 1600B --active 49B --precision int4 --gpu H200 --kv-headroom 0.25
      topoaudit plan --params 753B --precision nvfp4 --gpu GB300
      topoaudit plan --weights-gb 464 --from snapshot.json
      topoaudit plan --params 1600B --precision int4 --example h200-nvl-split
    """
    request = request_from_options(kw)
    if request is None:
        raise click.UsageError("give the model size: --params N --precision FMT, or --weights-gb GB")
    if from_path and example:
        raise click.UsageError("give --from PATH or --example NAME, not both")
    report: Report | None = None
    if from_path or example:
        from topoaudit.cli_analyze import judge
        from topoaudit.loaders import load_example, load_path

        loaded = load_example(example) if example else load_path(str(from_path))
        audited = judge(loaded, {})
        spec = resolve_gpu(kw.get("plan_gpu"), audited)  # ConfigError (exit 4): the box's model cannot be sized
        try:
            report = attach_plan(audited, request, spec.key)
        except ConfigError as exc:
            raise _usage(exc) from exc
        result = report.plan
        assert isinstance(result, Plan)
    else:
        if not kw.get("plan_gpu"):
            raise click.UsageError("the planner needs a GPU model: --gpu MODEL, or --from/--example a machine")
        try:
            result = make_plan(request, resolve_gpu(kw.get("plan_gpu")))
        except ConfigError as exc:
            raise _usage(exc) from exc
    code = ExitCode.OK if result.fits_one_domain else ExitCode.FINDINGS
    text = _render(result, report, fmt, code, kw.get("color"), kw.get("output") is None)
    output = kw.get("output")
    if output:
        from pathlib import Path

        from topoaudit.cli import write_atomic

        write_atomic(Path(output), text)
        click.echo(f"topoaudit plan: {result.verdict} (exit {int(code)}); written to {output}", err=True)
    else:
        click.echo(text, nl=False)
    ctx.exit(int(code))


def _render(result: Plan, report: Report | None, fmt: str, code: int, color: bool | None, to_stdout: bool) -> str:
    demo = report is not None and report.source.demo
    source = f"{report.source.kind} {report.source.name}" if report is not None else "catalog standard node"
    if fmt == "json":
        extra = plan_finding(result)
        doc = {
            "kind": "topoaudit-plan",
            "tool_version": __version__,
            "checked_against": source,
            "demo": demo,
            "plan": encode(result),
            "findings": [encode(extra)] if extra else [],
            "verdict": result.verdict,
            "exit_code": int(code),
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        from topoaudit.render.markdown import cell, plan_lines

        lines = ["# topoaudit plan", "", f"Checked against: {cell(source)} (exit {int(code)})", ""]
        if demo:
            lines += ["> **Demo:** a bundled example box, not the machine this ran on.", ""]
        return "\n".join([*lines, *plan_lines(result)]) + "\n"
    from rich.console import Console
    from rich.text import Text

    from topoaudit.render.console import plan_section

    tty = to_stdout and sys.stdout.isatty()
    use_color = bool(color if color is not None else tty)
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=120,
        force_terminal=use_color,
        no_color=not use_color,
        color_system="standard" if use_color else None,
        highlight=False,
    )
    console.print(Text(f"checked against: {source}"))
    if demo:
        console.print(Text("DEMO: a bundled example box, not the machine this ran on.", style="bold magenta"))
    console.print(plan_section(result))
    extra = plan_finding(result)
    if extra is not None:
        console.print(Text(f"FAIL {extra.code}: {extra.message}", style="bold red"))
        console.print(Text(f"remedy: {extra.remedy}"))
    console.print(Text(f"exit {int(code)}: {result.verdict}", style="dim"))
    return buffer.getvalue()
