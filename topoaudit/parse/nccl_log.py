"""Read an ``NCCL_DEBUG=INFO`` log (NCCL 2.4 to 2.30) into an :class:`~topoaudit.model.nccl.NcclView`.

Logs arrive interleaved from many ranks and hosts (mpirun, torchrun, Slurm), with or without the
``host:pid:tid [dev]`` prefix, timestamps, ``[1,0]<stdout>:`` or ``0:`` launcher prefixes and indentation.
Each line is read on its own: whatever comes before ``NCCL INFO`` / ``NCCL WARN`` is the prefix, and the
message after it is matched against the formats NCCL prints (src/transport/p2p.cc, shm.cc, net.cc,
src/init.cc, src/graph/paths.cc, search.cc, rings.cc, src/transport/nvls.cc, generic.cc).

The value in brackets after a rank (``0[1b000]``) is the PCI bus id up to NCCL 2.17 and the device index
from 2.18: decided from the version banner, else from the form of the values (a bus id has at least four
hex digits).

Excerpts are read as far as they go. A line whose ``NCCL INFO`` was cut off (or that carries NCCL before
2.4's bare ``INFO``, or sits in quotes) is read when its message is in one of NCCL's own formats, never
otherwise: another program's ``INFO`` line is not NCCL's. Channel lines quoted without their ``Channel NN :``
still name their ranks; the view records which ranks the paste shows against the communicator's size
(:meth:`NcclView.coverage`), every ``NCCL_X set by environment to V`` as a typed setting, the NICs each
network plugin listed (port, link layer, flags, the speed the NET subsystem prints), and the line a paste
cut mid-line ends inside. The machine is built from the host that holds the most ranks, so a junk or
spliced line with a host-like prefix does not decide it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu, Host, Machine
from topoaudit.model.nccl import (
    NOT_LOGGED,
    ChannelCounts,
    GdrDecision,
    GraphPattern,
    LogLine,
    MnnvlFabric,
    NcclDevice,
    NcclEvent,
    NcclRank,
    NcclRing,
    NcclSetting,
    NcclTransport,
    NcclTree,
    NcclView,
    NcclWarning,
    NetDevice,
    NetDevices,
    NvlsSupport,
    P2pDisabled,
    SystemLink,
)
from topoaudit.model.values import Probed, Unsupported
from topoaudit.parse.typed_settings import typed_settings
from topoaudit.units import parse_bus_id

SOURCE = "nccl-log"
MAX_EVIDENCE_CHARS = 300
MAX_WARNINGS = 200
DEVICE_INDEX_FROM = (2, 18)  # NCCL 2.18 prints the device index in brackets; earlier versions the bus id

_MARKER = re.compile(r"\bNCCL (INFO|WARN)\b ?")
# NCCL before 2.4 printed "host:pid:tid [dev] INFO ..." without the "NCCL"; a paste may keep a bare "INFO".
_KNOWN_VIA = re.compile(r"(?:P2P|SHM|NET|COLLNET|CollNet|direct shared memory)\b")
_BARE_MARKER = re.compile(r"(?:^|\] )\s*(INFO|WARN) ")
# Words of NCCL's own formats: a line with none of them and no NCCL marker is not read further (cheap).
_NCCL_WORDS = (
    "NCCL",
    " via ",
    "NET/",
    "set by environment",
    "Channel ",
    "Ring ",
    "Trees ",
    "comm ",
    "GPU Direct",
    "NVLS",
    "MNNVL",
    "P2P is disabled",
    "Connected all",
    "channels",
    "Pattern ",
    "Using network",
    "+ ",
)
_PREFIX = re.compile(r"(?P<host>[^\s:\[\]]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\]")
_WARN_WHERE = re.compile(r"(?P<where>[\w./-]+\.(?:cc|cu|h|cpp|c):\d+)\s*(?:\([^)]*\))?\s*$")
_VERSION = re.compile(r"\bNCCL version (?P<version>\d{1,4}\.\d{1,4}(?:\.\d{1,4})?)(?!\d)(?P<rest>[^\s]*)")
_TRANSPORT = re.compile(
    r"^(?:(?:Ring|Channel) (?P<ch>\d+)(?:/(?P<conn>\d+))? : )?(?P<src>\d+)(?:\[(?P<sdev>[0-9a-fA-F]+)\])? -> "
    r"(?P<dst>\d+)(?:\[(?P<ddev>[0-9a-fA-F]+)\])?(?: \[(?P<dir>send|receive)\])? via (?P<via>\S.*?)[\s\"']*$"
)
_SETTING = re.compile(r"\b(?P<name>NCCL_[A-Z0-9_]+) set (?:by environment )?to (?P<value>.*?)[\s\"']*$")
_NIC_ITEM = re.compile(r"\[(?P<index>\d+)\](?P<item>[^\s\[\];]+)")
_NIC_DETAIL = re.compile(
    r"^NET/(?P<plugin>\w+): \[(?P<index>\d+)\] (?P<name>[^:\s]+):[^:\s]+:(?P<port>\d+)/(?P<layer>\w+)"
    r"(?: provider=\S+)? speed=(?P<speed>\d+)"
)
_RING = re.compile(r"^(?:Channel|Ring) (?P<ch>\d+)(?:/(?P<n>\d+))? :(?P<order>(?:\s+\d+)+)\s*$")
_TREES = re.compile(r"^Trees(?P<body>(?:\s+\[\d+\]\s+\S+)+)\s*$")
_TREE_ITEM = re.compile(r"\[(?P<ch>\d+)\]\s+(?P<shape>\S+)")
_TREE_RANK = re.compile(r"->(?P<rank>-?\d+)->")
_COMM = re.compile(
    r"\bcomm \S+ rank (?P<rank>\d+) nRanks (?P<n>\d+) nNodes (?P<nodes>\d+) localRanks (?P<lranks>\d+) "
    r"localRank (?P<lrank>\d+)(?: MNNVL (?P<mnnvl>\d+))?"
)
_INIT_DONE = re.compile(
    r"\bcomm \S+ rank (?P<rank>\d+) nranks (?P<n>\d+) cudaDev (?P<cuda>\d+)(?: nvmlDev (?P<nvml>\d+))? "
    r"(?:busId (?P<bus>[0-9a-fA-F]+)\b)?.*- Init (?P<stage>COMPLETE|START)"
)
_COUNTS = re.compile(
    r"^(?P<coll>\d+) coll channels, (?:(?P<collnet>\d+) collnet channels, )?(?:(?P<nvls>\d+) nvls channels, )?"
    r"(?P<p2p>\d+) p2p channels, (?P<peer>\d+) p2p channels per peer"
)
_NVLS = re.compile(r"NVLS multicast support is (?P<not>not )?available on dev (?P<dev>\d+)")
_NET_USING = re.compile(r"^NET/(?P<plugin>[^:]+?) ?: Using (?P<devs>.*)$")
_NET_NONE = re.compile(r"^NET/(?P<plugin>[^:]+?) ?: No device found")
_NET_DEVICE = re.compile(r"\[\d+\](?P<dev>[^\s\[\];]+)")
_NETWORK = re.compile(r"^Using network (?P<net>.+?)\s*$")
_GDR_HCA = re.compile(r"GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA (?P<hca>\d+) '(?P<name>[^']*)'")
_GDR_GPU = re.compile(
    r"GPU Direct RDMA (?P<state>Enabled|Disabled) for GPU (?P<gpu>[0-9a-fA-F]+) / HCA (?P<hca>\d+)"
    r"(?: \(distance (?P<dist>\d+ [<>]=? \d+)\))?"
)
_P2P_OFF = re.compile(r"P2P is disabled between (?P<nv>NVLINK )?connected GPUs (?P<a>\d+) and (?P<b>\d+)")
_PATTERN = re.compile(
    r"Pattern (?P<p>\d+), crossNic \d+, nChannels (?P<n>\d+), bw (?P<bi>[\d.]+)/(?P<be>[\d.]+), "
    r"type (?P<ti>\w+)/(?P<te>\w+)"
)
_SYSTEM_LINK = re.compile(r"^\+ (?P<kind>[A-Z0-9]+)\[(?P<gbps>\d+(?:\.\d+)?)\] - (?P<target>\S+)")
_MNNVL = re.compile(
    r"MNNVL busId 0x(?P<bus>[0-9a-fA-F]+) fabric UUID (?P<uuid>\S+) cliqueId 0x(?P<clique>[0-9a-fA-F]+) "
    r"state (?P<state>\d+) healthMask 0x(?P<mask>[0-9a-fA-F]+)"
)
_EVENTS = (
    ("Connected all rings", re.compile(r"^Connected all rings\b")),
    ("Connected all trees", re.compile(r"^Connected all trees\b")),
    ("Connected NVLS tree", re.compile(r"^Connected NVLS tree\b")),
)


def looks_like_nccl_log(text: str) -> bool:
    """A cheap sniff: a version banner, an NCCL INFO/WARN line with NCCL's ``host:pid:tid [dev]`` prefix, or a
    line in one of NCCL's own formats whatever its prefix (``NCCL INFO`` stripped, a bare ``INFO``)."""
    head = text[:200_000]
    if not any(word in head for word in _NCCL_WORDS):
        return False
    for line in head.splitlines():
        if not any(word in line for word in _NCCL_WORDS):
            continue
        if "NCCL" in line:
            if _VERSION.search(line):
                return True
            prefix, level, message = _split(line)
            if level and (_PREFIX.search(prefix) or _is_nccl_message(message)):
                return True
            if level:
                continue
        _prefix, _level, message = _split_bare(line)
        if _is_nccl_message(message):
            return True
    return False


def parse_nccl_log(text: str, name: str = "") -> NcclView:
    """The log's view; InputError when no line of it is an NCCL log line."""
    builder = _Builder()
    lines = text.splitlines()
    for number, raw in enumerate(lines, 1):
        try:
            builder.read(number, raw)
        except (ValueError, IndexError, OverflowError):  # a number too damaged to read: skip the line
            continue
    if builder.nccl_lines == 0 and builder.version is NOT_LOGGED:
        where = f"{name}: " if name else ""
        raise InputError(f"{where}no NCCL_DEBUG=INFO line (NCCL INFO / NCCL WARN / NCCL version) in the input")
    builder.truncated = _cut_at_end(text, lines, builder)
    return builder.view(len(lines))


# What a line cut inside NCCL's prefix or marker ends with: "host:12:3", "host:12:3 [0", "[0] NCCL IN".
_CUT_PREFIX = re.compile(
    r"^\s*(?:\S*[\]:>]\s*)?[A-Za-z_<][^\s:\[\]]*:\d+:\d*(?: \[\d*\]?)?$"  # inside "host:pid:tid [dev]"
    r"|\[\d+\] (?:[\w./-]+:\d+ )?NCCL(?: (?:I|IN|INF|W|WA|WAR))?$"  # inside the marker
)


def _cut_at_end(text: str, lines: list[str], builder: _Builder) -> Probed[LogLine]:
    """The last line, when the paste ends inside it: no line break after an NCCL line, or an NCCL prefix or
    marker cut short (``host:123:4 [0] NCCL IN``) as its last characters."""
    number = len(lines)
    while number and not lines[number - 1].strip():
        number -= 1
    if not number:
        return Unsupported(SOURCE, "the paste is empty")
    last = lines[number - 1].rstrip()
    if _CUT_PREFIX.search(last):
        return _evidence(number, last)
    if not text.endswith(("\n", "\r")) and builder.last_nccl_line == number:
        return _evidence(number, last)
    return Unsupported(SOURCE, "the paste ends with a whole line")


def bus_id_from_nccl(value: str) -> str | None:
    """NCCL's busId integer in hex (``1b000``, ``101c0``: domain, bus, device, function digits) -> ``0000:1b:00.0``."""
    digits = value.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{4,16}", digits):
        return None
    digits = digits.rjust(9, "0")
    domain, bus, device, function = digits[:-5], digits[-5:-3], digits[-3:-1], digits[-1]
    if int(function, 16) > 7 or int(device, 16) > 0x1F:
        return None
    return parse_bus_id(f"{domain}:{bus}:{device}.{function}")


def _split(raw: str) -> tuple[str, str, str]:
    """(prefix, "INFO"|"WARN"|"", message) of a line with NCCL's marker (``NCCL INFO``/``NCCL WARN``)."""
    m = _MARKER.search(raw)
    if not m:
        return raw, "", raw.strip()
    return raw[: m.start()], m.group(1), raw[m.end() :].strip()


def _split_bare(raw: str) -> tuple[str, str, str]:
    """(prefix, "INFO"|"WARN"|"", message) of a line without NCCL's marker: a bare ``INFO`` (NCCL before 2.4, or
    a paste that dropped the "NCCL"), else the text after an NCCL prefix, else the whole line, unquoted."""
    m = _BARE_MARKER.search(raw)
    if m:
        return raw[: m.start(1)], m.group(1), _unquoted(raw[m.end() :])
    where = _PREFIX.search(raw)
    if where:
        return raw[: where.end()], "", _unquoted(raw[where.end() :])
    return "", "", _unquoted(raw)


def _unquoted(text: str) -> str:
    """A message without the quotes a paste wrapped it in (``"... to 0"``); quotes inside it are kept."""
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`":
        return text[1:-1].strip()
    return text


def _is_nccl_message(message: str) -> bool:
    """Whether a message (prefix stripped) is in one of the formats NCCL prints."""
    if any(p.search(message) for p in (_TRANSPORT, _RING, _TREES, _COUNTS, _NET_USING, _NET_NONE, _NETWORK)):
        return True
    if _SETTING.search(message) or _GDR_HCA.search(message) or _GDR_GPU.search(message):
        return True
    fragments = ("Init COMPLETE", "Init START", "nRanks", "NVLS multicast", "P2P is disabled", "Connected all")
    return any(fragment in message for fragment in fragments)


def _evidence(number: int, raw: str) -> LogLine:
    text = raw.strip()
    if len(text) > MAX_EVIDENCE_CHARS:
        text = text[: MAX_EVIDENCE_CHARS - 3] + "..."
    return LogLine(number, text)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@dataclass
class _RankFacts:
    host: Probed[str] = NOT_LOGGED
    cuda: Probed[int] = NOT_LOGGED
    nvml: Probed[int] = NOT_LOGGED
    bus: Probed[str] = NOT_LOGGED
    bracket: str = ""  # the raw bracket value printed beside this rank
    n: Probed[int] = NOT_LOGGED
    nodes: Probed[int] = NOT_LOGGED
    lranks: Probed[int] = NOT_LOGGED
    lrank: Probed[int] = NOT_LOGGED
    mnnvl: Probed[bool] = NOT_LOGGED
    done: bool = False


@dataclass
class _Link:
    kind: str
    gdr: bool
    proxy: Probed[int]
    first: LogLine
    channels: list[int] = field(default_factory=list)
    count: int = 0


@dataclass
class _Builder:
    version: Probed[str] = NOT_LOGGED
    nccl_lines: int = 0
    hosts: dict[str, None] = field(default_factory=dict)
    devices: dict[tuple[str, int], None] = field(default_factory=dict)
    ranks: dict[int, _RankFacts] = field(default_factory=dict)
    links: dict[tuple[int, int, str, str], _Link] = field(default_factory=dict)
    rings: dict[tuple[int, ...], tuple[list[int], LogLine]] = field(default_factory=dict)
    trees: dict[tuple[int, str], tuple[list[int], LogLine]] = field(default_factory=dict)
    counts: dict[tuple[object, ...], ChannelCounts] = field(default_factory=dict)
    nvls: dict[tuple[object, ...], NvlsSupport] = field(default_factory=dict)
    gdr: dict[tuple[object, ...], GdrDecision] = field(default_factory=dict)
    net: dict[tuple[object, ...], NetDevices] = field(default_factory=dict)
    networks: dict[str, None] = field(default_factory=dict)
    p2p_off: dict[tuple[object, ...], P2pDisabled] = field(default_factory=dict)
    patterns: dict[tuple[object, ...], GraphPattern] = field(default_factory=dict)
    system_links: dict[tuple[str, float], SystemLink] = field(default_factory=dict)
    mnnvl: dict[tuple[object, ...], MnnvlFabric] = field(default_factory=dict)
    warnings: list[NcclWarning] = field(default_factory=list)
    events: dict[str, NcclEvent] = field(default_factory=dict)
    brackets_seen: bool = False
    bus_id_like: bool = False  # a value in brackets with 4+ hex digits: a PCI bus id, not a device index
    settings: dict[tuple[str, str], NcclSetting] = field(default_factory=dict)
    nics: dict[tuple[object, ...], NetDevice] = field(default_factory=dict)
    host_lines: dict[str, int] = field(default_factory=dict)
    last_nccl_line: int = 0
    truncated: Probed[LogLine] = NOT_LOGGED

    def read(self, number: int, raw: str) -> None:
        if "NCCL_" in raw and "=" in raw and (typed := typed_settings(raw)):
            evidence = _evidence(number, raw)
            for setting in typed:  # the command the log came from: not NCCL's line, but what it ran with
                self.settings.setdefault(
                    (setting.name, setting.value), NcclSetting(setting.name, setting.value, "command line", evidence)
                )
            return
        if "NCCL" in raw:
            prefix, level, message = _split(raw)
            if "version" in raw and self.version is NOT_LOGGED:
                version = _VERSION.search(raw)
                if version:
                    self.version = version.group("version")
            strict = bool(level)
        else:
            level, strict = "", False
        if not strict:
            if not any(word in raw for word in _NCCL_WORDS):
                return
            prefix, level, message = _split_bare(raw)
        where = _PREFIX.search(prefix)
        host: Probed[str] = where.group("host") if where else NOT_LOGGED
        dev: int | None = int(where.group("dev")) if where else None
        evidence = _evidence(number, raw)
        if level == "WARN" and (strict or where):
            self._warning(prefix, message, evidence, host, dev)
        elif not self._dispatch(message, evidence, host, dev, strict) and not strict:
            return  # no NCCL marker and none of NCCL's formats: another program's line
        self.nccl_lines += 1
        self.last_nccl_line = number
        if isinstance(host, str) and dev is not None:
            self.hosts.setdefault(host, None)
            self.devices.setdefault((host, dev), None)
            self.host_lines[host] = self.host_lines.get(host, 0) + 1

    def _dispatch(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None, strict: bool) -> bool:
        """Read the message with the handler of its format; False when it is in none of them.

        A line without NCCL's marker is only taken in a format whose words cannot be another program's: a
        transport line must name one of NCCL's transports.
        """
        if not strict and (m := _TRANSPORT.match(message)) and not _KNOWN_VIA.match(m["via"]):
            return False
        for handler in (
            self._transport,
            self._ring,
            self._trees,
            self._comm,
            self._counts,
            self._nvls,
            self._setting,
            self._net,
            self._gdr,
            self._p2p_disabled,
            self._pattern,
            self._system_link,
            self._mnnvl,
            self._event,
        ):
            if handler(message, evidence, host, dev):
                return True
        return False

    # --- one handler per line format; each returns True when the line was its format ---

    def _transport(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _TRANSPORT.match(message)
        if not m:
            return False
        src, dst, direction, via = int(m["src"]), int(m["dst"]), m["dir"] or "", m["via"]
        src_facts, dst_facts = self._rank(src), self._rank(dst)
        if not src_facts.bracket and m["sdev"]:
            src_facts.bracket = m["sdev"]
            self._bracket(m["sdev"])
        if not dst_facts.bracket and m["ddev"]:
            dst_facts.bracket = m["ddev"]
            self._bracket(m["ddev"])
        key = (src, dst, via, direction)
        link = self.links.get(key)
        if link is None:
            link = self.links[key] = _Link(_kind(via), "/GDRDMA" in via, _proxy(via), evidence)
        printer, peer = (dst, src) if direction == "receive" else (src, dst)  # printed where it is set up
        self._place(printer, host, dev)
        if link.kind in ("P2P", "SHM"):  # transports inside one host: the peer runs on the printer's host
            self._place(peer, host, None)
        if m["ch"] is not None:  # a line quoted without its "Channel NN :" names no channel
            link.channels.append(int(m["ch"]))
        link.count += 1
        return True

    def _bracket(self, value: str) -> None:
        self.brackets_seen = True
        self.bus_id_like = self.bus_id_like or len(value) >= 4

    def _ring(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _RING.match(message)
        if not m:
            return False
        order = tuple(int(x) for x in m["order"].split())
        channels, _ = self.rings.setdefault(order, ([], evidence))
        channels.append(int(m["ch"]))
        return True

    def _trees(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _TREES.match(message)
        if not m:
            return False
        for item in _TREE_ITEM.finditer(m["body"]):
            shape = item["shape"]
            who = _TREE_RANK.search(shape)
            if who is None:  # the 2.7-era double tree "1/-1/-1->0->-1|-1->0->1/-1/-1": first half names the rank
                who = _TREE_RANK.search(shape.split("|")[0] + "->")
            if who is None:
                continue
            rank = int(who["rank"])
            self._place(rank, host, dev)
            channels, _ = self.trees.setdefault((rank, shape), ([], evidence))
            channels.append(int(item["ch"]))
        return True

    def _comm(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _COMM.search(message)
        if m:
            facts = self._rank(int(m["rank"]))
            self._place(int(m["rank"]), host, dev)
            facts.n, facts.nodes = int(m["n"]), int(m["nodes"])
            facts.lranks, facts.lrank = int(m["lranks"]), int(m["lrank"])
            if m["mnnvl"] is not None:
                facts.mnnvl = m["mnnvl"] != "0"
            return True
        m = _INIT_DONE.search(message)
        if m:
            facts = self._rank(int(m["rank"]))
            self._place(int(m["rank"]), host, None)
            facts.n, facts.cuda = int(m["n"]), int(m["cuda"])
            facts.done = facts.done or m["stage"] == "COMPLETE"  # START: the rank began to build its communicator
            if m["nvml"] is not None:
                facts.nvml = int(m["nvml"])
            bus = bus_id_from_nccl(m["bus"]) if m["bus"] else None
            if bus:
                facts.bus = bus
            return True
        return False

    def _counts(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _COUNTS.match(message)
        if not m:
            return False
        counts = ChannelCounts(
            coll=int(m["coll"]),
            collnet=int(m["collnet"]) if m["collnet"] is not None else _not_printed("collnet channels"),
            nvls=int(m["nvls"]) if m["nvls"] is not None else _not_printed("nvls channels"),
            p2p=int(m["p2p"]),
            p2p_per_peer=int(m["peer"]),
            evidence=evidence,
        )
        key = (counts.coll, counts.collnet, counts.nvls, counts.p2p, counts.p2p_per_peer)
        self.counts.setdefault(key, counts)
        return True

    def _nvls(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _NVLS.search(message)
        if not m:
            return False
        support = NvlsSupport(host, int(m["dev"]), not m["not"], evidence)
        self.nvls.setdefault((host, support.device, support.available), support)
        return True

    def _setting(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _SETTING.search(message)
        if not m:
            return False
        value = m["value"].strip()
        if re.fullmatch(r"-?\d+\.", value):  # integer parameters print "to 1." (src/misc/param.cc)
            value = value[:-1]
        self.settings.setdefault((m["name"], value), NcclSetting(m["name"], value, "environment", evidence))
        return True

    def _net(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _NET_USING.match(message)
        if m:
            listed = m["devs"].split(";")[0]
            devices = tuple(d["dev"] for d in _NET_DEVICE.finditer(listed))
            plugin = m["plugin"].strip()
            self.net.setdefault((host, plugin, devices), NetDevices(host, plugin, devices, evidence))
            for item in _NIC_ITEM.finditer(listed):
                nic = _net_device(host, plugin, int(item["index"]), item["item"], evidence)
                self.nics.setdefault((host, plugin, nic.index, nic.name), nic)
            return True
        m = _NIC_DETAIL.match(message)
        if m:
            key = (host, m["plugin"], int(m["index"]), m["name"])
            known = self.nics.get(key)
            detail = NetDevice(
                host,
                m["plugin"],
                int(m["index"]),
                m["name"],
                int(m["port"]),
                m["layer"],
                (),
                Unsupported(SOURCE, "an IB verbs device has no interface address"),
                int(m["speed"]),
                evidence,
            )
            self.nics[key] = replace(known, speed_mbps=int(m["speed"])) if known is not None else detail
            return True
        m = _NET_NONE.match(message)
        if m:
            plugin = m["plugin"].strip()
            self.net.setdefault((host, plugin, ()), NetDevices(host, plugin, (), evidence))
            return True
        m = _NETWORK.match(message)
        if m:
            self.networks.setdefault(m["net"], None)
            self._note_event(f"Using network {m['net']}", evidence)
            return True
        return False

    def _gdr(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _GDR_HCA.search(message)
        if m:
            decision = GdrDecision(
                host,
                f"{m['hca']} '{m['name']}'",
                m["state"] == "Enabled",
                _not_printed("the GPU (per-HCA form)"),
                _not_printed("the distance (per-HCA form)"),
                evidence,
            )
            self.gdr.setdefault((host, decision.hca, decision.enabled), decision)
            return True
        m = _GDR_GPU.search(message)
        if m:
            bus = bus_id_from_nccl(m["gpu"])
            decision = GdrDecision(
                host,
                m["hca"],
                m["state"] == "Enabled",
                bus if bus else _not_printed("a readable GPU bus id"),
                m["dist"] if m["dist"] else _not_printed("the distance"),
                evidence,
            )
            self.gdr.setdefault((host, decision.hca, decision.gpu_bus_id, decision.enabled), decision)
            return True
        return False

    def _p2p_disabled(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _P2P_OFF.search(message)
        if not m:
            return False
        a, b = sorted((int(m["a"]), int(m["b"])))
        off = P2pDisabled(host, a, b, bool(m["nv"]), evidence)
        self.p2p_off.setdefault((host, a, b, off.nvlink), off)
        return True

    def _pattern(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _PATTERN.search(message)
        if not m:
            return False
        pattern = GraphPattern(int(m["p"]), int(m["n"]), float(m["bi"]), float(m["be"]), m["ti"], m["te"], evidence)
        key = (pattern.pattern, pattern.channels, pattern.intra_path, pattern.inter_path)
        self.patterns.setdefault(key, pattern)
        return True

    def _system_link(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _SYSTEM_LINK.match(message)
        if not m:
            return False
        key = (m["kind"], float(m["gbps"]))
        seen = self.system_links.get(key)
        self.system_links[key] = (
            SystemLink(key[0], key[1], m["target"], 1, evidence)
            if seen is None
            else replace(seen, count=seen.count + 1)
        )
        return True

    def _mnnvl(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        m = _MNNVL.search(message)
        if not m:
            return False
        bus = bus_id_from_nccl(m["bus"])
        fabric = MnnvlFabric(
            host,
            bus if bus else _not_printed("a readable bus id"),
            m["uuid"],
            int(m["clique"], 16),
            int(m["state"]),
            int(m["mask"], 16),
            evidence,
        )
        self.mnnvl.setdefault((host, m["bus"]), fabric)
        return True

    def _event(self, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> bool:
        for what, pattern in _EVENTS:
            if pattern.match(message):
                self._note_event(what, evidence)
                return True
        return False

    def _warning(self, prefix: str, message: str, evidence: LogLine, host: Probed[str], dev: int | None) -> None:
        where = _WARN_WHERE.search(prefix)
        self._p2p_disabled(message, evidence, host, dev)  # NCCL warns of a disabled P2P pair: record it too
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(NcclWarning(where["where"] if where else "", message, evidence))

    # --- helpers ---

    def _note_event(self, what: str, evidence: LogLine) -> None:
        seen = self.events.get(what)
        self.events[what] = NcclEvent(what, 1, evidence) if seen is None else replace(seen, count=seen.count + 1)

    def _rank(self, rank: int) -> _RankFacts:
        facts = self.ranks.get(rank)
        if facts is None:
            facts = self.ranks[rank] = _RankFacts()
        return facts

    def _place(self, rank: int, host: Probed[str], dev: int | None) -> None:
        """The rank printed this line: it runs on the prefix's host with the prefix's CUDA device."""
        facts = self._rank(rank)
        if isinstance(host, str) and facts.host is NOT_LOGGED:
            facts.host = host
        if dev is not None and facts.cuda is NOT_LOGGED:
            facts.cuda = dev

    def _bracket_meaning(self) -> tuple[str, str]:
        if not self.brackets_seen:
            return "none", "no rank lines"
        looks_like_bus = self.bus_id_like
        if isinstance(self.version, str):
            by_banner = "device-index" if _version_tuple(self.version) >= DEVICE_INDEX_FROM else "pci-bus-id"
            if by_banner == "device-index" and looks_like_bus:
                return "pci-bus-id", "form of the values (the banner's version prints device indexes)"
            return by_banner, "version banner"
        return ("pci-bus-id" if looks_like_bus else "device-index"), "form of the values"

    def view(self, lines_total: int) -> NcclView:
        meaning, basis = self._bracket_meaning()
        ranks = []
        for number in sorted(self.ranks):
            facts = self.ranks[number]
            nvml, bus = facts.nvml, facts.bus
            if facts.bracket and meaning == "device-index" and nvml is NOT_LOGGED and facts.bracket.isdecimal():
                nvml = int(facts.bracket)
            if facts.bracket and meaning == "pci-bus-id" and bus is NOT_LOGGED:
                read = bus_id_from_nccl(facts.bracket)
                if read:
                    bus = read
            ranks.append(
                NcclRank(
                    number,
                    facts.host,
                    facts.cuda,
                    nvml,
                    bus,
                    facts.n,
                    facts.nodes,
                    facts.lranks,
                    facts.lrank,
                    facts.mnnvl,
                    facts.done,
                )
            )
        transports = tuple(
            NcclTransport(
                src,
                dst,
                link.kind,
                via,
                direction,
                link.gdr,
                link.proxy,
                tuple(sorted(set(link.channels))),
                link.first,
                link.count,
            )
            for (src, dst, via, direction), link in sorted(self.links.items(), key=lambda kv: kv[0][:2])
        )
        return NcclView(
            version=self.version,
            bracket_value=meaning,
            bracket_basis=basis,
            hosts=tuple(self.hosts),
            ranks=tuple(ranks),
            devices=tuple(NcclDevice(host, dev) for host, dev in self.devices),
            transports=transports,
            rings=tuple(NcclRing(order, tuple(chs), first) for order, (chs, first) in self.rings.items()),
            trees=tuple(
                NcclTree(rank, shape, tuple(chs), first) for (rank, shape), (chs, first) in sorted(self.trees.items())
            ),
            channel_counts=tuple(self.counts.values()),
            nvls_support=tuple(self.nvls.values()),
            gdr=tuple(self.gdr.values()),
            net_devices=tuple(self.net.values()),
            networks=tuple(self.networks),
            p2p_disabled=tuple(self.p2p_off.values()),
            patterns=tuple(self.patterns.values()),
            system_links=tuple(self.system_links.values()),
            mnnvl_fabric=tuple(self.mnnvl.values()),
            warnings=tuple(self.warnings),
            events=tuple(self.events.values()),
            nccl_lines=self.nccl_lines,
            lines_total=lines_total,
            settings=tuple(self.settings.values()),
            nics=tuple(self.nics.values()),
            comm_size=self._comm_size(),
            truncated=self.truncated,
            lines_per_host=tuple(self.host_lines.items()),
        )

    def _comm_size(self) -> Probed[int]:
        """The communicator's rank count: its ``nRanks`` line, else the longest ring order (a ring visits every
        rank of the communicator)."""
        sizes = [f.n for f in self.ranks.values() if isinstance(f.n, int)]
        if sizes:
            return max(sizes)
        if self.rings:
            return max(len(set(order)) for order in self.rings)
        return Unsupported(SOURCE, "no comm line (nRanks) or ring order in the paste")


def _net_device(host: Probed[str], plugin: str, index: int, item: str, evidence: LogLine) -> NetDevice:
    """One ``[i]...`` item of a ``NET/... : Using`` line: ``mlx5_0:1/IB/SHARP`` or ``eth0:10.0.0.5<0>``."""
    ib = re.fullmatch(r"(?P<name>[^:/]+):(?P<port>\d+)/(?P<layer>[A-Za-z]+)(?P<flags>(?:/[^/]+)*)", item)
    speed = Unsupported(SOURCE, "not printed (the NET subsystem's per-device line gives it)")
    if ib:
        flags = tuple(f for f in ib["flags"].split("/") if f)
        no_address = Unsupported(SOURCE, "an IB verbs device has no interface address")
        return NetDevice(
            host, plugin, index, ib["name"], int(ib["port"]), ib["layer"], flags, no_address, speed, evidence
        )
    name, _, address = item.partition(":")
    return NetDevice(
        host,
        plugin,
        index,
        name,
        Unsupported(SOURCE, "a socket interface has no HCA port"),
        Unsupported(SOURCE, "a socket interface"),
        (),
        re.sub(r"<\d+>$", "", address) or Unsupported(SOURCE, "no address printed"),
        speed,
        evidence,
    )


def _not_printed(what: str) -> Unsupported:
    return Unsupported(SOURCE, f"this NCCL version does not print {what}")


def _kind(via: str) -> str:
    head = via.split("/", 1)[0].strip()
    if head == "P2P":
        return "P2P"
    if head == "SHM" or via.startswith("direct shared memory"):
        return "SHM"
    if head == "NET":
        return "NET"
    if head.upper().startswith("COLLNET"):
        return "COLLNET"
    return "OTHER"


def _proxy(via: str) -> Probed[int]:
    m = re.match(r"NET/[^/]+/\d+\((?P<proxy>\d+)\)", via)
    if m:
        return int(m["proxy"])
    return Unsupported(SOURCE, "no proxy rank: the connection does not go through another GPU's NIC (PXN)")


def machine_host(view: NcclView) -> str | None:
    """The host whose GPUs make the machine: the one holding the most ranks (first in the log on a tie); in a
    log that places no rank, the one that printed the most lines. A junk or spliced line with a host-like
    prefix (``0junk:1:2 [0] NCCL INFO ...``) holds no rank and so never decides the machine."""
    if not view.hosts:
        return None
    order = {host: i for i, host in enumerate(view.hosts)}
    ranks: dict[str, int] = {}
    for r in view.ranks:
        if isinstance(r.host, str):
            ranks[r.host] = ranks.get(r.host, 0) + 1
    if ranks:
        return min(ranks, key=lambda h: (-ranks[h], order.get(h, len(order))))
    lines = dict(view.lines_per_host)
    return min(order, key=lambda h: (-lines.get(h, 0), order[h]))


def machine_from_nccl_view(view: NcclView) -> Machine:
    """The GPUs of one host as the log places them (NVML index when logged, else the CUDA index): the host
    :func:`machine_host` names.

    A log names no links between GPUs, so the machine has none: the judge claims nothing about the fabric
    from it, and NCCL's transports are shown beside the links of a topology when one is known.
    """
    host = machine_host(view)
    bus_ids: dict[int, Probed[str]] = {}
    for r in view.ranks:
        if host is not None and r.host != host:
            continue
        index = r.nvml_device if isinstance(r.nvml_device, int) else r.cuda_device
        if isinstance(index, int):
            known = bus_ids.get(index)
            bus_ids[index] = r.pci_bus_id if not isinstance(known, str) else known
    for d in view.devices:
        if (host is None or d.host == host) and d.cuda_device not in bus_ids and not view.ranks:
            bus_ids[d.cuda_device] = NOT_LOGGED
    gpus = tuple(Gpu(index=i, pci_bus_id=bus_ids[i]) for i in sorted(bus_ids))
    return Machine(source=SOURCE, gpus=gpus, host=Host(hostname=host if host is not None else NOT_LOGGED))
