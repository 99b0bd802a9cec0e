"""``setpci`` reads of PCIe bridges' ACS control register (``setpci -s BDF ECAP_ACS+0x6.w``, or ``f2a.w`` on PLX
switches): whether ACS sends peer traffic up to the root complex."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    from topoaudit.parse.setpci_acs import looks_like_setpci_acs

    return looks_like_setpci_acs(text)


def load(text: str, name: str) -> Facts:
    """Each bridge's word after the read; no machine: the words name bridges, not the box's GPUs."""
    from topoaudit.errors import InputError
    from topoaudit.model.facts import Facts
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.setpci_acs import read_setpci_acs

    read = read_setpci_acs(text)
    if read is None or not read.bridges:
        raise InputError(f"{name}: a setpci read of the ACS control register without the words it printed")
    return Facts(
        Machine(source="setpci", gpus=()),
        SourceInfo("setpci", name, description=f"setpci {read.register}.w of {len(read.bridges)} PCIe bridge(s)"),
        setpci_acs=read,
        used=frozenset({read.command_line, *(b.line for b in read.bridges)}),
        what="`setpci` reads of ACS control",
    )


READER = Reader("setpci-acs", 88, "`setpci` reads of PCIe bridges' ACS control register", sniff, load)
