"""Judge NCCL RAS output: missing ranks, rank errors and peers the monitor saw die fail.

A rank RAS cannot collect data from is an unresponsive, stopped or dead process: the job hangs on it. A peer
the monitor saw stop answering, and not recover, warns. The finding names the communicator, the ranks, and
the host and process behind each where RAS printed them, so that ``fleet`` can drain the host. A
communicator the table marks INCOMPLETE or ERROR is judged so even where the Errors section lists no rank.
A MISMATCH (ranks at different operation counts, listed under RAS's Warnings) warns: a snapshot taken while
collectives run can catch it for a moment, a job that is stuck shows it on every query. An all-healthy dump yields
no finding.
"""

from __future__ import annotations

from typing import Any

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_ras import RasCommunicator, RasDump, RasEvent, RasRank, peers_in_trouble, ras_from_dict
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
        first_few([_where(r) + (f" {r.problem}" if r.problem not in ("", "missing") else "") for r in ranks], 4)
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
    if not what:
        what = "the communicator table marks it ERROR; its ranks are not listed (rerun `ncclras -v`)"
    return finding(
        "nccl-ras-rank-error",
        f"NCCL communicator {c.ident}: ranks report errors{' on ' + ', '.join(hosts) if hosts else ''}: {what}",
        communicator=c.ident,
        hosts=hosts,
        ranks=[_rank_evidence(r) for r in bad],
        errors=list(c.errors),
    )


def _mismatch(c: RasCommunicator) -> Finding:
    counts = "; ".join(c.mismatches[:4]) if c.mismatches else "the counts are not in the paste"
    named = first_few([_where(r) for r in c.ranks], 4)
    outliers = f" The ranks RAS names: {named}." if c.ranks else ""
    return finding(
        "nccl-ras-mismatch",
        f"NCCL RAS lists communicator {c.ident} under Warnings as MISMATCH: {counts}.{outliers} One query cannot "
        "tell: counts that grow on the next query are collectives outpacing RAS (no concern, NCCL's docs say), "
        "counts that stay put mean the communicator is stuck.",
        communicator=c.ident,
        mismatches=list(c.mismatches),
        ranks=[_rank_evidence(r) for r in c.ranks],
        hosts=sorted({r.host for r in c.ranks if isinstance(r.host, str)}),
    )


def _peer(e: RasEvent) -> str:
    gpus = f" managing GPU {e.gpus}" if e.gpus else ""
    pid = f"process {e.pid}" if isinstance(e.pid, int) else "a process"
    return f"{pid} on {e.host if isinstance(e.host, str) else 'an unknown node'}{gpus}"


def _events(dump: RasDump) -> list[Finding]:
    """Judge the monitor's peers: dead ones fail, ones still not answering at the end of the capture warn."""
    found: list[Finding] = []
    for state, severity in (("dead", Severity.FAIL), ("unresponsive", Severity.WARN)):
        peers = [e for s, e in peers_in_trouble(dump) if s == state]
        if not peers:
            continue
        hosts = sorted({e.host for e in peers if isinstance(e.host, str)})
        said = "declared dead" if state == "dead" else "stopped answering and had not recovered when the capture ended"
        named = first_few([f"{_peer(e)} ({e.event} at {e.timestamp})" for e in peers], 4)
        found.append(
            finding(
                "nccl-ras-ranks-missing",
                f"NCCL RAS monitor: {len(peers)} peer process(es) {said}: {named}",
                severity=severity,
                hosts=hosts,
                processes=[
                    {
                        "state": state,
                        "host": e.host if isinstance(e.host, str) else e.host.reason,
                        "pid": e.pid if isinstance(e.pid, int) else e.pid.reason,
                        "gpus": e.gpus,
                        "event": e.event,
                        "timestamp": e.timestamp,
                    }
                    for e in peers
                ],
            )
        )
    return found


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
    Code(
        "nccl-ras-mismatch",
        "warn",
        title="NCCL RAS lists a communicator whose ranks are at different operation counts (MISMATCH)",
        remedy=(
            "Run `ncclras` again a few seconds later: counts that moved were a snapshot of running collectives; counts "
            "that stayed put mean the job is stuck, waiting on the ranks behind (or on the few ahead, which issued a "
            "collective the others never will): dump their stacks (`py-spy dump --pid PID`) on the hosts named."
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
    """Return each communicator's findings (missing ranks, rank errors, else a MISMATCH) and the monitor's peers."""
    found: list[Finding] = []
    for c in dump.communicators:
        missing = bool(c.missing_count or c.missing or "INCOMPLETE" in c.flags)
        erring = bool(c.errors or any(r.problem for r in c.ranks) or "ERROR" in c.flags)
        if missing:
            found.append(_missing(c, dump))
        if erring:
            found.append(_errors(c))
        if "MISMATCH" in c.flags and not (missing or erring):
            found.append(_mismatch(c))
    found += _events(dump)
    return found
