"""``setpci`` reads of PCIe bridges' ACS control register, as pasted to show whether ACS redirects peer traffic.

NCCL's troubleshooting guide reads and clears it with ``setpci -s BDF ECAP_ACS+0x6.w``; on PLX/Broadcom switches
the capability sits at 0xf20, so guides read ``f2a.w``. Each word printed is one bridge's ACS Control register
(PCIe base specification 7.7.8.3): bit 2 is P2P Request Redirect, bit 3 P2P Completion Redirect; either one
sends peer traffic below the bridge up to the root complex.
"""

from __future__ import annotations

import re

from topoaudit.model.setpci import AcsControl, SetpciAcs

ACS_BITS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
"""The ACS control bits by position, named as ``lspci -vvv`` prints them (``ACSCtl:``)."""

_READ = re.compile(r"\bsetpci\b[^\n=]*?\s(?P<register>ECAP_ACS\+(?:0x)?6|[fF]2[aA])\.[wW]\b(?!=)")
_WORD = re.compile(
    r"^\s*(?:(?P<device>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b.*?= )?(?P<word>[0-9a-fA-F]{4})\s*$"
)
_NOISE = re.compile(r"^\s*(?:\[sudo\] password for \S+|Password):?\s*$")


def looks_like_setpci_acs(text: str) -> bool:
    """Cheap sniff: a setpci read of the ACS control register."""
    return "setpci" in text and _READ.search(text[:200_000]) is not None


def read_setpci_acs(text: str) -> SetpciAcs | None:
    """The register read and each word printed after the read, with its line; None when the text has no such read.

    The words follow the command (one per bridge, in ``lspci`` order); a sudo prompt between is passed over, any
    other line ends them.
    """
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines, 1) if _READ.search(line)), None)
    if start is None:
        return None
    register = _READ.search(lines[start - 1])["register"]  # type: ignore[index]
    bridges: list[AcsControl] = []
    for number, line in enumerate(lines[start:], start + 1):
        if not line.strip() or _NOISE.match(line):
            continue
        m = _WORD.match(line)
        if m is None:
            break
        control = int(m["word"], 16)
        enabled = tuple(name for bit, name in enumerate(ACS_BITS) if control >> bit & 1)
        bridges.append(AcsControl(number, m["device"] or "", control, enabled))
    return SetpciAcs(start, register, tuple(bridges))
