"""All-reduce sweeps with torch.distributed: the only package that imports torch, and only inside functions.

``run_bench(config, progress=None) -> BenchResult`` (:mod:`.launch`) spawns one process per GPU (NCCL) or
``--nproc`` CPU ranks (gloo), or -- when started by torchrun/Slurm (``RANK``/``WORLD_SIZE`` set) -- joins
that job with torch's own rendezvous; each rank (:mod:`.rank`) writes its rows and failures to the c10d
store (:mod:`.store`), and rank 0 (or the spawning parent) assembles them (:mod:`.assemble`, pure).
On NCCL, ``run_bench_with_nccl_view`` also has NCCL write its INFO log and topology/graph dumps into the run
(:mod:`.nccl_capture`) and returns them as evidence; ``nccl_view`` reads the log. ``judge_bench`` turns a result
into findings. The request (:mod:`.config`), formulas, the expectation model,
the island clustering, the assembly and the judge are pure modules importable without torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BenchConfig", "judge_bench", "launched_env", "nccl_view", "run_bench", "run_bench_with_nccl_view"]

_EXPORTS = {
    "BenchConfig": "topoaudit.bench.config",
    "launched_env": "topoaudit.bench.launch",
    "run_bench": "topoaudit.bench.launch",
    "run_bench_with_nccl_view": "topoaudit.bench.launch",
    "nccl_view": "topoaudit.bench.nccl_capture",
    "judge_bench": "topoaudit.bench.judge",
}


def __getattr__(name: str) -> Any:
    """Load the launcher on first use: importing ``topoaudit.bench.formulas`` (nccl-tests import) stays cheap."""
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'topoaudit.bench' has no attribute {name!r}")
