"""The cost of crossing, as `plan` prints it: a DGX Station is one GPU whose TP group crosses machines over
ConnectX-8, and with the model's shape the all-reduces per decode step are timed inside one NVLink domain and
across, with the ceiling that puts on tokens per second, checked against the published two-station figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import machine, split_4_4
from cli_runner import run_cli as run

from tests.oracle.sweeps import sweep
from topoaudit.model.plan import ModelShape, PlanRequest
from topoaudit.model.report import AuditOptions, SourceInfo
from topoaudit.pipeline import analyze

STATION = ("--weights-gb", "464", "--gpu", "DGX Station GB300", "--kv-headroom", "0.05")
"""GLM-5.3 NVFP4, 464 GB, on two DGX Stations (NVIDIA Technical Blog 'When One GPU Isn't Enough: Serving GLM-5.3
Across Two NVIDIA DGX Stations'): each GB300 holds 231 GB of weights and ~20 GB of FP8 KV cache, so the headroom
is 5%, and TP=2."""

GLM5 = ("--layers", "78", "--hidden", "6144")
"""The GLM-5 shape: 78 layers, hidden size 6144 (huggingface/transformers GlmMoeDsaConfig defaults, 'similar to
zai-org/GLM-5')."""

PUBLISHED = {16: 607.8, 32: 385.0}
"""Output tokens/s the two stations served at concurrency 16 and 32 (the same article, AIPerf)."""


def _plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, "plan", "--format", "json", *args)
    return code, json.loads(out)


def _markdown(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code, out, _ = run(capsys, "plan", "--format", "markdown", *args)
    return code, out


def test_a_dgx_station_is_one_gpu_and_its_tp_group_crosses_machines_over_connectx8(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out = _markdown(capsys, *STATION)
    assert code == 1 and "Checked against: catalog machine DGX Station GB300 (exit 1)" in out
    assert (
        "TP2 needs more GPUs than the DGX Station GB300 (one GPU, no NVLink to another) has (1); the group would "
        "cross machines over ConnectX-8 RDMA (1x 800G ConnectX-8 SuperNIC per machine)." in out
    )
    assert "fits one NVLink domain" not in out
    assert "TP2 across 2 DGX Station GB300 over ConnectX-8 RDMA" in out  # the alternative names the network too
    _, doc = _plan(capsys, *STATION)
    assert doc["plan"]["card_memory_gb"] == 252 and doc["plan"]["tp_size"] == 2


def test_the_card_alone_is_still_sized_in_its_rack(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _markdown(capsys, "--weights-gb", "464", "--gpu", "GB300", "--kv-headroom", "0.05")
    assert code == 0 and "TP2 fits one NVLink domain of the standard NVIDIA GB300 NVL72 rack" in out


@pytest.mark.parametrize("batch", [16, 32])
def test_the_two_station_ceiling_is_not_below_what_the_stations_served(
    capsys: pytest.CaptureFixture[str], batch: int
) -> None:
    _, doc = _plan(capsys, *STATION, *GLM5, "--batch", str(batch))
    cost = doc["plan"]["communication"]
    across, inside = cost["across"], cost["inside"]
    assert cost["message_bytes"] == batch * 6144 * 2 and cost["allreduces_per_step"] == 156
    assert across["where"].startswith("across 2 DGX Station GB300 over ConnectX-8 RDMA")
    assert across["tokens_per_s"] >= PUBLISHED[batch]  # a ceiling: never below what was measured
    assert across["tokens_per_s_per_sequence"] >= PUBLISHED[batch] / batch
    assert inside["step_ms"] < across["step_ms"]  # inside one NVLink domain the same group is cheaper
    assert across["busbw_gbps"] == 100.0 and across["latency_us"] == 16.6  # 800 Gb/s / 8; 6.6 + 2 x 5.0 us


def test_the_plan_prints_the_cost_of_crossing_in_tokens_per_second(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = _markdown(capsys, *STATION, *GLM5, "--concurrency", "16")
    for line in (
        "all-reduce per decode step: 2 per layer x 78 layers = 156, each batch 16 x hidden 6,144 x 2 B (bf16 "
        "activations) = 196,608 B (192 KiB)",
        "inside one NVLink domain (2 GPUs of the standard NVIDIA GB300 NVL72 rack): one all-reduce 8.07 us (7.8 us "
        "NCCL latency (ring LL: 6.6 + 2 x 0.6 NVLink) + 192 KiB at 721.8 GB/s, the oracle's ring figure (derived)), "
        "so 1.259 ms of all-reduce per decode step: at most 794 tokens/s per sequence, 12,706 tokens/s at batch 16",
        "one all-reduce 18.57 us (16.6 us NCCL latency (ring LL: 6.6 + 2 x 5 network) + 192 KiB at 100 GB/s, the "
        "oracle's ring figure (derived)), so 2.896 ms of all-reduce per decode step: at most 345 tokens/s per "
        "sequence, 5,524 tokens/s at batch 16",
        "TP2 across 2 DGX Station GB300: at batch 16 each decode step spends 2.896 ms in all-reduce instead of "
        "1.259 ms inside one NVLink domain (2.3x)",
        "prefill is bandwidth-bound: each prompt token moves 156 x 12,288 B through all-reduce, at the "
        "large-message busbw at most 376,540 prompt tokens/s inside one domain (721.8 GB/s) and 52,167 prompt "
        "tokens/s across (100 GB/s)",
        "ceilings from communication alone",
    ):
        assert line in out


def test_nics_given_time_the_network_path(capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _plan(capsys, *STATION, *GLM5, "--batch", "16", "--nics", "1x400")
    across = doc["plan"]["communication"]["across"]
    assert across["busbw_gbps"] == 50.0 and "(1x 400G (--nics 1x400))" in across["where"]


def test_hidden_needs_layers(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "plan", *STATION, "--hidden", "6144")
    assert code == 2 and "--hidden needs --layers" in err


def test_without_the_shape_the_plan_says_how_to_get_the_cost(capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _plan(capsys, *STATION)
    assert doc["plan"]["communication"]["reason"].startswith("no model shape given: --layers and --hidden")


def test_a_split_box_says_what_tp8_costs_over_its_split_instead_of_one_domain() -> None:
    """8x H100 SXM whose NVSwitch split it into two NVLink domains of 4 joined over SYS."""
    box = machine(8, split_4_4, name="NVIDIA H100 80GB HBM3")
    request = PlanRequest(weights_gb=400.0, shape=ModelShape(61, 7168, 16))  # 500 GB: 7 cards, TP8
    report = analyze(box, source=SourceInfo("topo-matrix", "split.txt"), plan_request=request, options=AuditOptions())
    steps = report.plan.steps  # type: ignore[union-attr]
    said = [s for s in steps if s.startswith("TP8 on this box runs its all-reduces across its NVLink domains over")]
    assert said == [
        "TP8 on this box runs its all-reduces across its NVLink domains over cross-socket SMP link (SYS): at batch 16 "
        "each decode step spends 3.533 ms in all-reduce instead of 1.932 ms inside one NVLink domain (1.8x)"
    ]


def test_a_box_whose_run_was_pasted_is_timed_from_its_measured_rows(capsys: pytest.CaptureFixture[str]) -> None:
    run_file = (
        Path(__file__).parents[1]
        / "fixtures"
        / "nccltests"
        / ("nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1.txt")
    )
    _, doc = _plan(capsys, "--weights-gb", "200", "--from", str(run_file), "--layers", "80", "--hidden", "8192",
                   "--batch", "16")  # fmt: skip
    inside = doc["plan"]["communication"]["inside"]
    assert inside["timed_from"] == "measured" and inside["allreduce_us"] == 45.21  # nccl-tests' row at 256 KiB
    assert "the row at 256 KiB: 45.21 us" in inside["summary"] and inside["busbw_gbps"] == 235.14
    assert any("describes no links between them: the plan is checked against the standard node" in s
               for s in doc["plan"]["steps"])  # fmt: skip


def test_a_run_without_rows_around_the_message_is_modelled_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "two-nodes.txt"
    path.write_text(sweep("NVIDIA H100 80GB HBM3", 2, 8, 330.0))  # sizes from 1 MiB up
    _, doc = _plan(capsys, "--weights-gb", "900", "--from", str(path), "--layers", "61", "--hidden", "7168",
                   "--batch", "16", "--nics", "8x400")  # fmt: skip
    across = doc["plan"]["communication"]["across"]
    assert across["timed_from"] == "model" and "the run has no rows around 224 KiB" in across["basis"]
    assert across["where"] == "across 2 nodes of 8 over the network (8x 400G (--nics 8x400))"
