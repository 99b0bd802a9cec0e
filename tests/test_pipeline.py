"""One pass: every fact goes into ``analyze`` and the rules, the bench judge, the plan's finding, the policy and
the gate run once over all of them; a loader only loads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from builders import machine, nvswitch8, split_4_4

from topoaudit.judge.policy import parse_policy
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow
from topoaudit.model.finding import Severity
from topoaudit.model.plan import DeployPlan, PlanRequest
from topoaudit.model.policy import PolicyOutcome
from topoaudit.model.report import AuditOptions, SourceInfo, report_to_dict
from topoaudit.model.values import Unsupported
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path

SRC = SourceInfo("test", "one-pass")
NCCL_DIR = Path(__file__).parent / "fixtures" / "nccltests"
NCCL_LOG = NCCL_DIR / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"


def _bench(plateau: float, wrong: int = 0) -> BenchResult:
    rows = tuple(
        BenchRow(size_bytes=s, count=s // 4, dtype="float32", time_us=1.0, algbw_gbps=bw, busbw_gbps=bw, wrong=wrong)
        for s, bw in ((2**20, plateau / 4), (2**30, plateau))
    )
    ranks = tuple(range(8))
    group = BenchGroup(
        "all", "all", ranks, tuple(f"h:cuda{i}" for i in ranks), rows,
        plateau_busbw_gbps=plateau, plateau_size_bytes=2**30, latency_p50_us=20.0,
    )  # fmt: skip
    return BenchResult("topoaudit", "all_reduce", "nccl", 8, ("h",), (), (group,), "complete")


def _codes(findings: tuple) -> list[str]:  # type: ignore[type-arg]
    return [f.code for f in findings]


def test_the_nccl_tests_loader_only_loads_and_analyze_judges_the_bench() -> None:
    loaded = load_path(str(NCCL_LOG))
    assert "findings" not in {f.name for f in dataclasses.fields(loaded)} and isinstance(loaded.bench, BenchResult)
    policy = parse_policy("[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 300\n", "fleet.toml")
    report = analyze(loaded.machine, source=loaded.source, bench=loaded.bench, options=AuditOptions(policy=policy))
    assert isinstance(report.bench, BenchResult)  # the same sweep, with each group's expected figure filled in
    assert report.bench.groups[0].rows == loaded.bench.groups[0].rows
    assert isinstance(report.bench.groups[0].expected_busbw_gbps, float | Unsupported)
    assert [f for f in report.findings if "below the 300 GB/s" in f.message]
    assert report.gate.exit_code == 1


def test_bench_findings_and_policy_expectations_are_judged_once() -> None:
    text = "[expect]\ngpus = 8\n[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 400\n"
    policy = parse_policy(text, "fleet.toml", default_name="fleet")
    report = analyze(
        machine(8, nvswitch8, name="NVIDIA H200"),
        source=SRC,
        options=AuditOptions(policy=policy),
        bench=_bench(plateau=300.0, wrong=3),
        expect_busbw_gbps=350.0,
    )
    codes = _codes(report.findings)
    assert codes.count("bench-data-corruption") == 1
    assert codes.count("expectation-not-met") == 1  # the busbw floor; 8 GPUs is met
    assert len([f for f in report.findings if "--expect-busbw 350" in f.message]) == 1
    assert isinstance(report.policy, PolicyOutcome) and report.policy.met == ("8 GPUs",)
    assert report.gate.exit_code == 1 and "policy 'fleet'" in report.gate.reason


def test_findings_are_worst_first_across_every_source() -> None:
    report = analyze(
        machine(8, split_4_4),  # no model: model-unknown (warn); the split itself is info
        source=SRC,
        bench=_bench(plateau=300.0, wrong=1),  # corruption: fail
    )
    ranks = [f.severity.rank for f in report.findings]
    assert ranks == sorted(ranks, reverse=True) and report.findings[0].severity == Severity.FAIL


def test_the_plan_and_its_finding_come_from_the_same_pass() -> None:
    box = machine(8, split_4_4, name="NVIDIA H200 NVL")
    request = PlanRequest(params_b=1600, precision="int4")
    report = analyze(box, source=SRC, plan_request=request)
    assert isinstance(report.plan, DeployPlan) and not report.plan.fits_one_domain
    assert "tp-group-crosses-domain" in _codes(report.findings) and report.gate.exit_code == 1
    ignore = "[[ignore]]\ncode = 'tp-group-crosses-domain'\nreason = 'planned as two replicas'\n"
    waived = analyze(
        box, source=SRC, plan_request=request, options=AuditOptions(policy=parse_policy(ignore, "fleet.toml"))
    )
    assert "tp-group-crosses-domain" not in _codes(waived.findings) and waived.gate.exit_code == 0
    assert isinstance(waived.policy, PolicyOutcome) and waived.policy.ignored[0].reason == "planned as two replicas"


def test_no_plan_without_a_request() -> None:
    report = analyze(machine(8, nvswitch8, name="NVIDIA H200"), source=SRC)
    assert not isinstance(report.plan, DeployPlan) and report.gate.exit_code == 0


def test_a_family_name_for_the_plan_means_the_audited_cards_variant() -> None:
    box = machine(8, split_4_4, name="NVIDIA H200 NVL")
    family = analyze(box, source=SRC, plan_request=PlanRequest(params_b=744, precision="int4", gpu="H200"))
    assert isinstance(family.plan, DeployPlan) and family.plan.gpu_key == "H200-NVL"  # not H200 SXM
    other = analyze(box, source=SRC, plan_request=PlanRequest(params_b=744, precision="int4", gpu="H200 SXM"))
    assert isinstance(other.plan, DeployPlan) and other.plan.gpu_key == "H200-SXM"  # named on purpose


def test_the_plans_card_names_a_box_whose_source_does_not() -> None:
    box = machine(8, split_4_4)  # a pasted topo -m names no model
    assert "model-unknown" in _codes(analyze(box, source=SRC).findings)
    planned = analyze(box, source=SRC, plan_request=PlanRequest(params_b=744, precision="int4", gpu="H200 NVL"))
    assert planned.catalog_entry == "H200-NVL" and "model-unknown" not in _codes(planned.findings)
    assert isinstance(planned.plan, DeployPlan) and planned.plan.gpu_key == "H200-NVL"


def test_an_unnamed_model_reads_cleanly_in_every_field() -> None:
    report = analyze(machine(8, split_4_4), source=SRC)
    doc = json.dumps(report_to_dict(report))
    assert "no catalog entry for unsupported" not in doc and "((" not in doc and "))" not in doc
    assert report.catalog_entry == Unsupported("catalog", "not looked up: the GPU model is unknown")
    [unknown] = [f for f in report.findings if f.code == "model-unknown"]
    assert unknown.evidence == {"gpu_model_reason": "the source does not name the GPU model; pass --gpu-model"}
    named = analyze(machine(8, split_4_4, name="NVIDIA Z900"), source=SRC)
    assert named.catalog_entry == Unsupported("catalog", "no catalog entry for 'NVIDIA Z900'")


def test_gpu_model_names_the_card_the_plan_sizes_on() -> None:
    box = machine(8, split_4_4)  # a pasted topo -m names no model
    report = analyze(
        box,
        source=SRC,
        options=AuditOptions(gpu_model="NVIDIA H200 NVL"),
        plan_request=PlanRequest(params_b=744, precision="int4"),
    )
    assert isinstance(report.plan, DeployPlan) and report.plan.gpu_key == report.catalog_entry == "H200-NVL"
