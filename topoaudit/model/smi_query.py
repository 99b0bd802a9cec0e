"""What a pasted ``nvidia-smi -q`` shows about each GPU: its NVLink fabric state and health, ECC mode and PCIe link.

Read by :mod:`topoaudit.parse.smi_query` (whole output or grep excerpts); every value the paste does not show, or
shows as ``N/A``, is Unsupported with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.values import Unsupported

SOURCE = "nvidia-smi -q"


@dataclass(frozen=True)
class FabricInfo:
    """A GPU's ``Fabric`` block: its registration with the NVLink fabric and the fabric's health."""

    state: str | Unsupported  # Completed, In Progress, Not Started
    status: str | Unsupported  # Success, or NVML's error ("Insufficient Resources")
    clique_id: int | Unsupported
    cluster_uuid: str | Unsupported
    health_summary: str | Unsupported  # Healthy, Unhealthy, Limited Capacity
    health_bandwidth: str | Unsupported  # Full, Degraded
    route_recovery_in_progress: bool | Unsupported
    route_unhealthy: bool | Unsupported
    access_timeout_recovery: bool | Unsupported
    incorrect_configuration: str | Unsupported  # None, or what is wrong

    @property
    def registered(self) -> bool:
        """The GPU finished registering with the fabric and reports no error."""
        return self.state == "Completed" and self.status == "Success"


@dataclass(frozen=True)
class PcieLink:
    """A GPU's PCIe link: generation and width, as running now and at most."""

    generation_current: int | Unsupported
    generation_max: int | Unsupported  # the lower of the GPU's and the host's maximum
    generation_device_max: int | Unsupported
    generation_host_max: int | Unsupported
    width_current: int | Unsupported  # lanes
    width_max: int | Unsupported


@dataclass(frozen=True)
class RemappedRows:
    """A GPU's ``Remapped Rows`` block (A100 and later): memory rows replaced after ECC errors.

    A remap takes effect at the next GPU reset: ``Pending`` means the GPU runs with rows it already knows are bad
    until it is reset; a failed remap (no spare row left in the bank) means the GPU is to be replaced (NVIDIA's
    GPU memory error management guide).
    """

    correctable: int | Unsupported  # rows remapped for correctable errors
    uncorrectable: int | Unsupported  # rows remapped for uncorrectable errors
    pending: bool | Unsupported
    failure_occurred: bool | Unsupported


NO_REMAPPED_ROWS = Unsupported(SOURCE, "the paste has no Remapped Rows block for this GPU")


@dataclass(frozen=True)
class SmiGpu:
    """One GPU of the paste, as far as its lines go."""

    line: int  # the paste's line where this GPU's text starts
    bus_id: str | Unsupported  # normalised ("0000:18:00.0")
    product_name: str | Unsupported
    fabric: FabricInfo | Unsupported
    ecc_mode_current: str | Unsupported  # Enabled, Disabled
    ecc_mode_pending: str | Unsupported
    pcie: PcieLink | Unsupported
    remapped_rows: RemappedRows | Unsupported = NO_REMAPPED_ROWS

    @property
    def label(self) -> str:
        """How a report names the GPU: its bus id, else where its lines start."""
        return self.bus_id if isinstance(self.bus_id, str) else f"the GPU at line {self.line}"


@dataclass(frozen=True)
class SmiQuery:
    """What a pasted ``nvidia-smi -q`` shows."""

    gpus: tuple[SmiGpu, ...]
    attached_gpus: int | Unsupported
    driver_version: str | Unsupported
    cuda_version: str | Unsupported
    excerpt: bool  # pieces of the output (grep's "--", no GPU header, or fewer GPUs than attached)
    used_lines: tuple[int, ...]  # 1-based lines read as nvidia-smi -q
    command: str = "nvidia-smi -q"  # or "nvidia-smi --query-gpu" (its CSV: the fields asked for, one row per GPU)
