"""Judge an NCCL RAS status dump: a communicator with missing ranks, or ranks reporting errors, fails.

A rank RAS cannot collect data from is an unresponsive, stopped or dead process: the job hangs on it. The
finding names the communicator, the ranks, and the host and process behind each where RAS printed them.
An all-healthy dump yields no finding.
"""

from __future__ import annotations

from typing import Any

from topoaudit.model.finding import Finding
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_ras import RasCommunicator, RasDump, RasRank, ras_from_dict
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import NCCL_RAS
from topoaudit.rules.registry import rule


def _where(r: RasRank) -> str:
    parts = [f"GPU {r.gpu}" if isinstance(r.gpu, int) else "", f"process {r.pid}" if isinstance(r.pid, int) else ""]
    where = ", ".join(p for p in parts if p) + (f" on {r.host}" if isinstance(r.host, str) else "")
    return f"rank {r.rank} ({where.strip()})" if where else f"rank {r.rank}"


def _rank_evidence(r: RasRank) -> dict[str, Any]:
    out: dict[str, Any] = {"rank": r.rank}
    for key in ("host", "pid", "gpu"):
        value = getattr(r, key)
        if not isinstance(value, (int, str)):
            value = value.reason
        out[key] = value
    if r.problem:
        out["problem"] = r.problem
    return out


def _missing(c: RasCommunicator, dump: RasDump) -> Finding:
    ranks = list(c.missing)
    if ranks and all(not isinstance(r.host, str) for r in ranks) and dump.processes:
        # the older text form lists the missing rank numbers only: the missing processes name their hosts
        hosts = sorted({p.host for p in dump.processes})
    else:
        hosts = sorted({r.host for r in ranks if isinstance(r.host, str)})
    named = (
        first_few([_where(r) + (f" {r.problem}" if r.problem != "missing" else "") for r in ranks], 4)
        if ranks
        else "ranks not listed by RAS"
    )
    size = f" of {c.size}" if isinstance(c.size, int) else ""
    host_text = f" on {', '.join(hosts)}" if hosts else ""
    dead = [p for p in dump.processes if p.state == "dead"]
    message = f"NCCL communicator {c.ident}: {c.missing_count}{size} rank(s) missing{host_text}: {named}" + (
        f"; {len(dead)} process(es) RAS considers dead" if dead else ""
    )
    return finding(
        "nccl-ras-ranks-missing",
        message,
        communicator=c.ident,
        missing_ranks_count=c.missing_count,
        size_ranks=c.size if isinstance(c.size, int) else "not in the RAS output",
        hosts=hosts,
        missing_ranks=[_rank_evidence(r) for r in ranks],
        processes=[{"state": p.state, "host": p.host, "pid": p.pid, "gpus": p.gpus} for p in dump.processes],
    )


def _errors(c: RasCommunicator) -> Finding:
    bad = [r for r in c.ranks if r.problem]
    hosts = sorted({r.host for r in bad if isinstance(r.host, str)})
    what = first_few([f"{_where(r)}: {r.problem}" for r in bad], 4) if bad else "; ".join(c.errors)
    return finding(
        "nccl-ras-rank-error",
        f"NCCL communicator {c.ident}: ranks report errors{' on ' + ', '.join(hosts) if hosts else ''}: {what}",
        communicator=c.ident,
        hosts=hosts,
        ranks=[_rank_evidence(r) for r in bad],
        errors=list(c.errors),
    )


@rule(
    Code(
        "nccl-ras-ranks-missing",
        "fail",
        title=(
            "NCCL RAS cannot collect data from some ranks of a communicator: an unresponsive, stopped or dead process"
        ),
        remedy=(
            "On the named host, check the named process (`ps -p PID`, `py-spy dump --pid PID`, `dmesg` for Xid and OOM "
            "kills) and rerun `ncclras`: a rank still missing after 60 s is dead; restart the job without that node."
        ),
    ),
    Code(
        "nccl-ras-rank-error",
        "fail",
        title="NCCL RAS reports initialization or asynchronous errors on ranks of a communicator",
        remedy=(
            "Read the named ranks' NCCL_DEBUG=WARN lines on their hosts for the error (ncclSystemError, "
            "ncclRemoteError); check the host's NICs and GPUs (`dmesg` for Xid) before restarting the job there."
        ),
    ),
    needs=(NCCL_RAS,),
)
def ras_communicators(ctx: RuleContext) -> list[Finding]:
    """Fail a communicator RAS cannot collect data from some ranks of, or whose ranks report errors.

    A rank RAS cannot reach is an unresponsive, stopped or dead process: the job hangs on it. The finding names
    the communicator, the ranks, and the host and process behind each where RAS printed them.
    """
    assert not isinstance(ctx.ras, Unsupported)
    return judge_ras(ras_from_dict(ctx.ras))


def judge_ras(dump: RasDump) -> list[Finding]:
    """One finding per communicator with missing ranks, one per communicator whose ranks report errors."""
    found: list[Finding] = []
    for c in dump.communicators:
        if c.missing_count or c.missing:
            found.append(_missing(c, dump))
        if c.errors or any(r.problem for r in c.ranks):
            found.append(_errors(c))
    return found
