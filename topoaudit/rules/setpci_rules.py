"""Rules over a pasted ``setpci`` read of PCIe bridges' ACS control register."""

from __future__ import annotations

from collections.abc import Iterable

from topoaudit.model.finding import Finding
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext, finding, first_few
from topoaudit.rules.needs import SETPCI_ACS
from topoaudit.rules.registry import rule


@rule("pcie-acs-redirect", needs=(SETPCI_ACS,))
def acs_redirect_read(ctx: RuleContext) -> Iterable[Finding]:
    """Report the bridges whose ACS control word, as setpci printed it, has P2P Request or Completion Redirect on.

    Peer traffic between the GPUs and NICs below such a bridge goes up to the root complex: slow, or a hang with
    the IOMMU. The words say nothing of whether the machine is a virtual machine (where ACS must stay on).
    """
    read = ctx.setpci_acs
    assert not isinstance(read, Unsupported)  # the rule needs SETPCI_ACS
    on = [b for b in read.bridges if b.redirects]
    if not on:
        return
    shown = first_few([f"line {b.line}{f' ({b.device})' if b.device else ''}: {b.control:04x}" for b in on], 4)
    yield finding(
        "pcie-acs-redirect",
        f"setpci's read of the ACS control register ({read.register}.w, line {read.command_line}) shows P2P "
        f"redirect on for {len(on)} of {len(read.bridges)} PCIe bridge(s): {shown} ({' '.join(on[0].enabled)}). "
        "Peer traffic between the GPUs and NICs below them goes up to the root complex: low bandwidth or a hang "
        "for PCIe P2P and GPUDirect RDMA (on bare metal; a virtual machine needs ACS on).",
        bridges=[
            {"line": b.line, "device": b.device, "control": f"{b.control:#06x}", "enabled": list(b.enabled)} for b in on
        ],
        register=read.register,
    )
