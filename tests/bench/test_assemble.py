"""The pure assembly: what ranks wrote to the store (as documents) -> a BenchResult, for finished, partial and
failed runs. No torch, no processes, no store."""

from __future__ import annotations

from dataclasses import asdict

import pytest
from builders import machine, nvswitch8

from topoaudit.bench.assemble import RunDocuments, plan_from_document, rank_from_info, result_from_documents
from topoaudit.bench.groups import make_plan
from topoaudit.model.bench import RankError


def _info(rank: int, *, cuda: bool = False) -> dict[str, object]:
    doc: dict[str, object] = {"rank": rank, "local_rank": rank, "local_world": 2, "host": "h", "pid": 100 + rank}
    if cuda:
        doc.update(device=f"cuda:{rank}", name="NVIDIA H200", pci_bus_id=f"0000:{0x18 + rank:02x}:00.0")
    else:
        doc["device"] = "cpu"
    if rank == 0:
        doc["env"] = {"torch": "2.5", "cpu_cores": "2"}
    return doc


def _plan_doc(infos: list[dict[str, object]], groups: tuple[str, ...] = ("all",), **extra: object) -> dict[str, object]:
    plan = make_plan(groups, tuple(rank_from_info(i) for i in infos))
    return {
        "groups": [asdict(g) for g in plan.groups],
        "domains": [list(d) for d in plan.domains],
        "domain_basis": plan.domain_basis,
        "notes": list(plan.notes),
        "skipped": [],
        **extra,
    }


def _rec(group: str, size: int, us: float, ranks: tuple[int, ...] = (0, 1)) -> dict[str, object]:
    return {"group": group, "kind": "all", "ranks": list(ranks), "size": size, "count": size // 4,
            "trial_us": [us, us, us], "calls": 9, "wrong": 0, "timed_s": 3 * 3 * us * 1e-6}  # fmt: skip


def _assemble(documents: RunDocuments, errors: list[RankError] | None = None, world: int = 2):  # type: ignore[no-untyped-def]
    return result_from_documents(documents, backend="gloo", world=world, errors=errors or [], machine=None, wall_s=2.0)


def test_a_finished_run_has_every_row_its_plateau_latency_and_environment() -> None:
    infos = [_info(0), _info(1)]
    records = (_rec("all", 8, 10.0), _rec("all", 1 << 20, 1000.0), _rec("all", 2 << 20, 1900.0))
    result = _assemble(RunDocuments(tuple(infos), _plan_doc(infos), records))
    assert result.status == "complete" and result.hosts == ("h",) and result.world_size == 2
    (group,) = result.groups
    assert [r.size_bytes for r in group.rows] == [8, 1 << 20, 2 << 20]
    assert group.plateau_busbw_gbps == pytest.approx((2 << 20) / 1e9 / 1.9e-3, rel=1e-3)
    assert group.latency_p50_us == 10.0
    assert result.environment == {"torch": "2.5", "cpu_cores": "2"}
    assert result.expected_islands == ((0, 1),)  # CPU ranks of one host
    assert result.timed_s == pytest.approx(sum(r["timed_s"] for r in records))  # type: ignore[misc]


def test_a_run_stopped_after_some_rows_is_partial_and_keeps_them() -> None:
    infos = [_info(0), _info(1)]
    stop = RankError(-1, "interrupted", "SIGTERM received")
    result = _assemble(RunDocuments(tuple(infos), _plan_doc(infos), (_rec("all", 8, 10.0),)), [stop])
    assert result.status == "partial" and [r.size_bytes for r in result.groups[0].rows] == [8]
    assert result.errors == (stop,)


def test_a_run_stopped_before_the_plan_is_failed_with_no_groups() -> None:
    stop = RankError(-1, "interrupted", "SIGTERM received")
    result = _assemble(RunDocuments(infos=(_info(0),)), [stop])
    assert result.status == "failed" and result.groups == () and result.errors == (stop,)
    assert [r.rank for r in result.ranks] == [0]
    assert _assemble(RunDocuments(), [stop]).ranks == ()  # not even a rank had reported


def test_errors_ranks_wrote_follow_those_the_launcher_saw_and_name_group_and_size() -> None:
    infos = [_info(0), _info(1)]
    written = ({"rank": 1, "kind": "timeout", "message": "no answer", "group": "all", "size": 1024},)
    result = _assemble(RunDocuments(tuple(infos), _plan_doc(infos), (_rec("all", 8, 10.0),), written))
    assert result.errors == (RankError(1, "timeout", "no answer", "all", 1024),)
    assert result.groups[0].error == "timeout at 1 KiB: no answer"


def test_gpu_ranks_join_the_machine_and_get_the_link_model_expectation() -> None:
    infos = [_info(r, cuda=True) for r in range(2)]
    box = machine(2, nvswitch8, name="NVIDIA H200")
    documents = RunDocuments(tuple(infos), _plan_doc(infos), (_rec("all", 1 << 28, 1e6),))
    result = result_from_documents(documents, backend="nccl", world=2, errors=[], machine=box, wall_s=1.0)
    (group,) = result.groups
    assert group.expected_busbw_gbps == pytest.approx(18 * 25 * 0.8) and "NVLink4" in group.expected_basis
    assert result.ranks[1].name == "NVIDIA H200" and result.ranks[1].pci_bus_id == "0000:19:00.0"


def test_a_cpu_rank_says_why_it_has_no_bus_id_or_name() -> None:
    rank = rank_from_info(_info(1))
    assert "CPU rank" in str(rank.name) and "no PCI bus id" in str(rank.pci_bus_id)


def test_a_plan_document_round_trips() -> None:
    infos = [_info(0), _info(1)]
    doc = _plan_doc(infos, ("all", "pairs"))
    plan = plan_from_document(doc)
    assert [g.name for g in plan.groups] == ["all", "pair 0-1"] and plan.domain_basis == "host"
