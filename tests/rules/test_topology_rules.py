"""Each topology rule on a machine built to trigger it, and on one built not to."""

from __future__ import annotations

import dataclasses

import pytest
from builders import cube_mesh, machine, nvswitch8, pairs, pcie, split_4_4

from topoaudit.model.finding import Severity
from topoaudit.model.network import parse_nics
from topoaudit.model.report import AuditOptions, SourceInfo
from topoaudit.pipeline import analyze

SRC = SourceInfo("test", "builder")


def codes(report):  # type: ignore[no-untyped-def]
    return {f.code: f for f in report.findings}


def test_healthy_nvswitch_box_passes() -> None:
    r = analyze(machine(8, nvswitch8, name="NVIDIA H100 80GB HBM3"), source=SRC)
    assert r.findings == () and r.gate.verdict == "pass" and r.gate.exit_code == 0


def test_split_sxm_box_fails_because_the_model_ships_as_one_domain() -> None:
    r = analyze(machine(8, lambda i, j: "NV18" if i // 4 == j // 4 else "SYS", name="NVIDIA H200"), source=SRC)
    f = codes(r)["nvlink-split-domain"]
    assert f.severity == Severity.FAIL
    assert f.evidence["domains"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert r.gate.exit_code == 1 and r.gate.verdict == "fail"


def test_split_bridged_box_is_info_by_design_but_tp8_fails() -> None:
    m = machine(8, split_4_4, name="NVIDIA H200 NVL")
    r = analyze(m, source=SRC)
    assert codes(r)["nvlink-split-domain"].severity == Severity.INFO
    assert r.gate.exit_code == 0
    r8 = analyze(m, source=SRC, options=AuditOptions(tp=8))
    assert codes(r8)["tp-group-crosses-domain"].severity == Severity.FAIL
    assert r8.gate.exit_code == 1
    assert analyze(m, source=SRC, options=AuditOptions(tp=4)).gate.exit_code == 0


def test_split_unknown_model_warns() -> None:
    r = analyze(machine(8, split_4_4), source=SRC)
    assert codes(r)["nvlink-split-domain"].severity == Severity.WARN
    assert "model-unknown" in codes(r)


def test_pairs_are_split_domains_and_one_weak_pair_is_degraded() -> None:
    weak = machine(8, lambda i, j: "NV6" if (i, j) == (4, 5) else pairs(i, j), name="NVIDIA H100 NVL")
    f = codes(analyze(weak, source=SRC))["nvlink-degraded"]
    assert f.severity == Severity.FAIL
    assert f.evidence["pairs"] == [{"gpus": [4, 5], "nvlinks": 6}] and f.evidence["expected_nvlinks"] == 12


def test_link_down_inside_nvswitch_domain_is_degraded() -> None:
    m = machine(8, lambda i, j: "NV16" if (i, j) == (2, 6) else "NV18")
    f = codes(analyze(m, source=SRC))["nvlink-degraded"]
    assert f.evidence["pairs"] == [{"gpus": [2, 6], "nvlinks": 16}]


def test_catalog_flags_uniformly_low_links_on_nvswitch_model() -> None:
    m = machine(8, lambda i, j: "NV12", name="NVIDIA H100 80GB HBM3")
    f = codes(analyze(m, source=SRC))["nvlink-degraded"]
    assert f.evidence["expected_nvlinks"] == 18 and len(f.evidence["pairs"]) == 28


def test_partially_seated_bridge_nv3() -> None:
    f = codes(analyze(machine(2, lambda i, j: "NV3"), source=SRC))["nvlink-degraded"]
    assert f.severity == Severity.WARN and f.evidence["pairs"] == [{"gpus": [0, 1], "nvlinks": 3}]


def test_cube_mesh_is_partial_by_design_and_not_degraded() -> None:
    r = analyze(machine(8, cube_mesh, name="Tesla V100-SXM2-32GB"), source=SRC)
    c = codes(r)
    assert c["nvlink-partial-mesh"].severity == Severity.INFO
    assert [0, 5] in c["nvlink-partial-mesh"].evidence["pairs_without_nvlink"]
    assert "nvlink-degraded" not in c
    unknown = codes(analyze(machine(8, cube_mesh), source=SRC))  # no model: the links show a DGX-1 cube-mesh
    assert unknown["nvlink-partial-mesh"].severity == Severity.INFO


@pytest.mark.parametrize(
    ("name", "severity"),
    [("NVIDIA L4", Severity.INFO), ("NVIDIA H100 80GB HBM3", Severity.FAIL), (None, Severity.WARN)],
)
def test_nvlink_absent_severity_follows_the_model(name: str | None, severity: Severity) -> None:
    f = codes(analyze(machine(8, pcie, name=name), source=SRC))["nvlink-absent"]
    assert f.severity == severity and f.evidence["slowest_path"] == "SYS"


ACROSS_NODES = AuditOptions(nics=parse_nics("8x400"))  # --nics: the box is judged for runs across nodes


def test_nic_not_local() -> None:
    local = machine(4, nvswitch8, nics={"NIC0": lambda i: "PIX" if i < 2 else "SYS", "NIC1": lambda i: "SYS"})
    f = codes(analyze(local, source=SRC, options=ACROSS_NODES))["nic-not-local"]
    assert f.evidence["gpus"] == [2, 3] and f.severity == Severity.WARN
    assert "--nics asks for runs across nodes" in f.message
    fine = machine(2, nvswitch8, nics={"NIC0": lambda i: "PXB"})
    assert "nic-not-local" not in codes(analyze(fine, source=SRC))


def test_gpus_that_reach_a_nic_through_an_nvlink_peer_are_the_design() -> None:
    """NVIDIA/nccl#1357 shape: 8 NVSwitch GPUs, a NIC beside every other GPU. NCCL's PXN sends the others' traffic
    over NVLink to the GPU beside a NIC, so it informs and names the relays."""
    every_other = {f"NIC{k}": (lambda i, k=k: "PIX" if i == 2 * k else "SYS") for k in range(4)}
    f = codes(analyze(machine(8, nvswitch8, nics=every_other), source=SRC))["nic-not-local"]
    assert f.severity == Severity.INFO and f.evidence["gpus"] == [1, 3, 5, 7]
    assert "NCCL's PXN relays their network traffic over NVLink to a GPU with a NIC at PIX/PXB: GPU1 via GPU0," in (
        f.message
    )


@pytest.mark.parametrize(
    ("build", "nics"),
    [
        (pcie, {f"NIC{k}": (lambda i, k=k: "PIX" if i == 2 * k else "SYS") for k in range(4)}),  # no NVLink to relay
        (nvswitch8, {"NIC0": lambda i: "PIX" if i == 0 else "SYS", "NIC1": lambda i: "SYS"}),  # one NIC for eight
    ],
)
def test_no_nvlink_peer_or_one_nic_for_the_box_still_warns(build: object, nics: dict[str, object]) -> None:
    box = machine(8, build, nics=nics)  # type: ignore[arg-type]
    f = codes(analyze(box, source=SRC, options=ACROSS_NODES))["nic-not-local"]
    assert f.severity == Severity.WARN and "PXN" not in f.message


def test_a_box_judged_for_runs_inside_it_is_informed_of_its_nics_not_warned() -> None:
    """Tensor parallelism inside one box never touches its NICs: a topo -m whose GPUs sit far from them (vLLM's and
    SGLang's collect_env on 8-GPU boxes, threads that concluded the box was fine) informs, and says what would judge
    it."""
    box = machine(8, nvswitch8, nics={"NIC0": lambda i: "PIX" if i == 0 else "SYS", "NIC1": lambda i: "SYS"})
    report = analyze(box, source=SRC)
    f = codes(report)["nic-not-local"]
    assert f.severity == Severity.INFO and "runs across nodes only" in f.message and "--nics" in f.message
    assert report.gate.verdict == "pass"


def test_vm_flattened_pcie_is_called_out() -> None:
    m = machine(4, nvswitch8, nics={f"NIC{k}": (lambda i: "PHB") for k in range(8)})
    f = codes(analyze(m, source=SRC))["nic-not-local"]
    assert "VM" in f.message and len(f.evidence["gpus"]) == 4


def test_nics_named_by_their_device_are_read_by_their_own_paths() -> None:
    """NVIDIA/nccl#634's topo -m names its NICs mlx5_0..3 and puts them at NODE/SYS: the finding said "every
    GPU-NIC path is PHB: a VM may be hiding the PCIe tree", read from no path at all."""
    m = machine(4, nvswitch8, nics={f"mlx5_{k}": (lambda i: "NODE" if i < 2 else "SYS") for k in range(4)})
    f = codes(analyze(m, source=SRC))["nic-not-local"]
    assert "VM" not in f.message and "crosses a host bridge or socket" in f.message
    phb = machine(4, nvswitch8, nics={f"mlx5_{k}": (lambda i: "PHB") for k in range(4)})
    assert "VM" in codes(analyze(phb, source=SRC))["nic-not-local"].message


def test_expectations() -> None:
    m = machine(8, split_4_4)
    r = analyze(m, source=SRC, options=AuditOptions(expect_gpus=8, expect_domain=8))
    (f,) = [f for f in r.findings if f.code == "expectation-not-met"]
    assert f.evidence["largest_domain"] == 4 and r.gate.exit_code == 1
    r2 = analyze(m, source=SRC, options=AuditOptions(expect_gpus=4))
    assert [f.evidence["found_gpus"] for f in r2.findings if f.code == "expectation-not-met"] == [8]


def test_fail_on_warn_turns_warnings_into_exit_1() -> None:
    m = machine(8, split_4_4)
    assert analyze(m, source=SRC).gate.exit_code == 0
    assert analyze(m, source=SRC, options=AuditOptions(fail_on=Severity.WARN)).gate.exit_code == 1


def test_strict_turns_an_incomplete_audit_into_exit_3() -> None:
    from topoaudit.model.report import InputIssue
    from topoaudit.model.values import Failed

    m = machine(8, nvswitch8, name="NVIDIA H100 80GB HBM3")
    issue = (InputIssue(4, "recovered", "cell restored from its mirror"),)
    assert analyze(m, source=SRC, input_issues=issue).gate.exit_code == 0
    strict = analyze(m, source=SRC, input_issues=issue, options=AuditOptions(strict=True))
    assert strict.gate.exit_code == 3 and "input-recovered" in codes(strict)
    lost = dataclasses.replace(
        m, gpus=(dataclasses.replace(m.gpus[0], status=Failed("nvml", "GPU_IS_LOST")), *m.gpus[1:])
    )
    judged = analyze(lost, source=SRC, options=AuditOptions(strict=True))
    # a lost GPU is a fault first (exit 1 outranks 3), and the audit is marked incomplete
    assert judged.gate.exit_code == 1 and judged.gate.incomplete
    assert codes(judged)["gpu-lost"].evidence == {"gpus": [0], "reasons": {"0": "GPU_IS_LOST"}}
    assert "nvlink-degraded" not in codes(judged)


def test_no_link_facts_skips_instead_of_claiming_no_nvlink() -> None:
    from topoaudit.model.machine import Gpu, Machine

    m = Machine("nccl-tests", tuple(Gpu(index=i, name="NVIDIA H100 80GB HBM3") for i in range(8)))
    r = analyze(m, source=SRC)
    assert "nvlink-absent" not in codes(r)
    assert [s.rule for s in r.skipped] == ["nvlink-absent"]
    assert r.gate.exit_code == 0 and analyze(m, source=SRC, options=AuditOptions(strict=True)).gate.exit_code == 3


def test_a_source_without_link_facts_claims_no_topology() -> None:
    from topoaudit.model.machine import Gpu, Machine
    from topoaudit.render.common import summary

    m = Machine("nccl-tests", tuple(Gpu(index=i, name="NVIDIA H100 80GB HBM3") for i in range(8)))
    r = analyze(m, source=SRC, options=AuditOptions(tp=8))
    assert {d.build for d in r.domains} == {"unknown"}
    assert r.placements == () and r.bottlenecks == ()
    assert {s.rule for s in r.skipped} == {"nvlink-absent", "tp-group-crosses-domain"}
    assert "topology unknown" in summary(r) and "no NVLink" not in summary(r)


def test_bandwidth_figures_read_at_every_scale() -> None:
    from topoaudit.render.common import gbps

    assert [gbps(v) for v in (367.61, 24.83, 0.5224)] == ["368", "24.8", "0.522"]


@pytest.mark.parametrize("weak", [(0, 1), (2, 3)], ids=["first-pair-weak", "second-pair-weak"])
def test_four_gpu_bridged_box_of_unknown_model_flags_its_weak_pair(weak: tuple[int, int]) -> None:
    strong = (2, 3) if weak == (0, 1) else (0, 1)
    cells = {weak: "NV6", strong: "NV12"}
    r = analyze(machine(4, lambda i, j: cells.get((i, j), "SYS")), source=SRC)
    c = codes(r)
    assert "model-unknown" in c
    f = c["nvlink-degraded"]
    assert f.evidence["pairs"] == [{"gpus": list(weak), "nvlinks": 6}]
    assert f.evidence["expected_nvlinks"] == 12
    assert f"GPU{weak[0]}-GPU{weak[1]} NV6" in f.message
    assert r.gate.verdict == "fail"


def test_links_whose_path_cannot_be_read_skip_nvlink_absent_instead_of_calling_the_box_unlinked() -> None:
    """Another vendor's all-to-all links ('HT') are links the audit cannot read, not proof of no NVLink."""
    r = analyze(machine(8, lambda i, j: "HT"), source=SRC)
    assert "nvlink-absent" not in codes(r)
    assert [s.rule for s in r.skipped] == ["nvlink-absent"] and "HT" in r.skipped[0].reason
    assert r.gate.verdict == "pass" and r.gate.incomplete
    assert analyze(machine(8, lambda i, j: "HT"), source=SRC, options=AuditOptions(strict=True)).gate.exit_code == 3
    mixed = analyze(machine(4, lambda i, j: "HT" if (i, j) == (0, 1) else "SYS"), source=SRC)
    assert codes(mixed)["nvlink-absent"].severity == Severity.WARN  # the readable pairs still show no NVLink (no model)


def test_no_nvlink_and_no_model_warns_never_pass() -> None:
    """PCIe cards and an NVSwitch board whose links all came up dead paste the same matrix: without the model
    neither is PASS (a warning that TP runs over PCIe, naming the option that decides); with it, the first passes
    and the second fails."""
    unnamed = analyze(machine(8, pcie), source=SRC)
    assert unnamed.gate.verdict == "warn" and "--gpu-model" in codes(unnamed)["nvlink-absent"].message
    assert analyze(machine(8, pcie, name="NVIDIA L4"), source=SRC).gate.verdict == "pass"
    assert analyze(machine(8, pcie, name="NVIDIA H100 80GB HBM3"), source=SRC).gate.verdict == "fail"


def test_one_rank_kept_of_a_run_s_log_is_not_a_one_gpu_box() -> None:
    """A TP=2 run's log whose paste kept rank 1's lines names one GPU: the box is not known to have one, so TP=2 is
    not judged to cross domains; a capture of a box with one GPU still is."""
    one = machine(1, pcie)
    from_log = dataclasses.replace(one, source="nccl-log")
    options = AuditOptions(tp=2)
    logged = analyze(from_log, source=SourceInfo("nccl-log", "paste.txt"), options=options)
    assert "tp-group-crosses-domain" not in codes(logged)
    assert [s.rule for s in logged.skipped if s.rule == "tp-group-crosses-domain"] == ["tp-group-crosses-domain"]
    boxed = analyze(one, source=SRC, options=options)
    assert codes(boxed)["tp-group-crosses-domain"].severity == Severity.FAIL


def test_a_matrix_showing_one_gpus_nic_paths_says_how_few_it_judged() -> None:
    """SGLang's check_env prints `topo -m` cut after GPU0's row: "1 of 8 GPUs" has no local NIC, of the one shown."""
    full = machine(8, nvswitch8, nics={"NIC0": lambda i: "PHB", "NIC1": lambda i: "SYS"})
    cut = dataclasses.replace(full, links=tuple(lk for lk in full.links if lk.a == "GPU0" or lk.b.startswith("GPU")))
    f = codes(analyze(cut, source=SRC))["nic-not-local"]
    assert f.evidence["gpus"] == [0]
    assert f.message.startswith("1 of 8 GPUs") and "the input shows the NIC paths of 1 of the 8 GPUs" in f.message


def test_a_tp_group_spanning_whole_boxes_is_judged_by_this_box_s_share() -> None:
    """sgl-project/sglang#13973: TP=24 over three 8-GPU boxes leaves each box by design; a box whose eight GPUs share
    one NVSwitch domain holds its share on NVLink (informs), a box split in two does not (fails)."""
    whole = codes(analyze(machine(8, nvswitch8), source=SRC, options=AuditOptions(tp=24)))["tp-group-crosses-domain"]
    assert whole.severity == Severity.INFO and "spans 3 boxes of 8 GPUs by design" in whole.message
    split = codes(analyze(machine(8, split_4_4), source=SRC, options=AuditOptions(tp=16)))["tp-group-crosses-domain"]
    assert split.severity == Severity.FAIL
    uneven = codes(analyze(machine(8, nvswitch8), source=SRC, options=AuditOptions(tp=12)))["tp-group-crosses-domain"]
    assert uneven.severity == Severity.FAIL  # 12 GPUs do not divide into whole 8-GPU boxes
