"""The planner's result types: frozen, JSON-friendly (the report codec serialises them as they are).

Units are in the field names: ``_gb`` is decimal gigabytes (10**9 bytes, the unit GPU memory is sold
in), ``_b`` is billions of parameters. Absent inputs are :class:`~topoaudit.model.values.Unsupported`.
"""

from __future__ import annotations

from dataclasses import dataclass

from topoaudit.model.values import Unsupported


@dataclass(frozen=True)
class KvShape:
    """The model and serving shape the KV cache is computed from (instead of a headroom fraction)."""

    context_tokens: int
    layers: int
    kv_heads: int  # key/value heads (GQA); 1 with head_dim = latent size for MLA models
    head_dim: int
    batch: int = 1  # concurrent sequences at full context
    kv_precision: str = "bf16"


@dataclass(frozen=True)
class ModelShape:
    """The model's width and depth and the serving batch, from which a decode step's all-reduces are sized."""

    layers: int
    hidden: int  # the hidden size: what one token's activation vector holds
    batch: int = 1  # sequences decoded together (the server's concurrency)


@dataclass(frozen=True)
class PlanRequest:
    """What the user asked: a model size (parameters x precision, or weights in GB) and serving knobs.

    ``None`` here means "not given"; the :class:`DeployPlan` records it as ``Unsupported``.
    """

    params_b: float | None = None  # total parameters, billions
    active_params_b: float | None = None  # active per token (MoE); compute only, not memory
    precision: str | None = None
    weights_gb: float | None = None  # given directly instead of params x precision
    kv_headroom: float = 0.25  # fraction of the weights, when no KvShape is given
    kv_shape: KvShape | None = None
    safety_margin: float | None = None  # fraction of weights + KV; None = the documented default
    reserve_gb: float = 2.0  # per card: CUDA context, NCCL buffers, allocator slack
    attention_heads: int | None = None  # TP must divide it when given
    gpu: str | None = None  # the card (or catalog machine) to size on; None = the audited machine's model
    shape: ModelShape | None = None  # --layers and --hidden: the all-reduce cost per decode step is estimated


@dataclass(frozen=True)
class MachineDomains:
    """The NVLink domains of an audited machine, as the planner needs them (no I/O, no Machine)."""

    label: str  # "snapshot.json", "example h200-nvl-split"
    domains: tuple[tuple[int, ...], ...]  # GPU indices per NVLink domain; a lone GPU is its own domain
    gpu_model: str | None = None  # product name when uniform (selects the card when --gpu is absent)
    crossing: str = ""  # the slowest hop of a ring over every GPU when there are several domains ("... (SYS)")
    crossing_level: str = ""  # its level: "SYS", "PHB", "PIX", ...
    links_known: bool = True  # False: the input names GPUs but no links between them (an nccl-tests run)

    @property
    def gpu_count(self) -> int:
        """Count the GPUs over all domains."""
        return sum(len(d) for d in self.domains)


@dataclass(frozen=True)
class DomainFit:
    """Whether the tensor-parallel group fits one NVLink domain of one target (a node type or a box)."""

    target: str  # human label: "standard H200 SXM node (8 GPUs, one NVSwitch domain)"
    kind: str  # "standard-node" | "machine"
    gpu_count: int
    domain_sizes: tuple[int, ...]
    domains: tuple[tuple[int, ...], ...]
    tp_size: int
    fits_one_domain: bool
    at_edge: bool  # fits, but fills the largest domain or a card's usable memory (>= 95%)
    fits_machine: bool  # the whole group (TP x PP cards) is at most the target's GPUs
    placement: tuple[int, ...] | Unsupported  # GPU indices for the TP group when it fits
    verdict: str  # one sentence


@dataclass(frozen=True)
class Alternative:
    """One way out when the TP group does not fit a domain, with what it costs."""

    kind: str  # "cards-that-fit-one-domain" | "tp-in-domain-pp-across" | "cross-node-tp"
    summary: str
    gpu_key: str
    cards: int
    tp_size: int
    pp_size: int
    fits_one_domain: bool  # each TP group stays inside one NVLink domain
    cost: str


@dataclass(frozen=True)
class AllReducePath:
    """Time the TP group's all-reduce on one path and the ceiling it puts on tokens per second.

    The path is inside one NVLink domain, or across the box's split or the network between machines.
    """

    kind: str  # "inside" | "across"
    where: str  # "inside one NVLink domain (2 GPUs of the standard NVIDIA GB300 NVL72 rack)"
    ranks: int
    nodes: int
    allreduce_us: float  # one all-reduce of a decode step's message
    timed_from: str  # "measured" (a run's rows at that size) | "model" (NCCL's latency model and the oracle)
    latency_us: float | Unsupported  # the model's latency; absent where the time was measured
    busbw_gbps: float  # the large-message busbw: the model's bytes term, and prefill's figure
    basis: str  # where both figures come from, in full
    summary: str  # the same in a few words, for the plan's line
    step_ms: float  # all-reduce time per decode step
    tokens_per_s_per_sequence: float  # decode, one token per sequence per step
    tokens_per_s: float  # decode, all sequences of the batch
    prefill_tokens_per_s: float  # prompt tokens, bandwidth-bound


@dataclass(frozen=True)
class CommCost:
    """What the TP group's all-reduces cost a deployment per decode step: a ceiling from communication alone."""

    shape: ModelShape
    tp_size: int
    allreduces_per_step: int  # 2 per layer
    message_bytes: int  # batch x hidden x bytes per activation
    activation_bytes: int
    inside: AllReducePath | Unsupported  # inside one NVLink domain
    across: AllReducePath | Unsupported  # across the box's split or the network between machines
    lines: tuple[str, ...]  # what the plan prints


NO_SHAPE = Unsupported("plan", "no model shape given: --layers and --hidden estimate the all-reduce cost")


@dataclass(frozen=True)
class DeployPlan:
    """How many cards a model needs, its TP size, and whether that group fits one NVLink domain."""

    params_b: float | Unsupported
    active_params_b: float | Unsupported
    precision: str | Unsupported
    bytes_per_param: float | Unsupported
    precision_basis: str | Unsupported
    weights_gb: float
    weights_basis: str  # "parameters x precision" | "given"
    kv_method: str  # "headroom-fraction" | "computed"
    kv_headroom_fraction: float | Unsupported
    kv_shape: KvShape | Unsupported
    kv_cache_gb: float
    safety_margin_fraction: float
    safety_margin_gb: float
    footprint_gb: float
    gpu_key: str
    gpu_name: str
    card_memory_gb: float
    runtime_reserve_gb: float
    usable_per_card_gb: float
    cards_for_weights: int  # cards the weights alone need (before KV cache)
    cards_by_memory: int  # cards the whole footprint needs
    tp_size: int
    tp_rule: str
    pp_size: int
    cards: int  # tp_size x pp_size
    per_card_gb: float
    card_utilisation: float  # per_card_gb / usable_per_card_gb
    standard_node: DomainFit
    machine: DomainFit | Unsupported
    alternatives: tuple[Alternative, ...]
    steps: tuple[str, ...]
    verdict: str  # "fits-one-domain" | "at-edge-of-domain" | "crosses-domain"
    communication: CommCost | Unsupported = NO_SHAPE  # the all-reduce cost per decode step, where the shape is given

    @property
    def model_text(self) -> str:
        """Describe the model as the plan states it: "744B at int4, 40B active" or "464 GB of weights (given)"."""
        if isinstance(self.params_b, float) and self.weights_basis != "given":
            text = f"{_plain_number(self.params_b)}B parameters at {self.precision}"
        else:
            text = f"{_plain_number(self.weights_gb)} GB of weights (given)"
        if isinstance(self.active_params_b, float):
            text += f", {_plain_number(self.active_params_b)}B active"
        return text

    @property
    def checked(self) -> DomainFit:
        """The target the gate judges: the audited machine when there is one, else the standard node."""
        return self.machine if isinstance(self.machine, DomainFit) else self.standard_node

    @property
    def fits_one_domain(self) -> bool:
        """Tell whether the checked placement stays inside one NVLink domain."""
        return self.checked.fits_one_domain


def _plain_number(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 0.05 else f"{x:,.1f}"
