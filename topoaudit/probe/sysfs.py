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

from topoaudit.model.host_checks import RdmaPort
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.snapshot import AcsRecord, OsRecord, PcieDevice, RdmaNic
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
    """Return a PCI device's sysfs folder under ``root`` (a test tree or ``/``)."""
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
    """Read one PCI device: its path, NUMA node, link and AER totals.

    From ``/sys/bus/pci/devices/BDF/{numa_node,*_link_*,aer_dev_*}``; ``lspci -vv -s BDF`` shows LnkCap/LnkSta
    and the AER status registers.
    """
    path = pci_path(root, bus_id)
    if path is None:
        return None
    d = pci_dir(root, bus_id)
    numa = _int(_read(d / "numa_node"))
    return PcieDevice(
        aer_correctable=aer_total(d / "aer_dev_correctable", "TOTAL_ERR_COR"),
        aer_nonfatal=aer_total(d / "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"),
        aer_fatal=aer_total(d / "aer_dev_fatal", "TOTAL_ERR_FATAL"),
        bus_id=bus_id,
        path=path,
        numa_node=Unsupported(SYSFS, "numa_node is -1 (firmware gives no NUMA locality)") if numa == -1 else numa,
        link_speed_current=_read(d / "current_link_speed"),
        link_speed_max=_read(d / "max_link_speed"),
        link_width_current=_int(_read(d / "current_link_width")),
        link_width_max=_int(_read(d / "max_link_width")),
    )


def aer_total(path: Path, total_name: str) -> Probed[int]:
    """Read the error total of one ``aer_dev_*`` file; Unsupported where the kernel or the device has no AER.

    The file has ``NAME COUNT`` lines; the total is the sum when the kernel prints no total line.
    """
    text = _read(path)
    if not isinstance(text, str):
        if isinstance(text, Unsupported):
            return Unsupported(SYSFS, f"{path.name} absent (no AER on this device or kernel)")
        return text
    counts: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.strip().rpartition(" ")
        if name and value.isdecimal():
            counts[name.strip()] = int(value)
    if not counts:
        return Failed(SYSFS, f"{path.name}: no counters in {text[:60]!r}")
    return counts.get(total_name, sum(v for k, v in counts.items() if not k.startswith("TOTAL_")))


def pci_bridges(root: Path, paths: Iterable[tuple[str, ...]]) -> tuple[PcieDevice, ...]:
    """Read every bridge between the root complex and the given devices, with their links and AER totals.

    Root ports and switch ports: a switch uplink trained down is invisible to NVML's per-GPU figures
    (``lspci -tv`` draws the tree, ``lspci -vv -s BDF`` shows each port's LnkCap/LnkSta).
    """
    bridges = sorted({b for path in paths for b in path[1:-1]})
    return tuple(d for b in bridges if (d := pci_device(root, b)) is not None)


def link_speed_gts(text: Probed[str]) -> Probed[float]:
    """Read a link speed: "32.0 GT/s PCIe" -> 32.0; "Unknown" (a link that is down) stays absent with the reason."""
    if not isinstance(text, str):
        return text
    m = re.match(r"\s*([\d.]+)\s*GT/s", text)
    return float(m.group(1)) if m else Unsupported(SYSFS, f"link speed {text!r}")


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


def _rdma_bus_id(device: Path) -> Probed[str]:
    """Return the PCI address behind an RDMA device's ``device`` link; a software device (rxe/siw) has none."""
    if not device.exists():
        return Unsupported(SYSFS, "no PCI device (a software RDMA device such as rxe/siw)")
    return normalize_bus_id(Path(os.path.realpath(device)).name)


def rdma_nics(root: Path) -> tuple[RdmaNic, ...]:
    """Read the RDMA devices of ``/sys/class/infiniband``.

    PCI address, netdevs, rate and link layer of the first active port (``ibv_devinfo`` / ``ibstat`` show the
    same).
    """
    base = root / "sys/class/infiniband"
    if not base.is_dir():
        return ()
    nics = []
    for dev in sorted(base.iterdir()):
        device = dev / "device"
        bus = _rdma_bus_id(device)
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


def _after_colon(value: Probed[str]) -> Probed[str]:
    """Drop the number sysfs puts before a port state: "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LinkUp"."""
    return value.split(":", 1)[-1].strip() if isinstance(value, str) else value


def rdma_ports(root: Path) -> tuple[RdmaPort, ...]:
    """Read every port of every RDMA device.

    From ``/sys/class/infiniband/DEV/ports/N/{state,phys_state,rate,link_layer,counters/link_downed,
    counters/symbol_error}`` (``ibstat``, ``rdma link``, ``perfquery`` show the same).
    """
    base = root / "sys/class/infiniband"
    if not base.is_dir():
        return ()
    out = []
    for dev in sorted(base.iterdir()):
        device = dev / "device"
        bus = _rdma_bus_id(device)
        ports = (dev / "ports").iterdir() if (dev / "ports").is_dir() else iter(())
        for port in sorted(ports, key=lambda p: int(p.name) if p.name.isdecimal() else 0):
            if not port.name.isdecimal():
                continue
            out.append(
                RdmaPort(
                    device=dev.name,
                    port=int(port.name),
                    state=_after_colon(_read(port / "state")),
                    phys_state=_after_colon(_read(port / "phys_state")),
                    rate_gbps=_rate(_read(port / "rate")),
                    link_layer=_read(port / "link_layer"),
                    link_downed=_int(_read(port / "counters/link_downed")),
                    symbol_error=_int(_read(port / "counters/symbol_error")),
                    pci_bus_id=bus,
                )
            )
    return tuple(out)


def gpudirect_rdma(root: Path) -> tuple[Probed[str], Probed[str]]:
    """Tell how NICs can reach GPU memory, with the evidence.

    ``nvidia_peermem`` loaded (``/sys/module/nvidia_peermem``, ``lsmod``), the older ``nv_peer_mem``
    (``/sys/kernel/mm/memory_peers/nv_mem``), DMA-BUF (NVIDIA's open kernel module on Linux 5.12 or later,
    ``/proc/driver/nvidia/version``), or "none".
    """
    if (root / "sys/module/nvidia_peermem").is_dir():
        return "nvidia_peermem", "/sys/module/nvidia_peermem present (module loaded)"
    if (root / "sys/kernel/mm/memory_peers/nv_mem/version").exists():
        return "nvidia_peermem", "/sys/kernel/mm/memory_peers/nv_mem/version present (nv_peer_mem loaded)"
    version = _read(root / "proc/driver/nvidia/version")
    kernel = _read(root / "proc/sys/kernel/osrelease")
    if not isinstance(version, str):
        return Unsupported(SYSFS, "no /proc/driver/nvidia/version (driver not loaded here)"), str(version)
    open_module = "Open Kernel Module" in version
    release = re.match(r"(\d+)\.(\d+)", kernel) if isinstance(kernel, str) else None
    new_kernel = release is not None and (int(release.group(1)), int(release.group(2))) >= (5, 12)
    if open_module and new_kernel:
        return "dma-buf", f"NVIDIA open kernel module on Linux {kernel}; nvidia_peermem not loaded"
    module = "open" if open_module else "proprietary"
    return "none", f"nvidia_peermem not loaded; {module} NVIDIA kernel module on Linux {kernel}"


_VM_VENDORS = ("qemu", "kvm", "vmware", "xen", "innotek", "virtualbox", "bochs", "parallels", "openstack",
               "amazon ec2", "google compute engine", "microsoft corporation virtual machine",
               "cloud hypervisor")  # fmt: skip


def virtualization(root: Path) -> tuple[Probed[str], Probed[str]]:
    """Tell a virtual machine from bare metal: ("vm" | "bare-metal", evidence).

    Read from the ``hypervisor`` flag of /proc/cpuinfo (set by the CPU inside any guest) and the DMI vendor and
    product (``systemd-detect-virt``, ``dmidecode -s system-manufacturer``).
    """
    dmi = root / "sys/class/dmi/id"
    strings = {
        name: v for name in ("sys_vendor", "product_name", "board_vendor") if isinstance(v := _read(dmi / name), str)
    }
    cpuinfo = _read(root / "proc/cpuinfo")
    evidence = []
    flagged = False
    if isinstance(cpuinfo, str):
        flags = next((line for line in cpuinfo.splitlines() if line.startswith(("flags", "Features"))), "")
        flagged = "hypervisor" in flags.partition(":")[2].split()
        evidence.append("cpu flag hypervisor" if flagged else "no hypervisor cpu flag")
    joined = " ".join(strings.values()).lower()
    vendor = next((v for v in _VM_VENDORS if v in joined), "")
    if vendor:
        evidence.append("DMI " + ", ".join(f"{k} {v!r}" for k, v in strings.items()))
    if not strings and not isinstance(cpuinfo, str):
        why = Unsupported(SYSFS, "neither /proc/cpuinfo nor /sys/class/dmi/id readable")
        return why, why
    return ("vm" if flagged or vendor else "bare-metal"), "; ".join(evidence) or "no DMI vendor of a hypervisor"


def _numa(device: Path) -> Probed[int]:
    value = _int(_read(device / "numa_node"))
    return Unsupported(SYSFS, "numa_node is -1") if value == -1 else value


def _rate(text: Probed[str]) -> Probed[float]:
    """Read a port rate: "400 Gb/sec (4X NDR)" -> 400.0."""
    if not isinstance(text, str):
        return text
    m = re.match(r"\s*([\d.]+)\s*Gb/sec", text)
    return float(m.group(1)) if m else Failed(SYSFS, f"unknown rate {text!r}")


def iommu_state(root: Path, gpu_bus_ids: Iterable[str]) -> tuple[Probed[str], Probed[str]]:
    """Tell how the IOMMU treats the GPUs: ("off" | "passthrough" | "translating", evidence).

    Read from the IOMMU group type of the GPUs when sysfs has it (``identity`` = passthrough, ``DMA``/``DMA-FQ``
    = translating), else /sys/class/iommu and the kernel command line (``iommu=pt``).
    """
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


ACS_ROOT_ONLY = (
    "the ACS Control register lies in extended PCI config space, which sysfs shows to root only (run the probe "
    "as root, or look at `sudo lspci -vvv | grep ACSCtl`)"
)


def acs_bridges(root: Path, paths: Iterable[tuple[str, ...]]) -> Probed[tuple[AcsRecord, ...]]:
    """Read the ACS Control register of every bridge above the given devices (GPUs and RDMA NICs).

    From ``/sys/bus/pci/devices/BDF/config`` (what ``setpci -s BDF ECAP_ACS+0x6.w`` reads). An unprivileged
    read stops at the first 64 bytes and the register lies beyond 256: when no bridge could be read that way
    the whole answer is Unsupported with the reason.
    """
    bridges = sorted({b for path in paths for b in path[1:-1]})
    records, readable = [], 0
    for bridge in bridges:
        try:
            config = (pci_dir(root, bridge) / "config").read_bytes()
        except FileNotFoundError:
            records.append(AcsRecord(bridge, Unsupported(SYSFS, "no config file")))
            continue
        except OSError as exc:
            records.append(AcsRecord(bridge, Failed(SYSFS, f"config: {exc.strerror}")))
            continue
        if len(config) <= 64:
            records.append(AcsRecord(bridge, Unsupported(SYSFS, ACS_ROOT_ONLY)))
            continue
        readable += 1
        if len(config) <= 256:
            records.append(AcsRecord(bridge, Unsupported(SYSFS, "no extended config space (no ACS capability)")))
            continue
        ctrl = _acs_control(config)
        records.append(AcsRecord(bridge, Unsupported(SYSFS, "no ACS capability") if ctrl is None else ctrl))
    if bridges and not readable:
        first = getattr(records[0].control, "reason", records[0].control)
        short = any(isinstance(r.control, Unsupported) and r.control.reason == ACS_ROOT_ONLY for r in records)
        return Unsupported(SYSFS, ACS_ROOT_ONLY if short else f"no bridge's config space readable: {first}")
    return tuple(records)


def acs_redirect(acs: Probed[tuple[AcsRecord, ...]], paths: Iterable[tuple[str, ...]]) -> Probed[tuple[str, ...]]:
    """List the bridges above the given devices whose ACS control has P2P Request/Completion Redirect on.

    PCIe peer traffic is then sent up to the root complex, or blocked.
    """
    if not isinstance(acs, tuple):
        return acs
    above = {b for path in paths for b in path[1:-1]}
    return tuple(
        r.bus_id for r in acs if r.bus_id in above and isinstance(r.control, int) and r.control & ACS_REDIRECT_BITS
    )


def _acs_control(config: bytes) -> int | None:
    """Read the ACS Control register from a device's extended capability list, or None without ACS."""
    offset, seen = 0x100, 0
    while 0x100 <= offset <= len(config) - 8 and seen < 64:
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):
            return None
        if header & 0xFFFF == ACS_CAP_ID:
            return int(struct.unpack_from("<H", config, offset + 6)[0])
        offset, seen = (header >> 20) & 0xFFC, seen + 1
    return None


def pci_slots(root: Path) -> Probed[dict[str, str]]:
    """Name the physical slot of each PCI address that sits in one (``/sys/bus/pci/slots/NAME/address``).

    The address is ``domain:bus:device`` without the function (``lspci -vv`` prints it as "Physical Slot").
    """
    base = root / "sys/bus/pci/slots"
    if not base.is_dir():
        return Unsupported(SYSFS, "no /sys/bus/pci/slots (the firmware describes no slots)")
    slots = {}
    for slot in sorted(base.iterdir()):
        address = _read(slot / "address")
        if isinstance(address, str) and address:
            slots[address.lower()] = slot.name
    return slots


def os_record(root: Path, gpu_paths: dict[str, tuple[str, ...]], nic_paths: Iterable[tuple[str, ...]] = ()) -> OsRecord:
    """Read what the operating system knows about the host, beyond NVML.

    Hostname and kernel (/proc/sys/kernel), DMI product, NUMA nodes, IOMMU, ACS on the bridges above the GPUs
    and RDMA NICs, NVIDIA GPUs on the bus, virtualisation, RDMA ports and GPUDirect RDMA support.
    """
    nodes_dir = root / "sys/devices/system/node"
    numa: Probed[int] = (
        len([p for p in nodes_dir.iterdir() if re.fullmatch(r"node\d+", p.name)])
        if nodes_dir.is_dir()
        else Unsupported(SYSFS, "no /sys/devices/system/node")
    )
    iommu, evidence = iommu_state(root, gpu_paths)
    virt, virt_evidence = virtualization(root)
    gdr, gdr_evidence = gpudirect_rdma(root)
    acs = acs_bridges(root, [*gpu_paths.values(), *nic_paths])
    return OsRecord(
        virtualization=virt,
        virtualization_evidence=virt_evidence,
        rdma_ports=rdma_ports(root),
        gpudirect_rdma=gdr,
        gpudirect_rdma_evidence=gdr_evidence,
        hostname=_read(root / "proc/sys/kernel/hostname"),
        kernel=_read(root / "proc/sys/kernel/osrelease"),
        product=_read(root / "sys/class/dmi/id/product_name"),
        numa_node_count=numa,
        iommu=iommu,
        iommu_evidence=evidence,
        nvidia_pci_gpus=nvidia_gpus_on_bus(root),
        acs_redirect_bridges=acs_redirect(acs, gpu_paths.values()),
        acs_bridges=acs,
        pci_slots=pci_slots(root),
    )
