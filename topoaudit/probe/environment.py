"""The environment that changes what NCCL and CUDA do: variables, /etc/nccl.conf, the fabric manager."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from topoaudit.model.values import Failed, Probed, Unsupported
from topoaudit.probe.snapshot import EnvRecord

PREFIXES = ("NCCL_",)
NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_MAX_CONNECTIONS",
         "TORCH_NCCL_ENABLE_MONITORING", "GLOO_SOCKET_IFNAME")  # fmt: skip
FABRIC_MANAGER_NAMES = ("nv-fabricmanager", "nvidia-fabricmanager", "fabricmanager", "nvlsm")


def read_environment(environ: Mapping[str, str], root: Path) -> EnvRecord:
    """NCCL_* and CUDA visibility variables, ``/etc/nccl.conf`` and whether a fabric manager runs (/proc)."""
    variables = tuple(f"{k}={v}" for k, v in sorted(environ.items()) if k.startswith(PREFIXES) or k in NAMES)
    return EnvRecord(variables=variables, nccl_conf=read_nccl_conf(root / "etc/nccl.conf"),
                     fabric_manager=fabric_manager(root / "proc"))  # fmt: skip


def read_nccl_conf(path: Path) -> Probed[tuple[str, ...]]:
    """``NAME=value`` lines of /etc/nccl.conf (comments and blanks dropped); empty when the file is absent."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ()
    except OSError as exc:
        return Failed(str(path), f"unreadable: {exc.strerror}")
    return tuple(s for line in text.splitlines() if (s := line.split("#", 1)[0].strip()) and "=" in s)


def fabric_manager(proc: Path) -> Probed[str]:
    """Return "running" when a process named like NVIDIA's fabric manager (or NVLSM) is alive, else "not running"."""
    try:
        entries = [p for p in proc.iterdir() if p.name.isdecimal()]
    except OSError as exc:
        return Failed(str(proc), f"cannot list processes: {exc.strerror}")
    if not entries:
        return Unsupported(str(proc), "no process list (not Linux, or /proc hidden)")
    for entry in entries:
        try:
            comm = (entry / "comm").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if comm in FABRIC_MANAGER_NAMES:
            return "running"
    return "not running"
