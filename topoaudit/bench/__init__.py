"""All-reduce sweeps with torch.distributed: the only package that imports torch, and only inside functions.

``run_bench(config, progress=None) -> BenchResult`` spawns one process per GPU (NCCL) or ``--nproc`` CPU
ranks (gloo), or -- when started by torchrun/Slurm (``RANK``/``WORLD_SIZE`` set) -- joins that job with
torch's own rendezvous; rank 0 (or the spawning parent) gathers every rank's rows and failures through the
c10d store. ``judge_bench`` turns a result into findings. Formulas, the expectation model and the island
clustering are pure modules importable without torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BenchConfig", "judge_bench", "launched_env", "run_bench"]

_EXPORTS = {
    "BenchConfig": "topoaudit.bench.harness",
    "launched_env": "topoaudit.bench.harness",
    "run_bench": "topoaudit.bench.harness",
    "judge_bench": "topoaudit.bench.judge",
}


def __getattr__(name: str) -> Any:
    """Load the harness on first use: importing ``topoaudit.bench.formulas`` (nccl-tests import) stays cheap."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'topoaudit.bench' has no attribute {name!r}")
