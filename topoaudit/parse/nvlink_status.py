"""``nvidia-smi nvlink -s`` / ``-e`` / ``-c`` / ``-R`` text: per GPU, each NVLink port's state, speed, error
counters and far end.

The ports become the same :class:`~topoaudit.model.machine.NvLinkPort` facts a live probe fills, so the
probe's rules judge a pasted capture as they judge NVML (a link down against the model's design count, so
an H100 NVL's 12 active of 18 is no fault; non-zero error counters). ``-c`` capabilities are read but say
nothing about health (an H800 prints "Link is supported: false" on links that are up).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from topoaudit.errors import InputError
from topoaudit.model.machine import Gpu, Machine, NvLinkPort
from topoaudit.model.report import ELIDED, ELISION_LINE
from topoaudit.model.values import Unsupported
from topoaudit.units import normalize_bus_id

SOURCE = "nvidia-smi-nvlink"

_GPU = re.compile(r"^\s*GPU (\d{1,5}): (.+?)\s*\(UUID: ([^)]*)\)\s*$")
_LINK = re.compile(r"^\s*Link (\d+)[:,]\s*(.*)$")
_SPEED = re.compile(r"^(\S+) GB/s$")
_COUNTER = re.compile(r"^(Replay|Recovery|CRC|CRC Flit|CRC Data) Errors:\s*(\S+)$", re.I)
MAX_PORT = 64  # NVML numbers a GPU's NVLink ports from 0; no GPU has more than 18
MAX_LINK_GBPS = 1000.0  # one NVLink runs at 26-53 GB/s per direction: a figure above is damage, not a speed
MAX_COUNT = 2**64  # NVML's counters are 64-bit
_REMOTE = re.compile(r"^Remote Device ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-7]): Link (\d{1,4})$")
_ALL_INACTIVE = re.compile(r"all links are inactive", re.I)
_COMMAND = re.compile(r"nvidia-smi\s+nvlink\b")
_COUNTER_FIELDS = {"replay": "replay_errors", "recovery": "recovery_errors", "crc": "crc_flit_errors",
                   "crc flit": "crc_flit_errors", "crc data": "crc_data_errors"}  # fmt: skip


@dataclass(frozen=True)
class ParsedNvlinkStatus:
    machine: Machine
    speeds_gbps: dict[str, dict[str, float]]  # per GPU label, each active port's speed ("link0": 26.562)
    notes: tuple[tuple[int, str], ...]  # (line, what was left out)
    used_lines: frozenset[int] = frozenset()  # 1-based lines of the nvlink output (a `topo -m` may sit beside it)
    damaged: tuple[tuple[int, str], ...] = ()  # (line, a figure no link gives): the audit is incomplete


def looks_like_nvlink_status(text: str) -> bool:
    """A ``GPU N: name (UUID: ...)`` header followed by ``Link N:`` lines or NVML's all-inactive sentence."""
    lines = [line for line in text[:65536].splitlines() if line.strip()]
    headers = [i for i, line in enumerate(lines) if _GPU.match(line)]
    if not headers:
        return False
    after = lines[headers[0] + 1 : headers[0] + 4]
    return any(_LINK.match(line) or _ALL_INACTIVE.search(line) for line in after)


def parse_nvlink_status(text: str, name: str) -> ParsedNvlinkStatus:
    """Read ``nvidia-smi nvlink -s``, ``-e`` or ``-c`` output (elided lines noted, not guessed)."""
    gpus: dict[int, Gpu] = {}
    ports: dict[int, dict[int, NvLinkPort]] = {}
    speeds: dict[str, dict[str, float]] = {}
    notes: list[tuple[int, str]] = []
    damaged: list[tuple[int, str]] = []
    current: int | None = None
    used: set[int] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if _COMMAND.search(line):
            used.add(number)
            continue
        header = _GPU.match(line)
        if header:
            used.add(number)
            current = int(header.group(1))
            uuid = header.group(3).strip()
            gpus[current] = Gpu(index=current, name=header.group(2).strip(), uuid=uuid if "GPU-" in uuid else _hidden())
            ports.setdefault(current, {})
            continue
        if ELISION_LINE.match(line):
            used.add(number)
            notes.append((number, f"{ELIDED} ('...'): the GPUs and links it hides are not judged"))
            continue
        if current is None:
            continue
        if _ALL_INACTIVE.search(line):
            used.add(number)
            gpus[current] = replace(gpus[current], nvlink_ports=())
            ports[current] = {-1: NvLinkPort(-1, state="inactive")}
            continue
        link = _LINK.match(line)
        if not link:
            continue
        used.add(number)
        if len(link.group(1)) > 2 or int(link.group(1)) > MAX_PORT:
            damaged.append((number, f"'Link {link.group(1)[:12]}' names no NVLink port of GPU{current}; line left out"))
            continue
        index, rest = int(link.group(1)), link.group(2).strip()
        port = ports[current].get(index, NvLinkPort(index))
        speed = _SPEED.match(rest)
        counter = _COUNTER.match(rest)
        remote = _REMOTE.match(rest)
        if rest == "<inactive>":
            port = replace(port, state="inactive")
        elif speed:
            figure = _figure(speed.group(1), MAX_LINK_GBPS)
            if figure is None:
                damaged.append(
                    (number, f"GPU{current} link {index}: {rest[:40]!r} is no link speed; the link is not judged")
                )
                continue
            port = replace(port, state="active")
            speeds.setdefault(f"GPU{current}", {})[f"link{index}"] = figure
        elif remote:  # `nvlink -R`: the far end of the link
            port = replace(port, remote_pci_bus_id=normalize_bus_id(remote.group(1)))
        elif counter:
            count = counter.group(2)
            if not count.isdecimal() or len(count) > 20 or int(count) >= MAX_COUNT:
                damaged.append(
                    (number, f"GPU{current} link {index}: {rest[:40]!r} is no error count; it is not judged")
                )
                continue
            changes: dict[str, int] = {_COUNTER_FIELDS[counter.group(1).lower()]: int(count)}
            port = replace(port, **changes)  # type: ignore[arg-type]
        else:  # `-c` capabilities, `-gt` throughput: read, but they say nothing of the link's health
            continue
        ports[current][index] = port
    if not gpus:
        raise InputError(f"{name}: no 'GPU N: ... (UUID: ...)' line in this nvidia-smi nvlink output")
    machine_gpus = []
    for index, gpu in sorted(gpus.items()):
        found = ports[index]
        if -1 in found:  # NVML: every link inactive; their number is not printed, the model's design says it
            machine_gpus.append(replace(gpu, nvlink_ports=(NvLinkPort(-1, state="inactive"),)))
        elif found:
            machine_gpus.append(replace(gpu, nvlink_ports=tuple(p for _, p in sorted(found.items()))))
        else:
            machine_gpus.append(gpu)
    machine = Machine(source=SOURCE, gpus=tuple(machine_gpus))
    return ParsedNvlinkStatus(machine, speeds, tuple(notes), frozenset(used), tuple(damaged))


def _figure(text: str, most: float) -> float | None:
    """A speed as nvidia-smi prints it, or None for one no link runs at (negative, NaN, 1e308, not a number)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value <= most else None


def _hidden() -> Unsupported:
    return Unsupported(SOURCE, "the UUID was redacted in the paste")
