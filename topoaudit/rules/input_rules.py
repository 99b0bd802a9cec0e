"""Rules over the input itself: a damaged paste read only in part, a GPU model the catalog does not know.

Neither is a fault of the box; both say how far the rest of the report can be trusted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from topoaudit.model.finding import Finding, Severity
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.codes import Code
from topoaudit.rules.registry import rule


@rule(
    Code(
        "input-recovered",
        "warn",
        title="The input was damaged and partly recovered",
        remedy="Re-capture `nvidia-smi topo -m` (without truncation) to audit every cell.",
    ),
)
def input_recovered(ctx: RuleContext) -> Iterable[Finding]:
    """Say that the input was damaged and partly recovered, and where first.

    A re-typed or glued ``topo -m`` is read where its symmetric matrix makes the missing cells unambiguous; every
    recovered place is an input issue of the report, and ``--strict`` exits 3 on it. A paste cut before its last rows
    is no damage: its issue is ``partial`` (the gate says how many pairs it judged; ``--strict`` exits 3 on it too).
    Damage only in the CPU and NUMA affinity columns (a terminal's cut, two values glued) leaves every link read:
    the finding is then information, and the affinity it could not read is recorded as failed.
    """
    recovered = [i for i in ctx.issues if i.action == "recovered"]
    affinity = [i for i in ctx.issues if i.action == "affinity"]
    if not recovered and not affinity:
        return
    first = (recovered or affinity)[0]
    said = (
        f"The input was damaged; {len(recovered) + len(affinity)} place(s) recovered."
        if recovered
        else f"The input's CPU or NUMA affinity columns were damaged in {len(affinity)} place(s); every link was read."
    )
    yield finding(
        "input-recovered",
        f"{said} First, line {first.line}: {first.message.rstrip('.')}.",
        **({} if recovered else {"severity": Severity.INFO}),
        lines=sorted(i.line for i in recovered + affinity),
    )


NOT_IN_CATALOG = (
    "The catalog has no entry for this model (`python -m topoaudit.catalog` lists them): the box is judged from its "
    "own links; --gpu-model helps only to name a catalog model the box really is."
)


@rule(
    Code(
        "model-unknown",
        "info",
        title="The GPU model is not in the catalog (or not in the input); expectations come from link counts alone",
        remedy="Pass --gpu-model, or analyse a snapshot from `topoaudit probe`, for model-specific expectations.",
    ),
)
def model_unknown(ctx: RuleContext) -> Iterable[Finding]:
    """Say that the GPU model is not in the catalog, or not in the input at all.

    The rules then judge from link counts alone (the box's own GPUs are the expectation); ``--gpu-model`` or a
    probe's snapshot gives the model-specific expectations.
    """
    if ctx.spec is not None or not ctx.machine.gpus or ctx.identified.contradiction:
        return  # a model the links contradict is gpu-model-contradicts-links's
    why = "; expectations come from link counts alone."
    if isinstance(ctx.gpu_model, str):
        named = finding(
            "model-unknown", f"GPU model {ctx.gpu_model!r} not in the catalog{why}", gpu_model=ctx.gpu_model
        )
        yield replace(named, remedy=NOT_IN_CATALOG)  # the input named it: --gpu-model cannot name it better
    else:
        yield finding("model-unknown", f"GPU model not in the input{why}", gpu_model_reason=ctx.gpu_model.reason)
