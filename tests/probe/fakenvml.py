"""A fake ``libnvidia-ml.so`` for tests: an object put where pynvml keeps its CDLL (``pynvml.nvmlLib``).

pynvml looks every C function up with ``getattr(nvmlLib, "nvmlDeviceGet...")`` (``_nvmlGetFunctionPointer``)
and calls it with ctypes arguments, so the REAL pynvml wrappers run against this object: outputs are
written through the ``byref`` pointers and string buffers the wrappers pass, and each function returns an
NVML return code like the C library. A symbol the scenario lists under ``missing`` is absent
(AttributeError -> pynvml raises FUNCTION_NOT_FOUND).

Scenarios (tests/fixtures/nvml/*.toml) describe a box compactly; :func:`load_scenario` expands them and
:mod:`fakebox` builds the matching sysfs tree and ``nvidia-smi`` from the same description, so the three
sources agree unless a scenario says otherwise.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SCENARIOS = Path(__file__).parents[1] / "fixtures" / "nvml"
HANDLE_BASE = 0x5A5A0000

ERR = {
    name.removeprefix("NVML_ERROR_"): getattr(pynvml, name) for name in dir(pynvml) if name.startswith("NVML_ERROR_")
}
P2P = {"OK": 0, "CHIPSET_NOT_SUPPORTED": 1, "GPU_NOT_SUPPORTED": 2, "IOH_TOPOLOGY_NOT_SUPPORTED": 3,
       "DISABLED_BY_REGKEY": 4, "NOT_SUPPORTED": 5, "UNKNOWN": 6}  # fmt: skip


@dataclass
class Port:
    remote: str  # "switch" | "gpu" | "none"
    remote_bus: str  # NVML form
    active: bool
    errors: tuple[int, int, int, int] = (0, 0, 0, 0)  # replay, recovery, crc flit, crc data


@dataclass
class FakeGpu:
    index: int
    bus: str  # NVML form "00000000:18:00.0"
    name: str
    memory: int
    arch: int
    numa: int
    cpus: tuple[int, ...]
    root: str
    switch: str
    pcie: tuple[int, int, int, int]
    gpu_max_gen: int
    utilization: int
    nvlink_version: int
    ports: list[Port]
    fabric: dict[str, Any] | None  # None: NOT_SUPPORTED
    mig: tuple[int, int]
    serial: str
    lost_after: int = 0  # GPU_IS_LOST after this many calls on the GPU (0: never)
    calls: int = 0


@dataclass
class Scenario:
    name: str
    raw: dict[str, Any]
    gpus: list[FakeGpu]
    missing: set[str] = field(default_factory=set)
    errors: list[dict[str, Any]] = field(default_factory=list)
    hang: dict[str, Any] = field(default_factory=dict)
    init_error: str = ""
    p2p_default: str = "OK"
    p2p_sys: str = "OK"
    p2p_overrides: dict[tuple[int, int], dict[str, str]] = field(default_factory=dict)

    @property
    def host(self) -> dict[str, Any]:
        return dict(self.raw.get("host", {}))

    @property
    def smi(self) -> dict[str, Any]:
        return dict(self.raw.get("smi", {}))

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.raw.get("expect", {}))

    def ancestor(self, a: FakeGpu, b: FakeGpu) -> int:
        """NVML_TOPOLOGY_*: same PCIe switch 10 (PIX), same root complex 30 (PHB), same NUMA 40, else 50."""
        if a.switch and a.switch == b.switch and a.root == b.root:
            return 10
        if a.root == b.root:
            return 30
        return 40 if a.numa == b.numa else 50


def cpu_list(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return tuple(out)


def load_scenario(name: str) -> Scenario:
    raw = tomllib.loads((SCENARIOS / f"{name}.toml").read_text(encoding="utf-8"))
    base = raw.get("gpu", {})
    gpus: list[FakeGpu] = []
    entries = raw.get("gpus", [])
    buses = [e["bus"] for e in entries]
    for index, entry in enumerate(entries):
        spec = {**base, **entry}
        ports: list[Port] = []
        for kind, target, count in spec.get("ports", []):
            remote_bus = buses[int(target)] if kind == "gpu" else str(target)
            ports.extend(Port(kind, remote_bus, kind != "none") for _ in range(int(count)))
        for link in spec.get("down", []):
            ports[link].active = False
        for link, counters in spec.get("link_errors", {}).items():
            ports[int(link)].errors = tuple(counters)  # type: ignore[assignment]
        gpus.append(
            FakeGpu(
                index=index,
                bus=entry["bus"],
                name=spec["name"],
                memory=int(spec.get("memory_total_bytes", 80 * 2**30)),
                arch=int(spec.get("architecture", 9)),
                numa=int(spec.get("numa", 0)),
                cpus=cpu_list(spec.get("cpus", "0-7")),
                root=spec.get("root", "pci0000:00"),
                switch=spec.get("switch", ""),
                pcie=tuple(spec.get("pcie", [5, 5, 16, 16])),  # type: ignore[arg-type]
                gpu_max_gen=int(spec.get("gpu_max_gen", spec.get("pcie", [5, 5])[1])),
                utilization=int(spec.get("utilization", 0)),
                nvlink_version=int(spec.get("nvlink_version", 6)),
                ports=ports,
                fabric=spec.get("fabric"),
                mig=tuple(spec.get("mig", [0, 0])),  # type: ignore[arg-type]
                serial=f"{spec.get('serial_prefix', '16549220')}{index:05d}",
                lost_after=int(spec.get("lost_after", 0)),
            )
        )
    p2p = raw.get("p2p", {})
    overrides = {}
    for o in p2p.get("overrides", []):
        a, b = o["pair"]
        overrides[(a, b)] = overrides[(b, a)] = {k: v for k, v in o.items() if k != "pair"}
    return Scenario(
        name=name,
        raw=raw,
        gpus=gpus,
        missing=set(raw.get("missing", [])),
        errors=list(raw.get("errors", [])),
        hang=dict(raw.get("hang", {})),
        init_error=raw.get("init_error", ""),
        p2p_default=p2p.get("default", "OK"),
        p2p_sys=p2p.get("sys", p2p.get("default", "OK")),
        p2p_overrides=overrides,
    )


# --- the fake library ------------------------------------------------------------------------------


class _CFunc:
    """Stands in for a ctypes function pointer (pynvml may set ``restype``/``argtypes`` on it)."""

    def __init__(self, fn: Any) -> None:
        self._fn = fn

    def __call__(self, *args: Any) -> Any:
        return self._fn(*args)


def _out(ref: Any) -> Any:
    """The object behind ``ctypes.byref(obj)``."""
    return ref._obj


def _set_handle(ref: Any, token: int) -> None:
    ptr = _out(ref)
    ctypes.cast(ctypes.pointer(ptr), ctypes.POINTER(ctypes.c_void_p)).contents.value = token


def _token(handle: Any) -> int:
    return int(ctypes.cast(handle, ctypes.c_void_p).value or 0)


def _pci_fill(info: Any, bus: str, device_id: int = 0x233010DE) -> None:
    domain, rest = bus.split(":", 1)
    b, d = rest.split(":")[0], rest.split(":")[1].split(".")[0]
    info.busId = bus.upper().encode()
    info.busIdLegacy = f"{int(domain, 16) & 0xFFFF:04X}:{rest.upper()}".encode()
    info.domain, info.bus, info.device = int(domain, 16), int(b, 16), int(d, 16)
    info.pciDeviceId = device_id


class FakeNvmlLib:
    """Answers NVML C calls from a :class:`Scenario` (the symbols topoaudit's probe uses)."""

    def __init__(self, scenario: Scenario) -> None:
        self.sc = scenario
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> _CFunc:
        if name.startswith("_") or name in self.sc.missing:
            raise AttributeError(name)
        impl = getattr(type(self), "c_" + name, None)
        if impl is None:
            raise AttributeError(name)
        return _CFunc(lambda *args: self._dispatch(name, impl, args))

    # -- plumbing -------------------------------------------------------------------------------
    def _dispatch(self, name: str, impl: Any, args: tuple[Any, ...]) -> int:
        self.calls.append(name)
        gpu = self._gpu_of(args[0]) if args and isinstance(args[0], pynvml.c_nvmlDevice_t) else None
        if self.sc.hang.get("function") == name:
            time.sleep(float(self.sc.hang.get("seconds", 5)))
        if gpu is not None:
            gpu.calls += 1
            if gpu.lost_after and gpu.calls > gpu.lost_after:
                return ERR["GPU_IS_LOST"]
        for rule in self.sc.errors:
            if rule["function"] == name and (gpu is None or rule.get("gpu", gpu.index) == gpu.index):
                link = rule.get("link")
                if link is None or (len(args) > 1 and args[1] == link):
                    return ERR[rule["code"]]
        return impl(self, *args)

    def _gpu_of(self, handle: Any) -> FakeGpu | None:
        try:
            token = _token(handle)
        except (TypeError, ctypes.ArgumentError):
            return None
        index = token - HANDLE_BASE
        return self.sc.gpus[index] if 0 <= index < len(self.sc.gpus) else None

    def _g(self, handle: Any) -> FakeGpu:
        gpu = self._gpu_of(handle)
        assert gpu is not None, "invalid handle"
        return gpu

    # -- init / system ----------------------------------------------------------------------------
    def c_nvmlInitWithFlags(self, flags: int) -> int:
        return ERR[self.sc.init_error] if self.sc.init_error else 0

    def c_nvmlShutdown(self) -> int:
        return 0

    def c_nvmlErrorString(self, code: int) -> bytes:  # pynvml sets restype = c_char_p
        return b"fake error"

    def c_nvmlSystemGetDriverVersion(self, buf: Any, size: Any) -> int:
        buf.value = self.sc.raw.get("driver_version", "550.54.15").encode()
        return 0

    def c_nvmlSystemGetNVMLVersion(self, buf: Any, size: Any) -> int:
        buf.value = self.sc.raw.get("nvml_version", "12.550.54.15").encode()
        return 0

    def c_nvmlSystemGetCudaDriverVersion(self, ref: Any) -> int:
        _out(ref).value = int(self.sc.raw.get("cuda_driver_version", 12040))
        return 0

    def c_nvmlDeviceGetCount_v2(self, ref: Any) -> int:
        _out(ref).value = len(self.sc.gpus)
        return 0

    def c_nvmlDeviceGetHandleByIndex_v2(self, index: Any, ref: Any) -> int:
        i = index.value
        if i >= len(self.sc.gpus):
            return ERR["INVALID_ARGUMENT"]
        _set_handle(ref, HANDLE_BASE + i)
        return 0

    # -- identity ---------------------------------------------------------------------------------
    def c_nvmlDeviceGetName(self, h: Any, buf: Any, size: Any) -> int:
        buf.value = self._g(h).name.encode()
        return 0

    def c_nvmlDeviceGetUUID(self, h: Any, buf: Any, size: Any) -> int:
        g = self._g(h)
        buf.value = f"GPU-{g.index:08x}-fake-4000-8000-{int(g.bus.split(':')[1], 16):012x}".encode()
        return 0

    def c_nvmlDeviceGetSerial(self, h: Any, buf: Any, size: Any) -> int:
        buf.value = self._g(h).serial.encode()
        return 0

    def c_nvmlDeviceGetBoardPartNumber(self, h: Any, buf: Any, size: Any) -> int:
        buf.value = self.sc.raw.get("gpu", {}).get("board_part_number", "692-2G520-0200-000").encode()
        return 0

    def c_nvmlDeviceGetPciInfo_v3(self, h: Any, ref: Any) -> int:
        _pci_fill(_out(ref), self._g(h).bus)
        return 0

    def c_nvmlDeviceGetMemoryInfo(self, h: Any, ref: Any) -> int:
        m = _out(ref)
        m.total, m.free, m.used = self._g(h).memory, self._g(h).memory - 2**29, 2**29
        return 0

    def c_nvmlDeviceGetArchitecture(self, h: Any, ref: Any) -> int:
        _out(ref).value = self._g(h).arch
        return 0

    def c_nvmlDeviceGetMigMode(self, h: Any, cur: Any, pending: Any) -> int:
        g = self._g(h)
        if g.arch < 7:
            return ERR["NOT_SUPPORTED"]
        _out(cur).value, _out(pending).value = g.mig
        return 0

    # -- affinity ---------------------------------------------------------------------------------
    def c_nvmlDeviceGetCpuAffinity(self, h: Any, size: int, ref: Any) -> int:
        words = _out(ref)
        for cpu in self._g(h).cpus:
            if cpu // 64 < size:
                words[cpu // 64] |= 1 << (cpu % 64)
        return 0

    def c_nvmlDeviceGetMemoryAffinity(self, h: Any, size: int, ref: Any, scope: Any) -> int:
        _out(ref)[0] = 1 << self._g(h).numa
        return 0

    def c_nvmlDeviceGetNumaNodeId(self, h: Any, ref: Any) -> int:
        return ERR["NOT_SUPPORTED"]  # only Grace-class GPUs are NUMA nodes

    # -- PCIe -------------------------------------------------------------------------------------
    def _uint(self, ref: Any, value: int) -> int:
        _out(ref).value = value
        return 0

    def c_nvmlDeviceGetCurrPcieLinkGeneration(self, h: Any, ref: Any) -> int:
        return self._uint(ref, self._g(h).pcie[0])

    def c_nvmlDeviceGetMaxPcieLinkGeneration(self, h: Any, ref: Any) -> int:
        return self._uint(ref, self._g(h).pcie[1])

    def c_nvmlDeviceGetCurrPcieLinkWidth(self, h: Any, ref: Any) -> int:
        return self._uint(ref, self._g(h).pcie[2])

    def c_nvmlDeviceGetMaxPcieLinkWidth(self, h: Any, ref: Any) -> int:
        return self._uint(ref, self._g(h).pcie[3])

    def c_nvmlDeviceGetGpuMaxPcieLinkGeneration(self, h: Any, ref: Any) -> int:
        return self._uint(ref, self._g(h).gpu_max_gen)

    def c_nvmlDeviceGetUtilizationRates(self, h: Any, ref: Any) -> int:
        u = _out(ref)
        u.gpu, u.memory = self._g(h).utilization, 0
        return 0

    # -- NVLink -----------------------------------------------------------------------------------
    def _port(self, h: Any, link: int) -> Port | int:
        g = self._g(h)
        if not g.ports:
            return ERR["NOT_SUPPORTED"]
        if not 0 <= link < len(g.ports):
            return ERR["INVALID_ARGUMENT"]
        return g.ports[link]

    def c_nvmlDeviceGetNvLinkState(self, h: Any, link: int, ref: Any) -> int:
        port = self._port(h, link)
        if isinstance(port, int):
            return port
        return self._uint(ref, 1 if port.active else 0)

    def c_nvmlDeviceGetNvLinkVersion(self, h: Any, link: int, ref: Any) -> int:
        port = self._port(h, link)
        return port if isinstance(port, int) else self._uint(ref, self._g(h).nvlink_version)

    def c_nvmlDeviceGetNvLinkRemoteDeviceType(self, h: Any, link: int, ref: Any) -> int:
        port = self._port(h, link)
        if isinstance(port, int):
            return port
        if not port.active:
            return ERR["NOT_SUPPORTED"]
        return self._uint(ref, {"gpu": 0, "switch": 2}.get(port.remote, 0xFF))

    def c_nvmlDeviceGetNvLinkRemotePciInfo_v2(self, h: Any, link: int, ref: Any) -> int:
        port = self._port(h, link)
        if isinstance(port, int):
            return port
        _pci_fill(_out(ref), port.remote_bus, 0x22A310DE if port.remote == "switch" else 0x233010DE)
        return 0

    def c_nvmlDeviceGetNvLinkErrorCounter(self, h: Any, link: int, counter: int, ref: Any) -> int:
        port = self._port(h, link)
        if isinstance(port, int):
            return port
        if counter > 3:
            return ERR["NOT_SUPPORTED"]
        return self._uint(ref, port.errors[counter])

    # -- pairs ------------------------------------------------------------------------------------
    def c_nvmlDeviceGetP2PStatus(self, h1: Any, h2: Any, index: int, ref: Any) -> int:
        a, b = self._g(h1), self._g(h2)
        caps = ("read", "write", "nvlink", "atomics", "prop")
        override = self.sc.p2p_overrides.get((a.index, b.index), {})
        linked = any(p.active and p.remote == "gpu" and p.remote_bus == b.bus for p in a.ports) or (
            any(p.active and p.remote == "switch" for p in a.ports)
            and any(p.active and p.remote == "switch" for p in b.ports)
        )
        if caps[index] in override:
            status = override[caps[index]]
        elif caps[index] == "nvlink":
            status = "OK" if linked else "NOT_SUPPORTED"
        elif linked:
            status = "OK"
        else:
            status = self.sc.p2p_sys if self.sc.ancestor(a, b) == 50 else self.sc.p2p_default
        return self._uint(ref, P2P[status])

    def c_nvmlDeviceGetTopologyCommonAncestor(self, h1: Any, h2: Any, ref: Any) -> int:
        return self._uint(ref, self.sc.ancestor(self._g(h1), self._g(h2)))

    # -- fabric -----------------------------------------------------------------------------------
    def c_nvmlDeviceGetGpuFabricInfoV(self, h: Any, ref: Any) -> int:
        g = self._g(h)
        info = _out(ref)
        v3 = info.version == pynvml.nvmlGpuFabricInfo_v3
        if info.version != pynvml.nvmlGpuFabricInfo_v2 and not v3:
            return ERR["ARGUMENT_VERSION_MISMATCH"]
        if v3 and g.fabric is not None and not g.fabric.get("v3", True):  # a driver older than fabric info v3
            return ERR["ARGUMENT_VERSION_MISMATCH"]
        if g.fabric is None:
            return ERR["NOT_SUPPORTED"]
        self._fabric_fill(info, g.fabric)
        info.healthMask = int(g.fabric.get("health_mask", 0))
        if v3:
            info.healthSummary = int(g.fabric.get("health_summary", 0))
        return 0

    def c_nvmlDeviceGetGpuFabricInfo(self, h: Any, ref: Any) -> int:
        g = self._g(h)
        if g.fabric is None:
            return ERR["NOT_SUPPORTED"]
        self._fabric_fill(_out(ref), g.fabric)
        return 0

    @staticmethod
    def _fabric_fill(info: Any, fabric: dict[str, Any]) -> None:
        info.state = int(fabric.get("state", 3))
        info.status = ERR.get(fabric.get("status", "SUCCESS"), 0) if fabric.get("status", "SUCCESS") != "SUCCESS" else 0
        info.cliqueId = int(fabric.get("clique_id", 0))
        uuid = bytes.fromhex(fabric.get("cluster_uuid", "00" * 16))
        for i, byte in enumerate(uuid):
            info.clusterUuid[i] = byte


def install(monkeypatch: Any, scenario: Scenario | None) -> FakeNvmlLib | None:
    """Put the fake library where pynvml keeps its CDLL; ``None`` makes loading fail like a driver-less box."""
    monkeypatch.setattr(pynvml, "_nvmlGetFunctionPointer_cache", {})
    if scenario is None:
        monkeypatch.setattr(pynvml, "nvmlLib", None)

        def no_library(*_a: Any, **_k: Any) -> Any:
            raise OSError("libnvidia-ml.so.1: cannot open shared object file: No such file or directory")

        monkeypatch.setattr(pynvml, "CDLL", no_library)
        return None
    lib = FakeNvmlLib(scenario)
    monkeypatch.setattr(pynvml, "nvmlLib", lib)
    return lib


def pairs(n: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(n), 2))
