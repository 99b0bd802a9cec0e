"""All-reduce sweeps with torch.distributed: the only package that imports torch, and only inside functions.

``run_bench(config, progress=None) -> BenchResult`` spawns one process per GPU (NCCL) or ``--nproc`` CPU
ranks (gloo), or -- when started by torchrun/Slurm (``RANK``/``WORLD_SIZE`` set) -- joins that job with
torch's own rendezvous; rank 0 (or the spawning parent) gathers every rank's rows and failures through the
c10d store. ``judge_bench`` turns a result into findings. Formulas, the expectation model and the island
clustering are pure modules importable without torch.
"""

from __future__ import annotations

from topoaudit.bench.harness import BenchConfig, launched_env, run_bench
from topoaudit.bench.judge import judge_bench

__all__ = ["BenchConfig", "judge_bench", "launched_env", "run_bench"]
