"""The Inspector rule's findings whole, at the boundaries that decide them: which rows are judged, the figure a
communicator is held to and how it is asked for, the tolerance, and the hosts compared with each other."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.model.network import NcclVersion, NicSet
from topoaudit.model.values import Unsupported
from topoaudit.rules.inspector_rules import judge_inspector

H100 = find_gpu("H100-SXM")
GB200 = find_gpu("GB200")


@dataclasses.dataclass
class _Figure:
    """What the rule reads of any figure: a tolerance and assumptions only where the oracle gives them."""

    busbw_gbps: float

    def describe(self) -> str:
        return f"{self.busbw_gbps:g} GB/s ring (test figure)"

    def evidence(self) -> dict[str, object]:
        return {"oracle_algorithm": "ring"}


@dataclasses.dataclass
class _TolerantFigure(_Figure):
    assumptions: tuple[str, ...] = ()
    warn_below_ratio: float = 0.85


class _Oracle:
    """Records how it was asked, answers with one figure."""

    def __init__(self, figure: object) -> None:
        self.figure, self.asked = figure, []  # type: ignore[var-annotated]

    def __call__(self, spec: GpuSpec, gpus: int, **kw: Any) -> object:
        self.asked.append((spec.key, gpus, kw))
        return self.figure


def _row(host: str, busbw: float, **fields: Any) -> dict[str, Any]:
    row = {
        "host": host,
        "comm_id": "0x5a1e",
        "comm_name": "TP Group 0",
        "coll": "AllReduce",
        "n_ranks": 8,
        "nnodes": 1,
        "large_median_busbw_gbps": busbw,
        "large_collectives": 12,
        "timing_source": "kernel_gpu",
        "first_line": 3,
    }
    return {**row, **fields}


def _judged(*rows: dict[str, Any], spec: GpuSpec | None = H100, oracle: object = None, **kw: Any) -> list[Any]:
    found = judge_inspector({"communicators": list(rows)}, spec, oracle, **kw)  # type: ignore[arg-type]
    return [(f.code, f.severity.value, f.message, f.evidence) for f in found]


def test_a_communicator_under_the_tolerance_of_its_figure_is_low_and_says_what_it_was_held_to() -> None:
    oracle = _Oracle(_TolerantFigure(400.0, ("NCCL version not reported", "NICs assumed")))
    assert _judged(_row("node7", 339.9, algorithm="ring"), oracle=oracle) == [
        (
            "nccl-inspector-busbw-low",
            "warn",
            "Host node7: all-reduce communicator 0x5a1e (TP Group 0) reached 339.9 GB/s busbw at large messages "
            "(median of 12), under 0.85x the expected 400 GB/s ring (test figure); algorithm ring (its algo_proto); "
            "NCCL version not reported; NICs assumed.",
            {
                "host": "node7",
                "comm_id": "0x5a1e",
                "comm_name": "TP Group 0",
                "busbw_gbps": 339.9,
                "expected_busbw_gbps": 400.0,
                "line": 3,
                "algorithm": "ring",
                "oracle_algorithm": "ring",
            },
        )
    ]
    assert _judged(_row("node7", 340.0, algorithm="ring"), oracle=oracle) == []  # exactly at the tolerance


def test_a_figure_without_its_own_tolerance_is_held_at_0_7_and_an_unrecorded_algorithm_is_nccl_s_choice() -> None:
    oracle = _Oracle(_Figure(400.0))
    ((_, _, message, evidence),) = _judged(_row("node7", 279.0), oracle=oracle)
    assert "under 0.7x the expected 400 GB/s ring (test figure); NCCL's own choice." in message
    assert evidence["algorithm"] == "not recorded"
    assert _judged(_row("node7", 280.0), oracle=oracle) == []


def test_the_oracle_is_asked_for_one_node_s_gpus_with_the_run_s_network_and_release() -> None:
    oracle = _Oracle(_Figure(100.0))
    nics, version = NicSet(8, 400.0, "IB", "--nics 8x400"), NcclVersion(2, 21, 5)
    _judged(_row("a", 500.0, n_ranks=16, nnodes=2, algorithm="tree"), oracle=oracle, network=nics, nccl_version=version)
    assert oracle.asked == [
        (
            "H100-SXM",
            8,
            {"nodes": 2, "algorithm": "tree", "nics": nics, "nccl_version": version, "one_nvlink_domain": False},
        )
    ]


def test_an_nvl72_communicator_within_one_domain_is_asked_for_as_one_domain() -> None:
    assert GB200 is not None
    oracle = _Oracle(_Figure(100.0))
    _judged(_row("tray1", 500.0, n_ranks=72, nnodes=18), spec=GB200, oracle=oracle)
    _judged(_row("tray1", 500.0, n_ranks=144, nnodes=36), spec=GB200, oracle=oracle)
    assert [(gpus, kw["nodes"], kw["one_nvlink_domain"]) for _, gpus, kw in oracle.asked] == [
        (72, 1, True),
        (4, 36, False),
    ]


def test_a_communicator_across_nodes_names_its_shape() -> None:
    oracle = _Oracle(_Figure(400.0))
    ((_, _, message, _),) = _judged(_row("a", 100.0, n_ranks=16, nnodes=2), oracle=oracle)
    assert message.startswith("Host a: all-reduce communicator 0x5a1e (TP Group 0) (2 nodes x 8 ranks) reached 100")


@pytest.mark.parametrize(
    ("fields", "judged"),
    [
        ({"coll": "AllGather"}, False),
        ({"large_median_busbw_gbps": None}, False),
        ({"large_median_busbw_gbps": 100}, True),  # an int is a figure too
        ({"timing_source": "kernel_cpu"}, False),
        ({"timing_source": "collective_cpu"}, False),
        ({"timing_source": "collective_gpu"}, True),
    ],
)
def test_only_gpu_timed_all_reduce_rows_with_a_large_message_median_are_judged(
    fields: dict[str, Any], judged: bool
) -> None:
    found = _judged(_row("a", 100.0, **fields), oracle=_Oracle(_Figure(400.0)))
    assert len(found) == int(judged)


@pytest.mark.parametrize(
    ("name", "comm_id", "shown"),
    [("unknown", "0x5a1e", "0x5a1e"), ("0x5a", "0x5a1e", "0x5a1e"), ("TP Group 0", "0x5a1e", "0x5a1e (TP Group 0)")],
)
def test_a_communicator_is_named_by_its_id_and_a_name_that_adds_something(name: str, comm_id: str, shown: str) -> None:
    ((_, _, message, _),) = _judged(_row("a", 100.0, comm_name=name, comm_id=comm_id), oracle=_Oracle(_Figure(400.0)))
    assert message.startswith(f"Host a: all-reduce communicator {shown} reached")


# --- without a figure: hosts of one shape compared with each other ----------------------------------------
def test_a_host_under_0_7_of_the_other_hosts_median_is_named_with_its_communicators() -> None:
    rows = (
        _row("a", 400.0),
        _row("b", 420.0),
        _row("c", 200.0, comm_id="0x1"),
        _row("c", 260.0, comm_id="0x2", comm_name="unknown", first_line=40),
        _row("c", 100.0, comm_id="0x3", first_line=50),
        _row("c", 900.0, comm_id="0x4", first_line=60),
    )
    assert _judged(*rows, spec=None) == [
        (
            "nccl-inspector-busbw-low",
            "warn",
            "Host c: all-reduce busbw 230 GB/s at large messages on 8-rank communicator(s) 0x1 (TP Group 0), 0x2, "
            "0x3 (TP Group 0) and 1 more, under 0.7x the other hosts' median 410 GB/s (2 other host(s)); no expected "
            "figure for these communicators (--gpu-model names the card), so hosts are compared with each other.",
            {
                "host": "c",
                "comm_ids": ["0x1", "0x2", "0x3", "0x4"],
                "busbw_gbps": 230.0,
                "others_median_busbw_gbps": 410.0,
                "line": 3,
            },
        )
    ]


def test_the_others_median_leaves_the_host_itself_out_and_0_7_of_it_is_not_low() -> None:
    # the others of a are b and c, median 300: 150 is under 0.7x of it (with a itself in, 200: 150 is not)
    found = _judged(_row("a", 150.0), _row("b", 200.0), _row("c", 400.0), spec=None)
    assert [(e["host"], e["others_median_busbw_gbps"]) for _, _, _, e in found] == [("a", 300.0)]
    assert _judged(_row("a", 210.0), _row("b", 300.0), spec=None) == []  # exactly 0.7x
    assert len(_judged(_row("a", 209.9), _row("b", 300.0), spec=None)) == 1


def test_hosts_are_compared_only_with_communicators_of_their_shape() -> None:
    rows = (_row("a", 100.0), _row("b", 400.0, n_ranks=16, nnodes=2), _row("c", 400.0, n_ranks=4))
    assert _judged(*rows, spec=None) == []  # one host per shape: nothing to compare with


def test_a_figure_the_oracle_cannot_give_leaves_the_hosts_to_be_compared() -> None:
    oracle = _Oracle(Unsupported("oracle", "no figure for 8 GPUs"))
    found = _judged(_row("a", 100.0), _row("b", 400.0), oracle=oracle)
    assert [e["host"] for _, _, _, e in found] == ["a"] and "others_median_busbw_gbps" in found[0][3]
    uneven = _judged(_row("a", 100.0, n_ranks=9, nnodes=2), _row("b", 400.0, n_ranks=9, nnodes=2), oracle=oracle)
    assert [e["host"] for _, _, _, e in uneven] == ["a"] and oracle.asked == [
        ("H100-SXM", 8, {"nodes": 1, "algorithm": "", "nics": None, "nccl_version": None, "one_nvlink_domain": False})
    ] * 2


def test_a_summary_without_communicators_or_with_no_nodes_raises_nothing() -> None:
    assert judge_inspector({}, H100, _Oracle(_Figure(400.0))) == []
    oracle = _Oracle(_Figure(400.0))
    assert _judged(_row("a", 100.0, nnodes=0), _row("b", 400.0, nnodes=0), oracle=oracle)[0][3]["host"] == "a"
    assert oracle.asked == []  # no figure for a communicator on no node: hosts compared instead


def test_every_shape_with_two_hosts_is_compared_after_one_with_a_single_host() -> None:
    rows = (_row("x", 100.0, n_ranks=4), _row("a", 100.0), _row("b", 400.0))
    assert [(e["host"], e["comm_ids"]) for _, _, _, e in _judged(*rows, spec=None)] == [("a", ["0x5a1e"])]


def test_medians_are_reported_to_three_decimals() -> None:
    ((_, _, _, evidence),) = _judged(_row("a", 100.12345), _row("b", 400.98765), spec=None)
    assert (evidence["busbw_gbps"], evidence["others_median_busbw_gbps"]) == (100.123, 400.988)


def test_a_communicator_across_nodes_is_held_to_whole_gpus_per_node() -> None:
    """Eight ranks on two nodes are four GPUs a node: the figure names them so, never '4.0'."""
    from topoaudit.bench.oracle import expected_busbw

    nics = NicSet(8, 400.0, "IB", "--nics 8x400")
    ((_, _, message, _),) = _judged(_row("a", 10.0, n_ranks=8, nnodes=2), oracle=expected_busbw, network=nics)
    assert "(2 nodes x 4 ranks)" in message and "(4 of 8 GPUs per node ran: 4 of 8 NICs)" in message
