"""What the planner sizes on and checks against: the card, and the audited machine's NVLink domains. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from topoaudit.catalog import GpuSpec, all_gpus, find_gpu
from topoaudit.errors import ConfigError
from topoaudit.model.plan import MachineDomains
from topoaudit.model.values import Probed

if TYPE_CHECKING:  # the planner alone (no audited machine) must not load networkx through the report model
    from topoaudit.model.machine import Machine
    from topoaudit.model.report import SourceInfo
    from topoaudit.model.topology import Domain


def machine_domains(
    source: SourceInfo, gpu_model: Probed[str], domains: tuple[Domain, ...], machine: Machine | None = None
) -> MachineDomains:
    """The NVLink domains of the audited machine (every GPU is in exactly one domain), and the slowest hop of a ring
    over all of them where there are several (what a TP group across the domains crosses)."""
    from topoaudit.model.topology import bottleneck, gpu_pair_links

    label = f"example {source.name}" if source.kind == "example" else source.name
    model = gpu_model if isinstance(gpu_model, str) else None
    crossing, level = "", ""
    known = machine is None or len(machine.gpus) < 2 or bool(gpu_pair_links(machine))
    if machine is not None and len(domains) > 1 and known:
        hop = bottleneck(machine, [g.index for g in machine.gpus])
        crossing, level = hop.describe, hop.level.name
    return MachineDomains(
        label=label,
        domains=tuple(tuple(d.gpus) for d in domains),
        gpu_model=model,
        crossing=crossing,
        crossing_level=level,
        links_known=known,
    )


def resolve_gpu(gpu: str | None, machine_model: Probed[str] | None = None) -> GpuSpec:
    """The card to size on: ``gpu`` when given, else the audited machine's model; ConfigError otherwise.

    ``machine_model`` is None when no machine was audited (the planner alone).
    """
    if gpu:
        from topoaudit.catalog.machines import find_machine

        machine = find_machine(gpu)
        spec = machine.card() if machine is not None else find_gpu(gpu)
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


def target_name(gpu: str) -> str:
    """What ``--gpu`` names, kept as the plan will size it: a catalog machine's name ("DGX Station GB300"), else the
    card's catalog key; ConfigError when the catalog knows neither."""
    from topoaudit.catalog.machines import find_machine

    machine = find_machine(gpu)
    return machine.name if machine is not None else resolve_gpu(gpu).key


def _known_gpus() -> str:
    from topoaudit.catalog.machines import all_machines

    machines = ", ".join(f"'{m.name}'" for m in all_machines())
    return "known: " + ", ".join(s.key for s in all_gpus()) + f"; machines: {machines}"
