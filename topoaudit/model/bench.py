"""Results of an all-reduce bench: measured by topoaudit's harness or imported from nccl-tests output.

Units are in the field names: ``_bytes`` (sizes), ``_gbps`` (GB/s with GB = 10^9 bytes, as nccl-tests),
``_us`` (microseconds). ``algbw = size / time``; ``busbw = algbw * 2(n-1)/n`` for all-reduce
(nccl-tests ``doc/PERFORMANCE.md``). A figure the bench could not produce is an
:class:`~topoaudit.model.values.Unsupported`/:class:`~topoaudit.model.values.Failed` value with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topoaudit.model.nccl import LogLine, NcclSetting
from topoaudit.model.values import Probed, Unsupported

NOT_MEASURED = Unsupported(source="bench", reason="not measured")
ONE_RANK_REPEAT = "another process's run of one rank"
"""How a reader says a pasted row repeats a size because another process printed its own run of one rank."""
LATENCY_SIZES_BELOW_BYTES = 1 << 20
"""Below a MiB a sweep's figures are latency and jitter: its bandwidth levels off, and the protocols that carry a
deployment's large all-reduces take over, in the megabytes."""


@dataclass(frozen=True)
class BenchRow:
    """One message size of one group: the slowest rank's time per collective."""

    size_bytes: int
    count: int  # elements per rank
    dtype: str  # "float32" (nccl-tests "float")
    time_us: float  # median over trials of the slowest rank's time per call (nccl-tests "time")
    algbw_gbps: float
    busbw_gbps: float
    wrong: Probed[int]  # elements that differed from the expected sum, summed over ranks (nccl-tests "#wrong")
    p50_us: Probed[float] = NOT_MEASURED  # per-call latency over trials (slowest rank per trial)
    p99_us: Probed[float] = NOT_MEASURED
    min_us: Probed[float] = NOT_MEASURED
    calls: int = 0  # timed calls: trials x calls per trial
    # nccl-tests prints out-of-place first and in-place second; the harness times in-place only
    inplace_time_us: Probed[float] = NOT_MEASURED
    inplace_busbw_gbps: Probed[float] = NOT_MEASURED
    inplace_wrong: Probed[int] = NOT_MEASURED

    @property
    def one_rank(self) -> bool:
        """Data moved (algbw) and none of it between ranks (busbw 0 in both halves): a run of one rank.

        busbw is algbw times 2(n-1)/n for an all-reduce, (n-1)/n for the others: 0 only when n is 1.
        """
        inplace = self.inplace_busbw_gbps
        return self.algbw_gbps > 0 and self.busbw_gbps == 0 and (not isinstance(inplace, float) or inplace == 0)


@dataclass(frozen=True)
class SkippedSize:
    """A message size the bench did not run, with why (too little free GPU memory), so a gap is explained."""

    size_bytes: int
    reason: str  # "needs 3.0 GiB per rank, 1.2 GiB free on the fullest GPU"


@dataclass(frozen=True)
class BenchGroup:
    """One set of ranks swept together (``all``, a domain, a cross set, a pair, a TP group)."""

    name: str  # "all", "domain0", "cross", "pair 0-3", "tp4 #1"
    kind: str  # "all" | "domain" | "cross" | "pair" | "tp"
    ranks: tuple[int, ...]
    gpus: tuple[str, ...]  # "host:cuda0" per rank, for the reader
    rows: tuple[BenchRow, ...]
    skipped_sizes: tuple[SkippedSize, ...] = ()
    # the large-message plateau: the best busbw over the largest sizes measured (never a mean of all sizes)
    plateau_busbw_gbps: Probed[float] = NOT_MEASURED
    plateau_size_bytes: Probed[int] = NOT_MEASURED
    peak_busbw_gbps: Probed[float] = NOT_MEASURED
    peak_size_bytes: Probed[int] = NOT_MEASURED
    # small-message latency: per-call time over all trials of the sizes up to 64 KiB
    latency_p50_us: Probed[float] = NOT_MEASURED
    latency_p99_us: Probed[float] = NOT_MEASURED
    expected_busbw_gbps: Probed[float] = NOT_MEASURED
    expected_basis: str = ""  # "18 NVLink4 x 25 GB/s x ring efficiency 0.80 (NVIDIA/nccl#1054)"
    ratio: Probed[float] = NOT_MEASURED  # plateau / expected
    error: str = ""  # set when the group did not finish (timeout, dead rank, corruption)


@dataclass(frozen=True)
class PairBw:
    """Bus bandwidth of one pair of ranks measured alone (for n = 2, busbw = algbw), from its best trial."""

    a: int
    b: int
    busbw_gbps: float
    size_bytes: int


@dataclass(frozen=True)
class RankInfo:
    """Where one rank ran."""

    rank: int
    local_rank: int
    host: str
    device: str  # "cuda:0" | "cpu"
    gpu_index: Probed[int] = NOT_MEASURED  # index in the machine model (joined by PCI bus id when known)
    pci_bus_id: Probed[str] = NOT_MEASURED
    name: Probed[str] = NOT_MEASURED
    pid: int = 0


@dataclass(frozen=True)
class RankError:
    """A failure on one rank, as that rank (or the launcher) reported it."""

    rank: int  # -1: the launcher itself
    kind: str  # "timeout" | "exception" | "died" | "interrupted" | "corruption"
    message: str
    group: str = ""
    size_bytes: int = 0


@dataclass(frozen=True)
class RunFailure:
    """A failure an imported run printed (nccl-tests' ``Test CUDA failure common.cu:941 '...'``), as typed facts.

    ``kind``: ``cuda`` (a CUDA call in the test failed), ``nccl`` (an NCCL call returned an error), ``timeout``
    (a collective did not finish within ``-T``), ``data-check`` (``Out of bounds values : N FAILED``), ``gpus``
    (``Invalid number of GPUs``), ``test`` (only the ``.. Test failure file:line`` trace survived the paste).
    """

    kind: str
    message: str  # the error text: "system not yet initialized", "unhandled cuda error"
    detail: str  # NCCL's last error after " / " ("Cuda failure 1 'invalid argument'"); "" when not printed
    source_location: str  # "common.cu:941"; "" when not printed
    host: Probed[str]
    pid: Probed[int]
    rank: Probed[int]  # from the rank lines, when the host and pid name one rank
    cuda_error: Probed[int]  # 802 for "system not yet initialized": the CUDA error the text names
    evidence: LogLine


@dataclass(frozen=True)
class RowProblem:
    """A result row that is not a figure to judge: an impossible figure, or a size repeated with other figures."""

    kind: str  # "impossible" (NaN, inf, 1e308, negative, zero time) | "missing" (JSON without the figure)
    # | "conflict" (same size, other figures)
    size_bytes: int
    message: str
    evidence: LogLine


@dataclass(frozen=True)
class BenchResult:
    """An all-reduce bench run: every group's rows, the pairwise matrix and the islands it implies."""

    source: str  # "topoaudit" (measured here) | "nccl-tests" (imported text/JSON)
    collective: str  # "all_reduce"
    backend: str  # "nccl" | "gloo" | "rccl" | "mscclpp" | "nccl-tests"
    world_size: int
    hosts: tuple[str, ...]
    ranks: tuple[RankInfo, ...]
    groups: tuple[BenchGroup, ...]
    status: str  # "complete" | "partial" (stopped early; what was measured is kept) | "failed"
    pairs: tuple[PairBw, ...] = ()
    measured_islands: Probed[tuple[tuple[int, ...], ...]] = NOT_MEASURED  # ranks that talk fast together
    expected_islands: Probed[tuple[tuple[int, ...], ...]] = NOT_MEASURED  # NVLink domains (or hosts), in ranks
    errors: tuple[RankError, ...] = ()
    notes: tuple[str, ...] = ()  # skipped groups, NVLS caveats, environment remarks
    environment: dict[str, str] = field(default_factory=dict)  # torch/NCCL versions, NCCL_* variables
    wall_s: float = 0.0  # whole run
    timed_s: float = 0.0  # sum of the timed collectives (overhead = wall / timed)
    # imported nccl-tests only
    version: str = ""
    avg_busbw_gbps: Probed[float] = NOT_MEASURED  # nccl-tests' footer: a mean over ALL sizes; never gate on it
    out_of_bounds: Probed[int] = NOT_MEASURED
    nccl_version: Probed[str] = NOT_MEASURED  # "2.28.7": the NCCL library the run loaded
    command: Probed[str] = NOT_MEASURED  # the command line, when it was pasted with the output
    settings: tuple[NcclSetting, ...] = ()  # NCCL_* variables typed on that command line
    failures: tuple[RunFailure, ...] = ()  # what the run printed when it failed
    row_problems: tuple[RowProblem, ...] = ()  # rows left out of the figures, and why
    last_output: Probed[LogLine] = NOT_MEASURED  # the last line the run printed (where a hung run stopped)
    table_header: Probed[LogLine] = NOT_MEASURED  # its column names: printed, and no row after them, it hung in a size

    def group(self, name: str) -> BenchGroup | None:
        """Return the group called ``name``, or None when this bench did not measure it."""
        return next((g for g in self.groups if g.name == name), None)

    @property
    def one_rank(self) -> bool:
        """Every row is of a run of one rank (:attr:`BenchRow.one_rank`): nothing crossed a link between GPUs."""
        rows = [r for g in self.groups for r in g.rows]
        return bool(rows) and all(r.one_rank for r in rows)
