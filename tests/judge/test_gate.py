"""The gate on its own: which verdict the findings give, and which exit code that verdict and the audit's
completeness give under ``--fail-on`` and ``--strict``. A CI job reads only the exit code, so each row of
the exit-code table of docs/commands.md is pinned here against the enum in topoaudit/exitcodes.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import machine, nvswitch8
from cli_runner import Run

from topoaudit.exitcodes import ExitCode
from topoaudit.judge.coverage import Coverage
from topoaudit.judge.gate import decide_gate
from topoaudit.model.finding import Finding, Severity, Skipped
from topoaudit.model.machine import Gpu, Machine
from topoaudit.model.policy import PolicyOutcome
from topoaudit.model.report import NOT_REQUESTED, AuditOptions, Gate, InputIssue
from topoaudit.model.values import Failed
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path

BOX = machine(2, nvswitch8)
TOPO = Path(__file__).parents[1] / "fixtures" / "topo"


def found(*severities: Severity) -> tuple[Finding, ...]:
    return tuple(Finding(f"code-{s.value}-{i}", s, f"a {s.value} finding.") for i, s in enumerate(severities))


JUDGED = Coverage(("the links between 2 GPUs (test)",))


def gate(
    findings: tuple[Finding, ...] = (),
    *,
    skipped: tuple[Skipped, ...] = (),
    issues: tuple[InputIssue, ...] = (),
    box: Machine = BOX,
    policy: PolicyOutcome | None = None,
    covered: Coverage = JUDGED,
    **options: object,
) -> Gate:
    return decide_gate(
        findings,
        skipped,
        issues,
        box,
        AuditOptions(**options),  # type: ignore[arg-type]
        NOT_REQUESTED if policy is None else policy,
        covered,
    )


NOTHING = Coverage((), "the nccl-log input describes no links between GPUs", "paste `nvidia-smi topo -m` of the box")


@pytest.mark.parametrize(
    ("severities", "verdict"),
    [
        ((), "pass"),
        ((Severity.INFO,), "pass"),
        ((Severity.INFO, Severity.INFO, Severity.INFO), "pass"),
        ((Severity.INFO, Severity.WARN), "warn"),
        ((Severity.WARN, Severity.INFO, Severity.FAIL), "fail"),
        ((Severity.FAIL,), "fail"),
    ],
    ids=["none", "one-info", "only-info", "worst-warn", "worst-fail-among-others", "one-fail"],
)
def test_the_verdict_is_the_worst_severity_and_info_only_passes(severities: tuple[Severity, ...], verdict: str) -> None:
    assert gate(found(*severities)).verdict == verdict


@pytest.mark.parametrize(
    ("worst", "fail_on", "exit_code"),
    [
        (None, Severity.INFO, ExitCode.OK),
        (Severity.INFO, Severity.FAIL, ExitCode.OK),
        (Severity.WARN, Severity.FAIL, ExitCode.OK),
        (Severity.FAIL, Severity.FAIL, ExitCode.FINDINGS),
        (Severity.INFO, Severity.WARN, ExitCode.OK),
        (Severity.WARN, Severity.WARN, ExitCode.FINDINGS),
        (Severity.FAIL, Severity.WARN, ExitCode.FINDINGS),
        (Severity.INFO, Severity.INFO, ExitCode.FINDINGS),
        (Severity.WARN, Severity.INFO, ExitCode.FINDINGS),
    ],
)
def test_fail_on_is_a_threshold_at_or_above_which_the_exit_code_is_findings(
    worst: Severity | None, fail_on: Severity, exit_code: ExitCode
) -> None:
    g = gate(found(worst) if worst else (), fail_on=fail_on)
    assert g.exit_code == exit_code
    if exit_code == ExitCode.FINDINGS:
        assert f"at or above '{fail_on}'" in g.reason and f"code-{worst}-0" in g.reason


def test_the_verdict_does_not_move_with_fail_on() -> None:
    """--fail-on changes what a CI job stops on, not what the audit found: an info-only report is a PASS
    that exits 1 under --fail-on info."""
    g = gate(found(Severity.INFO), fail_on=Severity.INFO)
    assert (g.verdict, g.exit_code) == ("pass", ExitCode.FINDINGS)


def test_the_reason_counts_the_findings_at_or_above_the_threshold_and_names_their_codes_once() -> None:
    twice = (*found(Severity.WARN), *found(Severity.WARN), *found(Severity.INFO))
    g = gate(twice, fail_on=Severity.WARN)
    assert g.reason == "2 finding(s) at or above 'warn': code-warn-0"


SKIPPED = (Skipped("nvlink-absent", "the nccl-tests source describes no GPU-to-GPU links"),)
RECOVERED = (InputIssue(15, "recovered", "row truncated"),)
IGNORED = (InputIssue(3, "ignored", "unknown legend line"),)
LOST = Machine("test", (Gpu(index=0), Gpu(index=1, status=Failed("nvml", "GPU_IS_LOST"))), (), BOX.links)


@pytest.mark.parametrize(
    ("what", "kwargs"),
    [("skipped", {"skipped": SKIPPED}), ("recovered", {"issues": RECOVERED}), ("lost", {"box": LOST})],
)
def test_an_incomplete_audit_exits_0_and_exits_3_only_under_strict(what: str, kwargs: dict[str, object]) -> None:
    relaxed = gate(found(Severity.INFO), **kwargs)  # type: ignore[arg-type]
    assert relaxed.incomplete and relaxed.verdict == "pass" and relaxed.exit_code == ExitCode.OK
    strict = gate(found(Severity.INFO), strict=True, **kwargs)  # type: ignore[arg-type]
    assert strict.incomplete and strict.verdict == "pass" and strict.exit_code == ExitCode.INCOMPLETE
    assert "--strict" in strict.reason
    assert ("1 rule(s) skipped" in strict.reason) == (what == "skipped")


def test_an_ignored_input_line_does_not_make_the_audit_incomplete() -> None:
    g = gate((), issues=IGNORED, strict=True)
    assert not g.incomplete and g.exit_code == ExitCode.OK


def test_findings_at_the_threshold_outrank_an_incomplete_audit_under_strict() -> None:
    """A bad box and a broken tool are separate answers; when both hold, the bad box is the one reported."""
    g = gate(found(Severity.FAIL), skipped=SKIPPED, strict=True)
    assert g.incomplete and g.exit_code == ExitCode.FINDINGS


def test_a_policy_adds_its_summary_to_the_reason_without_changing_the_exit_code() -> None:
    outcome = PolicyOutcome("hgx-8gpu", "builtin:hgx-8gpu", "0" * 64, not_met=("8 GPUs expected, 2 found",))
    plain, judged = gate(found(Severity.WARN)), gate(found(Severity.WARN), policy=outcome)
    assert judged.exit_code == plain.exit_code == ExitCode.OK and judged.verdict == "warn"
    assert judged.reason == f"{plain.reason} (policy 'hgx-8gpu', 1 expectation(s) not met)"


@pytest.mark.parametrize(
    "severities", [(), (Severity.INFO,), (Severity.INFO, Severity.INFO)], ids=["none", "one-info", "only-info"]
)
def test_nothing_examined_and_nothing_found_is_not_judged_exit_0_and_3_under_strict(
    severities: tuple[Severity, ...],
) -> None:
    """A PASS says something was checked and held; info findings alone make no verdict."""
    relaxed = gate(found(*severities), covered=NOTHING)
    assert (relaxed.verdict, relaxed.exit_code, relaxed.judged) == ("not judged", ExitCode.OK, ())
    assert relaxed.reason == (
        "nothing the gate checks could be judged: the nccl-log input describes no links between GPUs; "
        "to judge it, paste `nvidia-smi topo -m` of the box"
    )
    assert relaxed.to_judge == "paste `nvidia-smi topo -m` of the box"
    strict = gate(found(*severities), covered=NOTHING, strict=True)
    assert (strict.verdict, strict.exit_code) == ("not judged", ExitCode.INCOMPLETE)


@pytest.mark.parametrize(("worst", "code"), [(Severity.WARN, ExitCode.OK), (Severity.FAIL, ExitCode.FINDINGS)])
def test_a_warn_or_fail_finding_always_judges(worst: Severity, code: ExitCode) -> None:
    g = gate(found(worst), covered=NOTHING)
    assert (g.verdict, g.exit_code, g.to_judge) == (worst.value, code, "")


def test_a_pass_says_what_it_covered() -> None:
    g = gate((), covered=Coverage(("the links between 8 GPUs (topo-matrix)",)))
    assert (g.verdict, g.judged, g.to_judge) == ("pass", ("the links between 8 GPUs (topo-matrix)",), "")


def test_the_gate_exit_codes_are_the_enums_values() -> None:
    """The docs' exit-code table is the enum's; the gate answers only with its first three codes."""
    assert (ExitCode.OK, ExitCode.FINDINGS, ExitCode.INCOMPLETE) == (0, 1, 3)


def _real(name: str, **options: object):  # type: ignore[no-untyped-def]
    loaded = load_path(str(TOPO / name))
    return analyze(loaded.machine, source=loaded.source, input_issues=loaded.issues, options=AuditOptions(**options))  # type: ignore[arg-type]


def test_a_real_box_whose_only_finding_is_info_passes() -> None:
    """An 8x RTX 4090 server has no NVLink, which is what the model is: one info finding, verdict PASS."""
    report = _real("topo-8x4090-pcie-sys-nics-1.txt", gpu_model="NVIDIA GeForce RTX 4090")
    assert {f.severity for f in report.findings} == {Severity.INFO}
    assert "nvlink-absent" in {f.code for f in report.findings}
    assert (report.gate.verdict, report.gate.exit_code) == ("pass", ExitCode.OK)


def test_an_info_only_report_says_pass_on_the_command_line_and_in_json(run: Run) -> None:
    path = str(TOPO / "topo-8x4090-pcie-sys-nics-1.txt")
    code, out, _ = run("analyze", path, "--gpu-model", "NVIDIA GeForce RTX 4090", "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.OK and data["gate"]["verdict"] == "pass"
    assert {f["severity"] for f in data["findings"]} == {"info"}
    code, _, _ = run("analyze", path, "--gpu-model", "NVIDIA GeForce RTX 4090", "--fail-on", "info")
    assert code == ExitCode.FINDINGS
    code, _, _ = run("analyze", path, "--gpu-model", "NVIDIA GeForce RTX 4090", "--strict")
    assert code == ExitCode.OK


def test_a_recovered_real_paste_exits_3_under_strict_on_the_command_line(run: Run) -> None:
    """A terminal cut the CPU Affinity column: GPU facts recovered in part, so --strict says the audit is incomplete;
    NIC rows cut short lose no GPU fact and stay exit 0 (test_real_captures)."""
    path = str(TOPO / "topo-h800-8gpu-nv8-terminal-truncated-cols-1.txt")
    assert run("analyze", path)[0] == ExitCode.OK
    assert run("analyze", path, "--strict")[0] == ExitCode.INCOMPLETE
    nic_rows_cut = str(TOPO / "topo-dgx-h100-talos-nicrows-truncated-1.txt")
    assert run("analyze", nic_rows_cut, "--strict")[0] == ExitCode.OK
