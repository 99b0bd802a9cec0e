"""What runs inside a size's measurement, seen through the collectives it issues (one gloo rank in this process):
the timed all-reduces run back to back, with no barrier, refill or check among them, and the data check rides on
the last warm-up call instead of costing a collective of its own."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from topoaudit.bench.config import BenchConfig  # noqa: E402
from topoaudit.bench.groups import GroupSpec  # noqa: E402
from topoaudit.bench.rank import measure  # noqa: E402

SIZE = 64 << 10
COUNT = SIZE // 4


@pytest.fixture
def one_rank(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """A one-rank gloo group; every barrier and all-reduce is logged as (what, elements) before it runs."""
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", os.environ.get("GLOO_SOCKET_IFNAME", "lo"))
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    log: list[tuple[str, int]] = []
    real_all_reduce, real_barrier = dist.all_reduce, dist.barrier

    def all_reduce(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        log.append(("all_reduce", tensor.numel()))
        return real_all_reduce(tensor, *args, **kwargs)

    def barrier(*args: Any, **kwargs: Any) -> Any:
        log.append(("barrier", 0))
        return real_barrier(*args, **kwargs)

    monkeypatch.setattr(dist, "all_reduce", all_reduce)
    monkeypatch.setattr(dist, "barrier", barrier)
    try:
        yield log
    finally:
        monkeypatch.undo()
        dist.destroy_process_group()


def _measure(warmup: int | None = None, **config: Any) -> dict[str, Any]:
    spec = GroupSpec("all", "all", (0,), True)
    cfg = BenchConfig(backend="gloo", target_s=0.05, warmup=2, **config)
    extra = {} if warmup is None else {"warmup": warmup}
    return measure(spec, None, SIZE, 0, "gloo", cfg, torch.device("cpu"), 0, **extra)


def test_timed_calls_run_back_to_back_after_one_barrier(one_rank: list[tuple[str, int]]) -> None:
    record = _measure()
    timed = record["calls"]
    assert len(record["trial_us"]) >= 3 and timed >= len(record["trial_us"])
    full = [i for i, (what, n) in enumerate(one_rank) if what == "all_reduce" and n == COUNT]
    # two warm-up calls (the second one checked), then every timed call; no extra call for the data check
    assert len(full) == 2 + timed
    first_timed = full[2]
    assert one_rank[first_timed - 1] == ("barrier", 0)  # one start line for the group
    assert full[2:] == list(range(first_timed, first_timed + timed))  # nothing between the timed calls
    assert record["wrong"] == 0


def test_later_sizes_warm_up_once_and_the_checked_call_still_catches_corruption(
    one_rank: list[tuple[str, int]],
) -> None:
    record = _measure(warmup=1, inject=(("corrupt_rank", 0),))
    full = [n for what, n in one_rank if what == "all_reduce" and n == COUNT]
    assert len(full) == 1 + record["calls"]
    assert record["wrong"] == 1
