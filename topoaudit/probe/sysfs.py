"""What Linux says about the PCIe tree, RDMA NICs, IOMMU/ACS, NUMA and the host (sysfs and /proc).

Every function takes ``root`` (``/`` on a real machine, a fake tree in tests). Paths that do not exist
mean "not on this platform" (Unsupported); unreadable ones mean Failed.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable
from pathlib import Path

from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.snapshot import OsRecord, PcieDevice, RdmaNic
from topoaudit.units import normalize_bus_id

SYSFS = "sysfs"
NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")  # VGA / 3D controller
ACS_CAP_ID = 0x000D
ACS_REDIRECT_BITS = 0b1100  # P2P Request Redirect (bit 2), P2P Completion Redirect (bit 3)


def _read(path: Path) -> Probed[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        return Unsupported(SYSFS, f"{path.name} absent")
    except OSError as exc:
        return Failed(SYSFS, f"{path.name}: {exc.strerror}")


def _int(value: Probed[str]) -> Probed[int]:
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return Failed(SYSFS, f"not a number: {value!r}")
    return value


def pci_dir(root: Path, bus_id: str) -> Path:
    return root / "sys/bus/pci/devices" / bus_id


def pci_path(root: Path, bus_id: str) -> tuple[str, ...] | None:
    """("pci0000:00", "0000:00:01.0", ..., bus_id) from the device's real sysfs path; None when absent."""
    link = pci_dir(root, bus_id)
    if not link.exists():
        return None
    parts = Path(os.path.realpath(link)).parts
    for i, part in enumerate(parts):
        if part.startswith("pci") and ":" in part:
            return tuple(parts[i:])
    return None


def pci_device(root: Path, bus_id: str) -> PcieDevice | None:
    """One device: its path, NUMA node and link (``/sys/bus/pci/devices/BDF/{numa_node,*_link_*}``)."""
    path = pci_path(root, bus_id)
    if path is None:
        return None
    d = pci_dir(root, bus_id)
    numa = _int(_read(d / "numa_node"))
    return PcieDevice(
        bus_id=bus_id,
        path=path,
        numa_node=Unsupported(SYSFS, "numa_node is -1 (firmware gives no NUMA locality)") if numa == -1 else numa,
        link_speed_current=_read(d / "current_link_speed"),
        link_speed_max=_read(d / "max_link_speed"),
        link_width_current=_int(_read(d / "current_link_width")),
        link_width_max=_int(_read(d / "max_link_width")),
    )


def nvidia_gpus_on_bus(root: Path) -> Probed[tuple[str, ...]]:
    """Every NVIDIA VGA/3D controller on the PCI bus, whether or not this process may use it."""
    devices = root / "sys/bus/pci/devices"
    if not devices.is_dir():
        return Unsupported(SYSFS, "/sys/bus/pci/devices absent (not Linux, or a sandbox hides it)")
    found = []
    for entry in sorted(devices.iterdir()):
        vendor, cls = _read(entry / "vendor"), _read(entry / "class")
        if vendor == NVIDIA_VENDOR and isinstance(cls, str) and cls.startswith(GPU_CLASSES):
            found.append(normalize_bus_id(entry.name))
    return tuple(found)


def rdma_nics(root: Path) -> tuple[RdmaNic, ...]:
    """RDMA devices of ``/sys/class/infiniband``: PCI address, netdevs, rate and link layer of the first
    active port (``ibv_devinfo`` / ``ibstat`` show the same)."""
    base = root / "sys/class/infiniband"
    if not base.is_dir():
        return ()
    nics = []
    for dev in sorted(base.iterdir()):
        device = dev / "device"
        bus: Probed[str] = (
            normalize_bus_id(Path(os.path.realpath(device)).name)
            if device.exists()
            else Unsupported(SYSFS, "no PCI device (a software RDMA device such as rxe/siw)")
        )
        net = device / "net"
        netdevs: Probed[tuple[str, ...]] = tuple(sorted(p.name for p in net.iterdir())) if net.is_dir() else ()
        rate: Probed[float] = Unsupported(SYSFS, "no port")
        layer: Probed[str] = Unsupported(SYSFS, "no port")
        ports = sorted((dev / "ports").iterdir()) if (dev / "ports").is_dir() else []
        for port in ports:
            state = _read(port / "state")
            rate, layer = _rate(_read(port / "rate")), _read(port / "link_layer")
            if isinstance(state, str) and "ACTIVE" in state:
                break
        nics.append(
            RdmaNic(
                name=dev.name,
                pci_bus_id=bus,
                netdevs=netdevs,
                rate_gbps=rate,
                link_layer=layer,
                numa_node=_numa(device) if device.exists() else Unsupported(SYSFS, "no PCI device"),
            )
        )
    return tuple(nics)


def _numa(device: Path) -> Probed[int]:
    value = _int(_read(device / "numa_node"))
    return Unsupported(SYSFS, "numa_node is -1") if value == -1 else value


def _rate(text: Probed[str]) -> Probed[float]:
    """ "400 Gb/sec (4X NDR)" -> 400.0."""
    if not isinstance(text, str):
        return text
    m = re.match(r"\s*([\d.]+)\s*Gb/sec", text)
    return float(m.group(1)) if m else Failed(SYSFS, f"unknown rate {text!r}")


def iommu_state(root: Path, gpu_bus_ids: Iterable[str]) -> tuple[Probed[str], Probed[str]]:
    """("off" | "passthrough" | "translating", evidence): the IOMMU group type of the GPUs when sysfs has it
    (``identity`` = passthrough, ``DMA``/``DMA-FQ`` = translating), else /sys/class/iommu and the kernel
    command line (``iommu=pt``)."""
    for bus in gpu_bus_ids:
        kind = _read(pci_dir(root, bus) / "iommu_group/type")
        if isinstance(kind, str):
            state = "passthrough" if kind == "identity" else "translating"
            return state, f"iommu_group/type of {bus} is {kind}"
    units = root / "sys/class/iommu"
    cmdline = _read(root / "proc/cmdline")
    cmd = cmdline if isinstance(cmdline, str) else ""
    if units.is_dir() and any(units.iterdir()):
        if re.search(r"\biommu=pt\b|\biommu\.passthrough=1\b", cmd):
            return "passthrough", "IOMMU units present; kernel command line has iommu=pt"
        return "translating", "IOMMU units present in /sys/class/iommu"
    if units.is_dir() or isinstance(cmdline, str):
        return "off", "no IOMMU unit in /sys/class/iommu"
    return Unsupported(SYSFS, "no /sys/class/iommu"), Unsupported(SYSFS, "no /sys/class/iommu")


def acs_redirect(root: Path, paths: Iterable[tuple[str, ...]]) -> Probed[tuple[str, ...]]:
    """Bridges above the GPUs whose ACS control has P2P Request/Completion Redirect on (PCIe peer traffic is
    then sent up to the root complex, or blocked). Needs the extended config space (root); else Unsupported."""
    bridges = sorted({b for path in paths for b in path[1:-1]})
    if not bridges:
        return ()
    redirect, readable = [], 0
    for bridge in bridges:
        try:
            config = (pci_dir(root, bridge) / "config").read_bytes()
        except OSError:
            continue
        if len(config) <= 256:
            continue  # only root reads past the first 256 bytes
        readable += 1
        ctrl = _acs_control(config)
        if ctrl is not None and ctrl & ACS_REDIRECT_BITS:
            redirect.append(bridge)
    if not readable:
        return Unsupported(SYSFS, "extended PCI config space unreadable (run as root to check ACS)")
    return tuple(redirect)


def _acs_control(config: bytes) -> int | None:
    """The ACS Control register from a device's extended capability list, or None without ACS."""
    offset, seen = 0x100, 0
    while 0x100 <= offset <= len(config) - 8 and seen < 64:
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == ACS_CAP_ID:
            return int(struct.unpack_from("<H", config, offset + 6)[0])
        offset, seen = (header >> 20) & 0xFFC, seen + 1
    return None


def os_record(root: Path, gpu_paths: dict[str, tuple[str, ...]]) -> OsRecord:
    """Hostname and kernel (/proc/sys/kernel), DMI product, NUMA nodes, IOMMU, ACS, NVIDIA GPUs on the bus."""
    nodes_dir = root / "sys/devices/system/node"
    numa: Probed[int] = (
        len([p for p in nodes_dir.iterdir() if re.fullmatch(r"node\d+", p.name)])
        if nodes_dir.is_dir()
        else Unsupported(SYSFS, "no /sys/devices/system/node")
    )
    iommu, evidence = iommu_state(root, gpu_paths)
    return OsRecord(
        hostname=_read(root / "proc/sys/kernel/hostname"),
        kernel=_read(root / "proc/sys/kernel/osrelease"),
        product=_read(root / "sys/class/dmi/id/product_name"),
        numa_node_count=numa,
        iommu=iommu,
        iommu_evidence=evidence,
        nvidia_pci_gpus=nvidia_gpus_on_bus(root),
        acs_redirect_bridges=acs_redirect(root, gpu_paths.values()),
    )
