"""The remedy script line by line, as a person reviewing it before ``sudo bash`` reads it: the order of the
findings, the header, each command with its ``changes:`` and ``undo:`` comments, a command named twice, one left
out, prose remedies, wrapping and the bounds on report text."""

from __future__ import annotations

import dataclasses

import pytest
from report_samples import example_report

from topoaudit.model.finding import Finding, RemedyCommand, Severity
from topoaudit.model.report import Report
from topoaudit.render import render
from topoaudit.render.remedy import runnable_commands
from topoaudit.rules.remedies import remedy

PEERMEM = remedy("module-load", module="nvidia_peermem")
FM_START = remedy("service-start", service="nvidia-fabricmanager")
ACS = remedy("acs-clear", bridge="0000:00:01.0", control="0x1d")
LINK = remedy("pcie-link-check", device="0000:1b:00.0", who="GPU1", slot="2")
FOREIGN = RemedyCommand("shell", {"line": "reboot"}, "reboot")


def _report(*findings: Finding, hostname: object = "gpu-node-7") -> Report:
    """The h200-nvl-split example (its verdict is fail) with these findings, on a host of this name."""
    base = example_report("h200-nvl-split")
    host = dataclasses.replace(base.machine.host, hostname=hostname)
    return dataclasses.replace(base, machine=dataclasses.replace(base.machine, host=host), findings=findings)


def _script(*findings: Finding, hostname: object = "gpu-node-7") -> str:
    return render(_report(*findings, hostname=hostname), "remedy")


HEADER = """\
#!/usr/bin/env bash
# topoaudit remedy script for host gpu-node-7
# from the report of 2026-01-01T00:00:00+00:00 (topoaudit 0.1.0, verdict fail)
#
# NOTHING HERE HAS BEEN APPLIED: topoaudit only printed these lines. Review every one before you run any:
# each command says what it changes and how to undo it. Most need root (sudo bash remedy.sh).
"""
NONE_WRITABLE = "# No finding of this report has a remedy topoaudit can write as a command for this box.\n"

GOLDEN = (
    HEADER
    + """
set -euo pipefail

# --- fabric-not-ready (fail)
# The fabric manager is not running.
# changes: starts NVIDIA's fabric manager, which registers the GPUs with the NVSwitch fabric (its
#          version must match the driver's: `nvidia-smi` and `nv-fabricmanager --version`)
# undo:    systemctl stop nvidia-fabricmanager
systemctl start nvidia-fabricmanager

# --- pcie-acs-redirect (warn)
# ACS redirects peer traffic of bridge 0000:00:01.0 through the root complex.
# remedy: Clear the ACS control of the bridge, or disable ACS in the BIOS.
# changes: clears the ACS control of bridge 0000:00:01.0 (now 0x001d: SrcValid ReqRedir CmpltRedir
#          UpstreamFwd) until the next boot
# undo:    setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=001d  # or reboot
setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=0000
# left out, not a command topoaudit writes: no template named 'shell'
# changes: changes nothing: shows the link GPU1 (0000:1b:00.0) can train to and the one it trained
#          to; if LnkSta stays below LnkCap under load, power off and reseat GPU1 (card, riser or
#          cable) in physical slot 2
# undo:    nothing to undo
lspci -vv -s 0000:1b:00.0 | grep -E 'LnkCap:|LnkSta:' || true

# --- p2p-unavailable (warn)
# P2P is blocked between GPU0 and GPU1 by the same bridge, so the same command repairs it: a second
# copy of it would only run twice, so the script names it once and says so here.
# already above: setpci -s 0000:00:01.0 ECAP_ACS+0x6.w=0000

# --- gpudirect-rdma-unavailable (info)
# nvidia_peermem is not loaded.
# changes: loads the kernel module that lets the RDMA NICs read and write GPU memory (GPUDirect
#          RDMA) until the next boot; NCCL programs started afterwards use it
# undo:    modprobe -r nvidia_peermem
modprobe nvidia_peermem

# --- nvlink-split-domain (fail)
# GPUs 0-3 and 4-7 form two NVLink domains.
# remedy (no command for it): Keep each tensor-parallel group inside one domain.

# --- tp-group-crosses-domain (warn)
#
# remedy (no command for it): none given
"""
)


def _golden_findings() -> tuple[Finding, ...]:
    """Findings in the order a rule might raise them: not worst first, prose remedies before commands."""
    return (
        Finding(
            "gpudirect-rdma-unavailable", Severity.INFO, "nvidia_peermem is not loaded.", remedy_commands=(PEERMEM,)
        ),
        Finding(
            "nvlink-split-domain",
            Severity.FAIL,
            "GPUs 0-3 and 4-7 form two NVLink domains.",
            remedy="Keep each tensor-parallel group inside one domain.",
        ),
        Finding("tp-group-crosses-domain", Severity.WARN, ""),
        Finding(
            "pcie-acs-redirect",
            Severity.WARN,
            "ACS redirects peer traffic of bridge 0000:00:01.0 through the root complex.",
            remedy="Clear the ACS control of the bridge, or disable ACS in the BIOS.",
            remedy_commands=(ACS, FOREIGN, LINK),
        ),
        Finding(
            "p2p-unavailable",
            Severity.WARN,
            "P2P is blocked between GPU0 and GPU1 by the same bridge, so the same command repairs it: a second copy "
            "of it would only run twice, so the script names it once and says so here.",
            remedy_commands=(ACS,),
        ),
        Finding("fabric-not-ready", Severity.FAIL, "The fabric manager is not running.", remedy_commands=(FM_START,)),
    )


def test_the_script_a_person_reviews_line_by_line() -> None:
    """Commands first, worst first, in the order found within a severity; then the prose remedies, worst first."""
    assert _script(*_golden_findings()) == GOLDEN


def test_a_host_without_a_name_is_named_by_why_it_has_none() -> None:
    script = _script(hostname=example_report("h200-nvl-split").machine.host.hostname)
    assert script.splitlines()[1] == "# topoaudit remedy script for an unnamed host (not provided by this source)"


def test_a_report_without_findings_says_so_and_runs_nothing() -> None:
    assert _script() == HEADER + NONE_WRITABLE + "\nset -euo pipefail\n\n# The audit found nothing to repair.\n"


def test_findings_with_only_prose_remedies_say_no_command_can_be_written() -> None:
    script = _script(Finding("nvlink-split-domain", Severity.FAIL, "split", remedy="Keep TP inside a domain."))
    assert script == (
        HEADER
        + NONE_WRITABLE
        + "\nset -euo pipefail\n\n# --- nvlink-split-domain (fail)\n# split\n"
        + "# remedy (no command for it): Keep TP inside a domain.\n"
    )


@pytest.mark.parametrize(
    ("commands", "runnable"),
    [
        ((FOREIGN,), 0),  # a finding whose every command is left out has nothing a person can run
        ((FOREIGN, PEERMEM), 1),  # a command after one left out still counts
        ((PEERMEM, FOREIGN), 1),
    ],
)
def test_the_header_says_no_command_exactly_when_none_can_be_run(
    commands: tuple[RemedyCommand, ...], runnable: int
) -> None:
    script = _script(Finding("gpudirect-rdma-unavailable", Severity.WARN, "no peermem", remedy_commands=commands))
    assert (NONE_WRITABLE in script) is (runnable == 0)
    assert script.count("\nmodprobe nvidia_peermem\n") == runnable


@pytest.mark.parametrize(("words", "lines"), [(("a" * 49, "b" * 48), 1), (("a" * 49, "b" * 49), 2)])
def test_a_comment_line_is_at_most_100_characters(words: tuple[str, str], lines: int) -> None:
    script = _script(Finding("nvlink-split-domain", Severity.FAIL, " ".join(words), remedy="r"))
    message = script.split("(fail)\n")[1].split("# remedy")[0].splitlines()
    assert message == ([f"# {words[0]} {words[1]}"] if lines == 1 else [f"# {words[0]}", f"# {words[1]}"])


def test_the_lines_after_the_first_are_indented_under_the_text_after_the_label() -> None:
    words = " ".join(f"word{i:03}" for i in range(30))
    script = _script(Finding("pcie-acs-redirect", Severity.WARN, "m", remedy=words, remedy_commands=(PEERMEM,)))
    remedy_lines = script.split("# --- pcie-acs-redirect (warn)\n# m\n")[1].split("# changes:")[0].splitlines()
    assert remedy_lines == [
        "# remedy: " + " ".join(f"word{i:03}" for i in range(11)),
        "#         " + " ".join(f"word{i:03}" for i in range(11, 22)),
        "#         " + " ".join(f"word{i:03}" for i in range(22, 30)),
    ]


@pytest.mark.parametrize(("length", "shown"), [(2000, "x" * 2000), (2001, "x" * 1999 + "…")])
def test_report_text_in_a_comment_is_cut_at_2000_characters(length: int, shown: str) -> None:
    script = _script(Finding("nvlink-split-domain", Severity.FAIL, "x" * length, remedy="r"))
    message = "".join(line[2:] for line in script.split("(fail)\n")[1].splitlines() if not line.startswith("# remedy"))
    assert message == shown


def test_a_control_character_in_report_text_cannot_end_the_comment() -> None:
    script = _script(Finding("nvlink-split-domain", Severity.FAIL, "split\nreboot\x1b[2K", remedy="a\rshutdown now"))
    assert script.endswith(
        "# --- nvlink-split-domain (fail)\n# split reboot [2K\n# remedy (no command for it): a shutdown now\n"
    )


def test_the_script_ends_with_one_newline_after_its_last_line_whole() -> None:
    script = _script(Finding("gpudirect-rdma-unavailable", Severity.WARN, "no peermem", remedy_commands=(PEERMEM,)))
    assert script.endswith("\nmodprobe nvidia_peermem\n") and not script.endswith("\n\n")
    script = _script(Finding("pcie-link-degraded", Severity.WARN, "x8", remedy="Reseat the card in slot X"))
    assert script.endswith("\n# remedy (no command for it): Reseat the card in slot X\n")


def test_the_commands_a_finding_runs_are_its_valid_ones_rebuilt_in_order() -> None:
    saved = dataclasses.replace(PEERMEM, command="modprobe nvidia_peermem; reboot")
    finding = Finding("gpudirect-rdma-unavailable", Severity.WARN, "m", remedy_commands=(FOREIGN, saved, FOREIGN, ACS))
    assert runnable_commands(finding) == [PEERMEM, ACS]
