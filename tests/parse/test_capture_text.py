"""Captures as users hand them over: UTF-16 files from PowerShell, and captures that hold only nvidia-smi's
failure message."""

from __future__ import annotations

import codecs
import html
import json
import subprocess
import sys
from pathlib import Path

import pytest
from parse.dev_pastes import dev_paste

from topoaudit.cli import main
from topoaudit.errors import InputError
from topoaudit.exitcodes import ExitCode
from topoaudit.parse.text import capture_failure, decode_capture, exact_capture_text
from topoaudit.parse.topo_matrix import TopoParseError, looks_like_topo_matrix, parse_topo_matrix
from topoaudit.readers import load_path

FIXTURES = Path(__file__).parent.parent / "fixtures"
PASTE = FIXTURES / "topo" / "topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt"
FAILED = FIXTURES / "parse" / "capture-failed"


def run_analyze(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


def links_of(path: Path) -> dict[tuple[str, str], str]:
    return {(lk.a, lk.b): lk.code for lk in load_path(str(path)).machine.links}


@pytest.mark.parametrize(
    ("bom", "encoding"),
    [
        (codecs.BOM_UTF16_LE, "utf-16-le"),  # Windows PowerShell `>` and Out-File
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF8, "utf-8"),  # PowerShell 7 `Out-File -Encoding utf8BOM`
        (b"", "utf-16-le"),  # UTF-16 written without a mark
        (b"", "utf-16-be"),
    ],
)
def test_utf16_and_bom_captures_read_like_the_utf8_paste(tmp_path: Path, bom: bytes, encoding: str) -> None:
    text = PASTE.read_text(encoding="utf-8").replace("\n", "\r\n")  # Windows line ends too
    capture = tmp_path / "topo.txt"
    capture.write_bytes(bom + text.encode(encoding))
    loaded = load_path(str(capture))
    assert loaded.issues == ()
    assert {(lk.a, lk.b): lk.code for lk in loaded.machine.links} == links_of(PASTE)
    assert loaded.machine.gpus[4].cpu_affinity == (*range(32, 64), *range(96, 128))


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_the_exact_reading_agrees_with_the_analysis_on_a_clean_capture(encoding: str) -> None:
    """Redaction reads evidence with ``exact_capture_text``: on text the two readings are the same text;
    on damage the exact one refuses (None) where the analysis replaces bytes and goes on."""
    data = PASTE.read_text(encoding="utf-8").encode(encoding)
    assert exact_capture_text(data) == decode_capture(data)
    assert exact_capture_text(b"GPU0\tX\xff\xfe broken") is None and "\ufffd" in decode_capture(b"GPU0\tX\xff broken")


def test_utf16_capture_through_analyze(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capture = tmp_path / "topo.txt"
    capture.write_bytes(codecs.BOM_UTF16_LE + PASTE.read_text(encoding="utf-8").encode("utf-16-le"))
    code, out, err = run_analyze(capture, capsys)
    assert code == ExitCode.OK, err
    report = json.loads(out)
    assert [d["gpus"] for d in report["domains"]] == [[0, 1, 2, 3, 4, 5, 6, 7]]
    assert report["input_issues"] == []


def test_utf16_capture_piped_to_standard_input() -> None:
    data = codecs.BOM_UTF16_LE + PASTE.read_text(encoding="utf-8").encode("utf-16-le")
    proc = subprocess.run(
        [sys.executable, "-m", "topoaudit", "analyze", "-", "--format", "json"],
        input=data,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert [d["gpus"] for d in json.loads(proc.stdout)["domains"]] == [[0, 1, 2, 3, 4, 5, 6, 7]]


def test_binary_data_is_still_refused(tmp_path: Path) -> None:
    blob = tmp_path / "core"
    blob.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    with pytest.raises(InputError, match="binary"):
        load_path(str(blob))


def test_decode_capture_keeps_undecodable_bytes_visible() -> None:
    assert decode_capture(b"GPU0\tX\n\xfe\xfftail") == "GPU0\tX\n\ufffd\ufffdtail"
    assert decode_capture(codecs.BOM_UTF16_LE + "odd".encode("utf-16-le") + b"\x00") == "odd\ufffd"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("nvidia-smi-no-driver-1.txt", "no working NVIDIA kernel driver"),
        ("nvidia-smi-version-mismatch-1.txt", "Driver/library version mismatch"),
        ("nvidia-smi-no-devices-1.txt", "offers no GPU"),
    ],
)
def test_failed_capture_is_the_failure_it_names(name: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A capture that holds nvidia-smi's error instead of a matrix is judged for what it says: the box cannot use
    its GPUs (a known message, with its fix), not refused as input."""
    code, out, err = run_analyze(FAILED / name, capsys)
    assert code == ExitCode.FINDINGS == 1
    assert "run-failed" in out and why in " ".join(out.split()) and "line 1" in out
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("printed", "why"),
    [
        ("No devices were found\n", "found no NVIDIA GPU"),
        ("Failed to initialize NVML: Unknown Error\n", "could not initialise NVML"),
        ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n", "fallen off the bus"),
        ("bash: nvidia-smi: command not found\n", "not installed"),
    ],
)
def test_other_nvidia_smi_failures_are_named(printed: str, why: str) -> None:
    text = "$ nvidia-smi topo -m\n" + printed
    assert looks_like_topo_matrix(text)
    with pytest.raises(TopoParseError) as err:
        parse_topo_matrix(text)
    assert err.value.exit_code == ExitCode.UNUSABLE
    assert str(err.value).startswith("the capture failed: ") and why in str(err.value) and "line 2" in str(err.value)


def test_failure_text_beside_a_real_matrix_does_not_hide_the_matrix() -> None:
    text = PASTE.read_text(encoding="utf-8") + "\nNo devices were found\n"
    assert looks_like_topo_matrix(text)
    assert capture_failure("GPU0 is fine\n") is None


@pytest.mark.parametrize("space", ["\u00a0", "\u202f", "\u3000"])
def test_a_paste_copied_out_of_a_page_with_no_break_spaces_reads_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], space: str
) -> None:
    """A rendered page or chat client hands back no-break (or other wide) spaces for a log's spaces: nccl-tests'
    rows with wrong values are still read as such, never a PASS (NVIDIA/nccl-tests#37)."""
    text = dev_paste("nccltests-37-allgather-oob-v100")
    typed, pasted = tmp_path / "typed.txt", tmp_path / "pasted.txt"
    typed.write_text(text, encoding="utf-8")
    pasted.write_text(text.replace(" ", space), encoding="utf-8")
    code, out, _ = run_analyze(typed, capsys)
    report = json.loads(out)
    assert code == 1 and report["verdict"] == "fail"
    pasted_code, pasted_out, _ = run_analyze(pasted, capsys)
    again = json.loads(pasted_out)
    assert pasted_code == code and again["verdict"] == report["verdict"]
    assert [f["code"] for f in again["findings"]] == [f["code"] for f in report["findings"]]


@pytest.mark.parametrize("colour", ["\x1b[0;32m{}\x1b[0m", "[36m(RayWorkerVllm pid=5085) [0m {}", "^[[33m{}^[[0m"])
def test_a_log_that_kept_its_colours_reads_as_without_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], colour: str
) -> None:
    """A logger's colours stay in a saved log (escape sequences) or in what a page shows of them ("[36m", "^[[0m",
    as Ray's prefixes in vllm-project/vllm#2734): the lines between them are read as they are without."""
    text = dev_paste("nccltests-37-allgather-oob-v100")
    plain, coloured = tmp_path / "plain.txt", tmp_path / "coloured.txt"
    plain.write_text(text, encoding="utf-8")
    coloured.write_text("".join(colour.format(line) + "\n" for line in text.splitlines()), encoding="utf-8")
    code, out, _ = run_analyze(plain, capsys)
    again_code, again_out, _ = run_analyze(coloured, capsys)
    report, again = json.loads(out), json.loads(again_out)
    assert code == again_code == 1 and again["verdict"] == report["verdict"] == "fail"
    assert [f["code"] for f in again["findings"]] == [f["code"] for f in report["findings"]]


def test_a_paste_from_an_archive_that_escaped_its_brackets_reads_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mailing-list archive or a scraped page writes ``&lt;inactive&gt;`` for nvidia-smi's ``<inactive>`` (and
    ``&nbsp;`` for its indent): a V100 with links down stays a finding, not a PASS."""
    text = dev_paste("rwth-help-claix-v100-nvlink-status")
    assert "<inactive>" in text
    plain, escaped = tmp_path / "plain.txt", tmp_path / "escaped.txt"
    plain.write_text(text, encoding="utf-8")
    escaped.write_text(html.escape(text, quote=False).replace("\t", "&nbsp;"), encoding="utf-8")
    code, out, _ = run_analyze(plain, capsys)
    again_code, again_out, _ = run_analyze(escaped, capsys)
    report, again = json.loads(out), json.loads(again_out)
    assert report["verdict"] == again["verdict"] == "warn" and code == again_code
    assert [f["code"] for f in again["findings"]] == [f["code"] for f in report["findings"]]
