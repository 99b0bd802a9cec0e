"""What a bench run is asked to do, checked where it is built: a sweep that cannot run is refused before any
rank starts (a usage mistake, exit 2). Pure; no torch."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from topoaudit.bench.nccl_capture import NcclCapture
from topoaudit.errors import UsageError
from topoaudit.model.busbw import NCCL_ALGO_VALUES
from topoaudit.model.machine import Machine
from topoaudit.units import format_size

FORCEABLE_ALGORITHMS = ("ring", "nvls", "tree")
"""What ``bench --algo`` forces: the ring baseline, NVLS, tree."""

Progress = Callable[[int, int, str], None]
"""progress(done_steps, total_steps, what) -- one step is one (group, size)."""


@dataclass(frozen=True)
class BenchConfig:
    """What to sweep and how. ``inject`` holds test hooks (corrupt/hang/die on a rank at a size)."""

    groups: tuple[str, ...] = ("all",)
    backend: str = "auto"  # "auto" | "nccl" | "gloo"
    nproc: int = 0  # spawned mode: ranks to start (0 = one per GPU; gloo default 2)
    min_bytes: int = 8
    max_bytes: int = 4 << 30
    factor: int = 2
    pair_bytes: int = 0  # size of the pairwise matrix; 0 = the largest swept size up to 256 MiB
    timeout_s: float = 60.0  # one collective; also the process group's timeout
    target_s: float = 0.1  # timed time per (group, size)
    warmup: int = 2
    machine: Machine | None = None  # the probed machine: domains, placements, the expectation model
    inject: tuple[tuple[str, int], ...] = ()  # ("corrupt_rank", r), ("hang_rank", r), ("die_rank", r), ("at_bytes", s)
    host: str = "127.0.0.1"  # spawned mode: store address
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)  # extra environment for spawned ranks
    nccl_capture: NcclCapture | None = None  # on NCCL: where its log and dumps go (see bench.nccl_capture)
    algo: str = ""  # "ring" | "nvls" | "tree": forced through NCCL_ALGO (NCCL's documented variable); "" NCCL chooses

    def __post_init__(self) -> None:
        """Refuse a sweep that cannot be run, before any rank starts: a usage mistake, told in one sentence."""
        for option, value, least in (
            ("--nproc", self.nproc, 0),
            ("--min-bytes", self.min_bytes, 1),
            ("--max-bytes", self.max_bytes, 1),
            ("--pair-bytes", self.pair_bytes, 0),
            ("the size factor", self.factor, 2),
            ("the warm-up count", self.warmup, 0),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise UsageError(f"{option} must be a whole number of at least {least}, not {value!r}")
        if self.min_bytes > self.max_bytes:
            raise UsageError(
                f"--min-bytes {format_size(self.min_bytes)} is above --max-bytes "
                f"{format_size(self.max_bytes)}: nothing to sweep"
            )
        if self.algo and self.algo not in FORCEABLE_ALGORITHMS:
            raise UsageError(f"--algo must be one of {', '.join(FORCEABLE_ALGORITHMS)}, not {self.algo!r}")
        for option, seconds in (("--timeout", self.timeout_s), ("the time per size", self.target_s)):
            if not seconds > 0:
                raise UsageError(f"{option} must be a positive number of seconds, not {seconds!r}")

    def hook(self, name: str) -> int | None:
        return next((v for k, v in self.inject if k == name), None)

    def rank_env(self, backend: str) -> tuple[tuple[str, str], ...]:
        """The environment every rank adds before NCCL starts: ``env``, plus (on NCCL only) ``NCCL_ALGO`` for
        ``algo`` and the NCCL capture."""
        if backend != "nccl":
            return self.env
        forced = (("NCCL_ALGO", NCCL_ALGO_VALUES[self.algo]),) if self.algo else ()
        capture = self.nccl_capture.env if self.nccl_capture is not None else ()
        return (*self.env, *forced, *capture)


__all__ = ["FORCEABLE_ALGORITHMS", "BenchConfig", "Progress"]
