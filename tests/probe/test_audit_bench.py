"""`audit --bench`: probe, bench and verdict in one run (the bench on gloo CPU ranks against a fake box)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakebox import make_box
from test_scenarios import audit, run

pytest.importorskip("torch")


@pytest.mark.slow
def test_audit_bench_adds_a_measured_section_to_the_probed_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    box = make_box("hgx-h100", tmp_path, monkeypatch)
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")
    code, report, err = audit(
        capsys, box.root, "--bench", "--backend", "gloo", "--nproc", "2", "--max-bytes", "64K", "--timeout", "20"
    )
    assert code == 0, err
    assert report["source"]["kind"] == "live" and [d["gpus"] for d in report["domains"]] == [list(range(8))]
    bench = report["bench"]
    assert bench["backend"] == "gloo" and bench["world_size"] == 2 and bench["status"] == "complete"
    (whole,) = [g for g in bench["groups"] if g["name"] == "all"]
    assert [r["size_bytes"] for r in whole["rows"]][-1] == 65536 and all(r["wrong"] == 0 for r in whole["rows"])


def test_demo_and_bench_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "audit", "--demo", "--bench")
    assert code == 2 and "--bench measures this machine" in err
