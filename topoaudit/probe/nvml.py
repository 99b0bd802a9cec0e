"""The one module that talks to NVML (``nvidia-ml-py``, imported as ``pynvml``).

* Lazy: nothing is loaded at import; :class:`NvmlSession` initialises NVML when a probe opens one and
  shuts it down when it closes.
* Every call goes through :meth:`NvmlSession.call`, which returns the value, or
  :class:`~topoaudit.model.values.Unsupported` (``NOT_SUPPORTED``, ``FUNCTION_NOT_FOUND``: the question does
  not apply to this GPU or driver) or :class:`~topoaudit.model.values.Failed` (any other NVML error, named).
  A missing function is also noted, so the snapshot says which driver capabilities were unknown.
* Calls run on one worker thread with a per-call timeout: a hung call is reported as failed, the session
  is marked hung and later calls fail at once instead of queueing behind it. The worker is a daemon, so a
  call stuck inside the driver cannot keep the process alive.
* Device handles are ctypes pointers (unhashable, no value equality): they never leave this module; GPUs
  are named by NVML index and normalised PCI bus id.

Each ``read_*`` function's docstring names its NVML call and the ``nvidia-smi`` command that shows the
same fact, so a support engineer can check a value by hand.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import queue
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pynvml

from topoaudit.errors import EnvironmentUnusable
from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.snapshot import GpuRecord, NvLinkRecord, PairRecord, SystemRecord
from topoaudit.units import normalize_bus_id

DEFAULT_CALL_TIMEOUT_S = 10.0

_ERROR_NAMES = {
    getattr(pynvml, name): name.removeprefix("NVML_ERROR_")
    for name in dir(pynvml)
    if name.startswith("NVML_ERROR_") and isinstance(getattr(pynvml, name), int)
}
_UNSUPPORTED = {pynvml.NVML_ERROR_NOT_SUPPORTED, pynvml.NVML_ERROR_FUNCTION_NOT_FOUND}

ARCHITECTURES = {2: "kepler", 3: "maxwell", 4: "pascal", 5: "volta", 6: "turing", 7: "ampere", 8: "ada",
                 9: "hopper", 10: "blackwell", 11: "t23x", 12: "blackwell", 13: "rubin"}  # fmt: skip
# nvmlNvlinkVersion_t: the raw int is an enum, not the generation (nvml.h 13.3)
NVLINK_VERSIONS = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
REMOTE_TYPES = {0: "gpu", 1: "ibmnpu", 2: "switch", 0xFF: "unknown"}
P2P_STATUS = {0: "ok", 1: "chipset-not-supported", 2: "gpu-not-supported", 3: "topology-not-supported",
              4: "disabled-by-regkey", 5: "not-supported", 6: "unknown"}  # fmt: skip
# NVML_P2P_CAPS_INDEX_READ is the tuple (0,) in nvidia-ml-py 13.615 (a trailing comma); use literals.
P2P_CAPS = {"read": 0, "write": 1, "nvlink": 2, "atomics": 3}
ANCESTORS = {0: "INTERNAL", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
FABRIC_STATES = {0: "not-supported", 1: "not-started", 2: "in-progress", 3: "completed"}
NVLINK_MAX_LINKS = int(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18))
ERROR_COUNTERS = {"replay_errors": 0, "recovery_errors": 1, "crc_flit_errors": 2, "crc_data_errors": 3}


def error_name(code: int) -> str:
    """``3`` -> ``"NOT_SUPPORTED"``; unknown codes keep their number."""
    return _ERROR_NAMES.get(code, f"error {code}")


def binding_version() -> str:
    """Return the installed nvidia-ml-py version, which a snapshot records to explain odd answers."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-ml-py")
    except PackageNotFoundError:
        return "unknown"


class _Timeout(Exception):
    pass


class _Worker:
    """One daemon thread that runs NVML calls in order; the caller waits with a timeout."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="topoaudit-nvml", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            fn, box, done = job
            try:
                box.append((True, fn()))
            except BaseException as exc:  # handed back to the caller
                box.append((False, exc))
            done.set()

    def run(self, fn: Callable[[], Any], timeout_s: float) -> Any:
        box: list[Any] = []
        done = threading.Event()
        self._jobs.put((fn, box, done))
        if not done.wait(timeout_s):
            raise _Timeout
        ok, value = box[0]
        if ok:
            return value
        raise value

    def stop(self) -> None:
        self._jobs.put(None)


class NvmlSession:
    """An initialised NVML with the call wrapper; use as a context manager."""

    def __init__(self, timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> None:
        """Prepare a session; ``timeout_s`` bounds each NVML call, as a hung driver never answers."""
        self.timeout_s = timeout_s
        self.hung: str = ""
        self.calls = 0
        self.missing_functions: set[str] = set()
        self._worker: _Worker | None = None
        self._initialised = False

    # -- lifecycle --------------------------------------------------------------------------------
    def __enter__(self) -> NvmlSession:
        """Initialise NVML (see :meth:`open`)."""
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        """Shut NVML down, whatever happened inside (see :meth:`close`)."""
        self.close()

    def open(self) -> None:
        """Call ``nvmlInit``; raise EnvironmentUnusable with one sentence when this machine cannot be probed."""
        self._worker = _Worker()
        try:
            self._worker.run(pynvml.nvmlInit, self.timeout_s)
        except _Timeout as exc:
            raise EnvironmentUnusable(
                f"NVML did not initialise within {self.timeout_s:g} s (the driver may be hung)",
                hint=_HINT,
            ) from exc
        except pynvml.NVMLError as exc:
            raise EnvironmentUnusable(_init_sentence(exc.value), hint=_HINT) from exc
        self._initialised = True

    def close(self) -> None:
        """Call ``nvmlShutdown``, unless a call hung: a hung driver would hang the shutdown too."""
        if self._initialised and not self.hung and self._worker is not None:
            with contextlib.suppress(pynvml.NVMLError, _Timeout):
                self._worker.run(pynvml.nvmlShutdown, self.timeout_s)
        self._initialised = False
        if self._worker is not None and not self.hung:
            self._worker.stop()
        self._worker = None

    # -- the wrapper ------------------------------------------------------------------------------
    def call(self, source: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run one NVML call: its value, or Unsupported/Failed carrying the NVML error name."""
        if self.hung:
            return Failed(source, f"not asked: NVML hung earlier in {self.hung}")
        assert self._worker is not None, "NVML session not open"
        self.calls += 1
        try:
            return self._worker.run(lambda: fn(*args), self.timeout_s)
        except _Timeout:
            self.hung = source
            return Failed(source, f"TIMEOUT: no answer within {self.timeout_s:g} s")
        except pynvml.NVMLError as exc:
            name = error_name(exc.value)
            if exc.value == pynvml.NVML_ERROR_FUNCTION_NOT_FOUND:
                self.missing_functions.add(source)
                return Unsupported(source, f"{name}: this driver lacks the function")
            if exc.value in _UNSUPPORTED:
                return Unsupported(source, name)
            return Failed(source, name)
        except (ctypes.ArgumentError, TypeError, ValueError, AttributeError) as exc:  # a binding mismatch
            return Failed(source, f"{type(exc).__name__}: {exc}")


_HINT = "run `topoaudit audit --demo` to see a bundled example, or `topoaudit analyze FILE` on a capture"


def _init_sentence(code: int) -> str:
    if code == pynvml.NVML_ERROR_LIBRARY_NOT_FOUND:
        return "the NVML library (libnvidia-ml.so.1) is missing: no NVIDIA driver is installed on this machine"
    if code == pynvml.NVML_ERROR_DRIVER_NOT_LOADED:
        return "the NVIDIA driver is installed but not loaded (NVML: DRIVER_NOT_LOADED); no GPU can be probed"
    if code == pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        return "the NVIDIA driver and its NVML library differ in version (reboot after a driver upgrade)"
    if code == pynvml.NVML_ERROR_NO_PERMISSION:
        return "no permission to open the NVIDIA devices (NVML: NO_PERMISSION)"
    return f"NVML could not initialise: {error_name(code)}"


def _s(value: Any) -> Any:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _map(value: Any, table: dict[int, str], source: str) -> Probed[str]:
    if isinstance(value, (Unsupported, Failed)):
        return value
    return table.get(int(value), f"unknown ({value})")


def _is_lost(value: object) -> bool:
    return isinstance(value, Failed) and value.reason.startswith("GPU_IS_LOST")


# --- system ----------------------------------------------------------------------------------------


def read_system(s: NvmlSession) -> SystemRecord:
    """Read the driver, NVML and CUDA versions and the GPU count.

    NVML ``nvmlSystemGetDriverVersion``, ``nvmlSystemGetNVMLVersion``, ``nvmlSystemGetCudaDriverVersion``,
    ``nvmlDeviceGetCount``; ``nvidia-smi`` prints them in its header.
    """
    cuda = s.call("nvmlSystemGetCudaDriverVersion", pynvml.nvmlSystemGetCudaDriverVersion)
    if isinstance(cuda, int):
        cuda = f"{cuda // 1000}.{cuda % 1000 // 10}"
    count = s.call("nvmlDeviceGetCount", pynvml.nvmlDeviceGetCount)
    return SystemRecord(
        driver_version=_s(s.call("nvmlSystemGetDriverVersion", pynvml.nvmlSystemGetDriverVersion)),
        nvml_version=_s(s.call("nvmlSystemGetNVMLVersion", pynvml.nvmlSystemGetNVMLVersion)),
        cuda_driver_version=cuda,
        gpu_count=count,
    )


# --- one GPU ---------------------------------------------------------------------------------------


def handle(s: NvmlSession, index: int) -> Any:
    """NVML ``nvmlDeviceGetHandleByIndex``; ``nvidia-smi -i INDEX``."""
    return s.call(f"nvmlDeviceGetHandleByIndex({index})", pynvml.nvmlDeviceGetHandleByIndex, index)


def read_identity(s: NvmlSession, h: Any) -> dict[str, Any]:
    """Read what identifies a GPU: name, UUID, serial, part number, PCI address, memory, architecture.

    NVML ``nvmlDeviceGetName/UUID/Serial/BoardPartNumber``, ``nvmlDeviceGetPciInfo``, ``nvmlDeviceGetMemoryInfo``,
    ``nvmlDeviceGetArchitecture``; ``nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,memory.total --format=csv``.
    """
    out: dict[str, Any] = {
        "name": _s(s.call("nvmlDeviceGetName", pynvml.nvmlDeviceGetName, h)),
        "uuid": _s(s.call("nvmlDeviceGetUUID", pynvml.nvmlDeviceGetUUID, h)),
        "serial": _s(s.call("nvmlDeviceGetSerial", pynvml.nvmlDeviceGetSerial, h)),
        "board_part_number": _s(s.call("nvmlDeviceGetBoardPartNumber", pynvml.nvmlDeviceGetBoardPartNumber, h)),
    }
    pci = s.call("nvmlDeviceGetPciInfo", pynvml.nvmlDeviceGetPciInfo, h)
    if isinstance(pci, (Unsupported, Failed)):
        out.update(pci_bus_id=pci, pci_bus_id_nvml=pci, pci_device_id=pci)
    else:
        raw = _s(pci.busId)
        out.update(pci_bus_id=normalize_bus_id(raw), pci_bus_id_nvml=raw, pci_device_id=f"0x{pci.pciDeviceId:08x}")
    mem = s.call("nvmlDeviceGetMemoryInfo", pynvml.nvmlDeviceGetMemoryInfo, h)
    out["memory_total_bytes"] = mem if isinstance(mem, (Unsupported, Failed)) else int(mem.total)
    out["architecture"] = _map(
        s.call("nvmlDeviceGetArchitecture", pynvml.nvmlDeviceGetArchitecture, h), ARCHITECTURES, "nvml"
    )
    return out


def read_mig(s: NvmlSession, h: Any) -> Probed[str]:
    """NVML ``nvmlDeviceGetMigMode``; ``nvidia-smi --query-gpu=mig.mode.current,mig.mode.pending --format=csv``."""
    mode = s.call("nvmlDeviceGetMigMode", pynvml.nvmlDeviceGetMigMode, h)
    if isinstance(mode, (Unsupported, Failed)):
        return mode
    current, pending = ("enabled" if m else "disabled" for m in mode)
    return current if current == pending else f"{current} (pending {pending})"


def read_affinity(s: NvmlSession, h: Any, cpu_count: int) -> dict[str, Any]:
    """Read which CPUs and NUMA nodes are close to a GPU.

    NVML ``nvmlDeviceGetCpuAffinity``, ``nvmlDeviceGetMemoryAffinity`` (node scope), ``nvmlDeviceGetNumaNodeId``;
    ``nvidia-smi topo -m`` columns "CPU Affinity", "NUMA Affinity", "GPU NUMA ID".
    """
    words = max(1, (cpu_count + 63) // 64)
    cpus = s.call("nvmlDeviceGetCpuAffinity", pynvml.nvmlDeviceGetCpuAffinity, h, words)
    nodes = s.call("nvmlDeviceGetMemoryAffinity", pynvml.nvmlDeviceGetMemoryAffinity, h, 4, 0)
    numa_id = s.call("nvmlDeviceGetNumaNodeId", pynvml.nvmlDeviceGetNumaNodeId, h)
    return {
        "cpu_affinity": cpus if isinstance(cpus, (Unsupported, Failed)) else _bits(cpus),
        "numa_nodes": nodes if isinstance(nodes, (Unsupported, Failed)) else _bits(nodes),
        "gpu_numa_id": numa_id
        if isinstance(numa_id, (Unsupported, Failed)) or numa_id >= 0
        else Unsupported("nvmlDeviceGetNumaNodeId", "the GPU is not a NUMA node"),
    }


def _bits(words: Any) -> tuple[int, ...]:
    return tuple(w * 64 + b for w, word in enumerate(words) for b in range(64) if int(word) >> b & 1)


def read_pcie(s: NvmlSession, h: Any) -> dict[str, Any]:
    """Read a GPU's PCIe link, current and maximum, with its utilisation to tell an idle drop from a fault.

    NVML ``nvmlDeviceGetCurrPcieLinkGeneration/Width``, ``nvmlDeviceGetMaxPcieLinkGeneration/Width``,
    ``nvmlDeviceGetGpuMaxPcieLinkGeneration``, ``nvmlDeviceGetUtilizationRates``; ``nvidia-smi
    --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,utilization.gpu
    --format=csv`` (an idle GPU drops its link generation to save power).
    """
    util = s.call("nvmlDeviceGetUtilizationRates", pynvml.nvmlDeviceGetUtilizationRates, h)
    return {
        "pcie_gen_current": s.call(
            "nvmlDeviceGetCurrPcieLinkGeneration", pynvml.nvmlDeviceGetCurrPcieLinkGeneration, h
        ),
        "pcie_gen_max": s.call("nvmlDeviceGetMaxPcieLinkGeneration", pynvml.nvmlDeviceGetMaxPcieLinkGeneration, h),
        "pcie_gen_gpu_max": s.call(
            "nvmlDeviceGetGpuMaxPcieLinkGeneration", pynvml.nvmlDeviceGetGpuMaxPcieLinkGeneration, h
        ),
        "pcie_width_current": s.call("nvmlDeviceGetCurrPcieLinkWidth", pynvml.nvmlDeviceGetCurrPcieLinkWidth, h),
        "pcie_width_max": s.call("nvmlDeviceGetMaxPcieLinkWidth", pynvml.nvmlDeviceGetMaxPcieLinkWidth, h),
        "utilization_percent": util if isinstance(util, (Unsupported, Failed)) else int(util.gpu),
    }


def read_nvlinks(s: NvmlSession, h: Any) -> Probed[tuple[NvLinkRecord, ...]]:
    """Read every NVLink port of a GPU: state, version, what is at the other end, error counters.

    NVML ``nvmlDeviceGetNvLinkState/Version/RemoteDeviceType/RemotePciInfo/ErrorCounter`` per port;
    ``nvidia-smi nvlink -s``, ``nvidia-smi nvlink -R``, ``nvidia-smi nvlink -e``.

    Ports are asked in order until NVML answers INVALID_ARGUMENT (past the GPU's last port) or
    NOT_SUPPORTED after at least one port; NOT_SUPPORTED on port 0 means the GPU has no NVLink.
    """
    ports: list[NvLinkRecord] = []
    for link in range(NVLINK_MAX_LINKS):
        state = s.call("nvmlDeviceGetNvLinkState", pynvml.nvmlDeviceGetNvLinkState, h, link)
        past_end = isinstance(state, Failed) and state.reason.startswith("INVALID_ARGUMENT")
        if ports and (past_end or isinstance(state, Unsupported)):
            break
        if not ports and isinstance(state, (Unsupported, Failed)):
            if past_end:
                return Unsupported(state.source, "no NVLink ports (INVALID_ARGUMENT on port 0)")
            return state
        if isinstance(state, Failed):
            ports.append(NvLinkRecord(link=link, state=state))
            if _is_lost(state):
                break
            continue
        ports.append(_read_port(s, h, link, "active" if state else "inactive"))
        if s.hung or _lost_in_ports((ports[-1],)):
            break
    return tuple(ports)


def _read_port(s: NvmlSession, h: Any, link: int, state: str) -> NvLinkRecord:
    version = _map(
        s.call("nvmlDeviceGetNvLinkVersion", pynvml.nvmlDeviceGetNvLinkVersion, h, link), NVLINK_VERSIONS, ""
    )
    record = NvLinkRecord(link=link, state=state, version=version, **_counters(s, h, link))
    if state != "active":
        # An inactive port has no far end; its counters still tell whether it was failing before it went down.
        return record
    rtype = _map(
        s.call("nvmlDeviceGetNvLinkRemoteDeviceType", pynvml.nvmlDeviceGetNvLinkRemoteDeviceType, h, link),
        REMOTE_TYPES,
        "",
    )
    remote = s.call("nvmlDeviceGetNvLinkRemotePciInfo", pynvml.nvmlDeviceGetNvLinkRemotePciInfo, h, link)
    return replace(
        record,
        remote_device_type=rtype,
        remote_pci_bus_id=remote if isinstance(remote, (Unsupported, Failed)) else normalize_bus_id(_s(remote.busId)),
    )


def _counters(s: NvmlSession, h: Any, link: int) -> dict[str, Any]:
    return {
        name: s.call("nvmlDeviceGetNvLinkErrorCounter", pynvml.nvmlDeviceGetNvLinkErrorCounter, h, link, counter)
        for name, counter in ERROR_COUNTERS.items()
    }


def read_fabric(s: NvmlSession, h: Any) -> dict[str, Any]:
    """Read a GPU's NVLink fabric registration: state, status, clique, cluster and health.

    NVML ``nvmlDeviceGetGpuFabricInfoV`` (v3 struct with the health mask and summary; falls back to v2, then
    to ``nvmlDeviceGetGpuFabricInfo``); ``nvidia-smi -q`` section "Fabric" (State, Status, CliqueId,
    ClusterUUID, Health).

    Check all of them: on HGX H100 the state can be COMPLETED while status is an error, and on GB200 the
    health summary can be Unhealthy while state and status look fine.
    """
    fields = ("fabric_state", "fabric_status", "fabric_cluster_uuid", "fabric_clique_id")
    health_fields = ("fabric_health_mask", "fabric_health_summary")
    info: Any = None
    got: Any = Unsupported("nvmlDeviceGetGpuFabricInfoV", "not asked")
    for struct, version in (("c_nvmlGpuFabricInfo_v3_t", "nvmlGpuFabricInfo_v3"),
                            ("c_nvmlGpuFabricInfoV_t", "nvmlGpuFabricInfo_v2")):  # fmt: skip
        if not hasattr(pynvml, struct) or not hasattr(pynvml, version):
            continue  # an older nvidia-ml-py
        info = getattr(pynvml, struct)()
        info.version = getattr(pynvml, version)
        got = s.call("nvmlDeviceGetGpuFabricInfoV", pynvml.nvmlDeviceGetGpuFabricInfoV, h, ctypes.byref(info))
        if not (isinstance(got, Failed) and got.reason.startswith("ARGUMENT_VERSION_MISMATCH")):
            break
    if isinstance(got, Unsupported) and "FUNCTION_NOT_FOUND" in got.reason:
        info = pynvml.c_nvmlGpuFabricInfo_t()
        got = s.call("nvmlDeviceGetGpuFabricInfo", pynvml.nvmlDeviceGetGpuFabricInfo, h, ctypes.byref(info))
    if isinstance(got, (Unsupported, Failed)):
        return dict.fromkeys(fields + health_fields, got)
    health = _fabric_health(info)
    state = FABRIC_STATES.get(int(info.state), f"unknown ({info.state})")
    if state == "not-supported":  # a real H200 VM answers SUCCESS with state 0 and zeroed fields
        why = Unsupported("nvmlDeviceGetGpuFabricInfoV", "fabric state is not-supported")
        return {"fabric_state": state, **dict.fromkeys(fields[1:] + health_fields, why)}
    raw = bytes(ctypes.string_at(ctypes.addressof(info) + type(info).clusterUuid.offset, 16))
    uuid = raw.hex()
    not_complete = Unsupported("nvmlDeviceGetGpuFabricInfoV", f"fabric state is {state}")
    return {
        "fabric_state": state,
        "fabric_status": (error_name(int(info.status)) if info.status else "SUCCESS")
        if state == "completed"
        else not_complete,
        "fabric_cluster_uuid": f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}",
        "fabric_clique_id": int(info.cliqueId),
        **health,
    }


FABRIC_HEALTH_SUMMARIES = {0: "not-supported", 1: "healthy", 2: "unhealthy", 3: "limited-capacity"}


def _fabric_health(info: Any) -> dict[str, Any]:
    """Return the raw health mask (v2 and v3 structs) and summary (v3 only) of a fabric-info answer."""
    names = {f[0] for f in getattr(type(info), "_fields_", ())}
    source = "nvmlDeviceGetGpuFabricInfoV"
    mask: Probed[int] = (
        int(info.healthMask)
        if "healthMask" in names
        else Unsupported(source, "this driver's fabric info has no health mask")
    )
    summary: Probed[str] = (
        FABRIC_HEALTH_SUMMARIES.get(int(info.healthSummary), f"unknown ({int(info.healthSummary)})")
        if "healthSummary" in names
        else Unsupported(source, "fabric info v3 (health summary) not available from this driver")
    )
    return {"fabric_health_mask": mask, "fabric_health_summary": summary}


def read_gpu(s: NvmlSession, index: int, cpu_count: int) -> tuple[GpuRecord, Any]:
    """Everything NVML says about one GPU (and its handle, for the pair queries)."""
    h = handle(s, index)
    if isinstance(h, (Unsupported, Failed)):
        return GpuRecord(index=index, status=Failed(h.source, h.reason)), None
    fields: dict[str, Any] = {}
    for step in (
        lambda: read_identity(s, h),
        lambda: {"mig_mode": read_mig(s, h)},
        lambda: read_affinity(s, h, cpu_count),
        lambda: read_pcie(s, h),
        lambda: {"nvlinks": read_nvlinks(s, h)},
        lambda: read_fabric(s, h),
    ):
        got = step()
        fields.update(got)
        lost = next((v for v in got.values() if _is_lost(v)), None)
        if lost is not None or _lost_in_ports(got.get("nvlinks")):
            reason = lost.reason if isinstance(lost, Failed) else "GPU_IS_LOST"
            return GpuRecord(index=index, status=Failed("nvml", f"{reason}: the GPU fell off the bus mid-probe"),
                             **{k: v for k, v in fields.items() if k in _GPU_FIELDS}), None  # fmt: skip
    return GpuRecord(index=index, **fields), h


_GPU_FIELDS = set(GpuRecord.__dataclass_fields__)


def _lost_in_ports(ports: object) -> bool:
    if not isinstance(ports, tuple):
        return False
    fields = ("state", "remote_device_type", "remote_pci_bus_id", "version", *ERROR_COUNTERS)
    return any(_is_lost(getattr(p, f)) for p in ports for f in fields)


# --- GPU pairs -------------------------------------------------------------------------------------


def read_pair(s: NvmlSession, a: int, ha: Any, b: int, hb: Any) -> PairRecord:
    """Read how two GPUs reach each other and whether P2P works between them.

    NVML ``nvmlDeviceGetTopologyCommonAncestor`` and ``nvmlDeviceGetP2PStatus`` (read, write, NVLink, atomics);
    ``nvidia-smi topo -m`` (PCIe levels) and ``nvidia-smi topo -p2p r|w|n|a``.
    """
    ancestor = _map(
        s.call("nvmlDeviceGetTopologyCommonAncestor", pynvml.nvmlDeviceGetTopologyCommonAncestor, ha, hb),
        ANCESTORS,
        "",
    )
    p2p = {
        f"p2p_{cap}": _map(
            s.call(f"nvmlDeviceGetP2PStatus({cap})", pynvml.nvmlDeviceGetP2PStatus, ha, hb, idx), P2P_STATUS, ""
        )
        for cap, idx in P2P_CAPS.items()
    }
    return PairRecord(a=a, b=b, common_ancestor=ancestor, **p2p)


def read_pairs(s: NvmlSession, handles: dict[int, Any]) -> tuple[PairRecord, ...]:
    """Read every GPU pair once, lower index first (see :func:`read_pair`)."""
    out = []
    for a, b in itertools.combinations(sorted(handles), 2):
        out.append(read_pair(s, a, handles[a], b, handles[b]))
    return tuple(out)
