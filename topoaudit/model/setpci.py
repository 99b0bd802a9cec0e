"""What a pasted ``setpci`` read of PCIe bridges' ACS control register shows.

Read by :mod:`topoaudit.parse.setpci_acs`.
"""

from __future__ import annotations

from dataclasses import dataclass

REDIRECT_BITS = ("ReqRedir", "CmpltRedir")
"""The ACS control bits that send peer traffic below a bridge up to the root complex."""


@dataclass(frozen=True)
class AcsControl:
    """One word setpci printed: a bridge's ACS Control register."""

    line: int  # 1-based line of the paste
    device: str  # the bridge's bus id where setpci -v printed it, else ""
    control: int  # the register, 16 bits
    enabled: tuple[str, ...]  # the bits set, named as `lspci -vvv` prints them ("ReqRedir", ...)

    @property
    def redirects(self) -> bool:
        """P2P Request or Completion Redirect is on."""
        return any(bit in self.enabled for bit in REDIRECT_BITS)


@dataclass(frozen=True)
class SetpciAcs:
    """The read (its command's line and register) and each bridge's word, in the order printed."""

    command_line: int
    register: str  # "ECAP_ACS+0x6", "f2a" (PLX switches)
    bridges: tuple[AcsControl, ...]
