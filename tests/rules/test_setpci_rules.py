"""A pasted `setpci` read of PCIe bridges' ACS control register: P2P redirect on is pcie-acs-redirect, all off is
a PASS over what was read."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run

from topoaudit.parse.setpci_acs import read_setpci_acs

FIXTURES = Path(__file__).parents[1] / "fixtures"
PLX_REDIRECT = (FIXTURES / "captures" / "setpci-acs-plx-f2a-12-bridges-redirect-1.txt").read_text(encoding="utf-8")
LOOP = "for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done\n"


def judged(run: Run, tmp_path: Path, text: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    paste = tmp_path / "acs.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json")
    assert code in (0, 1), err
    return code, json.loads(out)


def test_words_with_redirect_on_are_pcie_acs_redirect(run: Run, tmp_path: Path) -> None:
    """Before: refused with a hint to capture `topo -m`. 0x001d is SrcValid, ReqRedir, CmpltRedir, UpstreamFwd."""
    code, report = judged(run, tmp_path, PLX_REDIRECT)
    (found,) = report["findings"]
    assert code == 0 and report["verdict"] == "warn" and found["code"] == "pcie-acs-redirect"
    assert found["message"].startswith(
        "setpci's read of the ACS control register (f2a.w, line 1) shows P2P redirect on for 8 of 12 PCIe bridge(s)"
    )
    assert found["evidence"]["bridges"][0] == {
        "line": 4,
        "device": "",
        "control": "0x001d",
        "enabled": ["SrcValid", "ReqRedir", "CmpltRedir", "UpstreamFwd"],
    }


def test_words_all_zero_pass_over_the_bridges_read(run: Run, tmp_path: Path) -> None:
    code, report = judged(run, tmp_path, LOOP + "0000\n" * 6)
    assert code == 0 and report["verdict"] == "pass" and report["findings"] == []
    assert report["gate"]["judged"] == ["the ACS control of 6 PCIe bridges (setpci)"]


def test_the_verbose_form_names_each_bridge_and_a_write_is_no_read() -> None:
    verbose = "$ sudo setpci -v -s 17:00.0 ECAP_ACS+0x6.w\n0000:17:00.0 (cap 000d @f20) @f26 = 005f\n"
    read = read_setpci_acs(verbose)
    assert read is not None and read.register == "ECAP_ACS+0x6"
    assert [(b.device, b.control, b.redirects) for b in read.bridges] == [("0000:17:00.0", 0x5F, True)]
    assert read_setpci_acs("sudo setpci -s 17:00.0 ECAP_ACS+0x6.w=0000\n") is None


def test_a_saved_report_of_the_read_is_judged_again_as_it_was(run: Run, tmp_path: Path) -> None:
    _, report = judged(run, tmp_path, PLX_REDIRECT)
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(report), encoding="utf-8")
    code, out, err = run("report", str(saved), "--format", "json")
    assert code == 0, err
    again = json.loads(out)
    assert again["verdict"] == "warn" and [f["code"] for f in again["findings"]] == ["pcie-acs-redirect"]
