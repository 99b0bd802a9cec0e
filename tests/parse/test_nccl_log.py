"""NCCL_DEBUG=INFO logs: every real one in tests/fixtures/nccl is read with its transports, and constructed
logs cover the versions the real ones miss (2.4, 2.13, 2.17, 2.19, 2.21, 2.26, 2.30.7)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from topoaudit.cli import main
from topoaudit.errors import InputError
from topoaudit.model.nccl import NcclView
from topoaudit.model.report import report_from_dict, report_to_dict
from topoaudit.parse.nccl_log import bus_id_from_nccl, looks_like_nccl_log, parse_nccl_log
from topoaudit.readers import load_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"


def view_of(name: str) -> NcclView:
    return parse_nccl_log((FIXTURES / name).read_text(encoding="utf-8"), name)


def pairs(view: NcclView) -> set[tuple[int, int, str, str]]:
    """(src, dst, via, direction) of every transport."""
    return {(t.src_rank, t.dst_rank, t.via, t.direction) for t in view.transports}


# --- the real logs ---------------------------------------------------------------------------------------


def test_every_fixture_is_in_the_provenance_and_read_by_analyze() -> None:
    listed = {line.split("\t")[0] for line in (FIXTURES / "PROVENANCE.tsv").read_text().splitlines()[1:]}
    assert {p.name for p in FIXTURES.glob("*.txt")} == listed
    files = {name for name in listed if name.startswith(("ncclinfo-", "constructed-"))}
    assert len(files) == 16
    for name in sorted(files):
        loaded = load_text((FIXTURES / name).read_text(encoding="utf-8"), name)
        assert isinstance(loaded.nccl, NcclView), name


def test_a100_two_gpus_direct_pointer_read_24_channels_each_way() -> None:
    view = view_of("ncclinfo-a100sxm4-2gpu-p2p-direct-read-24ch-container-1.txt")
    assert pairs(view) == {(0, 1, "P2P/direct pointer/read", ""), (1, 0, "P2P/direct pointer/read", "")}
    forward = next(t for t in view.transports if t.src_rank == 0)
    assert forward.channels == tuple(range(24))
    backward = next(t for t in view.transports if t.src_rank == 1)
    assert backward.channels == tuple(range(1, 24))  # the first line was cut from the paste
    assert view.bracket_value == "device-index" and view.bracket_basis == "form of the values"
    counts = view.channel_counts[0]
    assert (counts.coll, counts.collnet, counts.nvls, counts.p2p, counts.p2p_per_peer) == (24, 0, 0, 32, 32)
    ranks = {r.rank: r for r in view.ranks}
    assert ranks[0].pci_bus_id == "0000:a4:00.0" and ranks[1].pci_bus_id == "0000:a9:00.0"
    assert ranks[1].host == "3767c65d25c4" and ranks[1].cuda_device == 1 and ranks[1].init_complete
    assert {e.what: e.count for e in view.events} == {"Connected all rings": 2, "Connected all trees": 2}


def test_a100_four_gpus_rings_trees_socket_network_nvls_unavailable() -> None:
    view = view_of("ncclinfo-a100sxm4-4gpu-init-trees-rings-container-1.txt")
    assert view.version == "2.20.5" and view.bracket_value == "device-index" and view.bracket_basis == "version banner"
    assert pairs(view) == {(1, 2, "P2P/direct pointer/read", ""), (2, 3, "P2P/direct pointer/read", "")}
    assert len(view.rings) == 1 and view.rings[0].order == (0, 1, 2, 3) and view.rings[0].channels == tuple(range(24))
    assert {(t.rank, t.shape) for t in view.trees} == {
        (0, "1/-1/-1->0->-1"),
        (1, "2/-1/-1->1->0"),
        (2, "3/-1/-1->2->1"),
        (3, "-1/-1/-1->3->2"),
    }
    assert all(len(t.channels) == 24 for t in view.trees)
    assert sorted((s.device, s.available) for s in view.nvls_support) == [(d, False) for d in range(4)]
    assert view.networks == ("Socket",)
    assert {(n.plugin, n.devices) for n in view.net_devices} == {("IB", ()), ("Socket", ("eth0:172.17.0.2<0>",))}
    ranks = {r.rank: r for r in view.ranks}
    assert (ranks[3].ranks_in_comm, ranks[3].nodes_in_comm, ranks[3].local_ranks, ranks[3].local_rank) == (4, 1, 4, 3)
    assert ranks[3].mnnvl is False


def test_p4d_two_nodes_libfabric_gdrdma_without_prefixes_bus_ids_in_brackets() -> None:
    view = view_of("ncclinfo-p4d-2node-libfabric-gdrdma-2channels-1.txt")
    assert view.hosts == ()
    assert view.bracket_value == "pci-bus-id" and view.bracket_basis == "form of the values"
    assert pairs(view) == {
        (0, 8, "NET/AWS Libfabric/0/GDRDMA", "receive"),
        (0, 8, "NET/AWS Libfabric/0/GDRDMA", "send"),
        (8, 0, "NET/AWS Libfabric/0/GDRDMA", "send"),
        (9, 8, "P2P/IPC/read", ""),
    }
    assert all(t.gdr for t in view.transports if t.kind == "NET")
    assert {r.rank: r.pci_bus_id for r in view.ranks} == {0: "0000:10:1c.0", 8: "0000:10:1c.0", 9: "0000:10:1d.0"}
    counts = view.channel_counts[0]
    assert counts.coll == 2 and counts.p2p == 2 and counts.p2p_per_peer == 1
    assert "does not print collnet" in str(counts.collnet) and "does not print nvls" in str(counts.nvls)


def test_nd_h100_v5_mixed_ib_and_roce_ports_gdr_per_hca_and_warn() -> None:
    view = view_of("ncclinfo-ndh100v5-netib-roce-misnamed-nic-1.txt")
    assert view.transports == ()
    assert view.net_devices[0].devices[:2] == ("mlx5_0:1/IB", "mlx5_1:1/RoCE") and len(view.net_devices[0].devices) == 9
    assert [(g.hca, g.enabled) for g in view.gdr] == [("0 'mlx5_0'", True), ("1 'mlx5_1'", True)]
    assert [(w.source_location, w.message) for w in view.warnings] == [
        ("graph/xml.h:85", "Attribute busid of node nic not found")
    ]
    assert view.warnings[0].evidence.line == 6


@pytest.mark.parametrize(
    ("name", "hosts", "devices", "networks"),
    [
        ("ncclinfo-hgx-a100-topo-system-tree-print-1.txt", ("node2",), {0}, ()),
        ("ncclinfo-p4d-sagemaker-netofi-topofile-leadingspace-1.txt", ("algo-1",), {3, 5, 6, 7}, ("AWS Libfabric",)),
        ("ncclinfo-p5en-h200-netofi-16nic-groups-1.txt", ("8h200-2", "8h200-3"), {0}, ("Libfabric",)),
    ],
)
def test_logs_without_transport_lines_still_place_their_devices(
    name: str, hosts: tuple[str, ...], devices: set[int], networks: tuple[str, ...]
) -> None:
    view = view_of(name)
    assert view.transports == () and view.ranks == ()
    assert view.hosts == hosts
    assert {d.cuda_device for d in view.devices if d.host == hosts[0]} == devices
    assert view.networks == networks
    loaded = load_text((FIXTURES / name).read_text(encoding="utf-8"), name)
    assert {g.index for g in loaded.machine.gpus} == devices


def test_hgx_a100_log_keeps_its_warning_with_source_location() -> None:
    view = view_of("ncclinfo-hgx-a100-topo-system-tree-print-1.txt")
    assert [(w.source_location, w.message) for w in view.warnings] == [
        ("misc/ibvwrap.cc:63", "Failed to open libibverbs.so[.1]")
    ]
    assert view.net_devices[0].plugin == "Socket" and len(view.net_devices[0].devices) == 4


# --- constructed logs: the versions the real ones miss -----------------------------------------------------


def test_nccl_2_4_ring_lines_bus_ids_direct_shared_memory_and_per_gpu_gdr() -> None:
    view = view_of("constructed-2.4-ring-busid-shm-net.txt")
    assert view.version == "2.4.8" and view.bracket_value == "pci-bus-id" and view.bracket_basis == "version banner"
    assert pairs(view) == {
        (3, 0, "NET/IB/0", "receive"),
        (1, 2, "NET/IB/0", "send"),
        (0, 1, "P2P/IPC", ""),
        (2, 3, "direct shared memory", ""),
    }
    assert {t.via: t.kind for t in view.transports}["direct shared memory"] == "SHM"
    ranks = {r.rank: r for r in view.ranks}
    assert (ranks[0].host, ranks[3].host) == ("node01", "node02")  # 3 -> 0 [receive] is printed by rank 0
    assert ranks[2].host == "node02" and ranks[3].pci_bus_id == "0000:41:00.0"
    assert ranks[0].nvml_device == 0 and ranks[0].init_complete  # 2.4's Init COMPLETE has no busId
    gdr = view.gdr[0]
    assert (gdr.enabled, gdr.gpu_bus_id, gdr.distance, gdr.hca) == (False, "0000:1c:00.0", "7 > 4", "0")
    assert view.rings[0].order == (0, 1, 2, 3)


def test_nccl_2_13_channel_lines_without_conn_index_and_shm_across_sockets() -> None:
    view = view_of("constructed-2.13-channel-busid-shm.txt")
    assert view.bracket_value == "pci-bus-id"
    assert {(t.src_rank, t.dst_rank): t.kind for t in view.transports} == {
        (0, 1): "P2P",
        (1, 2): "SHM",
        (2, 3): "P2P",
        (3, 0): "SHM",
    }
    assert [r.pci_bus_id for r in view.ranks] == ["0000:1b:00.0", "0000:1c:00.0", "0000:ca:00.0", "0000:cb:00.0"]
    assert view.rings[0].channels == (0, 1)


def test_bracket_trap_same_line_read_by_version() -> None:
    line = "h:1:2 [0] NCCL INFO Channel 00/0 : 0[1000] -> 1[2000] via P2P/IPC\n"
    old = parse_nccl_log("NCCL version 2.17.1+cuda12.0\n" + line)
    assert old.bracket_value == "pci-bus-id" and old.rank(0).pci_bus_id == "0000:01:00.0"  # type: ignore[union-attr]
    small = "h:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
    new = parse_nccl_log("NCCL version 2.18.3+cuda12.2\n" + small)
    assert new.bracket_value == "device-index" and new.rank(1).nvml_device == 1  # type: ignore[union-attr]
    assert "not in the log" in str(new.rank(1).pci_bus_id)  # type: ignore[union-attr]
    # a 2.18+ banner beside bus-id-looking values: the form wins, and says why
    mixed = parse_nccl_log("NCCL version 2.20.5+cuda12.4\n" + line)
    assert mixed.bracket_value == "pci-bus-id" and "form of the values" in mixed.bracket_basis
    bare = parse_nccl_log(line)
    assert bare.bracket_value == "pci-bus-id" and bare.bracket_basis == "form of the values"
    assert parse_nccl_log(small).bracket_value == "device-index"


def test_nccl_2_17_p2p_disabled_info_line() -> None:
    view = view_of("constructed-2.17-channel-conn-busid-pcie.txt")
    assert [(p.gpu_a, p.gpu_b, p.nvlink, p.evidence.line) for p in view.p2p_disabled] == [(0, 1, False, 4)]
    assert {t.kind for t in view.transports} == {"SHM"}


def test_nccl_2_19_channel_counts_without_collnet_and_nvls_unavailable() -> None:
    view = view_of("constructed-2.19-hgx-h100-cumem-nvls-off.txt")
    counts = view.channel_counts[0]
    assert (counts.coll, counts.nvls, counts.p2p) == (24, 0, 32)
    assert "collnet" in str(counts.collnet)
    assert {t.via for t in view.transports} == {"P2P/CUMEM", "P2P/CUMEM/CE"}
    cumem = next(t for t in view.transports if t.via == "P2P/CUMEM" and t.src_rank == 0)
    assert cumem.first.line == 6 and cumem.first.text.endswith("0[0] -> 1[1] via P2P/CUMEM")


def test_nccl_2_21_two_nodes_behind_srun_prefixes_pxn_proxy_and_gdr_off() -> None:
    view = view_of("constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt")
    assert view.hosts == ("n001", "n002")
    assert {r.rank: r.host for r in view.ranks} == {0: "n001", 1: "n001", 2: "n002", 3: "n002"}
    pxn = next(t for t in view.transports if t.via == "NET/IB/1(0)")
    assert pxn.proxy_rank == 0 and pxn.direction == "send" and not pxn.gdr
    assert [(g.host, g.enabled) for g in view.gdr] == [("n001", False), ("n002", False)]
    assert {e.what: e.count for e in view.events}["Using network IB"] == 2
    loaded = load_text((FIXTURES / "constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt").read_text(), "log")
    assert [g.index for g in loaded.machine.gpus] == [0, 1] and loaded.machine.host.hostname == "n001"


def test_nccl_2_26_timestamped_warn_lines() -> None:
    view = view_of("constructed-2.26-warn-timestamps-fm-down.txt")
    assert [(w.source_location, w.message, w.evidence.line) for w in view.warnings] == [
        ("init.cc:412", "Cuda failure 802 'system not yet initialized'", 3),
        ("transport/nvls.cc:154", "Cuda failure 1 'invalid argument'", 5),
    ]
    assert view.hosts == ("hgx-9",)


def test_nccl_2_30_7_shm_direct_and_warn_with_function_name() -> None:
    view = view_of("constructed-2.30.7-shm-direct-warn-function.txt")
    assert {t.via for t in view.transports} == {"SHM/direct"}
    assert view.warnings[0].source_location == "graph/paths.cc:396"
    assert [(p.gpu_a, p.gpu_b, p.nvlink) for p in view.p2p_disabled] == [(0, 1, True)]
    counts = view.channel_counts[0]
    assert (counts.collnet, counts.nvls) == (2, 0)


def test_every_transport_form_of_the_issue() -> None:
    forms = {
        "P2P/IPC": "P2P",
        "P2P/IPC/read": "P2P",
        "P2P/CUMEM": "P2P",
        "P2P/CUMEM/read": "P2P",
        "P2P/CUMEM/CE": "P2P",
        "P2P/direct pointer": "P2P",
        "P2P/direct pointer/read": "P2P",
        "P2P/MNNVL": "P2P",
        "P2P/indirect/2[2]/read": "P2P",
        "SHM/direct/direct": "SHM",
        "SHM/CE/direct": "SHM",
        "SHM/direct": "SHM",
        "direct shared memory": "SHM",
        "NET/IB/0": "NET",
        "NET/IB/0/GDRDMA": "NET",
        "NET/IB/3(1)/GDRDMA(PCI)/Shared": "NET",
        "NET/Socket/0": "NET",
        "NET/AWS Libfabric/0/GDRDMA": "NET",
    }
    text = "NCCL version 2.22.3+cuda12.6\n" + "".join(
        f"h:1:2 [0] NCCL INFO Channel {i:02d}/0 : 0[0] -> 1[1] [send] via {via}\n" for i, via in enumerate(forms)
    )
    view = parse_nccl_log(text)
    assert {t.via: t.kind for t in view.transports} == forms
    assert {t.via for t in view.transports if t.gdr} == {
        "NET/IB/0/GDRDMA",
        "NET/IB/3(1)/GDRDMA(PCI)/Shared",
        "NET/AWS Libfabric/0/GDRDMA",
    }


def test_interleaved_lines_with_timestamps_and_launcher_prefixes() -> None:
    text = (
        "[1,0]<stdout>:h1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
        "2026-05-05T06:16:47.123Z h1:12:13 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
        "[rank1]: some python output\n"
        "    h1:12:13 [1] NCCL INFO comm 0x1 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n"
    )
    view = parse_nccl_log(text)
    assert {r.rank: (r.host, r.cuda_device) for r in view.ranks} == {0: ("h1", 0), 1: ("h1", 1)}
    assert view.nccl_lines == 3 and view.lines_total == 4


def test_bus_id_of_nccl_hex() -> None:
    assert bus_id_from_nccl("1b000") == "0000:1b:00.0"
    assert bus_id_from_nccl("101c0") == "0000:10:1c.0"
    assert bus_id_from_nccl("118000") == "0001:18:00.0"
    assert bus_id_from_nccl("7") is None and bus_id_from_nccl("zz000") is None


def test_text_that_is_not_an_nccl_log() -> None:
    assert not looks_like_nccl_log("GPU0\tX\tNV18\n")
    assert not looks_like_nccl_log("NCCL is a library; NCCL INFO is its log level\n")
    with pytest.raises(InputError, match="no NCCL_DEBUG=INFO line"):
        parse_nccl_log("nothing here\n", "x.txt")


# --- through the command line ------------------------------------------------------------------------------


def analyze_json(*args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as exc:
        main(["analyze", *args, "--format", "json"])
    out, _ = capsys.readouterr()
    return int(exc.value.code or 0), json.loads(out)


def test_analyze_reads_a_log_and_the_json_report_carries_nccls_view(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = analyze_json(str(FIXTURES / "constructed-2.13-channel-busid-shm.txt"), capsys=capsys)
    assert code == data["gate"]["exit_code"]
    assert data["source"]["kind"] == "nccl-log"
    assert data["nccl"]["version"] == "2.13.4"
    assert [t["via"] for t in data["nccl"]["transports"]] == [
        "P2P/IPC/read",
        "SHM/direct/direct",
        "P2P/IPC/read",
        "SHM/direct/direct",
    ]
    assert [g["pci_bus_id"] for g in data["gpus"]] == ["0000:1b:00.0", "0000:1c:00.0", "0000:ca:00.0", "0000:cb:00.0"]
    again = report_from_dict(data)
    assert report_to_dict(again)["nccl"] == data["nccl"]


def test_mnnvl_fabric_line() -> None:
    text = (
        "NCCL version 2.23.4+cuda12.6\n"
        "host-a:4101:4160 [0] NCCL INFO MNNVL busId 0x18000 fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x0\n"
        "tray-1:1:2 [1] NCCL INFO MNNVL busId 0x1b000 fabric UUID 9a1b.77 cliqueId 0x7ffe state 3 healthMask 0xaa\n"
    )
    fabrics = parse_nccl_log(text).mnnvl_fabric
    assert [(f.host, f.pci_bus_id, f.fabric_uuid, f.clique_id, f.state, f.health_mask) for f in fabrics] == [
        ("host-a", "0000:18:00.0", "0.0", 0, 3, 0),
        ("tray-1", "0000:1b:00.0", "9a1b.77", 32766, 3, 0xAA),
    ]


def test_a_pasted_warn_line_alone_is_read_as_a_log() -> None:
    line = "hgx-9:6100:6160 [0] init.cc:412 NCCL WARN Cuda failure 802 'system not yet initialized'\n"
    assert looks_like_nccl_log(line)
    loaded = load_text(line, "warn.txt")
    assert isinstance(loaded.nccl, NcclView) and loaded.nccl.warnings[0].source_location == "init.cc:412"
    assert [g.index for g in loaded.machine.gpus] == [0]
