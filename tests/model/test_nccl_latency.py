"""NCCL's latency model of an all-reduce (src/graph/tuning.cc@v2.30.7-1, LL protocol): the lower of ring and tree."""

from __future__ import annotations

import pytest

from topoaudit.model.nccl_latency import allreduce_latency


@pytest.mark.parametrize(
    ("ranks", "nodes", "intra", "us", "algorithm", "arithmetic"),
    [
        (2, 1, "NVLINK", 7.8, "ring", "6.6 + 2 x 0.6 NVLink"),
        (8, 1, "NVLINK", 15.0, "ring", "6.6 + 14 x 0.6 NVLink"),
        (8, 1, "PCI", 20.6, "ring", "6.6 + 14 x 1 PCIe"),
        (2, 2, "NVLINK", 16.6, "ring", "6.6 + 2 x 5 network"),  # one GPU per node: the tree's network latency
        (16, 2, "NVLINK", 25.2, "tree", "6.8 + 2 x (7 x 0.6 NVLink + 1 x 5 network)"),
        (32, 4, "NVLINK", 35.2, "tree", "6.8 + 2 x (7 x 0.6 NVLink + 2 x 5 network)"),
    ],
)
def test_nccls_modelled_latency(ranks: int, nodes: int, intra: str, us: float, algorithm: str, arithmetic: str) -> None:
    latency = allreduce_latency(ranks, nodes, intra)
    assert (latency.us, latency.algorithm, latency.arithmetic) == (us, algorithm, arithmetic)
    assert "src/graph/tuning.cc@v2.30.7-1" in latency.describe()
