"""The machines catalog: every figure sourced, what a user types matched to one machine, the card as the machine
holds it, and the reference nodes the bandwidth oracle assumes taken from it."""

from __future__ import annotations

import pytest

from topoaudit.bench.oracle import REFERENCE_NICS
from topoaudit.catalog import CatalogError, find_gpu
from topoaudit.catalog.machines import CITED, _machine, all_machines, find_machine, reference_machine


def test_every_machine_names_a_known_card_and_sources_every_figure() -> None:
    for m in all_machines():
        assert find_gpu(m.gpu) is not None, m.key
        for field in (*CITED, *(("memory_gb",) if m.memory_gb else ())):
            assert m.source_of(field), f"{m.key}.{field} has no source"


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("DGX Station GB300", "dgx-station-gb300"),
        ("dgx station", "dgx-station-gb300"),
        ("HGX H100", "hgx-h100"),
        ("DGX H200", "hgx-h200"),
        ("GB300 NVL72 compute tray", "gb300-nvl72-tray"),
        ("GB300", None),  # the card alone is no machine: it is sized in its rack
        ("H100", None),
    ],
)
def test_what_a_user_types_names_one_machine_or_none(typed: str, key: str | None) -> None:
    found = find_machine(typed)
    assert (found.key if found else None) == key


def test_a_station_holds_one_gb300_of_252_gb_and_leaves_over_connectx8() -> None:
    station = find_machine("DGX Station GB300")
    assert station is not None
    card = station.card()
    assert (card.key, card.memory_bytes, card.node_gpus) == ("GB300", 252 * 10**9, 1)
    assert station.label == "DGX Station GB300 (one GPU, no NVLink to another)"
    assert station.network == "ConnectX-8 RDMA (1x 800G ConnectX-8 SuperNIC per machine)"
    assert not station.spans_machines


def test_an_nvl72_tray_is_four_gpus_of_a_72_gpu_domain() -> None:
    tray = find_machine("GB200 NVL72 compute tray")
    assert tray is not None and tray.spans_machines
    assert tray.label == "GB200 NVL72 compute tray (4 GPUs of a 72-GPU NVLink domain)"


def test_the_oracles_reference_nodes_are_the_catalogs_reference_machines() -> None:
    for key, nics in REFERENCE_NICS.items():
        m = reference_machine(key)
        assert m is not None and (nics.count, nics.gbits_each) == (m.nics, m.nic_gbits)
        assert m.name in nics.source


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"kind": "station", "gpu": "NO-SUCH-CARD"}, "no card 'NO-SUCH-CARD'"),
        ({"kind": "laptop", "gpu": "GB300"}, "kind 'laptop'"),
        ({"kind": "station", "gpu": "GB300", "colour": "gold"}, "unknown keys ['colour']"),
        ({"kind": "station", "gpu": "GB300", "cite": {"gpus": "x"}}, "no source for ['domain_gpus', 'nics'"),
    ],
)
def test_a_malformed_entry_is_refused(entry: dict[str, object], said: str) -> None:
    with pytest.raises(CatalogError, match=said.replace("[", r"\[").replace("(", r"\(")):
        _machine("bad", entry)
