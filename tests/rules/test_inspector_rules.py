"""NCCL Inspector judged by the oracle: the algorithm a communicator ran, its nodes and network, GPU-timed only."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from topoaudit.bench.oracle import expected_busbw
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.model.network import NicSet
from topoaudit.parse.nccl_inspector import parse_inspector, summarize
from topoaudit.rules.inspector_rules import judge_inspector
from topoaudit.rules.needs import NCCL_INSPECTOR

FIXTURES = Path(__file__).parents[1] / "fixtures" / "inspector"


def _spec(key: str) -> GpuSpec:
    spec = find_gpu(key)
    assert spec is not None
    return spec


def _summary(name: str) -> dict:
    return summarize(parse_inspector((FIXTURES / name).read_text()))


def test_an_8x_h100_communicator_at_300_is_held_to_the_algorithm_it_ran() -> None:
    found = judge_inspector(_summary("constructed-prom-v2.30-buckets.prom"), _spec("H100-SXM"), expected_busbw)
    (low,) = found  # NVLS at 300 is low against NVLS's 480; the ring communicator at 340 is healthy against 370
    assert low.evidence["comm_name"] == "TP Group 0" and low.evidence["oracle_algorithm"] == "nvls"
    assert low.evidence["expected_busbw_gbps"] == 480.0 and low.evidence["algorithm"] == "nvls"
    assert "under 0.85x the expected 480 GB/s nvls" in low.message and "algorithm nvls (its algo_proto)" in low.message


def test_a_communicator_whose_algorithm_is_not_recorded_is_held_to_nccls_choice() -> None:
    (low,) = judge_inspector(_summary("constructed-prom-v2.29-per-collective.prom"), _spec("H100-SXM"), expected_busbw)
    assert low.evidence["host"] == "h100-node-07" and low.evidence["oracle_algorithm"] == "nvls"
    assert "NCCL's own choice" in low.message and "picks NVLS" in low.message


def test_a_two_node_communicator_is_held_to_the_network_figure() -> None:
    summary = _summary("constructed-two-node-communicator.jsonl")
    assumed = judge_inspector(summary, _spec("H100-SXM"), expected_busbw)
    assert sorted(f.evidence["host"] for f in assumed) == ["h100-node-10", "h100-node-11"]
    assert all(f.evidence["oracle_warn_at_most"] for f in assumed)
    assert "(2 nodes x 8 ranks)" in assumed[0].message and "HGX H100 reference node" in assumed[0].message
    given = judge_inspector(summary, _spec("H100-SXM"), expected_busbw, network=NicSet(8, 200.0, "IB", "--nics 8x200"))
    assert {f.evidence["expected_busbw_gbps"] for f in given} == {200.0}  # 8 x 25 GB/s: the ring, lower than the tree
    assert not any(f.evidence["oracle_warn_at_most"] for f in given)


def test_cpu_timed_collectives_are_not_judged() -> None:
    summary = _summary("constructed-cpu-timed-mixed.jsonl")  # GPU-timed 473 (healthy), CPU-timed 152
    assert judge_inspector(summary, _spec("H100-SXM"), expected_busbw) == []
    assert judge_inspector(summary, None, None) == []  # one host, and the CPU-timed row is no second opinion
    cpu_only = {**summary, "communicators": [r for r in summary["communicators"] if r["timing_source"] != "kernel_gpu"]}
    why = NCCL_INSPECTOR.missing(SimpleNamespace(inspector=cpu_only))  # type: ignore[arg-type]
    assert why == "the NCCL Inspector output has no all-reduce of 256 MiB or more timed on the GPU to judge"


def test_the_readme_tray_sample_passes_against_the_gb200_ring() -> None:
    assert judge_inspector(_summary("readme-prom-v2.30.prom"), _spec("GB200"), expected_busbw) == []
