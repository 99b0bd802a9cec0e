"""A whole fake box for the probe: fake NVML (fakenvml), a sysfs/proc tree and ``nvidia-smi`` on PATH,
all built from one scenario file so they agree unless the scenario says otherwise."""

from __future__ import annotations

import os
import stat
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakenvml import FakeNvmlLib, Scenario, install, load_scenario

SMI_TEXTS = Path(__file__).parents[1] / "fixtures" / "probe" / "smi"


def bdf(nvml_bus: str) -> str:
    domain, rest = nvml_bus.split(":", 1)
    return f"{int(domain, 16):04x}:{rest.lower()}"


class _Tree:
    """Builds /sys/devices/pci*/... with bridges, and /sys/bus/pci/devices links to every device."""

    def __init__(self, root: Path, acs_control: int, config_bytes: int = 4096) -> None:
        self.root = root
        self.acs = acs_control  # the ACS Control register of every root and downstream port
        self.config_bytes = config_bytes  # what a read of `config` returns (64 for a user who is not root)
        self.bridges: dict[tuple[str, ...], Path] = {}
        self.counter = 0

    def _bridge(self, parent: Path, key: tuple[str, ...], numa: int) -> Path:
        if key not in self.bridges:
            self.counter += 1
            name = f"00ff:{self.counter:02x}:00.0"  # bridges get their own domain: names never clash
            path = parent / name
            path.mkdir(parents=True)
            self._attrs(path, "0x8086", "0x060400", numa)
            # a switch's upstream port has no ACS capability; root and downstream ports do (PCIe base spec 6.12)
            cap = b"" if key[-1] == "usp" else struct.pack("<IHH", 0x000D | (1 << 16), 0x5F, self.acs)
            config = b"\0" * 256 + cap + b"\0" * (4096 - 256 - len(cap))
            (path / "config").write_bytes(config[: self.config_bytes])
            write_link(path, 5, 5, 16, 16)  # a Gen5 x16 port, trained to its maximum
            self._link(name, path)
            self.bridges[key] = path
        return self.bridges[key]

    def _attrs(self, path: Path, vendor: str, cls: str, numa: int) -> None:
        (path / "vendor").write_text(vendor + "\n")
        (path / "class").write_text(cls + "\n")
        (path / "numa_node").write_text(f"{numa}\n")

    def _link(self, name: str, target: Path) -> None:
        link = self.root / "sys/bus/pci/devices" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(target, link.parent))

    def device(self, bus: str, root_complex: str, switch: str, numa: int, vendor: str, cls: str) -> Path:
        rc = self.root / "sys/devices" / root_complex
        rc.mkdir(parents=True, exist_ok=True)
        parent = self._bridge(rc, (root_complex, switch or bus), numa)
        if switch:
            usp = self._bridge(parent, (root_complex, switch, "usp"), numa)
            parent = self._bridge(usp, (root_complex, switch, bus), numa)
        path = parent / bus
        path.mkdir(parents=True)
        self._attrs(path, vendor, cls, numa)
        self._link(bus, path)
        return path


GEN_SPEED = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe"}


def write_link(path: Path, gen: int, gen_max: int, width: int, width_max: int) -> None:
    """The four ``*_link_*`` files of a PCI device (generation numbers as ``lspci`` speeds)."""
    (path / "current_link_speed").write_text(GEN_SPEED[gen] + "\n")
    (path / "max_link_speed").write_text(GEN_SPEED[gen_max] + "\n")
    (path / "current_link_width").write_text(f"{width}\n")
    (path / "max_link_width").write_text(f"{width_max}\n")


def _train(path: Path, gen: int, width: int) -> None:
    """Set a device's trained link (both ends of a link report the same)."""
    (path / "current_link_speed").write_text(GEN_SPEED[gen] + "\n")
    (path / "current_link_width").write_text(f"{width}\n")


def build_sysfs(sc: Scenario, root: Path) -> None:
    host = sc.host
    acs = int(host.get("acs_control", 0x1C if host.get("acs_redirect", False) else 0x00))
    tree = _Tree(root, acs, 64 if host.get("acs_unreadable") else 4096)
    for gpu in sc.gpus:
        path = tree.device(bdf(gpu.bus), gpu.root, gpu.switch, gpu.numa, "0x10de", "0x030200")
        write_link(path, *gpu.pcie)
        _train(path.parent, gpu.pcie[0], gpu.pcie[2])  # the port above reports the same link
        iommu = host.get("iommu", "off")
        if iommu != "off":
            (path / "iommu_group").mkdir()
            (path / "iommu_group/type").write_text(("identity" if iommu == "passthrough" else "DMA-FQ") + "\n")
    for n, extra in enumerate(host.get("hidden_gpus", [])):
        tree.device(extra, "pci0000:f0", "", 0, "0x10de", "0x030200")
        del n
    for nic in sc.raw.get("nics", []):
        path = tree.device(
            nic["bus"], nic["root"], nic.get("switch", ""), int(nic.get("numa", 0)), "0x15b3", "0x020700"
        )
        nic_link = nic.get("pcie", [5, 5, 16, 16])
        write_link(path, *nic_link)
        _train(path.parent, nic_link[0], nic_link[2])
        ib = root / "sys/class/infiniband" / nic["name"]
        (ib / "ports").mkdir(parents=True)
        (ib / "device").symlink_to(os.path.relpath(path, ib))
        for number, port in enumerate(nic.get("ports", [{}]), start=1):
            d = ib / f"ports/{number}"
            (d / "counters").mkdir(parents=True)
            (d / "rate").write_text(port.get("rate", nic.get("rate", "400 Gb/sec (4X NDR)")) + "\n")
            (d / "state").write_text(port.get("state", "4: ACTIVE") + "\n")
            (d / "phys_state").write_text(port.get("phys_state", "5: LinkUp") + "\n")
            (d / "link_layer").write_text(port.get("link_layer", nic.get("link_layer", "InfiniBand")) + "\n")
            (d / "counters/link_downed").write_text(f"{port.get('link_downed', 0)}\n")
            (d / "counters/symbol_error").write_text(f"{port.get('symbol_error', 0)}\n")
        for netdev in nic.get("netdevs", []):
            (path / "net" / netdev).mkdir(parents=True)
    for switch, (gen, width) in host.get("uplinks", {}).items():  # a switch uplink trained below Gen5 x16
        for key, bridge in tree.bridges.items():
            if key[1:] in ((switch,), (switch, "usp")):
                _train(bridge, gen, width)
    for bus, name in host.get("slots", {}).items():  # /sys/bus/pci/slots/NAME/address: domain:bus:device
        (root / "sys/bus/pci/slots" / name).mkdir(parents=True)
        (root / "sys/bus/pci/slots" / name / "address").write_text(bus.rpartition(".")[0] + "\n")
    for bus, (cor, nonfatal, fatal) in host.get("aer", {}).items():
        dev = root / "sys/bus/pci/devices" / bus
        (dev / "aer_dev_correctable").write_text(f"RxErr {cor}\nBadTLP 0\nTOTAL_ERR_COR {cor}\n")
        (dev / "aer_dev_nonfatal").write_text(f"Undefined 0\nTOTAL_ERR_NONFATAL {nonfatal}\n")
        (dev / "aer_dev_fatal").write_text(f"Undefined 0\nTOTAL_ERR_FATAL {fatal}\n")
    flags = "fpu vme de pse tsc msr pae mce cx8 apic sse sse2" + (" hypervisor" if host.get("virtual") else "")
    (root / "proc").mkdir(parents=True, exist_ok=True)
    (root / "proc/cpuinfo").write_text(f"processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: {flags}\n\n")
    module = "Open Kernel Module" if host.get("open_kernel_module") else "Kernel Module"
    (root / "proc/driver/nvidia").mkdir(parents=True)
    (root / "proc/driver/nvidia/version").write_text(
        f"NVRM version: NVIDIA UNIX x86_64 {module}  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
    )
    if host.get("peermem", True) and sc.raw.get("nics"):
        (root / "sys/module/nvidia_peermem").mkdir(parents=True)
    if host.get("iommu", "off") != "off":
        (root / "sys/class/iommu/dmar0").mkdir(parents=True)
    else:
        (root / "sys/class/iommu").mkdir(parents=True, exist_ok=True)
    for node in range(int(host.get("numa_nodes", 2))):
        (root / f"sys/devices/system/node/node{node}").mkdir(parents=True)
    (root / "sys/class/dmi/id").mkdir(parents=True)
    (root / "sys/class/dmi/id/product_name").write_text(host.get("product", "Fake Server") + "\n")
    (root / "sys/class/dmi/id/sys_vendor").write_text(("QEMU" if host.get("virtual") else "Supermicro") + "\n")
    (root / "proc/sys/kernel").mkdir(parents=True)
    (root / "proc/sys/kernel/hostname").write_text(host.get("hostname", "gpu-node-7") + "\n")
    (root / "proc/sys/kernel/osrelease").write_text(host.get("kernel", "6.8.0-45-generic") + "\n")
    (root / "proc/cmdline").write_text(host.get("cmdline", "BOOT_IMAGE=/vmlinuz ro quiet") + "\n")
    (root / "proc/1").mkdir()
    (root / "proc/1/comm").write_text("systemd\n")
    if host.get("fabric_manager", False):
        (root / "proc/2211").mkdir()
        (root / "proc/2211/comm").write_text("nv-fabricmanager\n")
    if "nccl_conf" in host:
        (root / "etc").mkdir()
        (root / "etc/nccl.conf").write_text(host["nccl_conf"])


SMI_SCRIPT = """#!{python}
import os, sys, time
args = " ".join(sys.argv[1:])
name = {{"topo -m": "topo-m", "nvlink -s": "nvlink-s"}}.get(args)
base = os.environ["FAKE_SMI_DIR"]
if name is None:
    print("fake nvidia-smi: unsupported arguments: " + args, file=sys.stderr)
    sys.exit(2)
if os.path.exists(os.path.join(base, name + ".hang")):
    time.sleep(60)
path = os.path.join(base, name + ".txt")
if not os.path.exists(path):
    print("Failed to run topology matrix" if name == "topo-m" else "NVML: Unknown Error")
    sys.exit(255)
sys.stdout.write(open(path, encoding="utf-8").read())
"""


def build_smi(sc: Scenario, bin_dir: Path, data_dir: Path) -> None:
    """``nvidia-smi`` printing the scenario's captured texts (tests/fixtures/probe/smi, with provenance)."""
    smi = sc.smi
    if smi.get("absent"):
        return
    bin_dir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "nvidia-smi"
    script.write_text(SMI_SCRIPT.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    for key, name in (("topo_m", "topo-m"), ("nvlink_s", "nvlink-s")):
        if key in smi:
            (data_dir / f"{name}.txt").write_text((SMI_TEXTS / smi[key]).read_text(encoding="utf-8"))
    for name in smi.get("hang", []):
        (data_dir / f"{name}.hang").write_text("")


KERNEL_LOG_SCRIPT = """#!{python}
import os, sys
base = os.environ["FAKE_KLOG_DIR"]
name = os.path.basename(sys.argv[0])
if name == "journalctl" and not os.path.exists(os.path.join(base, "journal.txt")):
    print("No journal files were opened due to insufficient permissions.", file=sys.stderr)
    sys.exit(0)
if name == "dmesg" and os.path.exists(os.path.join(base, "denied")):
    print("dmesg: read kernel buffer failed: Operation not permitted", file=sys.stderr)
    sys.exit(1)
path = os.path.join(base, "journal.txt" if name == "journalctl" else "dmesg.txt")
if os.path.exists(path):
    sys.stdout.write(open(path, encoding="utf-8").read())
"""


def build_kernel_log(sc: Scenario, bin_dir: Path, data_dir: Path) -> None:
    """``journalctl`` and ``dmesg`` on PATH (never the host's own): the scenario's ``[kernel_log]`` texts;
    by default the journal is not permitted and ``dmesg`` prints an empty log."""
    log = sc.raw.get("kernel_log", {})
    bin_dir.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    for name in ("journalctl", "dmesg"):
        script = bin_dir / name
        script.write_text(KERNEL_LOG_SCRIPT.format(python=sys.executable))
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    if "journal" in log:
        (data_dir / "journal.txt").write_text(log["journal"])
    if "dmesg" in log:
        (data_dir / "dmesg.txt").write_text(log["dmesg"])
    if log.get("denied"):
        (data_dir / "denied").write_text("")


@dataclass
class FakeBox:
    scenario: Scenario
    lib: FakeNvmlLib | None
    root: Path
    environ: dict[str, str]

    @property
    def expect(self) -> dict[str, Any]:
        return self.scenario.expect


def make_box(name: str, tmp_path: Path, monkeypatch: Any, tweak: Callable[[Scenario], None] | None = None) -> FakeBox:
    """Install scenario ``name``: fake NVML in pynvml, sysfs under tmp_path/root, nvidia-smi on PATH, env.
    ``tweak`` edits the loaded scenario first (a variant without another file)."""
    sc = load_scenario(name)
    if tweak is not None:
        tweak(sc)
    lib = None if sc.raw.get("no_library") else install(monkeypatch, sc)
    if lib is None:
        install(monkeypatch, None)
    root = tmp_path / "root"
    build_sysfs(sc, root)
    bin_dir, data_dir = tmp_path / "bin", tmp_path / "smi"
    build_smi(sc, bin_dir, data_dir)
    build_kernel_log(sc, bin_dir, tmp_path / "klog")
    for key in [k for k in os.environ if k.startswith(("NCCL_", "CUDA_VISIBLE", "NVIDIA_VISIBLE"))]:
        monkeypatch.delenv(key)
    environ = {k: str(v) for k, v in sc.host.get("environ", {}).items()}
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setenv("FAKE_SMI_DIR", str(data_dir))
    monkeypatch.setenv("FAKE_KLOG_DIR", str(tmp_path / "klog"))
    return FakeBox(sc, lib, root, environ)
