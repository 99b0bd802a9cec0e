"""One probe of this machine: NVML, then sysfs and the environment, then ``nvidia-smi`` -> a Snapshot.

``probe()`` raises :class:`~topoaudit.errors.EnvironmentUnusable` (exit 4) only when nothing can be
probed (no driver, no NVML library, no GPU visible); everything else that goes wrong becomes an absent
value with its reason inside the snapshot.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from topoaudit import __version__
from topoaudit.errors import EnvironmentUnusable
from topoaudit.probe import environment, kernel_log, smi, sysfs
from topoaudit.probe.snapshot import GpuRecord, PcieDevice, Snapshot


def probe(
    root: str | Path = "/",
    *,
    environ: Mapping[str, str] | None = None,
    call_timeout_s: float = 10.0,
    smi_timeout_s: float = smi.DEFAULT_TIMEOUT_S,
    run_nvidia_smi: bool = True,
    kernel_log_timeout_s: float = kernel_log.DEFAULT_TIMEOUT_S,
) -> Snapshot:
    """Probe this machine (``root`` is the filesystem root sysfs and /proc are read under)."""
    try:
        from topoaudit.probe import nvml  # the only pynvml import; loaded only when a probe runs
    except ImportError as exc:
        raise EnvironmentUnusable(
            "the NVML Python binding is missing: install nvidia-ml-py (imported as pynvml)",
            hint="run `topoaudit audit --demo` to see a bundled example, or `topoaudit analyze FILE` on a capture",
        ) from exc

    root = Path(root)
    env = dict(os.environ if environ is None else environ)
    taken_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    start = time.monotonic()
    notes: list[str] = []
    with nvml.NvmlSession(call_timeout_s) as session:
        system = nvml.read_system(session)
        if not isinstance(system.gpu_count, int):
            raise EnvironmentUnusable(f"NVML could not count the GPUs ({system.gpu_count})", hint=nvml._HINT)
        if system.gpu_count == 0:
            raise EnvironmentUnusable(
                "the NVIDIA driver is loaded but no GPU is visible to this process (check the container's "
                "device mounts and NVIDIA_VISIBLE_DEVICES)",
                hint=nvml._HINT,
            )
        cpu_count = os.cpu_count() or 64
        gpus: list[GpuRecord] = []
        handles = {}
        for index in range(system.gpu_count):
            record, h = nvml.read_gpu(session, index, cpu_count)
            gpus.append(record)
            if h is not None:
                handles[index] = h
        pairs = nvml.read_pairs(session, handles)
        if session.missing_functions:
            notes.append("NVML functions missing from this driver: " + ", ".join(sorted(session.missing_functions)))
        if session.hung:
            notes.append(f"NVML stopped answering in {session.hung}; later queries were not asked")
        calls = session.calls
    notes.append(f"{calls} NVML calls")
    gpu_paths: dict[str, tuple[str, ...]] = {}
    devices: list[PcieDevice] = []
    for record in gpus:
        if isinstance(record.pci_bus_id, str):
            device = sysfs.pci_device(root, record.pci_bus_id)
            if device is not None:
                devices.append(device)
                gpu_paths[record.pci_bus_id] = device.path
    nics = sysfs.rdma_nics(root)
    nic_paths: list[tuple[str, ...]] = []
    for nic in nics:
        if isinstance(nic.pci_bus_id, str):
            device = sysfs.pci_device(root, nic.pci_bus_id)
            if device is not None:
                devices.append(device)
                nic_paths.append(device.path)
    os_record = replace(
        sysfs.os_record(root, gpu_paths, nic_paths),
        kernel_events=kernel_log.read_kernel_log(kernel_log_timeout_s, env=env),
    )
    commands = smi.run_all(smi_timeout_s, env) if run_nvidia_smi else ()
    return Snapshot(
        tool_version=__version__,
        nvml_binding_version=nvml.binding_version(),
        taken_at=taken_at,
        probe_wall_s=round(time.monotonic() - start, 3),
        system=system,
        gpus=tuple(gpus),
        pairs=pairs,
        os=os_record,
        pci_devices=tuple(devices),
        pci_bridges=sysfs.pci_bridges(root, (d.path for d in devices)),
        nics=nics,
        env=environment.read_environment(env, root),
        commands=commands,
        notes=tuple(notes),
    )
