"""What the box is judged as, and what showed it: --gpu-model matched exactly or said what it matched, the line of
a paste that names the GPUs, a model the catalog lacks named as such. Real pastes of the corpus's dev part and
fixtures with their provenance."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from cli_runner import Run

from topoaudit.exitcodes import ExitCode

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).parents[1] / "fixtures"
REAL = FIXTURES / "real"
H100_TOPO = str(FIXTURES / "rules" / "topo-h100-8gpu-stas-ht-1.txt")
MI355X = str(FIXTURES / "nccltests" / "nccltest-rccl-mi355x-oci-8gpu-allreduce-trimmed-1.txt")


def dev_paste(paste_id: str) -> Path:
    parts = {p["id"]: p["part"] for p in tomllib.loads((REAL / "corpus.toml").read_text())["paste"]}
    assert parts[paste_id] == "dev", f"{paste_id} is held back"
    return REAL / "pastes" / f"{paste_id}.txt"


def report(run: Run, *args: str) -> dict:  # type: ignore[type-arg]
    code, out, _ = run("analyze", *args, "--format", "json")
    assert code in (0, 1), out
    data: dict = json.loads(out)  # type: ignore[type-arg]
    return data


def test_the_line_that_names_the_gpus_is_quoted(run: Run) -> None:
    data = report(run, str(dev_paste("nccl-1706-h800-cmd-p2pdisable-header")))
    assert (data["gpu_model"], data["catalog_entry"]) == ("NVIDIA H800", "H800")
    said = data["identified"]
    assert said["how"] == "input"
    assert said["evidence"] == "line 6: '# Rank 0 Group 0 Pid 2081556 on deepseek device 0 [0000:0f:00] NVIDIA H800'"
    assert said["note"] == "'NVIDIA H800' is catalog entry H800 (NVIDIA H800 SXM5)"
    _, console, _ = run("analyze", str(dev_paste("nccl-1706-h800-cmd-p2pdisable-header")))
    assert "line 6: '# Rank 0 Group 0 Pid 2081556 on deepseek device 0" in " ".join(console.replace("│", " ").split())


def test_nvbandwidth_device_names_with_a_bus_id_find_their_entry(run: Run) -> None:
    """nvbandwidth v0.7+ prints ``Device 0: NVIDIA A100-SXM4-40GB (00000000:99:00)``."""
    data = report(run, str(dev_paste("nvbw-42-1xa100-h2d-sm-512mib")))
    assert (data["gpu_model"], data["catalog_entry"]) == ("NVIDIA A100-SXM4-40GB", "A100-SXM")
    assert data["identified"]["evidence"] == "line 9: 'Device 0: NVIDIA A100-SXM4-40GB (00000000:99:00)'"


@pytest.mark.parametrize(
    ("asked", "entry"),
    [("NVIDIA H100 PCIe", "H100-PCIE"), ("NVIDIA H100 NVL", "H100-NVL"), ("H100", "H100-SXM")],
)
def test_gpu_model_lands_on_its_own_entry(run: Run, asked: str, entry: str) -> None:
    data = report(run, H100_TOPO, "--gpu-model", asked)
    assert data["catalog_entry"] == entry or data["identified"]["contradiction"]


def test_a_name_that_is_no_entry_is_not_silently_the_nearest(run: Run) -> None:
    """'NVIDIA H2000' is no H200: the catalog has no entry for it, and the box is judged as its links show."""
    data = report(run, H100_TOPO, "--gpu-model", "NVIDIA H2000")
    assert data["catalog_entry"]["reason"] == "no catalog entry for 'NVIDIA H2000'"
    assert data["identified"]["note"] == "the catalog has no entry for 'NVIDIA H2000'"
    assert data["identified"]["hardware_class"] == "nvswitch-18"
    (unknown,) = [f for f in data["findings"] if f["code"] == "model-unknown"]
    assert unknown["message"].startswith("GPU model 'NVIDIA H2000' not in the catalog")


def test_a_model_named_in_the_input_but_not_in_the_catalog_says_so_not_pass_gpu_model(run: Run) -> None:
    data = report(run, MI355X)
    assert data["identified"]["note"] == "the catalog has no entry for 'AMD Instinct MI355X'"
    assert data["identified"]["evidence"].startswith("line 6: '# Rank 0 Group 0 Pid 9632 on GPU-6403 device 0")
    (unknown,) = [f for f in data["findings"] if f["code"] == "model-unknown"]
    assert unknown["remedy"].startswith("The catalog has no entry for this model")
    _, console, _ = run("analyze", MI355X)
    assert "pass --gpu-model" not in console.lower() and "add --gpu-model" not in console.lower()


def test_a_seven_gpu_view_of_an_eight_gpu_baseboard_warns_from_device_names(run: Run, tmp_path: Path) -> None:
    """An 8x H200 run made a 7-GPU run (-g 7, rank 7's line gone): no link is shown, the names say H200."""
    lines = (
        dev_paste("azhc-142-h200-vm-allreduce-480").read_text().replace("nGpus 8", "nGpus 7").replace("-g 8", "-g 7")
    )
    seven = tmp_path / "seven.txt"
    seven.write_text("".join(line for line in lines.splitlines(keepends=True) if "Rank  7 Group" not in line))
    data = report(run, str(seven))
    (short,) = [f for f in data["findings"] if f["code"] == "gpus-short-of-node"]
    assert short["severity"] == "warn" and short["message"].startswith("7 GPUs of NVIDIA H200 SXM, which ships 8")
    cut = tmp_path / "cut.txt"  # nGpus 8 kept: the paste lost a device line, the run did not lose a GPU
    cut.write_text(
        "".join(
            line
            for line in lines.replace("nGpus 7", "nGpus 8").splitlines(keepends=True)
            if "Rank  7 Group" not in line
        )
    )
    assert "gpus-short-of-node" not in {f["code"] for f in report(run, str(cut))["findings"]}


def test_an_nvlink_status_paste_that_elides_gpus_is_not_short_of_gpus(run: Run) -> None:
    """`nvidia-smi nvlink -s` of 8x A100 pasted up to GPU 2 and then '......': it shows 3 GPUs, not a box of 3."""
    code, out, _ = run("analyze", str(dev_paste("nccltests-228-a100-nvlink-s-all-up-tabs")), "--format", "json")
    data = json.loads(out)
    assert code == ExitCode.OK and data["verdict"] == "pass"
    assert "gpus-short-of-node" not in {f["code"] for f in data["findings"]}
