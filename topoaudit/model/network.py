"""Facts an all-reduce figure follows beyond the GPUs: the NICs a node leaves through, and the NCCL release.

Each fact says where it came from (NCCL's ``NET/IB`` lines, ``--nics``, or an assumption taken from a
model's reference node), so a figure built on it can say whether it judges the user's network or a guess.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from topoaudit.model.values import Unsupported

if TYPE_CHECKING:  # the facts a run carries: loaded with the inputs that hold them
    from topoaudit.model.bench import BenchResult
    from topoaudit.model.nccl import NcclView


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


_DOTTED = re.compile(r"(?<![\d.])(\d{1,4})\.(\d{1,4})\.(\d{1,4})(?![\d])(?:[-+][\w.]*)?")
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
    version_source: str = ""  # where the release was read: "the run's version line", "NCCL's log banner"


NO_SPEED = Unsupported(
    "nccl-log",
    "NCCL printed no speed for its NICs (NCCL 2.27.3 and later print speed= at NCCL_DEBUG_SUBSYS=NET)",
)


def nics_from_nccl(view: NcclView) -> NicSet | None:
    """One node's NICs as NCCL's network plugin listed them; None when the log lists none.

    The node is the first host that listed NICs over the network NCCL used (``Using network IB``; the socket
    plugin's interfaces only when no other plugin listed any). The rate is the per-device ``speed=`` (Mb/s)
    where NCCL printed it, else absent: the oracle then assumes the reference node's rate and says so.
    """
    if not view.nics:
        return None
    used = set(view.networks)
    fast = [n for n in view.nics if n.plugin.lower() != "socket"]
    pool = [n for n in fast if n.plugin in used or not used] or fast or list(view.nics)
    host = pool[0].host
    devices = {n.index: n for n in pool if n.host == host}
    speeds = [n.speed_mbps for n in devices.values() if isinstance(n.speed_mbps, int) and n.speed_mbps > 0]
    layers = {n.link_layer for n in devices.values() if isinstance(n.link_layer, str)}
    others = dict.fromkeys(n.host for n in pool if isinstance(n.host, str) and n.host != host)
    differ = [h for h in others if len({n.index for n in pool if n.host == h}) != len(devices)]
    where = [host] if isinstance(host, str) else []
    where += [f"{', '.join(differ)} listed another count"] if differ else []
    rate: float | Unsupported = min(speeds) / 1000 if speeds else NO_SPEED
    source = f"read from NCCL's NET/{pool[0].plugin} lines" + (f" ({'; '.join(where)})" if where else "")
    return NicSet(len(devices), rate, layers.pop() if len(layers) == 1 else "", source)


def run_facts(
    *,
    nics: NicSet | Unsupported | None,
    nccl: NcclView | Unsupported,
    bench: BenchResult | Unsupported,
    ras: dict[str, Any] | Unsupported,
) -> RunFacts:
    """Build, once per audit, the NICs and NCCL release the input's runs are judged with.

    The network is ``--nics`` when given, else the NICs an NCCL log lists for one host, else None (the oracle
    assumes the model's reference node and says so). The release is the one nccl-tests' version line names,
    else NCCL's log banner, else the one an NCCL RAS dump names.
    """
    network = nics if isinstance(nics, NicSet) else None
    if network is None and not isinstance(nccl, Unsupported):
        network = nics_from_nccl(nccl)
    for text, where in (
        (getattr(bench, "nccl_version", None), "the run's version line"),
        (getattr(nccl, "version", None), "NCCL's log banner"),
        (ras.get("nccl_version") if isinstance(ras, dict) else None, "NCCL RAS's version line"),
    ):
        version = parse_nccl_version(text) if isinstance(text, str) else None
        if version is not None:
            return RunFacts(network, version, where)
    return RunFacts(network)


def nodes_heading(bench: BenchResult | Unsupported, gpus: int, model: str) -> str:
    """Count a run's GPUs the way its hosts hold them.

    "2 nodes x 8 GPUs (NVIDIA H100 80GB HBM3)" for ranks spread evenly over several hosts, "2 hosts (8, 4 GPUs)
    of NVIDIA H100" unevenly, else "8× NVIDIA H100".
    """
    ranks = [] if isinstance(bench, Unsupported) else [r for r in bench.ranks if r.device != "cpu"]
    per_host: dict[str, int] = {}
    for rank in ranks:
        per_host[rank.host] = per_host.get(rank.host, 0) + 1
    if len(per_host) < 2:
        return f"{gpus}× {model}"
    counts = set(per_host.values())
    if len(counts) == 1:
        return f"{len(per_host)} nodes x {counts.pop()} GPUs ({model})"
    return f"{len(per_host)} hosts ({', '.join(map(str, per_host.values()))} GPUs) of {model}"
