"""`--format remedy`: every host-caused finding of the test boxes brings its command for this box into one reviewed
shell script; the script parses (`bash -n`), printing it runs nothing, running it runs exactly its commands, and a
saved report renders the same script. A hostile saved report cannot smuggle a command in."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))

from fakebox import make_box
from fakenvml import SCENARIOS, Scenario
from test_scenarios import run

from topoaudit.model.finding import Finding, RemedyCommand, Severity
from topoaudit.model.report import report_from_json
from topoaudit.render import render
from topoaudit.rules.remedies import PROFILE_PLACES, rebuild

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is not installed")


def _host(**fields: object) -> Callable[[Scenario], None]:
    def tweak(sc: Scenario) -> None:
        sc.raw["host"].update(fields)

    return tweak


def _narrow_gpu(sc: Scenario) -> None:
    sc.gpus[2].pcie = (5, 5, 8, 16)  # GPU2 trained at x8 in an x16 slot


def _narrow_card(sc: Scenario) -> None:
    sc.gpus[1].pcie = (3, 3, 8, 16)  # GPU1 trained at x8 in an x16 slot the firmware names
    sc.raw["host"]["slots"] = {"0000:1a:00.0": "1", "0000:1b:00.0": "2"}


def _uplink(sc: Scenario) -> None:
    sc.raw["host"]["uplinks"] = {"sw1": [5, 8]}


# Every box of tests/probe, and the variants of them the host-check tests build.
BOXES: dict[str, tuple[str, Callable[[Scenario], None] | None]] = {
    **{n: (n, None) for n in sorted(p.stem for p in SCENARIOS.glob("*.toml"))},
    "hgx-h100 acs": ("hgx-h100", _host(acs_redirect=True)),
    "hgx-h100 no peermem": ("hgx-h100", _host(peermem=False)),
    "hgx-h100 nccl env": (
        "hgx-h100",
        _host(environ={"NCCL_P2P_DISABLE": "1", "CUDA_VISIBLE_DEVICES": "0,1"}, nccl_conf="NCCL_IB_DISABLE=1\n"),
    ),
    "hgx-h100 x8 gpu": ("hgx-h100", _narrow_gpu),
    "hgx-h100 x8 uplink": ("hgx-h100", _uplink),
    "acs-plx-4gpu x8 card": ("acs-plx-4gpu", _narrow_card),
    "hgx-h100 aer": ("hgx-h100", _host(aer={"0000:19:00.0": [0, 2, 1]})),
}
UNAUDITABLE = {"no-driver", "driver-not-loaded", "no-gpu-visible"}

# Host-caused findings and the command each must bring into the script on the box named.
EXPECTED_COMMAND = {
    ("acs-plx-4gpu", "pcie-acs-redirect"): "setpci -s 00ff:03:00.0 ECAP_ACS+0x6.w=0000",
    ("p2p-acs", "pcie-acs-redirect"): "setpci -s 00ff:01:00.0 ECAP_ACS+0x6.w=0000",
    ("p2p-acs", "p2p-unavailable"): "setpci -s 00ff:01:00.0 ECAP_ACS+0x6.w=0000",
    ("hgx-h100 acs", "pcie-acs-redirect"): "setpci -s 00ff:01:00.0 ECAP_ACS+0x6.w=0000",
    ("hgx-h100 no peermem", "gpudirect-rdma-unavailable"): "modprobe nvidia_peermem",
    ("fm-not-started", "fabric-not-ready"): "systemctl start nvidia-fabricmanager",
    ("hgx-h100 nccl env", "nccl-env-override"): f"grep -rnw -e NCCL_P2P_DISABLE {PROFILE_PLACES} 2>/dev/null || true",
    ("hgx-h100 nccl env", "nccl-env-override /etc/nccl.conf"): (
        "sed -i.topoaudit.bak -e '/^[[:space:]]*NCCL_IB_DISABLE[[:space:]]*=/d' /etc/nccl.conf"
    ),
    ("hgx-h100 nccl env", "gpu-visibility-restricted"): (
        f"grep -rnw -e CUDA_VISIBLE_DEVICES {PROFILE_PLACES} 2>/dev/null || true"
    ),
    ("hgx-h100 x8 gpu", "pcie-link-degraded"): "lspci -vv -s 0000:3a:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
    ("acs-plx-4gpu x8 card", "pcie-link-degraded"): "lspci -vv -s 0000:1b:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
    ("hgx-h100 aer", "pcie-aer-errors"): "lspci -vv -s 0000:19:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
    ("hgx-h100 x8 uplink", "pcie-path-degraded"): "lspci -vv -s 00ff:05:00.0 | grep -E 'LnkCap:|LnkSta:' || true",
}
HOST_CAUSED = {code.split()[0] for _, code in EXPECTED_COMMAND}


def _audit(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, fmt: str) -> tuple[int, str]:
    scenario, tweak = BOXES[name]
    box = make_box(scenario, tmp_path, monkeypatch, tweak)
    code, out, err = run(capsys, "audit", "--format", fmt, "--sysfs-root", str(box.root), "--smi-timeout", "2")
    assert code in (0, 1), err
    return code, out


def _runnable(script: str) -> list[str]:
    """The lines the shell would run: neither comments nor blank."""
    return [line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", [n for n in BOXES if BOXES[n][0] not in UNAUDITABLE])
def test_every_host_caused_finding_brings_its_command_into_the_script(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _, out = _audit(name, tmp_path / "json", monkeypatch, capsys, "json")
    report = json.loads(out)
    script = render(report_from_json(out, "report.json"), "remedy")
    lines = _runnable(script)
    assert lines[0] == "set -euo pipefail"
    assert len(lines) == len(set(lines))  # a bridge named by two findings is cleared once ("already above")
    for f in report["findings"]:
        for (box, code), expected in EXPECTED_COMMAND.items():
            if box == name and code.split()[0] == f["code"]:
                assert expected in [c["command"] for c in f["remedy_commands"]], code
        for command in f["remedy_commands"]:
            saved = RemedyCommand(command["action"], command["params"], command["command"])
            assert rebuild(saved).command == command["command"], command  # written from its template alone
            assert command["command"] in lines, (f["code"], command["command"])  # a line of its own, not a comment
            assert command["changes"]
            assert f"# undo:    {command['undo']}" in script if command["undo"] else True
        if not f["remedy_commands"]:  # its prose remedy, as a comment
            assert f"# --- {f['code']} ({f['severity']})" in script
    raised = {(name, f["code"]) for f in report["findings"]}
    assert {
        (b, c.split()[0]) for b, c in EXPECTED_COMMAND if b == name
    } <= raised  # the table above names what the box raises
    if BASH:
        check = subprocess.run([BASH, "-n"], input=script, text=True, capture_output=True, check=False)
        assert check.returncode == 0, check.stderr


def test_the_host_causes_named_are_the_brief_s_whole_list() -> None:
    """ACS bits, nvidia_peermem, the fabric manager, the NCCL_* variable and where it was set, the slot to reseat."""
    from topoaudit.rules.codes import CODES

    assert CODES.keys() >= HOST_CAUSED
    commands = " ".join(EXPECTED_COMMAND.values())
    for part in ("ECAP_ACS+0x6.w=0000", "modprobe nvidia_peermem", "systemctl start nvidia-fabricmanager",
                 "grep -rnw -e NCCL_", "/etc/nccl.conf", "lspci -vv -s"):  # fmt: skip
        assert part in commands


def _recording_path(tmp_path: Path) -> tuple[Path, str]:
    """A PATH whose setpci, modprobe, systemctl, lspci, sed and mv only write their arguments to a log."""
    bin_dir, log = tmp_path / "recorders", tmp_path / "ran.log"
    bin_dir.mkdir()
    for tool in ("setpci", "modprobe", "systemctl", "lspci", "sed", "mv", "rm"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{log}"\n')
        script.chmod(0o755)
    return log, f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"


@needs_bash
def test_printing_and_checking_the_script_runs_nothing_and_running_it_runs_exactly_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    box = make_box("acs-plx-4gpu", tmp_path, monkeypatch)
    log, path = _recording_path(tmp_path)
    monkeypatch.setenv("PATH", f"{path.split(os.pathsep, 1)[0]}{os.pathsep}{os.environ['PATH']}")
    code, script, _ = run(capsys, "audit", "--format", "remedy", "--sysfs-root", str(box.root), "--smi-timeout", "2")
    saved = tmp_path / "remedy.sh"
    saved.write_text(script)
    assert code == 0
    for view in ([BASH, "-n", str(saved)], ["cat", str(saved)]):
        subprocess.run(view, env={"PATH": path}, capture_output=True, check=True)
    assert not log.exists()  # neither topoaudit nor viewing the script ran any of its commands
    subprocess.run([BASH, str(saved)], env={"PATH": path}, capture_output=True, check=True)
    assert log.read_text().splitlines() == [
        f"setpci -s {b} ECAP_ACS+0x6.w=0000"
        for b in ("00ff:01:00.0", "00ff:03:00.0", "00ff:04:00.0", "00ff:05:00.0", "00ff:06:00.0")
    ]


def test_the_card_to_reseat_is_named_by_its_physical_slot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _, out = _audit("acs-plx-4gpu x8 card", tmp_path, monkeypatch, capsys, "json")
    report = json.loads(out)
    assert report["host"]["checks"]["pcie_slots"] == {"0000:1a:00": "1", "0000:1b:00": "2"}
    (check,) = next(f for f in report["findings"] if f["code"] == "pcie-link-degraded")["remedy_commands"]
    assert "reseat GPU1 (card, riser or cable) in physical slot 2" in check["changes"] and check["undo"] == ""
    script = render(report_from_json(out, "report.json"), "remedy")
    assert "# undo:    nothing to undo" in script


def test_the_header_names_the_host_and_time_and_says_nothing_was_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _, out = _audit("acs-plx-4gpu", tmp_path, monkeypatch, capsys, "json")
    report = report_from_json(out, "report.json")
    script = render(report, "remedy")
    head = script.splitlines()[:8]
    assert head[0] == "#!/usr/bin/env bash"
    assert "# topoaudit remedy script for host gpu-node-7" in head
    assert any(report.generated_at in line for line in head)
    assert any("NOTHING HERE HAS BEEN APPLIED" in line and "Review every one" in line for line in head)
    assert "# remedy (no command for it): Collectives run over PCIe/host memory" in script  # nvlink-absent


def test_a_saved_report_renders_the_same_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _, live = _audit("hgx-h100 no peermem", tmp_path / "a", monkeypatch, capsys, "remedy")
    _, out = _audit("hgx-h100 no peermem", tmp_path / "b", monkeypatch, capsys, "json")
    saved = tmp_path / "report.json"
    saved.write_text(out)
    code, again, _ = run(capsys, "report", str(saved), "--format", "remedy")
    assert code == 0
    drop_time = lambda s: [x for x in s.splitlines() if not x.startswith("# from the report of")]  # noqa: E731
    assert drop_time(again) == drop_time(live) and "\nmodprobe nvidia_peermem\n" in again
    code, from_analyze, _ = run(capsys, "analyze", str(saved), "--format", "remedy")
    assert code == 0 and "\nmodprobe nvidia_peermem\n" in from_analyze


@needs_bash
def test_a_hostile_report_cannot_smuggle_a_command_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    _, out = _audit("acs-plx-4gpu", tmp_path, monkeypatch, capsys, "json")
    report = report_from_json(out, "report.json")
    evil = Finding(
        "pcie-acs-redirect",
        Severity.WARN,
        "bridges\nrm -rf ~ \r\n# $(reboot)",
        remedy="see\nshutdown now",
        remedy_commands=(
            RemedyCommand("shell", {"line": "rm -rf /"}, "rm -rf --no-preserve-root /", "erases everything", "true"),
            RemedyCommand("acs-clear", {"bridge": "00ff:03:00.0; reboot", "control": "0x1d"}, "setpci; reboot"),
            RemedyCommand("module-load", {"module": "nvidia_peermem"}, "modprobe x", "loads\nreboot", "curl x | sh"),
        ),
    )
    script = render(dataclasses.replace(report, findings=(evil,)), "remedy")
    assert _runnable(script) == ["set -euo pipefail", "modprobe nvidia_peermem"]
    assert "# left out, not a command topoaudit writes: no template named 'shell'" in script
    assert "# left out, not a command topoaudit writes: acs-clear: not a PCI bus id: '00ff:03:00.0; reboot'" in script
    assert "# undo:    modprobe -r nvidia_peermem" in script and "curl" not in script and "loads reboot" not in script
    check = subprocess.run([BASH, "-n"], input=script, text=True, capture_output=True, check=False)
    assert check.returncode == 0


def test_a_report_without_findings_says_there_is_nothing_to_repair(capsys) -> None:
    code, script, _ = run(capsys, "analyze", "--example", "hgx-h100", "--format", "remedy")
    assert code == 0 and _runnable(script) == ["set -euo pipefail"]
    assert "# No finding of this report has a remedy topoaudit can write as a command for this box." in script


NCCL_LOGS = Path(__file__).parents[1] / "fixtures" / "nccl"


@pytest.mark.parametrize(
    ("log", "code", "commands"),
    [
        (
            "constructed-2.26-warn-timestamps-fm-down.txt",
            "nccl-fabric-manager-down",
            ["systemctl start nvidia-fabricmanager", "systemctl enable nvidia-fabricmanager"],
        ),
        (
            "constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt",
            "nccl-gdr-disabled",
            ["modprobe nvidia_peermem", "echo nvidia_peermem > /etc/modules-load.d/nvidia-peermem.conf"],
        ),
    ],
)
def test_host_causes_found_in_an_nccl_log_bring_their_commands(log: str, code: str, commands: list[str]) -> None:
    """A fault NCCL's log shows (error 802, GPUDirect RDMA off) gets the same repair lines as the probe's."""
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", str(NCCL_LOGS / log), "--format", "remedy"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert f"# --- {code}" in proc.stdout
    runnable = [line for line in proc.stdout.splitlines() if line and not line.startswith("#")]
    assert runnable == ["set -euo pipefail", *commands]


def _renamed(name: str) -> Callable[[Scenario], None]:
    def tweak(sc: Scenario) -> None:
        for gpu in sc.gpus:
            gpu.name = name

    return tweak


BLACKWELL_FABRIC = [
    "dpkg-query -W nvlsm 2>/dev/null || rpm -q nvlsm 2>/dev/null || echo 'nvlsm is not installed'",
    "modprobe ib_umad",
    "echo ib_umad > /etc/modules-load.d/ib-umad.conf",
    "systemctl start nvidia-fabricmanager",
    "systemctl enable nvidia-fabricmanager",
]


@pytest.mark.parametrize(
    ("gpu_name", "runnable"),
    [
        ("NVIDIA H100 80GB HBM3", ["systemctl start nvidia-fabricmanager", "systemctl enable nvidia-fabricmanager"]),
        ("NVIDIA B200", BLACKWELL_FABRIC),
        ("NVIDIA GB200", []),  # a rack's compute tray: its switch trays run the fabric manager
    ],
)
def test_the_fabric_remedy_follows_the_platform(
    gpu_name: str, runnable: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Hopper HGX starts the fabric manager; Blackwell HGX also needs NVLSM's package and ib_umad; an NVL tray none."""
    box = make_box("fm-not-started", tmp_path, monkeypatch, _renamed(gpu_name))
    code, out, err = run(capsys, "audit", "--format", "json", "--sysfs-root", str(box.root), "--smi-timeout", "2")
    assert code == 1, err
    fabric = next(f for f in json.loads(out)["findings"] if f["code"] == "fabric-not-ready")
    assert [c["command"] for c in fabric["remedy_commands"]] == runnable
    script = render(report_from_json(out, "report.json"), "remedy")
    fabric_block = script.split("# --- fabric-not-ready")[1].split("\n", 1)[1].split("# ---")[0]
    assert _runnable(fabric_block) == runnable
    if not runnable:
        assert "The fabric manager is not running" not in fabric["message"]
        assert "the rack's NVLink switch trays run the fabric manager" in fabric["remedy"]


@pytest.mark.parametrize(
    ("gpu_model", "runnable"),
    [
        (None, ["systemctl start nvidia-fabricmanager", "systemctl enable nvidia-fabricmanager"]),
        ("B200", BLACKWELL_FABRIC),
        ("GB300", []),
    ],
)
def test_cuda_error_802_in_an_nccl_log_brings_the_platform_s_fabric_remedy(
    gpu_model: str | None, runnable: list[str]
) -> None:
    model = ["--gpu-model", gpu_model] if gpu_model else []
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", str(NCCL_LOGS / "constructed-2.26-warn-timestamps-fm-down.txt"),
         "--format", "remedy", *model],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert _runnable(proc.stdout) == ["set -euo pipefail", *runnable]
    if not runnable:
        assert "# remedy (no command for it): This is a compute tray of an NVLink rack" in proc.stdout
        assert "not registered with the rack's NVLink fabric" in " ".join(proc.stdout.replace("\n#", " ").split())
