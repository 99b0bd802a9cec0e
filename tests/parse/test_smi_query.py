"""``nvidia-smi -q`` is read whole or in grep's pieces: per GPU its fabric state and health, ECC mode, PCIe link."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from topoaudit.errors import InputError
from topoaudit.model.values import Unsupported
from topoaudit.parse.smi_query import FabricInfo, PcieLink, looks_like_smi_query, read_smi_query

FIXTURES = Path(__file__).parents[1] / "fixtures"
PASTES = FIXTURES / "real" / "pastes"
H200 = (FIXTURES / "h200-device" / "nvidiasmi_q.txt").read_text()


def _na(what: str) -> Unsupported:
    return Unsupported("nvidia-smi -q", f"nvidia-smi prints N/A for {what}")


def _missing(what: str) -> Unsupported:
    return Unsupported("nvidia-smi -q", f"{what} is not in the paste")


def test_a_whole_capture_of_one_gpu_reads_its_fabric_ecc_and_pcie_link() -> None:
    q = read_smi_query(H200)
    assert (q.attached_gpus, q.driver_version, q.cuda_version, q.excerpt) == (1, "580.159.04", "13.0", False)
    (gpu,) = q.gpus
    assert (gpu.bus_id, gpu.product_name, gpu.label) == ("0000:00:06.0", "NVIDIA H200", "0000:00:06.0")
    assert gpu.fabric == FabricInfo(
        state=_na("Fabric State"),
        status=_na("Fabric Status"),
        clique_id=_na("Fabric CliqueId"),
        cluster_uuid=_na("Fabric ClusterUUID"),
        health_summary=_na("Fabric Health Summary"),
        health_bandwidth=_na("Fabric Health Bandwidth"),
        route_recovery_in_progress=_na("Route Recovery"),
        route_unhealthy=_na("Route Unhealthy"),
        access_timeout_recovery=_na("Access Timeout Recovery"),
        incorrect_configuration=_na("Incorrect Configuration"),
    )
    assert (gpu.ecc_mode_current, gpu.ecc_mode_pending) == ("Enabled", "Enabled")
    assert gpu.pcie == PcieLink(5, 5, 5, _na("PCIe generation (host max)"), 16, 16)


def _two_gpus(fabric_second: str) -> str:
    """The H200 capture with a second GPU whose Fabric block says ``fabric_second``."""
    head, _, gpu = H200.partition("GPU 00000000:00:06.0\n")
    second = gpu.replace("00000000:00:06.0", "00000000:00:07.0").replace(
        "        State                                          : N/A\n", fabric_second
    )
    return head.replace("Attached GPUs                                          : 1", "Attached GPUs : 2") + (
        "GPU 00000000:00:06.0\n" + gpu + "GPU 00000000:00:07.0\n" + second
    )


def test_each_gpu_header_starts_a_gpu_of_its_own() -> None:
    q = read_smi_query(_two_gpus("        State                                          : In Progress\n"))
    assert q.attached_gpus == 2 and not q.excerpt
    assert [g.bus_id for g in q.gpus] == ["0000:00:06.0", "0000:00:07.0"]
    assert isinstance(q.gpus[1].fabric, FabricInfo) and q.gpus[1].fabric.state == "In Progress"
    assert isinstance(q.gpus[0].fabric, FabricInfo) and q.gpus[0].fabric.state == _na("Fabric State")


def test_fewer_gpus_than_attached_is_an_excerpt() -> None:
    text = H200.replace("Attached GPUs                                          : 1", "Attached GPUs : 8")
    q = read_smi_query(text)
    assert q.attached_gpus == 8 and len(q.gpus) == 1 and q.excerpt


def test_grep_pieces_without_headers_are_one_gpu_each() -> None:
    q = read_smi_query((PASTES / "do-fm-doc-fabric-in-progress-grep.txt").read_text())
    assert q.excerpt
    assert [(g.line, g.label) for g in q.gpus] == [(2, "the GPU at line 2"), (6, "the GPU at line 6"),
                                                   (10, "the GPU at line 10")]  # fmt: skip
    for gpu in q.gpus:
        assert isinstance(gpu.fabric, FabricInfo)
        assert (gpu.fabric.state, gpu.fabric.status) == ("In Progress", _na("Fabric Status"))
        assert gpu.fabric.clique_id == _missing("Fabric CliqueId")
        assert not gpu.fabric.registered
        assert gpu.bus_id == Unsupported("nvidia-smi -q", "the paste does not show this GPU's bus id")
    assert q.attached_gpus == _missing("Attached GPUs")


def test_a_fabric_block_at_the_margin_reads_like_an_indented_one() -> None:
    q = read_smi_query((PASTES / "azimg-506-fabric-insufficient-resources.txt").read_text())
    (gpu,) = q.gpus
    assert isinstance(gpu.fabric, FabricInfo)
    assert (gpu.fabric.state, gpu.fabric.status, gpu.fabric.clique_id, gpu.fabric.cluster_uuid) == (
        "Completed", "Insufficient Resources", 0, "00000000-0000-0000-0000-000000000000"
    )  # fmt: skip
    assert not gpu.fabric.registered
    assert gpu.pcie == Unsupported("nvidia-smi -q", "the paste has no GPU Link Info for this GPU")


def test_the_fabric_health_of_a_grep_with_context() -> None:
    q = read_smi_query((PASTES / "dra-626-fabric-summary-unhealthy.txt").read_text())
    (gpu,) = q.gpus
    assert isinstance(gpu.fabric, FabricInfo)
    assert gpu.fabric.registered
    assert (gpu.fabric.clique_id, gpu.fabric.health_summary, gpu.fabric.health_bandwidth) == (2, "Unhealthy", "Full")
    assert gpu.fabric.route_unhealthy == _missing("Route Unhealthy")


def test_a_piece_that_starts_inside_the_health_section_is_placed_under_fabric() -> None:
    text = """\
        Health
            Summary                       : Limited Capacity
            Bandwidth                     : Degraded
            Route Recovery in progress    : False
            Route Unhealthy               : True
"""
    (gpu,) = read_smi_query(text).gpus
    assert isinstance(gpu.fabric, FabricInfo)
    assert (gpu.fabric.health_summary, gpu.fabric.health_bandwidth) == ("Limited Capacity", "Degraded")
    assert (gpu.fabric.route_recovery_in_progress, gpu.fabric.route_unhealthy) == (False, True)
    assert gpu.fabric.state == _missing("Fabric State")


def test_keys_only_fabric_has_are_read_without_their_section() -> None:
    text = """\
        CliqueId                          : 32766
        ClusterUUID                       : 9c6f5af3-53bf-49b5-a436-b66766c413c3
--
        CliqueId                          : 32766
        ClusterUUID                       : 00000000-0000-0000-0000-000000000000
"""
    q = read_smi_query(text)
    assert [(g.fabric.clique_id, g.fabric.cluster_uuid) for g in q.gpus if isinstance(g.fabric, FabricInfo)] == [
        (32766, "9c6f5af3-53bf-49b5-a436-b66766c413c3"),
        (32766, "00000000-0000-0000-0000-000000000000"),
    ]


def test_a_pcie_link_running_below_its_maximum() -> None:
    text = """\
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    PCI
        Bus Id                            : 00000000:18:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 5
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : 8x
"""
    (gpu,) = read_smi_query(text).gpus
    assert gpu.pcie == PcieLink(1, 5, _missing("PCIe generation (device max)"), _missing("PCIe generation (host max)"),
                                8, 16)  # fmt: skip
    assert gpu.fabric == Unsupported("nvidia-smi -q", "the paste has no Fabric block for this GPU")


def test_launcher_prefixes_do_not_hide_the_tree() -> None:
    text = "\n".join(f"node7: {line}" for line in H200.splitlines())
    q = read_smi_query(text)
    assert [g.bus_id for g in q.gpus] == ["0000:00:06.0"]
    assert q.gpus[0].ecc_mode_current == "Enabled"


def test_other_text_is_refused_and_not_sniffed() -> None:
    other = (PASTES / "nccl-1676-dgx-gdr-disabled-lines.txt").read_text()
    assert not looks_like_smi_query(other)
    with pytest.raises(InputError, match="no nvidia-smi -q line"):
        read_smi_query(other, "paste.txt")
    assert looks_like_smi_query(H200)
    assert looks_like_smi_query((PASTES / "gpuop-2511-fabric-in-progress.txt").read_text())


H200_XML = (FIXTURES / "h200-device" / "nvidiasmi_q_x.txt").read_text()  # `nvidia-smi -q -x` of the same GPU


def test_the_xml_form_reads_as_the_text_form_of_the_same_gpu() -> None:
    """``nvidia-smi -q -x`` and ``nvidia-smi -q`` captured on one H200: the same GPU, fabric, ECC, PCIe link and
    remapped rows; each value is placed on the pasted line of its element."""
    assert looks_like_smi_query(H200_XML)
    xml, text = read_smi_query(H200_XML, "x.xml"), read_smi_query(H200, "q.txt")
    assert [dataclasses.replace(g, line=0) for g in xml.gpus] == [dataclasses.replace(g, line=0) for g in text.gpus]
    assert (xml.attached_gpus, xml.driver_version, xml.cuda_version, xml.excerpt) == (1, "580.159.04", "13.0", False)
    assert 9 in xml.used_lines and H200_XML.splitlines()[8].strip() == "<product_name>NVIDIA H200</product_name>"


def test_an_unhealthy_fabric_in_the_xml_form_is_read() -> None:
    unhealthy = H200_XML.replace("<state>N/A</state>", "<state>Completed</state>").replace(
        "<summary>N/A</summary>", "<summary>Unhealthy</summary>"
    )
    (gpu,) = read_smi_query(unhealthy, "x.xml").gpus
    assert gpu.fabric.state == "Completed" and gpu.fabric.health_summary == "Unhealthy"


def test_xml_cut_off_keeps_what_it_shows_and_xml_declaring_entities_is_refused() -> None:
    cut = H200_XML[: H200_XML.index("</fabric>")]
    (gpu,) = read_smi_query(cut, "x.xml").gpus
    assert isinstance(gpu.fabric.health_summary, Unsupported) and gpu.product_name == "NVIDIA H200"
    bomb = (
        '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaa">]>\n<nvidia_smi_log>&a;</nvidia_smi_log>\n'
    )
    with pytest.raises(InputError, match="declares entities"):
        read_smi_query(bomb, "bomb.xml")
