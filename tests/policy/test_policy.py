"""Policies: the gate, configurable. Mistakes are named with their line (exit 4); expectations, overrides
and ignores change findings and exit code the way the policy says; the report records which policy judged it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from builders import machine, nvswitch8, pairs, split_4_4
from cli_runner import run_cli as run

from topoaudit.errors import ConfigError
from topoaudit.exitcodes import ExitCode
from topoaudit.judge.policy import builtin_policies, load_policy, parse_policy
from topoaudit.model.bench import BenchGroup, BenchResult, BenchRow
from topoaudit.model.finding import Severity
from topoaudit.model.machine import Gpu, Link, Machine, Nic, PathLevel
from topoaudit.model.network import parse_nics
from topoaudit.model.policy import Policy, PolicyOutcome
from topoaudit.model.report import AuditOptions, Report, SourceInfo, report_from_dict, report_to_dict
from topoaudit.pipeline import analyze

SRC = SourceInfo("test", "policy")


def policy(text: str) -> Policy:
    return parse_policy(text, "fleet.toml", default_name="fleet")


def judge(m: Machine, text: str, **options: object) -> Report:
    return analyze(m, source=SRC, options=AuditOptions(policy=policy(text), **options))  # type: ignore[arg-type]


def codes(report: Report) -> dict[str, list[Severity]]:
    out: dict[str, list[Severity]] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f.severity)
    return out


H100 = "NVIDIA H100 80GB HBM3"

# --- errors: the file and the line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[policy]\nname = 'x'\n[expect]\ngpus = 8\nbogus = 1\n", 5, "expect.bogus: unknown key"),
        ("[expectations]\ngpus = 8\n", 1, "expectations: unknown key"),
        ("[expect]\ngpus = 'eight'\n", 2, "expected an integer"),
        ("[expect]\ngpus = 0\n", 2, "expected an integer >= 1"),
        ("[expect]\ndomains = [4, 1]\n", 2, "expect.domains[1]"),
        ("[expect]\ngpu_model = 'NVIDIA Z900'\n", 2, "not in the hardware catalog"),
        ("[expect]\nnic_local = 'yes'\n", 2, "expected true or false"),
        ("[severity]\nnvlink-degraded = 'fatal'\n", 2, "expected one of info, warn, fail"),
        ("[severity]\n\nnvlink-degarded = 'warn'\n", 3, "unknown finding code 'nvlink-degarded'"),
        ("[[ignore]]\ncode = 'nic-not-local'\n", 1, "needs a code and a reason"),
        ("[[ignore]]\ncode = 'nic-not-local'\nreason = '  '\n", 3, "non-empty string"),
        (
            "[expect]\n[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 300\n\n[[expect.busbw]]\ngroup = 'all'\n"
            "size = 'huge'\nmin_gbps = 1\n",
            8,
            "expect.busbw[1].size: not a size",
        ),
        ("[[expect.busbw]]\nmin_gbps = 3\n", 1, "missing key 'group'"),
        ("[gate]\nfail_on = 'never'\n", 2, "gate.fail_on"),
        ("[expect\ngpus = 8\n", 1, "not valid TOML: Expected ']' at the end of a table declaration (column 8)"),
        ("[expect]\ngpus = 8\ngpus = 9\n", 3, "not valid TOML: Cannot overwrite a value (column 9)"),
        ("[policy]\nname = 'x\n", 2, "not valid TOML"),  # the string runs to the end of its line
        ("[expect]\ndomains = [8,\n", 2, "not valid TOML: Invalid value at the end of the file"),
        ('[policy]\ndescription = """open\n\n', 2, "not valid TOML: Unterminated string at the end of the file"),
    ],
)
def test_mistakes_name_the_file_and_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError, match=rf"^fleet\.toml:{line}: .*{re.escape(words)}") as exc:
        policy(text)
    assert exc.value.exit_code == ExitCode.UNUSABLE == 4
    assert "docs/" not in exc.value.hint and "built-in policies show the format" in exc.value.hint


def test_an_unknown_code_suggests_the_one_meant() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown finding code 'nvlink-degarded' \(did you mean 'nvlink-degraded'\?\)"
    ):
        policy("[severity]\nnvlink-degarded = 'warn'\n")


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("missing.toml", r"policy file .*missing\.toml does not exist$"),
        (".", r"policy .* is a directory, not a policy file$"),
    ],
)
def test_a_policy_file_that_cannot_be_read_is_one_sentence(tmp_path: Path, name: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as exc:
        load_policy(str(tmp_path / name))
    assert "Errno" not in str(exc.value) and exc.value.hint.startswith("built-in policies: builtin:")
    assert exc.value.exit_code == 4


def test_cli_reports_policy_errors_with_exit_4(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "fleet.toml"
    bad.write_text("[expect]\ngpus = 8\nmin_domian = 8\n")
    code, _, err = run(capsys, "analyze", "--example", "hgx-h100", "--policy", str(bad))
    assert code == 4 and f"{bad}:3: expect.min_domian: unknown key" in err and "docs/policy.md" not in err
    assert "built-in policies show the format" in err
    bad.write_text("[expect]\ngpus = 8\n[expect]\n")
    code, _, err = run(capsys, "analyze", "--example", "hgx-h100", "--policy", str(bad))
    assert code == 4 and f"{bad}:3: not valid TOML" in err and ":?:" not in err
    code, _, err = run(capsys, "analyze", "--example", "hgx-h100", "--policy", str(tmp_path / "missing.toml"))
    assert code == 4 and "missing.toml does not exist" in err and "Errno" not in err
    code, _, err = run(capsys, "analyze", "--example", "hgx-h100", "--policy", "builtin:nope")
    assert code == 4 and "builtin:hgx-8gpu" in err


# --- built-in policies ---------------------------------------------------------------------------------------


def test_builtin_policies_load_and_describe_themselves() -> None:
    names = builtin_policies()
    assert {"hgx-8gpu", "nvl72-tray", "bridged-workstation"} <= set(names)
    for name, description in names.items():
        loaded = load_policy(f"builtin:{name}")
        assert loaded.name == name and loaded.source == f"builtin:{name}" and description and len(loaded.sha256) == 64


@pytest.mark.parametrize(
    ("example", "builtin", "exit_code"),
    [
        ("hgx-h100", "hgx-8gpu", 0),
        ("h200-nvl-split", "hgx-8gpu", 1),  # two 4-GPU domains, and not an HGX model
        ("h100-nvl-pairs", "hgx-8gpu", 1),
        ("h100-nvl-pairs", "bridged-workstation", 0),  # pairs are by design there
        ("pcie-only", "bridged-workstation", 1),  # no bridge at all
        ("hgx-h100", "nvl72-tray", 1),
    ],
)
def test_builtin_policies_judge_the_examples(
    capsys: pytest.CaptureFixture[str], example: str, builtin: str, exit_code: int
) -> None:
    code, out, err = run(capsys, "analyze", "--example", example, "--policy", f"builtin:{builtin}", "--format", "json")
    doc = json.loads(out)
    assert code == exit_code == doc["gate"]["exit_code"]
    assert doc["policy"]["name"] == builtin and doc["policy"]["source"] == f"builtin:{builtin}"
    assert f"policy '{builtin}'" in doc["gate"]["reason"] and f"policy '{builtin}'" in err


def test_hgx_policy_on_a_split_box_says_what_was_expected() -> None:
    r = analyze(
        machine(8, split_4_4, name="NVIDIA H200 NVL"),
        source=SRC,
        options=AuditOptions(policy=load_policy("builtin:hgx-8gpu")),
    )
    messages = [f.message for f in r.findings if f.code == "expectation-not-met"]
    assert any("expected NVLink domains of 8, found 4 + 4" in m for m in messages)
    assert any("H200-NVL" in m for m in messages)
    split = next(f for f in r.findings if f.code == "nvlink-split-domain")
    assert split.severity == Severity.FAIL and "policy_severity_from" not in split.evidence
    assert r.gate.exit_code == ExitCode.FINDINGS
    assert isinstance(r.policy, PolicyOutcome)
    assert ("nvlink-split-domain", Severity.INFO, Severity.FAIL) in {
        (c.code, c.was, c.now) for c in r.policy.overridden
    }


# --- expectations ---------------------------------------------------------------------------------------------


def test_expectations_met_and_not_met() -> None:
    text = "[expect]\ngpus = 8\ngpu_model = ['H100-SXM', 'NVIDIA H200']\ndomains = [8]\nmin_domain = 8\n"
    good = judge(machine(8, nvswitch8, name=H100), text)
    assert good.gate.exit_code == 0 and "expectation-not-met" not in codes(good)
    assert isinstance(good.policy, PolicyOutcome) and len(good.policy.met) == 4 and good.policy.not_met == ()
    bad = judge(machine(4, pairs, name="NVIDIA A100 80GB PCIe"), text)
    assert codes(bad)["expectation-not-met"] == [Severity.FAIL] * 4 and bad.gate.exit_code == 1
    assert isinstance(bad.policy, PolicyOutcome) and len(bad.policy.not_met) == 4
    assert all(f.evidence["policy"] == "fleet" for f in bad.findings if f.code == "expectation-not-met")


def _nic_at(k: int):  # type: ignore[no-untyped-def]
    return lambda i: "PIX" if i == k else "SYS"


def test_nic_locality() -> None:
    text = "[expect]\nnic_local = true\n"
    near = {f"NIC{k}": _nic_at(k) for k in range(8)}
    assert judge(machine(8, nvswitch8, nics=near, name=H100), text).gate.exit_code == 0
    far = {"NIC0": lambda i: "PIX" if i < 4 else "SYS"}
    r = judge(machine(8, nvswitch8, nics=far, name=H100), text)
    f = next(f for f in r.findings if f.code == "expectation-not-met")
    assert f.evidence["gpus"] == [4, 5, 6, 7] and r.gate.exit_code == 1
    none = judge(machine(8, nvswitch8, name=H100), text)
    assert none.gate.exit_code == 0 and "NIC locality: the input names no NIC" in none.policy.not_checked  # type: ignore[union-attr]


# --- severity overrides, ignores, the gate ---------------------------------------------------------------------


def test_severity_override_decides_the_exit_code() -> None:
    m = machine(8, split_4_4, name="NVIDIA H200 NVL")  # split is info by design
    assert analyze(m, source=SRC).gate.exit_code == 0
    r = judge(m, "[severity]\nnvlink-split-domain = 'fail'\n")
    assert codes(r)["nvlink-split-domain"] == [Severity.FAIL] and r.gate.exit_code == 1
    change = r.policy.overridden[0]  # type: ignore[union-attr]
    assert (change.code, change.was, change.now, change.count) == (
        "nvlink-split-domain",
        Severity.INFO,
        Severity.FAIL,
        1,
    )
    softer = judge(
        machine(8, lambda i, j: "NV16" if (i, j) == (0, 1) else "NV18", name=H100),
        "[severity]\nnvlink-degraded = 'warn'\n",
    )
    assert (
        codes(softer)["nvlink-degraded"] == [Severity.WARN]
        and softer.gate.exit_code == 0
        and softer.gate.verdict == "warn"
    )


def test_ignored_findings_leave_the_gate_but_stay_in_the_report() -> None:
    m = machine(8, lambda i, j: "NV16" if (i, j) == (0, 1) else "NV18", name=H100)
    r = judge(m, "[[ignore]]\ncode = 'nvlink-degraded'\nreason = 'ticket INC-42 open, link replacement scheduled'\n")
    assert "nvlink-degraded" not in codes(r) and r.gate.exit_code == 0
    assert isinstance(r.policy, PolicyOutcome)
    [ignored] = r.policy.ignored
    assert ignored.finding.code == "nvlink-degraded" and ignored.reason.startswith("ticket INC-42")
    assert "ignored (nvlink-degraded: ticket INC-42" in r.gate.reason
    again = report_from_dict(json.loads(json.dumps(report_to_dict(r))))
    assert again == r  # the policy, its outcome and the ignored finding survive a saved report


def test_ignore_can_target_one_message() -> None:
    far = {"NIC0": lambda i: "PIX" if i < 4 else "SYS", "NIC1": lambda i: "SYS", "NIC2": lambda i: "SYS"}
    m = machine(8, nvswitch8, nics=far, name=H100)
    nics = parse_nics("8x400")  # judged for runs across nodes, where NIC placement warns
    miss = judge(m, "[[ignore]]\ncode = 'nic-not-local'\nmatch = 'GPUs {0-3}'\nreason = 'r'\n", nics=nics)
    hit = judge(m, "[[ignore]]\ncode = 'nic-not-local'\nmatch = 'GPUs {4-7}'\nreason = 'r'\n", nics=nics)
    assert "nic-not-local" in codes(miss) and "nic-not-local" not in codes(hit)
    assert miss.gate.verdict == "warn" and hit.gate.verdict == "pass"  # a warning: exit 0 either way
    assert miss.gate.exit_code == hit.gate.exit_code == ExitCode.OK


def test_fail_on_and_strict_from_the_policy_and_the_cli_wins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "strict.toml"
    path.write_text("[gate]\nfail_on = 'info'\n")
    code, _, _ = run(capsys, "analyze", "--example", "h200-nvl-split", "--policy", str(path))
    assert code == 1  # the info split now fails
    code, _, _ = run(capsys, "analyze", "--example", "h200-nvl-split", "--policy", str(path), "--fail-on", "fail")
    assert code == 0


# --- bench expectations (read guarded: absent -> not checked) ---------------------------------------------------


def _bench(plateau: float, latency: float = 20.0) -> BenchResult:
    rows = tuple(
        BenchRow(size_bytes=s, count=s // 4, dtype="float32", time_us=1.0, algbw_gbps=bw, busbw_gbps=bw, wrong=0)
        for s, bw in ((2**20, plateau / 4), (2**30, plateau))
    )
    ranks = tuple(range(8))
    group = BenchGroup(
        "all", "all", ranks, tuple(f"h:cuda{i}" for i in ranks), rows,
        plateau_busbw_gbps=plateau, plateau_size_bytes=2**30, latency_p50_us=latency,
    )  # fmt: skip
    pair = BenchGroup("pair 0-1", "pair", (0, 1), ("h:cuda0", "h:cuda1"), rows[:1], plateau_busbw_gbps=plateau / 4)
    return BenchResult("topoaudit", "all_reduce", "nccl", 8, ("h",), (), (group, pair), "complete")


BENCH_POLICY = (
    "[expect]\nmax_latency_us = 30\n[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 400\n"
    "[[expect.busbw]]\ngroup = 'all'\nsize = '1MiB'\nmin_gbps = 50\n[[expect.busbw]]\ngroup = 'pair'\nmin_gbps = 100\n"
)


def test_bench_expectations_wait_for_bench_results() -> None:
    r = judge(machine(8, nvswitch8, name="NVIDIA H200"), BENCH_POLICY)
    assert r.gate.exit_code == 0 and isinstance(r.policy, PolicyOutcome)
    assert len(r.policy.not_checked) == 4 and all("no bench results" in s for s in r.policy.not_checked)


def _with_bench(text: str, bench: BenchResult) -> Report:
    m = machine(8, nvswitch8, name="NVIDIA H200")
    return analyze(m, source=SRC, options=AuditOptions(policy=policy(text)), bench=bench)


def test_bench_expectations_judge_the_bench_results() -> None:
    slow = _with_bench(BENCH_POLICY, _bench(plateau=300.0, latency=45.0))
    messages = [f.message for f in slow.findings if f.code == "expectation-not-met"]
    assert any("busbw of all is 300 GB/s, below the 400 GB/s" in m for m in messages)
    assert any("busbw of pair 0-1 is 75 GB/s" in m for m in messages)
    assert any("latency of all is 45 us" in m for m in messages)
    assert not any("1 MiB" in m for m in messages)  # 75 >= 50 at 1 MiB
    assert len(messages) == 3 and slow.gate.exit_code == 1
    fast = _with_bench(BENCH_POLICY, _bench(plateau=450.0, latency=10.0))
    assert "expectation-not-met" not in codes(fast) and fast.gate.exit_code == 0


def test_catalog_floor_comes_from_the_model() -> None:
    text = "[expect]\nbusbw_catalog_floor = true\n"
    low = _with_bench(text, _bench(plateau=300.0))
    f = next(f for f in low.findings if f.code == "expectation-not-met")
    assert f.evidence["min_gbps"] == 331 and "catalog H200-SXM ring floor" in f.message
    assert _with_bench(text, _bench(plateau=360.0)).gate.exit_code == 0


def test_analyze_imports_nccl_tests_and_the_policy_sees_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = (
        Path(__file__).parents[1]
        / "fixtures"
        / "nccltests"
        / "nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt"
    )
    path = tmp_path / "fleet.toml"
    path.write_text("[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 300\n")
    code, out, _ = run(capsys, "analyze", str(log), "--policy", str(path), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and any("below the 300 GB/s" in f["message"] for f in doc["findings"])
    path.write_text("[[expect.busbw]]\ngroup = 'all'\nmin_gbps = 200\n")
    code, out, _ = run(capsys, "analyze", str(log), "--policy", str(path), "--format", "json")
    assert json.loads(out)["policy"]["met"] and code == json.loads(out)["gate"]["exit_code"] == 0


def test_report_without_policy_says_so() -> None:
    r = analyze(machine(2, lambda i, j: "NV4"), source=SRC)
    assert not isinstance(r.policy, PolicyOutcome) and report_to_dict(r)["policy"]["status"] == "unsupported"
    assert r.gate.exit_code == 0 and "policy" not in r.gate.reason


def test_nic_fixture_types_still_line_up() -> None:  # guards the hand-built machines above
    m = Machine("t", (Gpu(0),), (Nic("NIC0"),), (Link("GPU0", "NIC0", "PIX", PathLevel.PIX),))
    assert judge(m, "[expect]\nnic_local = true\n").policy.met == ("every GPU has a NIC at PIX/PXB",)  # type: ignore[union-attr]


def test_the_command_line_and_a_policy_state_expectations_the_same_way() -> None:
    m = machine(8, split_4_4, name="NVIDIA H200 NVL")
    by_options = analyze(m, source=SRC, options=AuditOptions(expect_gpus=4, expect_domain=8))
    by_policy = judge(m, "[expect]\ngpus = 4\nmin_domain = 8\n")
    cli = [f for f in by_options.findings if f.code == "expectation-not-met"]
    pol = [f for f in by_policy.findings if f.code == "expectation-not-met"]
    assert [f.message for f in cli] == [
        "Expected 4 GPUs, found 8.",
        "Expected an NVLink domain of at least 8 GPUs, the largest has 4 ({0-3} {4-7}).",
    ]
    assert [f.message for f in pol] == [f"Policy 'fleet': e{m.message[1:]}" for m in cli]
    assert [{k: v for k, v in f.evidence.items() if k != "policy"} for f in pol] == [f.evidence for f in cli]
    assert by_options.gate.exit_code == by_policy.gate.exit_code == ExitCode.FINDINGS
