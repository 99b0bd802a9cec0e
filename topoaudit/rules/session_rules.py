"""Rules over a pasted Python session: tensors printed after a copy between GPUs, and peer-access queries."""

from __future__ import annotations

from collections.abc import Iterable

from topoaudit.model.finding import Finding
from topoaudit.model.python_session import TensorPrint
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext, finding
from topoaudit.rules.codes import Code
from topoaudit.rules.needs import PEER_QUERIES, PYTHON_SESSION, TENSOR_COPIES
from topoaudit.rules.registry import rule


@rule(
    Code(
        "peer-copy-corruption",
        "fail",
        title="A tensor copied between GPUs arrived with other values than it left with",
        remedy=(
            "Do not run multi-GPU jobs on this box until it is explained: peer copies that return zeros or garbage "
            "are broken P2P, most often the IOMMU (boot with `iommu=pt`, or turn it off on bare metal), PCIe ACS "
            "redirecting peer traffic (`sudo lspci -vvv | grep ACSCtl`), or a board and driver that do not support "
            "P2P between these cards. Confirm with p2pBandwidthLatencyTest or nvbandwidth, read `dmesg` for "
            "DMAR/AMD-Vi faults, and set NCCL_P2P_DISABLE=1 until it is fixed."
        ),
    ),
    needs=(PYTHON_SESSION, TENSOR_COPIES),
)
def peer_copy_corruption(ctx: RuleContext) -> Iterable[Finding]:
    """Report tensors that came out of a copy from one GPU to another with values the original did not hold.

    The session shows the copy: a statement (``t.to('cuda:1')``) whose print differs from the tensor it copied, or
    three prints in a row where the same tensor shows other values on a second GPU before showing its own there.
    A copy through the host that arrived intact, when shown, is named: it puts the fault on the path between the
    GPUs, not on the GPUs' memory.
    """
    read = ctx.python_session
    assert not isinstance(read, Unsupported)  # the rule needs TENSOR_COPIES
    wrong = [c for c in read.gpu_copies if not c.intact]
    if not wrong:
        return
    first = wrong[0]
    intact_through_host = [c for c in read.copies if c.through_host and c.intact]
    host = (
        f"; the copy through the host on line {intact_through_host[0].copy.line} arrived intact, so the path between "
        "the GPUs is at fault"
        if intact_through_host
        else ""
    )
    more = f" ({len(wrong)} such copies)" if len(wrong) > 1 else ""
    yield finding(
        "peer-copy-corruption",
        f"A tensor copied from {first.source.device} to {first.copy.device} arrived with other values{more}: "
        f"line {first.copy.line} prints {_values(first.copy)} where line {first.source.line} holds "
        f"{_values(first.source)} (shown by {first.shown_by}){host}. Peer-to-peer copies on this box "
        "return wrong data.",
        copies=[
            {
                "source_line": c.source.line,
                "copy_line": c.copy.line,
                "from_device": c.source.device,
                "to_device": c.copy.device,
                "shown_by": c.shown_by,
            }
            for c in wrong
        ],
    )


def _values(printed: TensorPrint) -> str:
    """Show the first few elements as printed: "[0., 0., 0., ...]"."""
    shown = ", ".join(printed.values[:4]) + (", ..." if len(printed.values) > 4 else "")
    return f"[{shown}]"


@rule("p2p-unavailable", needs=(PYTHON_SESSION, PEER_QUERIES))
def peer_access_refused(ctx: RuleContext) -> Iterable[Finding]:
    """Report the GPU pairs a session asked CUDA about and was told have no peer access.

    ``can_device_access_peer(0, 1)`` answering False (or ``cudaDeviceCanAccessPeer`` 0) means the driver will not map
    one GPU's memory into the other: NCCL and every framework then stage their copies through host memory. The
    answer does not say why (another CPU socket, ACS or the IOMMU, a VM, cards without P2P): the path decides.
    """
    read = ctx.python_session
    assert not isinstance(read, Unsupported)  # the rule needs PEER_QUERIES
    refused = [q for q in read.peer_queries if not q.can_access]
    if not refused:
        return
    pairs = sorted({(q.gpu, q.peer) for q in refused})
    first = refused[0]
    yield finding(
        "p2p-unavailable",
        f"CUDA answers that GPU {first.gpu} cannot access GPU {first.peer}'s memory (line {first.asked_on}: "
        f"`{first.asked}`, answered {first.answer} on line {first.line})"
        + (f", and so for {len(pairs) - 1} more pair(s)" if len(pairs) > 1 else "")
        + ": copies between them go through host memory. Paste `nvidia-smi topo -m` to see whether the path explains "
        "it (another CPU socket) or peer access is refused on a path that allows it (ACS, the IOMMU, a VM, cards "
        "without P2P).",
        pairs=[{"gpus": [a, b], "status": "no peer access", "path": "unknown"} for a, b in pairs],
        likely_cause="unknown",
    )
