"""Known messages (``topoaudit/catalog/signatures.toml``) found on any pasted line, as the findings they name.

The catalog maps each message NCCL, nccl-tests, nvbandwidth, CUDA, the driver, nvidia-smi, the fabric manager and the
health checkers print to a finding code, with what it means and how to fix it. One finding per code quotes the first
lines that showed it. A rule that judged a line's facts owns its code: this rule is a fallback
(:func:`~topoaudit.rules.registry.register_rule`), so an NCCL WARN that the log's rules read, or a ``#wrong`` count
the sweep's rules read, is not said twice.

What a message means may depend on the box: NVLS "not available" is normal on an A100 but not on an NVSwitch H100,
an ``<inactive>`` NVLink is by design on an H100 NVL but a fault on an SXM board, sockets instead of InfiniBand
cost nothing on one node, and a fabric manager that fails to start matters only where there are NVSwitches. Those
are judged against the GPU model (``--gpu-model`` or what the input names) and the hosts the paste shows, and stay
informational when the box is not known.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from topoaudit.model.finding import Finding, Severity
from topoaudit.model.paste import Hit
from topoaudit.model.values import Unsupported
from topoaudit.parse.signatures import TIERS, Signature, catalog, declared_codes
from topoaudit.rules.base import RuleContext, as_sentence, finding, first_few
from topoaudit.rules.codes import Code, declare_code
from topoaudit.rules.needs import MODEL_DECIDES, SIGNATURES, named_not_judged, says_nothing
from topoaudit.rules.one_node import carries_nothing
from topoaudit.rules.registry import register_rule
from topoaudit.rules.transfer_figures import TRANSFER_TABLES
from topoaudit.rules.transfer_figures import describe as describe_transfer
from topoaudit.rules.transfer_figures import reading as transfer_reading

QUOTED_LINES = 3
"""Lines a finding quotes; the rest are counted and listed in its evidence."""


def _declare_catalog_codes() -> None:
    """Declare the codes the catalog introduces, each documented by the messages that raise it."""
    cat = catalog()
    for declared in declared_codes():
        messages = [s for s in cat.signatures if s.code == declared.code]
        doc = (
            f"{declared.title}.\n\nRaised when a pasted line holds one of {len(messages)} known message(s) of the "
            "signature catalog (docs/signatures.md): "
            + "; ".join(f"`{s.id}` ({s.meaning.rstrip('.')})" for s in messages[:6])
            + ("; ..." if len(messages) > 6 else "")
            + "."
        )
        declare_code(
            Code(
                declared.code,
                declared.severity,
                title=declared.title,
                remedy=declared.remedy,
                needs=(SIGNATURES,),
                doc=doc,
                declared_in=__name__,
            )
        )


def known_messages(ctx: RuleContext) -> Iterator[Finding]:
    """Each finding code the pasted lines' known messages name, once, with their meaning, fix and lines."""
    hits = ctx.signatures
    if isinstance(hits, Unsupported) or not hits:
        return
    cat = catalog()
    owned = _owned(ctx)
    by_code: dict[str, list[tuple[Hit, Signature]]] = {}
    for hit in hits:
        signature = cat.get(hit.signature)
        if signature.code in owned.get(hit.line, ()) or says_nothing(hit):
            continue
        by_code.setdefault(signature.code, []).append((hit, signature))
    _unwound_by_its_cause(by_code)
    tier = {t: rank for rank, t in enumerate(TIERS)}
    ordered = sorted(by_code.items(), key=lambda item: -max(tier[s.tier] for _, s in item[1]))  # a message first
    for code, found in ordered:
        yield _finding(code, [_Judged(h, s, _severity(s, h, found, ctx)) for h, s in found])


_ERROR_RETURN = "nccl-error-return"


def _unwound_by_its_cause(by_code: dict[str, list[tuple[Hit, Signature]]]) -> None:
    """Leave NCCL's error-return chain to the message that names why the call failed, where one does.

    The chain (``init.cc:1534 -> 2``) proves that the operation failed; a message the catalog knows at fail
    severity (NVLS, CUDA 802) already says so, and says why.
    """
    explained = any(
        s.severity == Severity.FAIL and s.tier != "fallback" and s.id != _ERROR_RETURN
        for found in by_code.values()
        for _, s in found
    )
    if explained and "run-failed" in by_code:
        kept = [(h, s) for h, s in by_code["run-failed"] if s.id != _ERROR_RETURN]
        if kept:
            by_code["run-failed"] = kept
        else:
            del by_code["run-failed"]


OWNED_BY_READER = {
    "nvidia-smi-q": frozenset({"fabric-not-ready", "fabric-unhealthy"}),
    "nvidia-smi-nvlink": frozenset({"nvlink-link-down"}),
    "nccl-tests": frozenset({"run-failed", "bench-timeout", "bench-data-corruption"}),
    "nvbandwidth": frozenset({"run-failed", "bench-data-corruption", "p2p-unavailable"}),
}
"""Codes a reader's rules judge on every line the reader read: the fabric state, status and health of a pasted
``nvidia-smi -q``, GPU by GPU; the NVLink ports of ``nvidia-smi nvlink -s`` against the GPU model (12 of 18 links
active is an H100 NVL's design); the failure lines of an nccl-tests run and of nvbandwidth, with how far the run got
(a test nvbandwidth waives on one GPU is by design). A known message on those lines is theirs to judge, even when
they find nothing."""


def _owned(ctx: RuleContext) -> dict[int, frozenset[str]]:
    """Return the codes another rule owns, by line of the paste."""
    owned: dict[int, frozenset[str]] = {}
    for part in ctx.source.parts:
        codes = OWNED_BY_READER.get(part.read_by)
        if codes:
            owned.update(dict.fromkeys(range(part.first_line, part.last_line + 1), codes))
    return owned


@dataclass(frozen=True)
class _Judged:
    hit: Hit
    signature: Signature
    severity: Severity


def _finding(code: str, judged: list[_Judged]) -> Finding:
    worst = max((j.severity for j in judged), key=lambda s: s.rank)
    leading = [j for j in judged if j.severity == worst]
    ids = list(dict.fromkeys(j.signature.id for j in judged))
    meanings = list(dict.fromkeys(j.signature.meaning for j in leading))
    fixes = list(dict.fromkeys(j.signature.fix for j in leading))
    lines = list(dict.fromkeys(j.hit.line for j in judged))
    quoted = list(dict.fromkeys((j.hit.line, j.hit.text) for j in leading))
    shown = "; ".join(f"line {n}{_where(judged, n)}: {text!r}" for n, text in quoted[:QUOTED_LINES])
    more = len(lines) - min(len(quoted), QUOTED_LINES)
    message = as_sentence(meanings[0]) + f" The paste shows it on {shown}"
    if more:
        message += f", and {more} more line(s)"
    figure = next((describe_transfer(j.hit) for j in leading if j.signature.id in TRANSFER_TABLES), "")
    if figure:
        message += f". {figure}"
    if len(meanings) > 1:
        message += ". Also: " + first_few([m.rstrip(". ") for m in meanings[1:]], 2, "; ")
    found = finding(
        code,
        as_sentence(message),
        severity=worst,
        lines=lines,
        signatures=ids,
        quoted=[{"line": n, "text": text} for n, text in quoted[:QUOTED_LINES]],
        sources=list(dict.fromkeys(j.signature.source for j in leading)),
        causes=[c for c in dict.fromkeys(j.signature.cause for j in leading) if c != "other"],
    )
    return dataclasses.replace(found, remedy=" ".join(as_sentence(f) for f in fixes[:2]) or found.remedy)


def _where(judged: list[_Judged], line: int) -> str:
    """Say what the line's launcher prefix named: " (rank 3)", " (host node07)"; "" when nothing."""
    hit = next(j.hit for j in judged if j.hit.line == line)
    named = []
    if isinstance(hit.rank, int):
        named.append(f"rank {hit.rank}")
    if isinstance(hit.host, str):
        named.append(f"host {hit.host}")
    return f" ({', '.join(named)})" if named else ""


# --- what a message means on this box ------------------------------------------------------------------------------

_NVLINK_CHECKS = frozenset({"nhc-nvlink-inactive", "nhc-nvlink-query-failed", "nhc-nvlink-inactive-link"})
_FABRIC_MANAGER_FAILURES = frozenset(
    {
        "fm-service-failed",
        "fm-no-nvswitch",
        "fm-version-mismatch",
        "gpud-fabric-manager-inactive",
        "fm-unit-not-found",
        "nhc-fabric-manager-not-running",
    }
)
_MULTICAST_EXPECTED = frozenset({"nccl-nvls-not-available", "vllm-symm-mem-no-multicast", "vllm-symm-mem-init-failed"})
"""No NVLink multicast: by design but on NVSwitch boards of NVLink 4 or later, where NVLS should be there."""
_SYMM_MEM_RENDEZVOUS = "torch-symm-mem-rendezvous-failed"
"""A traceback through PyTorch's symmetric-memory rendezvous: CUDA error 802 under it is its multicast object's."""
_NO_NVSWITCH = frozenset({"pcie", "bridge", "mesh"})  # builds whose GPUs never sit behind NVSwitches
_GEFORCE = "NVIDIA GeForce"  # a paste naming a GeForce card (nvidia-smi's table cuts the rest): never on NVSwitches
DEEPEP_LOWEST_GBPS = {
    "deepep-low-latency-bandwidth": {"gbps": 39.0},
    "deepep-low-latency-phase-bandwidth": {"dispatch": 39.0, "combine": 39.0},
    "deepep-tuning-bandwidth": {"rdma": 43.0, "nvl": 153.0},
}
"""The lowest figure DeepEP publishes for each of its kernels' paths (docs/legacy.md of deepseek-ai/DeepEP@dd758ca2d2ab,
H800 with CX7 400 Gb/s NICs: low-latency dispatch and combine 39-127 GB/s, normal kernels 43-58 GB/s over RDMA and
153 GB/s over NVLink); newer GPUs and NICs measure more."""
DEEPEP_SHARE_HELD = 0.8
"""A run below four fifths of that figure is slower than DeepEP's own box, beyond the spread of its published runs
(DeepEP's threads call 25-27 GB/s low and 42 GB/s sound on the same 16-rank test)."""


def _below_deepep_floor(signature_id: str, hit: Hit) -> bool:
    """Whether a DeepEP bandwidth line shows a path below four fifths of DeepEP's lowest figure for it."""
    for group, lowest in DEEPEP_LOWEST_GBPS[signature_id].items():
        value = hit.values.get(group)
        if value and float(value) < DEEPEP_SHARE_HELD * lowest:
            return True
    return False


_INIT_WENT_ON = re.compile(
    r"NCCL INFO (?:Using network \w|.*Init COMPLETE|comm 0x[0-9a-f]+ rank \d+ nRanks \d+|Channel \d+(?:/\d+)? :"
    r"|Connected all (?:rings|trees))"
)
"""NCCL going on with its setup after an error it unwound: the error was one it recovers from (no libibverbs, so
no GPUDirect RDMA, then sockets), not the end of the run."""
_NCCL_PROCESS = re.compile(r"(?:^|\s)([\w.-]+:\d+):\d+ \[\d+\] (?:\S+ )?NCCL ")
"""NCCL's "host:pid:tid [dev]" before INFO or WARN (after a launcher's own prefix): the process that printed it."""


def _went_on(text: str, hit: Hit) -> bool:
    """Whether the process that printed ``hit`` went on setting its communicator up on a later line.

    False where the line does not name its process: another rank going on proves nothing.
    """
    own = _NCCL_PROCESS.search(hit.text)
    return own is not None and _last_progress(text).get(own.group(1), 0) > hit.line


@functools.lru_cache(maxsize=4)
def _last_progress(text: str) -> dict[str, int]:
    """Map each NCCL process of the paste to the last line (1-based) on which it went on with its setup."""
    last: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if "NCCL INFO" in line and _INIT_WENT_ON.search(line) and (process := _NCCL_PROCESS.search(line)):
            last[process.group(1)] = number
    return last


_SOCKET_INIT = "nccl-net-socket-using"
_RDMA_IN_USE = re.compile(
    r"NET/IB : Using \[\d+\]|via NET/(?:IB|IBext|AWS Libfabric|OFI)\b|NET/OFI Selected [Pp]rovider is efa"
)
"""NCCL's RDMA transport in use: NCCL prints ``NET/Socket : Using`` where it sets its socket transport up even
when the InfiniBand one (``NET/IB : Using [0]mlx5_0:1/IB``) or a plugin then carries the traffic (NCCL 2.4)."""
_CUSTOM_ALLREDUCE_NO_P2P = frozenset({"vllm-custom-allreduce-no-p2p", "sglang-custom-allreduce-setup-failed"})
_ABORTED = re.compile(r"Aborted \(core dumped\)|terminate called after throwing|Traceback \(most recent call last\)")
"""The process died after the message: an error it did not survive, whatever the message means elsewhere."""
_UCX_GDR_FOUND = re.compile(r"cuda GPUDirect RDMA is detected by checking|: dmabuf is supported")
"""UCX found a way for the NIC to reach GPU memory after all: a peer-memory file it checked later, or DMA-BUF."""
_PROGRAM_WARNING = re.compile(r"^\s*warning:", re.I)
"""A line the printing program itself calls a warning (kmcuda's "warning: failed to enable p2p on gpu #0: ..."): it
went on without the peer access it asked for."""
_FAILED_CALL = "nccl-call-failed"  # a framework's check of an NCCL call that returned an error: the run stopped


def _hit_ids(ctx: RuleContext) -> set[str]:
    """Return the ids of the signatures found anywhere in the paste."""
    hits = ctx.signatures
    return set() if isinstance(hits, Unsupported) else {h.signature for h in hits}


def _severity(signature: Signature, hit: Hit, found: Sequence[tuple[Hit, Signature]], ctx: RuleContext) -> Severity:
    """Return the catalog's severity, judged against the box where the message's meaning depends on it."""
    spec = ctx.spec
    if signature.tier == "fallback" and signature.code == "run-failed":
        returns = [h for h, s in found if s.id == _ERROR_RETURN]
        if returns and not _went_on(ctx.text, max(returns, key=lambda h: h.line)):
            return Severity.FAIL  # NCCL unwound an error after this warning: the warning is the failed run's cause
    if signature.id == _ERROR_RETURN and _went_on(ctx.text, hit):
        return Severity.INFO  # the process set its communicator up after it: an error NCCL recovers from
    if signature.id in _MULTICAST_EXPECTED:
        # NVLS needs NVSwitches of NVLink 4 or later: on such a box NCCL should have found it.
        nvls_box = spec is not None and spec.build == "nvswitch" and spec.nvlink_generation >= 4
        return Severity.WARN if nvls_box else signature.severity
    if signature.id in MODEL_DECIDES:  # an inactive NVLink port
        # Every NVLink of an SXM/HGX GPU is wired; PCIe cards use only what their bridges connect (H100 NVL: 12 of 18).
        wired = spec is not None and spec.build in ("nvswitch", "mesh")
        return Severity.WARN if wired else signature.severity
    if signature.id in _NVLINK_CHECKS and spec is not None:
        # A health checker's NVLink check on a card with no NVLink, or with NVLink only through an optional bridge.
        if spec.nvlink_generation == 0:
            return Severity.INFO
        if spec.build == "bridge":
            return min(signature.severity, Severity.WARN, key=lambda s: s.rank)
    if (
        signature.cause == "p2p-unsupported"
        and signature.severity is Severity.FAIL
        and _PROGRAM_WARNING.match(hit.text)
    ):
        return Severity.WARN  # refused peer access the program warned of and went on without: a slower path, no stop
    if signature.id == "cuda-711-too-many-peers" and _ABORTED.search(ctx.text):
        # a program that asked for peer access to every GPU died of the refusal (llama.cpp on ten P40s)
        return Severity.FAIL
    if signature.id in _CUSTOM_ALLREDUCE_NO_P2P and spec is not None and "GeForce" in spec.name:
        return Severity.INFO  # GeForce cards have no peer access on stock drivers: by design
    if signature.id in _FABRIC_MANAGER_FAILURES and (
        (spec is not None and spec.build in _NO_NVSWITCH) or _GEFORCE in ctx.text
    ):
        return Severity.INFO  # the fabric manager serves NVSwitches: without them its failure changes nothing
    if signature.id == "gpud-fabric-state-not-supported" and spec is not None and spec.layout == "nvl72":
        return Severity.WARN  # a rack-scale GPU outside its NVLink domain
    if signature.id == "fm-no-nvswitch" and spec is not None and spec.build == "nvswitch":
        return Severity.FAIL  # an NVSwitch board whose switches the driver does not see: the fabric is down
    if signature.id == "cuda-802-system-not-ready" and _SYMM_MEM_RENDEZVOUS in _hit_ids(ctx):
        return Severity.INFO  # the multicast call of a symmetric-memory rendezvous: CUDA itself had started
    if signature.id == "fm-service-failed" and spec is None and any(s.id == "fm-no-nvswitch" for _, s in found):
        return Severity.INFO  # it failed because it found no NVSwitch: most often a box that has none
    if (
        signature.severity is Severity.WARN
        and signature.code == "run-failed"
        and catalog().get(_FAILED_CALL).pattern.search(hit.text)
    ):
        return Severity.FAIL  # quoted as the last NCCL warning of a call that failed (XLA): the run stopped on it
    if named_not_judged(hit):
        return Severity.INFO  # a notice that judges nothing, a transfer figure no bound holds, a test's timeout
    if signature.id in TRANSFER_TABLES:
        return Severity.WARN if transfer_reading(hit) == "low" else Severity.INFO
    if signature.id in DEEPEP_LOWEST_GBPS and _below_deepep_floor(signature.id, hit):
        return Severity.WARN  # below DeepEP's own figures for the same kernels: a slower path than its box's
    if signature.id == "ucx-gdr-not-detected" and _UCX_GDR_FOUND.search(ctx.text):
        return Severity.INFO  # one peer-memory file missing while another (or DMA-BUF) gives the NIC GPU memory
    if signature.id == _SOCKET_INIT and _RDMA_IN_USE.search(ctx.text):
        return Severity.INFO  # NCCL set its socket transport up, then chose the RDMA one the paste shows in use
    if carries_nothing(signature, found, ctx):
        return Severity.INFO  # sockets (or the loopback) carry nothing when every rank is on one node
    return signature.severity


_declare_catalog_codes()
register_rule(
    known_messages,
    sorted({s.code for s in catalog().signatures}),
    (SIGNATURES,),
    fallback=True,
)
