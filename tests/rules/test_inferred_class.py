"""Without --gpu-model, the topology rules judge a box as the class its links show: NV18 on every NVLink pair is an
NVSwitch baseboard of 18-link GPUs (half of it off the fabric fails), NV1/NV2 to four peers is a DGX-1 hybrid
cube-mesh (partial by design; a GPU that lost a bond is degraded), NV12 pairs are bridged PCIe cards (split by
design). Every case is a real paste, damaged the way a box that lost links prints it."""

from __future__ import annotations

from pathlib import Path

from parse.dev_pastes import dev_paste
from rulecheck import audit, damage, real

from topoaudit.model.finding import Severity
from topoaudit.model.identity import CLASSES

TOPO = Path(__file__).parents[1] / "fixtures" / "topo"
H100 = "topo-h100-8gpu-stas-ht-1.txt"  # HGX H100: every pair NV18 (tests/fixtures/rules)
V100 = (TOPO / "topo-v100-sxm2-8gpu-hybridcubemesh-modern-lmdeploy-1.txt").read_text(encoding="utf-8")
NV12_PAIRS = (TOPO / "topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt").read_text(encoding="utf-8")


def by_code(text: str, **options: object) -> dict[str, list]:  # type: ignore[type-arg]
    found: dict[str, list] = {}  # type: ignore[type-arg]
    for f in audit(text, **options).findings:
        found.setdefault(f.code, []).append(f)
    return found


def test_an_nv18_box_split_in_two_halves_fails_without_a_model() -> None:
    """GPUs 0-3 and 4-7 each keep NV18 among themselves but reach the other half over SYS: half the NVSwitch
    fabric is unreachable, whatever the GPU model."""
    halves = damage(real(H100), {(i, j): "SYS" for i in range(4) for j in range(4, 8)})
    report = audit(halves)
    (split,) = [f for f in report.findings if f.code == "nvlink-split-domain"]
    assert split.severity == Severity.FAIL and report.gate.exit_code == 1
    assert "NV18 on all 12 NVLink pairs of GPUs {0-7} shows an NVSwitch baseboard of 18-link GPUs" in split.message
    assert "part of the fabric is unreachable" in split.message
    assert split.remedy.startswith("These GPUs sit on an NVSwitch baseboard, not on NVLink bridges")
    assert report.identified.hardware_class == "nvswitch-18"


def test_the_cube_mesh_is_partial_by_design_without_a_model() -> None:
    found = by_code(V100)
    (partial,) = found["nvlink-partial-mesh"]
    assert partial.severity == Severity.INFO
    assert partial.message.endswith(
        "by design for a DGX-1-style hybrid cube-mesh of V100-class GPUs, 6 NVLinks each to four peers."
    )
    assert "nvlink-degraded" not in found


def test_a_cube_mesh_gpu_that_lost_a_bond_is_degraded_without_a_model() -> None:
    """GPU0-GPU3 is NV2 on a DGX-1; one of its two links down leaves GPUs 0 and 3 with 5 links where their six
    siblings have 6."""
    lost = damage(V100, {(0, 3): "NV1"})
    report = audit(lost)
    degraded = [f for f in report.findings if f.code == "nvlink-degraded"]
    assert len(degraded) == 1 and degraded[0].severity == Severity.FAIL
    assert degraded[0].evidence["gpus"] == [{"gpu": 0, "nvlinks": 5}, {"gpu": 3, "nvlinks": 5}]
    assert "fewer NVLinks to their peers than the 6 their siblings show on a DGX-1-style hybrid cube-mesh" in (
        degraded[0].message
    )
    assert report.gate.verdict == "fail"


def test_nv12_pairs_are_bridged_cards_split_by_design_without_a_model() -> None:
    report = audit(NV12_PAIRS)
    (split,) = [f for f in report.findings if f.code == "nvlink-split-domain"]
    assert split.severity == Severity.INFO and report.gate.verdict == "pass"
    assert "By design for PCIe cards joined in pairs by NVLink bridges of 12 links" in split.message
    assert report.identified.class_evidence == "NV12 joining GPUs in pairs only: GPU0-GPU1, GPU2-GPU3"


def test_an_nv12_pair_with_an_unbridged_neighbour_warns_without_a_model() -> None:
    alone = damage(NV12_PAIRS, {(2, 3): "NODE"})
    (left_out,) = by_code(alone)["nvlink-degraded"]
    assert left_out.severity == Severity.WARN and "GPUs {2,3}" in left_out.message


def test_a_model_that_contradicts_the_links_is_a_finding_and_the_links_are_judged() -> None:
    """An RTX 3090 has 4 NVLinks; NV18 from GPU0 to seven peers is no RTX 3090's. The box is judged as its links
    show (an 18-link NVSwitch baseboard), not against the 3090's bridge."""
    report = audit(H100, gpu_model="NVIDIA GeForce RTX 3090")
    (said,) = [f for f in report.findings if f.code == "gpu-model-contradicts-links"]
    assert said.severity == Severity.WARN
    assert said.message == (
        "'NVIDIA GeForce RTX 3090' contradicts the links: NVIDIA GeForce RTX 3090 has 4 NVLinks per GPU, yet "
        "GPU0-GPU1 show NV18 and GPU0 reaches 7 peers over NVLink; judged as what the links show, an NVSwitch "
        "baseboard of 18-link GPUs of the H100, H200, H20 or B200 class: NV18 on all 28 NVLink pairs of GPUs {0-7}."
    )
    assert not isinstance(report.catalog_entry, str) and "model-unknown" not in {f.code for f in report.findings}
    assert report.identified.hardware_class == "nvswitch-18"


def test_a_model_whose_links_are_merely_fewer_is_no_contradiction() -> None:
    """An H100 box reading NV8 between a pair is degraded, not an H800."""
    low = damage(real(H100), {(0, 1): "NV8"})
    codes = {f.code for f in audit(low, gpu_model="NVIDIA H100 80GB HBM3").findings}
    assert "nvlink-degraded" in codes and "gpu-model-contradicts-links" not in codes


A100_8NIC = (TOPO / "topo-8xa100sxm4-80g-8nic-roce-deepep-1.txt").read_text(encoding="utf-8")
L4_PCIE = (TOPO / "topo-8xl4-pcie-phb-sys-2socket-1.txt").read_text(encoding="utf-8")
PCIE_8X5090 = (TOPO / "topo-8x5090-pcie-dual-epyc-2nic-sglang-1.txt").read_text(encoding="utf-8")


def _all_links_down(text: str) -> str:
    """Every NVLink pair replaced by the PCIe path a board without its links shows (NODE in a socket, SYS across)."""
    return damage(text, {(i, j): ("NODE" if i // 4 == j // 4 else "SYS") for i in range(8) for j in range(i + 1, 8)})


def test_pcie_cards_without_nvlink_pass_and_say_what_showed_it() -> None:
    """Eight RTX 5090 cards, no NVLink, two NICs far from every GPU: a server of PCIe cards, judged (PASS). Eight
    L4 cards whose paste shows no NIC at all stay undecided (a warning that TP runs over PCIe, never PASS): an NVLink
    board that lost every link, pasted without its NICs, looks the same."""
    report = audit(PCIE_8X5090)
    assert report.gate.verdict == "pass" and report.identified.hardware_class == "pcie-cards"
    assert report.identified.class_evidence.startswith("no NVLink on any of the 28 GPU pairs, and no NIC at PIX/PXB")
    (absent,) = by_code(PCIE_8X5090)["nvlink-absent"]
    assert absent.severity == Severity.INFO and "--gpu-model" in absent.message
    undecided = audit(L4_PCIE)
    assert undecided.identified.hardware_class == "" and undecided.gate.verdict == "warn"
    (warned,) = by_code(L4_PCIE)["nvlink-absent"]
    assert "fits PCIe cards (no NVLink by design) as well as an NVLink baseboard whose every link is down" in (
        warned.message
    )


def test_a_name_only_pcie_cards_carry_judges_the_box_as_pcie_cards() -> None:
    """The L4 matrix again, with `nvidia-smi -L` naming a GeForce card the catalog lacks: no baseboard holds one."""
    listed = "".join(
        f"GPU {i}: NVIDIA GeForce RTX 2080 Ti (UUID: GPU-{i:08x}-0000-0000-0000-000000000000)\n" for i in range(8)
    )
    report = audit(listed + "\n" + L4_PCIE)
    assert report.gate.verdict == "pass" and report.identified.hardware_class == "pcie-cards"
    assert report.identified.class_evidence == "the GPU name 'NVIDIA GeForce RTX 2080 Ti': GeForce GPUs are PCIe cards"
    (absent,) = by_code(listed + "\n" + L4_PCIE)["nvlink-absent"]
    assert absent.severity == Severity.INFO


def test_a_gpu_count_no_baseboard_carries_is_pcie_cards() -> None:
    three = "\n".join(
        line for line in L4_PCIE.splitlines() if not line.startswith(("GPU3", "GPU4", "GPU5", "GPU6", "GPU7"))
    )
    header, *rows = three.splitlines()
    header = header.replace("GPU3", "").replace("GPU4", "").replace("GPU5", "").replace("GPU6", "").replace("GPU7", "")
    report = audit("\n".join([header, *(" ".join(r.split()[:4] + r.split()[9:]) for r in rows)]) + "\n")
    assert report.identified.hardware_class == "pcie-cards", report.identified
    assert "3 GPUs, a count no NVLink baseboard carries" in report.identified.class_evidence


def test_a_baseboard_layout_that_lost_every_nvlink_is_never_pass_without_a_model() -> None:
    """An HGX A100 with a NIC beside each GPU pair and no NVLink left: an NVLink board that lost its links looks
    so, as PCIe cards never do; without the model it warns (never PASS), with it it fails."""
    down = _all_links_down(A100_8NIC)
    report = audit(down)
    assert report.identified.hardware_class == "" and report.gate.verdict == "warn"
    assert audit(down, gpu_model="A100 SXM4 80GB").gate.verdict == "fail"


def test_every_hardware_class_is_documented_with_the_json_fields() -> None:
    fields = (Path(__file__).parents[2] / "docs" / "json.md").read_text(encoding="utf-8")
    assert all(f"`{key}`" in fields for key in CLASSES)


def test_nv4_pairs_without_a_model_are_not_passed_as_bridged_cards() -> None:
    """NV4 pairs are what Ampere cards' single bridges show (RTX A6000, RTX 3090, A40), and also what A100 PCIe pairs
    show with two of their three bridges missing: without a model the split is undecided, never PASS."""
    short_bridged = damage(NV12_PAIRS, {(0, 1): "NV4", (2, 3): "NV4"})
    report = audit(short_bridged)
    assert report.gate.verdict != "pass" and report.identified.hardware_class == ""
    (split,) = [f for f in report.findings if f.code == "nvlink-split-domain"]
    assert split.severity == Severity.WARN and "cannot tell whether this is by design" in split.message


# One quad of a DGX-1 as a container sees it (NVIDIA/nccl-tests#93): every pair linked, NV2 pairs chaining the four
# GPUs and NV1 the others; each GPU's other links go to the quad the container does not show.
QUAD = dev_paste("nccl-tests-93-v100-topo-two-dockers")


def test_one_quad_of_a_cube_mesh_is_its_design_not_a_degraded_mesh() -> None:
    """Before: FAIL, "3 GPU pair(s) have fewer NVLinks than its siblings" (the NV1 pairs against the NV2 ones)."""
    for options in ({}, {"gpu_model": "Tesla V100-SXM2-32GB"}):
        report = audit(QUAD, **options)
        assert "nvlink-degraded" not in by_code(QUAD, **options) and report.gate.verdict == "pass"


def test_only_the_quad_s_exact_pattern_is_taken_for_its_design() -> None:
    """A pair with no NVLink breaks the quad (a mesh missing a pair); NV2 pairs that do not chain the four GPUs are
    not the DGX-1's quad, and its NV1 pairs are judged against them as before."""
    assert [f.severity for f in by_code(damage(QUAD, {(0, 1): "SYS"}))["nvlink-partial-mesh"]] == [Severity.WARN]
    assert [f.severity for f in by_code(damage(QUAD, {(0, 1): "NV2"}))["nvlink-degraded"]] == [Severity.FAIL]
