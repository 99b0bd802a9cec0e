"""Facts an all-reduce figure follows beyond the GPUs: the NICs a node leaves through, and the NCCL release.

Each fact says where it came from (NCCL's ``NET/IB`` lines, ``--nics``, or an assumption taken from a
model's reference node), so a figure built on it can say whether it judges the user's network or a guess.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from topoaudit.model.values import Unsupported


@dataclass(frozen=True)
class NicSet:
    """The NICs of one node that an all-reduce across nodes leaves it through."""

    count: int
    gbits_each: float | Unsupported  # line rate per NIC in Gb/s (400 for NDR); absent where the input gave none
    link_layer: str  # "IB" | "RoCE" | "" when the input does not say
    source: str  # "read from NCCL's NET/IB lines", "--nics 8x400", "assumed: HGX H100 reference node, 8x 400G"
    assumed: bool = False  # True when count or rate is a guess: the figure then warns at most

    @property
    def known_rate(self) -> bool:
        """True when the rate per NIC is known (read, given or assumed)."""
        return isinstance(self.gbits_each, float | int) and self.gbits_each > 0

    def describe(self) -> str:
        """``8x 400G IB (--nics 8x400)``."""
        rate = f"{self.gbits_each:g}G" if self.known_rate else "rate unknown"
        layer = f" {self.link_layer}" if self.link_layer else ""
        return f"{self.count}x {rate}{layer} ({self.source})"


_NICS = re.compile(r"^\s*(\d+)\s*[xX*]\s*(\d+(?:\.\d+)?)\s*(?:G|Gb|Gbit|Gbps|Gb/s)?\s*(?::\s*(IB|RoCE))?\s*$", re.I)


def parse_nics(text: str) -> NicSet:
    """Read ``--nics COUNTxGBITS`` (``8x400``, ``8x400G``, ``4x200:RoCE``); ValueError (one sentence) otherwise."""
    m = _NICS.match(text)
    if not m or int(m[1]) < 1 or float(m[2]) <= 0:
        raise ValueError(f"--nics takes COUNTxGBITS per node, such as 8x400 or 4x200:RoCE, not {text!r}")
    layer = {"ib": "IB", "roce": "RoCE"}.get((m[3] or "").lower(), "")
    return NicSet(int(m[1]), float(m[2]), layer, f"--nics {text.strip()}")


@dataclass(frozen=True, order=True)
class NcclVersion:
    """An NCCL release, ordered: ``NcclVersion(2, 18, 1) < NcclVersion(2, 18, 3)``."""

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        """Print the release as NCCL does: ``2.18.3``."""
        return f"{self.major}.{self.minor}.{self.patch}"


_DOTTED = re.compile(r"(?<![\d.])(\d+)\.(\d+)\.(\d+)(?:[-+][\w.]*)?")
_CODE = re.compile(r"nccl-library=(\d{4,6})\b|^\s*(\d{4,6})\s*$")


def parse_nccl_version(text: str) -> NcclVersion | None:
    """Return the NCCL release a line names; None when it names none.

    Reads ``NCCL version 2.26.2+cuda12.8``, ``2.29.1`` and nccl-tests' ``nccl-library=23007``
    (``NCCL_VERSION_CODE``: major*10000 + minor*100 + patch from 2.9, major*1000 + minor*100 + patch before,
    NVIDIA/nccl src/nccl.h.in).
    """
    m = _CODE.search(text)
    if m:
        code = int(m[1] or m[2])
        if code >= 20900:
            return NcclVersion(code // 10000, code // 100 % 100, code % 100)
        return NcclVersion(code // 1000, code // 100 % 10, code % 100)
    m = _DOTTED.search(text)
    if m and int(m[1]) == 2:  # NCCL 2.x: a CUDA or driver version is not taken for NCCL's
        return NcclVersion(int(m[1]), int(m[2]), int(m[3]))
    return None


@dataclass(frozen=True)
class RunFacts:
    """What the input or the options say about a run beyond its rows: one node's NICs and the NCCL release.

    Either may be absent: the oracle then assumes the model's reference node and the newest NCCL release read,
    and says so.
    """

    network: NicSet | None = None
    nccl_version: NcclVersion | None = None
