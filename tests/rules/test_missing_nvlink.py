"""A box that lost NVLink fails on the default path (a pasted matrix, no --gpu-model, no --tp): the box's
own GPUs are the expectation. Every case is a real paste with the damage a user would see applied."""

from __future__ import annotations

import dataclasses

import pytest
from rulecheck import audit, check, damage, findings, real

from topoaudit.model.finding import Severity
from topoaudit.model.machine import Link, Machine, PathLevel
from topoaudit.model.topology import bottleneck, nvlink_domains, place_tp
from topoaudit.rules.topology_rules import missing_nvlink

A100 = "topo-a100-8gpu-stas-compressed-spaces-1.txt"  # DGX A100 class: every pair NV12
H100 = "topo-h100-8gpu-stas-ht-1.txt"  # HGX H100: every pair NV18
A100_MODEL = "NVIDIA A100-SXM4-80GB"
H100_MODEL = "NVIDIA H100 80GB HBM3"


def lost_every_link(gpu: int) -> str:
    """The A100 paste where one GPU's row and column read SYS (its NVLinks are all down)."""
    return damage(real(A100), {(gpu, j): "SYS" for j in range(8) if j != gpu})


def half_nvswitch() -> str:
    """The H100 paste where GPUs 0-3 keep NV18 and GPUs 4-7 have no NVLink (NODE among them, SYS across)."""
    cells = {(i, j): "SYS" for i in range(4) for j in range(4, 8)}
    cells |= {(i, j): "NODE" for i in range(4, 8) for j in range(i + 1, 8)}
    return damage(real(H100), cells)


def pair_without_nvlink() -> str:
    """The A100 paste where the single pair GPU2-GPU5 reads SYS."""
    return damage(real(A100), {(2, 5): "SYS"})


def degraded(source: str | Machine, **options: object) -> list:  # type: ignore[type-arg]
    return [f for f in findings(source, **options) if f.code == "nvlink-degraded"]


def test_damage_rewrites_only_the_cells_named() -> None:
    text = lost_every_link(3)
    rows = [line.split() for line in text.splitlines()[1:]]
    assert rows[3][1:9] == ["SYS", "SYS", "SYS", "X", "SYS", "SYS", "SYS", "SYS"]
    assert rows[0][1:9] == ["X", "NV12", "NV12", "SYS", "NV12", "NV12", "NV12", "NV12"]
    assert [r[-2:] for r in rows] == [line.split()[-2:] for line in real(A100).splitlines()[1:]]


@pytest.mark.parametrize("name", [A100, H100])
def test_the_undamaged_real_boxes_pass(name: str) -> None:
    assert check(missing_nvlink, name) == set()
    assert audit(name).gate.exit_code == 0


@pytest.mark.parametrize("gpu", [0, 3, 7])
def test_a_gpu_that_lost_every_nvlink_fails_on_the_default_path(gpu: int) -> None:
    report = audit(lost_every_link(gpu))
    assert check(missing_nvlink, lost_every_link(gpu)) == {"nvlink-degraded"}
    (found,) = degraded(lost_every_link(gpu))
    assert found.severity == Severity.FAIL
    assert found.evidence["gpus"] == [{"gpu": gpu, "nvlinks": 0}]
    assert found.evidence["expected_nvlinks"] == 12
    assert f"GPUs {{{gpu}}}" in found.message and "other 7 GPUs" in found.message
    assert report.gate.verdict == "fail" and report.gate.exit_code == 1


def test_a_gpu_that_lost_every_nvlink_fails_the_same_with_the_model_named() -> None:
    (plain,) = degraded(lost_every_link(3))
    (named,) = degraded(lost_every_link(3), gpu_model=A100_MODEL)
    assert (named.severity, named.evidence["gpus"]) == (plain.severity, plain.evidence["gpus"])
    assert audit(lost_every_link(3), gpu_model=A100_MODEL).gate.exit_code == 1


def test_the_half_nvswitch_box_fails_without_a_model_naming_the_gpus_left_out() -> None:
    """NV18 on every NVLink pair is an NVSwitch baseboard of 18-link GPUs whatever the model: half of it off the
    fabric is a failure without --gpu-model."""
    (found,) = degraded(half_nvswitch())
    assert found.severity == Severity.FAIL
    assert found.evidence["gpus"] == [{"gpu": g, "nvlinks": 0} for g in (4, 5, 6, 7)]
    assert "GPUs {4-7}" in found.message and "{0-3}" in found.message
    report = audit(half_nvswitch())
    assert report.gate.verdict == "fail" and report.gate.exit_code == 1
    assert report.identified.hardware_class == "nvswitch-18"
    assert report.identified.class_evidence == "NV18 on all 6 NVLink pairs of GPUs {0-3}"


@pytest.mark.parametrize(
    ("options", "code"),
    [({"tp": 8}, "tp-group-crosses-domain"), ({"expect_domain": 8}, "expectation-not-met")],
)
def test_the_half_nvswitch_box_fails_when_the_user_needs_eight(options: dict[str, int], code: str) -> None:
    report = audit(half_nvswitch(), **options)
    assert code in {f.code for f in report.findings} and report.gate.exit_code == 1


def test_the_half_nvswitch_box_fails_when_the_catalog_says_every_gpu_is_linked() -> None:
    (found,) = degraded(half_nvswitch(), gpu_model=H100_MODEL)
    assert found.severity == Severity.FAIL and "links all 8 GPUs" in found.message


def test_a_pair_without_nvlink_inside_an_nvswitch_domain_fails_naming_the_pair() -> None:
    (found,) = degraded(pair_without_nvlink())
    assert found.severity == Severity.FAIL
    assert found.evidence["pairs"] == [{"gpus": [2, 5], "nvlinks": 0, "path": "SYS"}]
    assert "GPU2-GPU5 SYS" in found.message
    assert audit(pair_without_nvlink()).gate.exit_code == 1


def test_no_placement_puts_the_pair_without_nvlink_in_one_group() -> None:
    report = audit(pair_without_nvlink(), tp=8)
    for placement in report.placements:
        assert not any({2, 5} <= set(group) for group in placement.groups), placement
    (eight,) = [p for p in report.placements if p.tp == 8]
    assert not eight.fits and "missing link" in eight.alternatives[0]
    crossing = [f for f in report.findings if f.code == "tp-group-crosses-domain"]
    assert crossing and "linked pair by pair" in crossing[0].message
    four = next(p for p in report.placements if p.tp == 4)
    assert four.groups == ((0, 1, 2, 3), (4, 5, 6, 7))


def _with_links(machine: Machine, codes: dict[tuple[int, int], tuple[str, PathLevel, int]]) -> Machine:
    """``machine`` with the GPU pairs named given another cell, as any source (paste, probe) could."""
    links = []
    for link in machine.links:
        pair = (int(link.a[3:]), int(link.b[3:])) if link.a[:3] == link.b[:3] == "GPU" else None
        if pair in codes:
            code, level, count = codes[pair]
            link = Link(link.a, link.b, code, level, count)
        links.append(link)
    return dataclasses.replace(machine, links=tuple(links))


@pytest.mark.parametrize(
    "pairs",
    [[(2, 5)], [(3, j) if j > 3 else (j, 3) for j in range(8) if j != 3]],
    ids=["one-pair", "every-link-of-gpu3"],
)
def test_nv0_is_no_link_everywhere_domains_placements_and_rules(pairs: list[tuple[int, int]]) -> None:
    base = audit(A100).machine
    nv0 = _with_links(base, dict.fromkeys(pairs, ("NV0", PathLevel.NVLINK, 0)))
    sys_ = _with_links(base, dict.fromkeys(pairs, ("SYS", PathLevel.SYS, 0)))
    assert [d.gpus for d in nvlink_domains(nv0)] == [d.gpus for d in nvlink_domains(sys_)]
    assert [d.all_pairs for d in nvlink_domains(nv0)] == [d.all_pairs for d in nvlink_domains(sys_)]
    for tp in (2, 4, 8):
        groups_nv0 = place_tp(nv0, nvlink_domains(nv0), tp).groups
        assert groups_nv0 == place_tp(sys_, nvlink_domains(sys_), tp).groups
    a, b = pairs[0]
    assert bottleneck(nv0, (a, b)).level != PathLevel.NVLINK
    judged_nv0 = [(f.code, f.severity, f.evidence.get("gpus")) for f in findings(nv0)]
    judged_sys = [(f.code, f.severity, f.evidence.get("gpus")) for f in findings(sys_)]
    assert judged_nv0 == judged_sys and ("nvlink-degraded", Severity.FAIL) in [c[:2] for c in judged_nv0]


CASES = {
    "gpu-lost-every-nvlink": (lambda: lost_every_link(5), A100_MODEL),
    "half-nvswitch": (half_nvswitch, H100_MODEL),
    "pair-without-nvlink": (pair_without_nvlink, A100_MODEL),
    "nv0-pair": (lambda: _with_links(audit(A100).machine, {(2, 5): ("NV0", PathLevel.NVLINK, 0)}), A100_MODEL),
    "undamaged": (lambda: real(A100), A100_MODEL),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_rules_fire_with_and_without_the_gpu_model(case: str) -> None:
    make, model = CASES[case]
    source = make()
    plain = check(None, source) - {"model-unknown"}
    named = check(None, source, gpu_model=model)
    assert plain == named
    if case != "undamaged":
        assert "nvlink-degraded" in plain
        assert audit(source).gate.verdict in ("warn", "fail")
        assert audit(source, gpu_model=model).gate.verdict == "fail"


def _station(fifth: str) -> Machine:
    """A DGX Station A100 shape (constructed): four A100s on NVLink and a fifth GPU with none."""
    from builders import machine

    box = machine(5, lambda i, j: "NV4" if j < 4 else "SYS")
    names = ["NVIDIA A100-SXM4-80GB"] * 4 + [fifth]
    return dataclasses.replace(box, gpus=tuple(dataclasses.replace(g, name=names[g.index]) for g in box.gpus))


def test_a_gpu_of_another_model_beside_the_domain_is_not_missing_links() -> None:
    assert check(missing_nvlink, _station("NVIDIA DGX Display")) == set()
    (found,) = degraded(_station("NVIDIA A100-SXM4-80GB"))
    assert found.severity == Severity.FAIL and found.evidence["gpus"] == [{"gpu": 4, "nvlinks": 0}]


def test_a_rack_scale_domain_with_one_broken_pair_is_judged_and_placed() -> None:
    """An NVL72-sized switched domain (constructed) with one pair down: the pair is named, and TP groups are
    found without it (a near-complete graph has too many cliques to list them all)."""
    from builders import machine

    box = machine(72, lambda i, j: "SYS" if (i, j) == (2, 5) else "NV18")
    report = audit(box, tp=8)
    (found,) = [f for f in report.findings if f.code == "nvlink-degraded"]
    assert found.evidence["pairs"] == [{"gpus": [2, 5], "nvlinks": 0, "path": "SYS"}]
    (eight,) = [p for p in report.placements if p.tp == 8]
    assert len(eight.groups) == 9 and not any({2, 5} <= set(g) for g in eight.groups)


def test_a_cell_that_could_not_be_read_is_not_called_a_missing_link() -> None:
    """A paste cut inside its last cell (``N`` of ``NV12``) leaves that pair unknown, not without NVLink."""
    cut = _with_links(audit(A100).machine, {(6, 7): ("N", PathLevel.UNKNOWN, 0)})
    assert check(missing_nvlink, cut) == set()
    assert [d.gpus for d in nvlink_domains(cut)] == [tuple(range(8))]


def bridged(i: int, j: int) -> str:
    """Bridged pairs {0,1} {2,3} ...: NV4 inside a pair, PCIe between pairs."""
    return "NV4" if i // 2 == j // 2 else "NODE"


def test_the_odd_gpu_beside_bridged_pairs_is_named_as_a_split_by_design_not_a_lost_bridge() -> None:
    """Three A6000-class cards with one bridge (a workstation): the third card has no partner, so nothing is missing;
    TP over all three crosses PCIe, which is worth a warning, and the remedy is a placement, not a repair."""
    from builders import machine

    (found,) = degraded(machine(3, bridged))
    assert found.severity == Severity.WARN and found.evidence["causes"] == ["nvlink-split"]
    assert found.message.startswith("GPU2 has no NVLink: bridges join GPUs two by two ({0,1})")
    assert "reseat" not in found.remedy.lower() and "GPU2 serves a replica of its own" in found.remedy


def test_a_pair_without_a_bridge_among_bridged_pairs_is_still_named_as_missing_links() -> None:
    """Four cards, one bridge: the even count leaves no GPU over, so the unbridged pair may miss a bridge."""
    from builders import machine

    def one_bridge(i: int, j: int) -> str:
        return "NV4" if (i, j) == (0, 1) else "NODE"

    (found,) = degraded(machine(4, one_bridge))
    assert "causes" not in found.evidence and "a bridge or link may be missing" in found.message
