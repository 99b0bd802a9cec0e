"""A pasted sweep is judged only when its figures are held to something: the GPU model's expected figure, the
user's --expect-busbw, a data check that ran, or other groups. A bare row is "not judged", never PASS."""

from __future__ import annotations

import json
from pathlib import Path

from cli_runner import Run
from parse.dev_pastes import dev_paste

# The header and one row an AWS P5 user pasted of an 8-node all-reduce (pytorch/pytorch#117748, 104 GB/s before the
# NCCL fix).
ROW = dev_paste("pytorch-117748-nvlstree-before-104")


def _analyze(run: Run, tmp_path: Path, text: str, *args: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    paste = tmp_path / "sweep.txt"
    paste.write_text(text, encoding="utf-8")
    code, out, err = run("analyze", str(paste), "--format", "json", *args)
    assert code in (0, 1), err
    return code, json.loads(out)


def test_a_row_with_nothing_to_hold_it_to_is_not_judged(run: Run, tmp_path: Path) -> None:
    """Before: PASS, "judged: an all-reduce sweep of 0 ranks"."""
    code, report = _analyze(run, tmp_path, ROW)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert "nothing to be held to" in report["gate"]["reason"]
    assert "--expect-busbw" in report["gate"]["to_judge"]


def test_expect_busbw_holds_a_pasted_sweep(run: Run, tmp_path: Path) -> None:
    code, report = _analyze(run, tmp_path, ROW, "--expect-busbw", "250")
    (low,) = [f for f in report["findings"] if f["code"] == "bench-below-expected"]
    assert code == 1 and low["message"] == "group all plateaus at 104.2 GB/s busbw, below the --expect-busbw 250 GB/s"
    code, report = _analyze(run, tmp_path, ROW, "--expect-busbw", "90")
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert report["gate"]["judged"][0] == "an all-reduce sweep of ranks the paste does not show (1 message size)"


def test_a_saved_report_keeps_its_expect_busbw(run: Run, tmp_path: Path) -> None:
    """Before: re-reading a report saved with --expect-busbw judged its sweep against nothing ("not judged")."""
    paste = tmp_path / "paste.txt"
    paste.write_text(ROW, encoding="utf-8")
    saved = tmp_path / "report.json"
    code, _, _ = run("analyze", str(paste), "--expect-busbw", "250", "--format", "json", "-o", str(saved))
    assert code == 1 and json.loads(saved.read_text())["options"]["expect_busbw_gbps"] == 250.0
    code, out, _ = run("analyze", str(saved), "--format", "json")
    report = json.loads(out)
    assert code == 1 and "bench-below-expected" in [f["code"] for f in report["findings"]]
    assert report["source"]["description"].endswith("judged with the report's own --expect-busbw 250")
    code, out, _ = run("analyze", str(saved), "--expect-busbw", "90", "--format", "json")
    assert code == 0 and json.loads(out)["gate"]["verdict"] == "pass"


def test_a_data_check_is_something_judged(run: Run, tmp_path: Path) -> None:
    """It passes on the data check alone, and says its bandwidth was held to nothing (before: "judged: an all-reduce
    sweep of ...", read as its bandwidth judged)."""
    code, report = _analyze(run, tmp_path, ROW.replace("N/A", "0"))
    assert code == 0 and report["gate"]["verdict"] == "pass"
    assert report["gate"]["judged"] == [
        "the data check (#wrong) of an all-reduce sweep of ranks the paste does not show (1 message size); its "
        "bandwidth held to no figure (no GPU model; no --expect-busbw)"
    ]


def test_a_data_check_on_zero_byte_rows_alone_checks_nothing(run: Run, tmp_path: Path) -> None:
    """Sizes of 0 to 256 bytes over 32 nodes (NVIDIA/nccl#652): '0e+00' on the 0-byte rows, float error figures on the
    rest. A 0-byte row moves no data, so its check holds nothing. Before: PASS."""
    code, report = _analyze(run, tmp_path, dev_paste("nccl-652-32node-allreduce-small-sizes"))
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert "checked no data on a message of a MiB or more" in report["gate"]["reason"]


def test_a_data_check_on_latency_sized_messages_alone_is_not_the_links_judged(run: Run, tmp_path: Path) -> None:
    """A Horovod user's all-reduce table of 8 B to 16 KB, every #wrong a float error figure (NVIDIA/nccl#306): the
    sizes where bandwidth levels off are not in it. Before: PASS."""
    table = dev_paste("nccl-306-horovod-v257-small-msg-table")
    code, report = _analyze(run, tmp_path, table)
    assert code == 0 and report["gate"]["verdict"] == "not judged"
    assert "latency-sized messages only" in report["gate"]["reason"]


def test_an_mscclpp_test_run_is_not_held_to_nccls_figure(run: Run, tmp_path: Path) -> None:
    """An 8x A100 all-reduce of MSCCL++'s own kernels at 110 GB/s (microsoft/mscclpp#83): NCCL's 235 GB/s is not its
    figure, so its data check alone is judged, and the report says why. Before: its row was not read ("not judged")."""
    code, report = _analyze(run, tmp_path, dev_paste("mscclpp-83-allreduce-1g-a100"))
    assert code == 0 and report["gate"]["verdict"] == "pass" and report["bench"]["backend"] == "mscclpp"
    assert report["gate"]["judged"] == [
        "the data check (#wrong) of an all-reduce sweep of 8 ranks (1 message size); its bandwidth held to no figure "
        "(the run is MSCCL++'s own kernels, and the figures are NCCL's; no --expect-busbw)"
    ]
    wrong = dev_paste("mscclpp-83-allreduce-1g-a100").replace("110.41      0", "110.41     37")
    code, report = _analyze(run, tmp_path, wrong)
    assert code == 1 and report["gate"]["verdict"] == "fail"
