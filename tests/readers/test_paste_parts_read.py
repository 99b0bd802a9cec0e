"""Any paste, read as far as it is sound: launcher prefixes taken off, every part read by the reader that knows it,
the parts named with their lines, and a refusal only for text with nothing recognisable in it."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from cli_runner import Run

from topoaudit.errors import InputError
from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures"
MATRIX = (FIXTURES / "topo" / "topo-h100-8gpu-stas-ht-1.txt").read_text(encoding="utf-8")
FABRIC_IN_PROGRESS = """\
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : In Progress
        Status                            : N/A
"""
TRACEBACK = """\
[rank3]: Traceback (most recent call last):
[rank3]:   File "train.py", line 12, in <module>
[rank3]:     dist.all_reduce(t)
[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, \
unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5
[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.
[rank3]: Last error:
[rank3]: Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 'the operation \
cannot be performed in the present state'
"""


def _json(run: Run, path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run("analyze", str(path), "--format", "json", *args)
    return code, json.loads(out)


def _parts(report: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    return [(p["kind"], p["first_line"], p["last_line"], p["read_by"]) for p in report["source"]["parts"]]


def _finding(report: dict[str, Any], code: str) -> dict[str, Any]:
    (found,) = [f for f in report["findings"] if f["code"] == code]
    return found


def test_a_traceback_is_judged_for_the_message_inside_it_with_the_ranks_prefix_taken_off(
    run: Run, tmp_path: Path
) -> None:
    """Before: refused, "no GPUs in the input". The NVLS failure PyTorch wraps is the cause the report names."""
    paste = tmp_path / "traceback.txt"
    paste.write_text(TRACEBACK, encoding="utf-8")
    code, report = _json(run, paste)
    assert code == 1 and report["verdict"] == "fail"
    nvls = _finding(report, "nccl-nvls-failed")
    assert nvls["severity"] == "fail" and nvls["evidence"]["lines"] == [7]
    assert 'line 7 (rank 3): "Failed to bind NVLink SHARP (NVLS) Multicast memory' in nvls["message"]
    assert "nvidia-smi -r" in nvls["remedy"] or "fabric manager" in nvls["remedy"]
    assert [f["code"] for f in report["findings"]][:2] == ["nccl-nvls-failed", "run-failed"]  # the cause first
    assert report["gpus"] == []


def test_every_part_of_a_mixed_paste_is_read_and_named_with_its_lines(run: Run, tmp_path: Path) -> None:
    """A ``topo -m``, the Fabric block of ``nvidia-smi -q`` and a traceback in one paste: before, the matrix alone
    was read and the box PASSed; now each part is read by its reader and the fabric is judged."""
    paste = tmp_path / "mixed.txt"
    paste.write_text(MATRIX + "\n$ nvidia-smi -q\n" + FABRIC_IN_PROGRESS + "\n" + TRACEBACK, encoding="utf-8")
    matrix_lines = MATRIX.count("\n")
    code, report = _json(run, paste)
    parts = _parts(report)
    assert parts[0] == ("topo-matrix", 1, matrix_lines, "topo-matrix")
    assert ("nvidia-smi-q", matrix_lines + 2, matrix_lines + 7, "nvidia-smi-q") in parts
    assert parts[-1][0] == "traceback" and parts[-1][2] == matrix_lines + 15
    assert code == 1 and {"fabric-not-ready", "nccl-nvls-failed"} <= {f["code"] for f in report["findings"]}
    assert [d["gpus"] for d in report["domains"]] == [[0, 1, 2, 3, 4, 5, 6, 7]]  # the matrix frames the box
    _, console, _ = run("analyze", str(paste), "--no-color")
    shown = " ".join(console.replace("│", " ").split())  # the header panel wraps the source line
    assert f"parts: topo-matrix lines 1-{matrix_lines}, nvidia-smi-q lines {matrix_lines + 2}-" in shown


def test_a_whole_capture_is_one_part_and_the_console_names_no_parts(run: Run) -> None:
    matrix = FIXTURES / "topo" / "topo-h100-8gpu-stas-ht-1.txt"
    code, report = _json(run, matrix)
    assert code == 0 and _parts(report) == [("topo-matrix", 1, MATRIX.count("\n"), "topo-matrix")]
    _, console, _ = run("analyze", str(matrix), "--no-color")
    assert "parts:" not in console


def test_a_traceback_naming_no_known_error_is_reported_as_read_not_refused(tmp_path: Path) -> None:
    """Before: refused with "capture it with nvidia-smi topo -m". A recognised part is never refused: the report
    says what it is and that nothing in it could be read."""
    paste = tmp_path / "assert.txt"
    paste.write_text('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nKeyError: 7\n')
    loaded = load_text(paste.read_text(), str(paste))
    assert [(p.kind, p.span, p.read_by) for p in loaded.source.parts] == [("traceback", "lines 1-3", "")]
    assert loaded.source.description == "traceback (lines 1-3): nothing in it that topoaudit reads or knows"
    assert loaded.judgeable_without_gpus()


def test_text_with_nothing_recognisable_is_refused_with_what_to_paste_instead(run: Run, tmp_path: Path) -> None:
    paste = tmp_path / "notes.txt"
    paste.write_text("the cluster was slow yesterday\nplease help\n")
    code, out, err = run("analyze", str(paste))
    assert code == 4 and out == ""
    assert "not a format topoaudit reads" in err and "nothing in it is a message or an output topoaudit knows" in err
    assert "paste its `nvidia-smi topo -m`" in err and "NCCL_DEBUG=INFO log" in err


def test_the_judge_accepts_a_lone_warn_line_without_gpus(run: Run, tmp_path: Path) -> None:
    """Before: "no GPUs in the input" (exit 4) for a pasted line that shows the fault."""
    paste = tmp_path / "warn.txt"
    paste.write_text(
        "node1:1:1 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not "
        "supported between these two devices\n"
    )
    code, out, _ = run("analyze", str(paste), "--format", "json")
    assert code == 1 and next(f["code"] for f in json.loads(out)["findings"]) == "p2p-unavailable"
    paste.write_text(
        "ERROR: nhc: Health check failed: check_hw_ib: No IB port mlx5_0:1 is ACTIVE (LinkUp 400 Gb/sec)\n"
    )
    code, out, _ = run("analyze", str(paste), "--no-color")
    assert code == 1 and "health-check-failed" in out and "no GPUs in this report (the input names none)" in out


def test_a_saved_report_of_a_paste_is_judged_again_as_it_was(run: Run, tmp_path: Path) -> None:
    """The known messages, a Fabric block's facts and the health lines travel in the report: re-read, the verdict
    does not drop to PASS."""
    paste = tmp_path / "mixed.txt"
    status_error = FABRIC_IN_PROGRESS.replace("In Progress", "Completed").replace("N/A", "Insufficient Resources")
    paste.write_text(status_error + "\n" + TRACEBACK, encoding="utf-8")
    code, out, _ = run("analyze", str(paste), "--format", "json")
    saved = tmp_path / "report.json"
    saved.write_text(out)
    again_code, again = _json(run, saved)
    first = json.loads(out)
    assert (again_code, again["verdict"]) == (code, first["verdict"]) == (1, "fail")
    assert sorted(f["code"] for f in again["findings"]) == sorted(f["code"] for f in first["findings"])
    assert "fabric-not-ready" in {f["code"] for f in first["findings"]}
    assert [p["kind"] for p in again["source"]["parts"]] == ["nvidia-smi-q", "traceback"]  # the paste's, kept


def test_a_word_of_a_hundred_thousand_letters_is_read_in_well_under_a_second(tmp_path: Path) -> None:
    """Every paste is split into parts: a pattern tried from each letter of a long word took 12 s here."""
    lines = MATRIX.splitlines()
    lines[3] = lines[3][:10] + "A" * 100_000 + lines[3][10:]
    started = time.perf_counter()
    with pytest.raises(InputError):  # the damaged row: whatever the matrix reader says, it says it fast
        _load_or_refuse("\n".join(lines))
    assert time.perf_counter() - started < 1.0


def _load_or_refuse(text: str) -> None:
    loaded = load_text(text, "long.txt")
    raise InputError(f"read {len(loaded.machine.gpus)} GPUs")


def test_ras_monitor_output_and_the_inspector_textfile_pass_their_readers_sniffs() -> None:
    monitor = (FIXTURES / "ras" / "doc-monitor.txt").read_text(encoding="utf-8")
    prom = (FIXTURES / "inspector" / "readme-prom-v2.30.prom").read_text(encoding="utf-8")
    assert load_text(monitor, "monitor.txt").source.kind == "nccl-ras"
    assert load_text(prom, "inspector.prom").source.kind == "nccl-inspector"


def test_a_health_line_naming_a_number_no_tool_prints_is_read_around(run: Run, tmp_path: Path) -> None:
    """A GPU index of 400 digits used to be kept, and the report it wrote could not be read back (exit 4)."""
    paste = tmp_path / "nhc.txt"
    paste.write_text(f"ERROR: nhc: Health check failed: check_gpu_xid: GPU {'9' * 400} has an Xid error\n")
    code, out, err = run("analyze", str(paste), "--format", "junit")
    assert code == 1, err
    assert "health-check-failed" in out
