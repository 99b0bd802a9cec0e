"""NCCL_DEBUG=INFO lines as people paste them: a handful of lines, prefixes cut or added, quoted, cut short."""

from __future__ import annotations

from pathlib import Path

from dev_pastes import dev_paste

from topoaudit.model.values import Unsupported
from topoaudit.parse.nccl_log import looks_like_nccl_log, machine_from_nccl_view, parse_nccl_log

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl"


def settings(text: str) -> list[tuple[str, str, int]]:
    return [(s.name, s.value, s.evidence.line) for s in parse_nccl_log(text).settings]


# --- NCCL's lines wherever they sit on the line -----------------------------------------------------------


def test_lines_with_their_nccl_prefix_cut_off_are_read() -> None:
    """The thread quotes NCCL's messages without ``host:pid:tid [dev] NCCL INFO``."""
    text = dev_paste("nccl-1584-nvls-available-ib-sharp-init")
    assert looks_like_nccl_log(text)
    view = parse_nccl_log(text)
    assert view.version == "2.24.3"
    assert settings(text) == [("NCCL_SOCKET_IFNAME", "eth0", 1), ("NCCL_IB_PCI_RELAXED_ORDERING", "1", 13)]
    assert [(n.index, n.name, n.port, n.link_layer, n.flags) for n in view.nics][:2] == [
        (0, "ibp0", 1, "IB", ("SHARP",)),
        (1, "ibp1", 1, "IB", ("SHARP",)),
    ]
    assert len(view.nics) == 8
    assert [(s.device, s.available) for s in view.nvls_support] == [(0, True)]
    assert view.rank(0) is not None and view.rank(0).ranks_in_comm == 8  # type: ignore[union-attr]
    assert view.comm_size == 8 and view.coverage() == "the paste shows 1 of 8 ranks (0)"
    assert [g.index for g in machine_from_nccl_view(view).gpus] == [0]  # from "Init START ... cudaDev 0"


def test_nccl_before_2_4_prints_info_without_nccl() -> None:
    text = dev_paste("nccl-133-old-ib-gdrdma-nan-driver")  # "host:pid:tid [4] INFO 3 -> 12 via NET/IB/0/GDRDMA"
    assert looks_like_nccl_log(text)
    view = parse_nccl_log(text)
    assert [(t.src_rank, t.dst_rank, t.via, t.gdr, t.channels) for t in view.transports] == [
        (3, 12, "NET/IB/0/GDRDMA", True, ()),
        (7, 10, "NET/IB/1/GDRDMA", True, ()),
    ]
    assert view.rank(3).host == "CY4SCH102501002" and view.rank(3).cuda_device == 4  # type: ignore[union-attr]


def test_transport_lines_quoted_without_their_channel() -> None:
    text = dev_paste("nccl-897-gdrdma-one-side-only")  # "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA"
    assert looks_like_nccl_log(text)
    view = parse_nccl_log(text)
    assert [(t.direction, t.via, t.gdr) for t in view.transports] == [
        ("send", "NET/IB/0/GDRDMA", True),
        ("receive", "NET/IB/1", False),
    ]
    assert view.rank(9).pci_bus_id == "0000:1a:00.0"  # type: ignore[union-attr]
    assert view.coverage() == "ranks 2, 9 seen; the communicator's size is not in the paste"


def test_a_bare_info_line_of_gpudirect_rdma() -> None:
    text = dev_paste("nccl-1939-gdr-disabled-hca0")  # "INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
    assert looks_like_nccl_log(text)
    (gdr,) = parse_nccl_log(text).gdr
    assert gdr.hca == "0 'mlx5_0'" and not gdr.enabled


def test_a_quoted_line_is_read_inside_its_quotes() -> None:
    text = dev_paste("nccl-332-p2p-level-nvl-parsed-as-0")  # "\"NCCL INFO NCCL_P2P_LEVEL set by environment to 0\""
    assert looks_like_nccl_log(text)
    assert settings(text) == [("NCCL_P2P_LEVEL", "0", 1)]


def test_launcher_pod_and_rank_prefixes() -> None:
    text = (
        "(pid=4242) trainer-7f9c-0:4242:4300 [3] NCCL INFO Channel 00/0 : 3[3] -> 0[0] via P2P/CUMEM\n"
        "[rank1]: [2025-06-05 10:45:19] trainer-7f9c-0:4240:4301 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] "
        "via SHM/direct/direct\n"
        "pod/trainer-7f9c-0 trainer-7f9c-0:4241:4302 [2] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n"
    )
    view = parse_nccl_log(text)
    assert view.hosts == ("trainer-7f9c-0",)
    assert {r.rank: r.cuda_device for r in view.ranks if isinstance(r.cuda_device, int)} == {1: 1, 3: 3}
    assert settings(text) == [("NCCL_SHM_DISABLE", "1", 3)]


def test_other_programs_lines_are_not_nccl_lines() -> None:
    text = (
        "INFO 03-22 18:40:47 [shm_broadcast.py:258] vLLM message queue communication handle\n"
        "Step 1 -> 2 via the scheduler\n"
        "h1:1:2 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
    )
    view = parse_nccl_log(text)
    assert view.nccl_lines == 1 and [t.via for t in view.transports] == ["P2P/IPC"]


# --- excerpts: which ranks the paste shows ----------------------------------------------------------------


def test_channel_lines_without_the_comm_line_place_their_ranks() -> None:
    view = parse_nccl_log(dev_paste("nccl-1817-l20-p2p-cross-socket-lines"))
    assert sorted(r.rank for r in view.ranks) == list(range(8))
    assert isinstance(view.comm_size, Unsupported)
    assert view.coverage() == "ranks 0-7 seen; the communicator's size is not in the paste"
    assert len(machine_from_nccl_view(view).gpus) == 8


def test_older_channel_form_without_connection_index() -> None:
    text = (
        "h:1:2 [3] NCCL INFO Channel 02 : 3[3] -> 0[0] via SHM/direct/direct\n"
        "h:1:2 [1] NCCL INFO Channel 02 : 1[2e000] -> 2[2d000] via P2P/IPC/read\n"
    )
    view = parse_nccl_log(text)
    assert [(t.src_rank, t.dst_rank, t.kind, t.channels) for t in view.transports] == [
        (1, 2, "P2P", (2,)),
        (3, 0, "SHM", (2,)),
    ]


def test_a_ring_gives_the_communicator_size() -> None:
    view = parse_nccl_log(dev_paste("nccl-1706-4gpu-stuck-channel-setup"))
    assert view.comm_size == 4 and view.coverage() == "the paste shows 1 of 4 ranks (2)"


# --- settings, NICs --------------------------------------------------------------------------------------


def test_every_variable_set_by_environment_is_a_typed_setting() -> None:
    text = dev_paste("vllm-19204-p2p-disable-env-shm-2gpu")
    assert settings(text) == [("NCCL_CUMEM_ENABLE", "0", 4), ("NCCL_P2P_DISABLE", "1", 5)]
    assert [s.origin for s in parse_nccl_log(text).settings] == ["environment", "environment"]
    assert settings(dev_paste("nccl-1214-azure-p2p-disabled-ib-disable-env")) == [
        ("NCCL_SOCKET_IFNAME", "eth0", 2),
        ("NCCL_IB_DISABLE", "1", 4),
    ]


def test_socket_fallback_nics_and_no_ib_device() -> None:
    view = parse_nccl_log(dev_paste("nccl-451-container-ibv-open-failed-socket"))
    assert [(d.plugin, d.devices) for d in view.net_devices] == [("IB", ()), ("Socket", ("bond0:200.1.93.2<0>",))]
    (nic,) = view.nics
    assert (nic.plugin, nic.name, nic.address) == ("Socket", "bond0", "200.1.93.2")
    assert isinstance(nic.link_layer, Unsupported)
    assert settings(dev_paste("nccl-451-container-ibv-open-failed-socket")) == [("NCCL_IB_DISABLE", "0", 1)]


def test_roce_ports_and_the_speed_the_net_subsystem_prints() -> None:
    text = (
        "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
        "h:1:2 [0] NCCL INFO NET/IB: [1] mlx5_1:uverbs1:1/RoCE provider=Mlx5 speed=200000 context=0x1 pciPath=/x ar=0\n"
    )
    view = parse_nccl_log(text)
    assert [(n.name, n.link_layer, n.speed_mbps) for n in view.nics][1] == ("mlx5_1", "RoCE", 200000)
    assert isinstance(view.nics[0].speed_mbps, Unsupported)
    assert view.nics[1].evidence.line == 1


# --- the machine, and a paste cut short --------------------------------------------------------------------


def test_a_junk_host_line_does_not_decide_the_machine() -> None:
    real = (FIXTURES / "constructed-2.21-two-nodes-slurm-prefix-gdr-off.txt").read_text()
    spliced = "0junk:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n" + real
    view, whole = parse_nccl_log(spliced), parse_nccl_log(real)
    assert view.hosts[0] == "0junk"
    assert machine_from_nccl_view(view) == machine_from_nccl_view(whole)
    assert machine_from_nccl_view(view).host.hostname == "n001"
    assert len(view.gdr) == len(whole.gdr) + 1  # the line's own fact is kept


def test_a_log_cut_mid_line_says_where() -> None:
    base = "h1:10:11 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
    cut = parse_nccl_log(base + "h1:10:11 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CU")
    assert cut.truncated.line == 2  # type: ignore[union-attr]
    assert parse_nccl_log(base + "h1:10:1").truncated.text == "h1:10:1"  # type: ignore[union-attr]
    assert parse_nccl_log(base + "h1:10:11 [1] NCCL IN\n").truncated.line == 2  # type: ignore[union-attr]
    assert isinstance(parse_nccl_log(base).truncated, Unsupported)
    assert isinstance(parse_nccl_log(base + "done at 10:45:19\n").truncated, Unsupported)
