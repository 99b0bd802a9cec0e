"""`nvidia-smi nvlink -s` / ``-e`` / ``-c`` / ``-R`` output: each GPU's NVLink ports, judged as a probe's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.readers import Reader, noted

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    if "Link " not in text[:65536] and "inactive" not in text[:65536].lower():  # cheap test first
        return False
    from topoaudit.parse.nvlink_status import looks_like_nvlink_status

    return looks_like_nvlink_status(text)


def load(text: str, name: str) -> Facts:
    """Each GPU's NVLink ports, as a probe records them: the probe's link rules judge them."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.nccl_topo import Captures
    from topoaudit.model.report import SourceInfo
    from topoaudit.parse.nvlink_status import parse_nvlink_status

    parsed = parse_nvlink_status(text, name)
    return Facts(
        parsed.machine,
        SourceInfo(
            "nvidia-smi-nvlink", name, description=f"nvidia-smi nvlink output: {len(parsed.machine.gpus)} GPU(s)"
        ),
        (*noted(parsed.notes), *noted(parsed.damaged, "recovered")),
        {"nvlink_speeds_gbps": parsed.speeds_gbps} if parsed.speeds_gbps else {},
        captures=Captures(),
        used=parsed.used_lines,
        what="`nvidia-smi nvlink`",
    )


READER = Reader(
    "nvidia-smi-nvlink",
    40,
    "`nvidia-smi nvlink -s` output",
    sniff,
    load,
    beside=("topo-matrix",),
    # its ports are judged by the probe's rules, which know a pasted nvlink capture by its source
    joins=("gpu.name", "gpu.uuid", "gpu.nvlink_ports", "source"),
    capture=True,
    parts=("nvlink-status",),
)
