"""What the planner sizes on and checks against: the card, and the audited machine's NVLink domains. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.catalog import GpuSpec, all_gpus, find_gpu
from topoaudit.errors import ConfigError
from topoaudit.model.plan import MachineDomains
from topoaudit.model.values import Probed

if TYPE_CHECKING:  # the planner alone (no audited machine) must not load networkx through the report model
    from topoaudit.model.report import SourceInfo
    from topoaudit.model.topology import Domain


def machine_domains(source: SourceInfo, gpu_model: Probed[str], domains: tuple[Domain, ...]) -> MachineDomains:
    """The NVLink domains of the audited machine (every GPU is in exactly one domain)."""
    label = f"example {source.name}" if source.kind == "example" else source.name
    model = gpu_model if isinstance(gpu_model, str) else None
    return MachineDomains(label=label, domains=tuple(tuple(d.gpus) for d in domains), gpu_model=model)


def resolve_gpu(gpu: str | None, machine_model: Probed[str] | None = None) -> GpuSpec:
    """The card to size on: ``gpu`` when given, else the audited machine's model; ConfigError otherwise.

    ``machine_model`` is None when no machine was audited (the planner alone).
    """
    if gpu:
        spec = find_gpu(gpu)
        if spec is None:
            raise ConfigError(f"GPU model {gpu!r} is not in the catalog", hint=_known_gpus())
        return spec
    if machine_model is not None:
        name = machine_model if isinstance(machine_model, str) else None
        spec = find_gpu(name) if name else None
        if spec is not None:
            return spec
        why = f"its GPU model {name!r} is not in the catalog" if name else "it does not name its GPU model"
        raise ConfigError(f"cannot size the plan on the audited machine: {why}", hint="pass --gpu MODEL")
    raise ConfigError("the planner needs a GPU model: --gpu MODEL, or --from/--example a machine", hint=_known_gpus())


def _known_gpus() -> str:
    return "known: " + ", ".join(s.key for s in all_gpus())
