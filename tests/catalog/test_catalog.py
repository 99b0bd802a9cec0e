"""The hardware catalog: its data is sourced and self-consistent, product names land on the right entry
(the traps), docs/catalog.md is generated from it, and the topology rules judge every entry's standard
node the way a careful engineer would (healthy: quiet; a link down: degraded; a split: fail or info)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from builders import CUBE_MESH

from topoaudit import catalog
from topoaudit.catalog import (
    ALGOS,
    LAYOUTS,
    CatalogError,
    GpuSpec,
    _spec,
    all_gpus,
    find_gpu,
    matching_entries,
    nvlink_rate_gbps,
    parse_size,
    render_doc,
)
from topoaudit.model.finding import Severity
from topoaudit.model.machine import Gpu, Link, Machine, level_from_code
from topoaudit.model.report import AuditOptions, SourceInfo
from topoaudit.pipeline import analyze
from topoaudit.readers import load_path

ROOT = Path(__file__).parents[2]
SRC = SourceInfo("test", "catalog")
TOPO = Path(__file__).parents[1] / "fixtures" / "topo"
SPECS = {s.key: s for s in all_gpus()}

# --- the data ----------------------------------------------------------------------------------------------


def test_catalog_covers_every_sku_in_the_research_notes() -> None:
    wanted = {
        "V100-SXM2", "A100-SXM", "A800", "A100-PCIE", "H100-SXM", "H800", "H200-SXM", "H20", "H100-SXM-4GPU",
        "H100-NVL", "H200-NVL", "B200", "GB200", "B300", "GB300", "GH200", "L40S", "L4", "A10", "RTX6000-ADA",
        "RTX4090", "RTX5090", "RTX3090", "RTX-PRO-6000", "H100-PCIE",
    }  # fmt: skip
    assert wanted <= set(SPECS)


@pytest.mark.parametrize("spec", all_gpus(), ids=lambda s: s.key)
def test_every_stated_figure_names_its_source(spec: GpuSpec) -> None:
    stated = {
        "memory_gb": spec.memory_bytes,
        "nvlinks_per_gpu": spec.nvlinks_per_gpu,
        "build": spec.build,
        "pcie_generation": spec.pcie_generation,
        "pcie_host_gbps": spec.pcie_host_gbps,
        "nvlink_rate_gbps": spec.nvlink_rate_gbps != nvlink_rate_gbps(spec.nvlink_generation),
    }
    for field, value in stated.items():
        if value:
            assert len(spec.source_of(field)) > 10, f"{spec.key}.{field} has no source"
    for band in spec.busbw:
        assert band.source and band.algo in ALGOS and band.gpus >= 2 and band.size_bytes >= 2**20
        assert band.min_gbps > 0 and (band.typical_gbps == 0 or band.min_gbps <= band.typical_gbps)
        if "0.9 x typical" in band.source:  # a derived floor says how it was derived, and is exact
            assert band.min_gbps == pytest.approx(0.9 * band.typical_gbps, abs=1)
    assert spec.sources, spec.key


@pytest.mark.parametrize("spec", all_gpus(), ids=lambda s: s.key)
def test_entries_are_self_consistent(spec: GpuSpec) -> None:
    assert LAYOUTS[spec.layout][0] == spec.build
    if spec.build == "pcie":
        assert spec.nvlink_generation == 0 and spec.nvlinks_per_gpu == 0 and spec.domain_size == 1
    elif spec.build in ("nvswitch", "mesh", "bridge"):
        assert spec.nvlinks_per_gpu and spec.nvlink_rate_gbps and spec.domain_size >= 2
    if spec.nvlinks_total:
        assert spec.nvlinks_total > spec.nvlinks_per_gpu and spec.exceptions  # "12 of 18" is explained
    if spec.nvlink_rate_shown_gbps:  # nvidia-smi's per-link figure is the raw rate, a few % above the payload rate
        assert 0.99 <= spec.nvlink_rate_shown_gbps / spec.nvlink_rate_gbps < 1.07
    assert all(size >= 2 for size in spec.by_design_domains)
    assert spec.memory_bytes >= 16 * 10**9 and spec.pcie_generation in (3, 4, 5, 6)
    for pattern in spec.match:
        re.compile(pattern)


def test_busbw_floor_is_the_whole_domain_band() -> None:
    h200 = SPECS["H200-SXM"]
    ring, nvls = h200.band(8, "ring"), h200.band(8, "nvls")
    assert ring is not None and nvls is not None
    assert ring.typical_gbps == pytest.approx(367.61) and nvls.typical_gbps == pytest.approx(482.26)
    assert nvls.min_gbps == 431  # Azure's gate, not a derived figure
    assert h200.allreduce_busbw_gbps == ring.min_gbps and h200.band(8) is ring  # ring first by default
    assert SPECS["B200"].allreduce_busbw_gbps == 614  # the ring band's floor, 0.9 x 682.2 (stas00/ml-engineering)
    assert SPECS["H20"].allreduce_busbw_gbps == 0 and SPECS["H20"].band(8) is None  # unknown stays unknown
    pcie = SPECS["A100-PCIE"]
    assert pcie.band(2).typical_gbps == 208 and pcie.band(4).min_gbps == 25  # type: ignore[union-attr]
    assert pcie.allreduce_busbw_gbps == 193  # the pair is the domain


def test_derived_figures() -> None:
    h100 = SPECS["H100-SXM"]
    assert h100.nvlink_gbps_per_gpu == 450 and h100.pcie_raw_gbps == 63
    assert SPECS["RTX3090"].nvlink_gbps_per_gpu == pytest.approx(56.25)
    assert SPECS["H100-NVL"].nvlinks_total == 18 and SPECS["H100-NVL"].nvlinks_per_gpu == 12
    assert SPECS["H200-NVL"].by_design_domains == (2, 4) and SPECS["A100-PCIE"].by_design_domains == (2,)
    assert SPECS["L4"].by_design_domains == ()
    assert SPECS["GB200"].one_domain and SPECS["V100-SXM2"].one_domain and not SPECS["H100-NVL"].one_domain


def test_sizes_parse_in_binary_units() -> None:
    assert parse_size("16GiB") == 16 * 2**30 and parse_size("8G") == 8 * 2**30 and parse_size("512MiB") == 2**29
    assert parse_size(1024) == 1024
    with pytest.raises(ValueError):
        parse_size("lots")


def test_loader_rejects_malformed_entries() -> None:
    good = {"name": "x", "match": [], "memory_gb": 1, "build": "pcie", "layout": "pcie"}
    assert _spec("X", good).key == "X"
    with pytest.raises(CatalogError, match="unknown keys"):
        _spec("X", {**good, "nvlinks": 4})
    with pytest.raises(CatalogError, match="layout"):
        _spec("X", {**good, "layout": "nvl72"})
    with pytest.raises(CatalogError, match="algo"):
        _spec("X", {**good, "busbw": [{"gpus": 2, "algo": "tree", "min_gbps": 1, "size": "1G", "source": "s"}]})


# --- matching ----------------------------------------------------------------------------------------------

PRODUCT_NAMES = [
    # (what NVML / nvidia-smi reports, catalog key, memory GB)
    ("Tesla V100-SXM2-16GB", "V100-SXM2", 16),
    ("Tesla V100-SXM2-32GB", "V100-SXM2", 32),
    ("Tesla PG503-216", "V100-SXM2", 32),
    ("NVIDIA A100-SXM4-40GB", "A100-SXM", 40),
    ("NVIDIA A100-SXM4-80GB", "A100-SXM", 80),
    ("NVIDIA A800-SXM4-80GB", "A800", 80),
    ("NVIDIA A100 80GB PCIe", "A100-PCIE", 80),
    ("NVIDIA A100-PCIE-40GB", "A100-PCIE", 40),
    ("NVIDIA H100 80GB HBM3", "H100-SXM", 80),
    ("NVIDIA H100", "H100-SXM", 80),
    ("NVIDIA H100 NVL", "H100-NVL", 94),
    ("NVIDIA H100 PCIe", "H100-PCIE", 80),
    ("NVIDIA H100 PCIe (00000000:34:00)", "H100-PCIE", 80),
    ("NVIDIA H100 80GB HBM3 (00000000:34:00)", "H100-SXM", 80),
    ("NVIDIA H800", "H800", 80),
    ("NVIDIA H800 80GB HBM3", "H800", 80),
    ("NVIDIA H200", "H200-SXM", 141),
    ("NVIDIA H200 NVL", "H200-NVL", 141),
    ("NVIDIA GH200 480GB", "GH200", 96),
    ("NVIDIA GH200 120GB", "GH200", 96),
    ("NVIDIA GH200 144G HBM3e", "GH200", 144),
    ("NVIDIA H20", "H20", 96),
    ("NVIDIA H20-3e", "H20", 141),
    ("NVIDIA B200", "B200", 180),
    ("NVIDIA B300 SXM6 AC", "B300", 288),
    ("NVIDIA GB200", "GB200", 186),
    ("NVIDIA GB300", "GB300", 252),
    ("NVIDIA L40S", "L40S", 48),
    ("NVIDIA L4", "L4", 24),
    ("NVIDIA A10", "A10", 24),
    ("NVIDIA A10G", "A10", 24),
    ("NVIDIA RTX 6000 Ada Generation", "RTX6000-ADA", 48),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000", 96),
    ("NVIDIA GeForce RTX 4090", "RTX4090", 24),
    ("NVIDIA GeForce RTX 5090", "RTX5090", 32),
    ("NVIDIA GeForce RTX 3090", "RTX3090", 24),
]


@pytest.mark.parametrize(("product", "key", "memory_gb"), PRODUCT_NAMES)
def test_product_names_land_on_one_entry_with_the_right_memory(product: str, key: str, memory_gb: int) -> None:
    spec = find_gpu(product)
    assert spec is not None and spec.key == key
    assert spec.memory_bytes == memory_gb * 10**9
    assert matching_entries(product) == (key,), "patterns of two entries overlap"
    assert find_gpu(product.upper()) == spec  # case-insensitive


def test_the_traps() -> None:
    h800, h100 = find_gpu("NVIDIA H800 80GB HBM3"), find_gpu("NVIDIA H100 80GB HBM3")
    assert h800 is not None and h100 is not None
    assert h800.nvlinks_per_gpu == 8 and h100.nvlinks_per_gpu == 18 and h100.build == "nvswitch"
    assert find_gpu("NVIDIA A800-SXM4-80GB").nvlinks_per_gpu == 8  # type: ignore[union-attr]
    gh200 = find_gpu("NVIDIA GH200 480GB")
    assert gh200 is not None and gh200.key != "H200-SXM" and gh200.build == "superchip"
    assert find_gpu("NVIDIA B300 SXM6 AC").domain_size == 8 and find_gpu("NVIDIA GB300").domain_size == 72  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA L40",
        "NVIDIA A800 80GB PCIe",
        "NVIDIA H800 PCIe",
        "AMD Instinct MI300X",
        "",
        "NVIDIA H2000",  # patterns match whole words: not the H200
        "NVIDIA B2000",
        "NVIDIA RTX 6000D",
        "NVIDIA GeForce RTX 30900",
        "AMD Instinct MI355X",
    ],
)
def test_unknown_models_are_none_not_a_guess(name: str) -> None:
    assert find_gpu(name) is None


def test_a_name_that_is_not_the_entry_says_which_entry_it_matched() -> None:
    h100 = find_gpu("NVIDIA H100")
    assert h100 is not None and catalog.matched_as("NVIDIA H100", h100) == (
        "'NVIDIA H100' is catalog entry H100-SXM (NVIDIA H100 SXM5)"
    )
    pcie = find_gpu("NVIDIA H100 PCIe")
    assert pcie is not None and catalog.matched_as("NVIDIA H100 PCIe", pcie) == ""  # the entry's own product name
    assert catalog.matched_as("h100-sxm", find_gpu("h100-sxm")) == ""  # type: ignore[arg-type]


def test_every_entry_is_found_by_its_key() -> None:
    for spec in all_gpus():
        assert find_gpu(spec.key) == spec and find_gpu(spec.key.lower()) == spec


# --- docs ---------------------------------------------------------------------------------------------------


def test_docs_catalog_is_generated_from_the_data() -> None:
    doc = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert catalog.MARKER_BEGIN in doc and catalog.MARKER_END in doc
    assert render_doc(doc) == doc, "docs/catalog.md is stale: run `python tools/regen_docs.py`"
    for spec in all_gpus():
        assert f"`{spec.key}`" in doc


# --- the rules on every entry's standard node -----------------------------------------------------------------


def _machine(n: int, code: object, name: str) -> Machine:
    gpus = tuple(Gpu(index=i, name=name) for i in range(n))
    links = []
    for i, j in itertools.combinations(range(n), 2):
        c = code(i, j)  # type: ignore[operator]
        level, count = level_from_code(c)
        links.append(Link(f"GPU{i}", f"GPU{j}", c, level, count))
    return Machine("test", gpus, (), tuple(links))


def standard_node(spec: GpuSpec, weaken: tuple[int, int] | None = None) -> Machine:
    """The healthy standard node of a catalog entry as `topo -m` shows it; ``weaken`` drops one link of a pair."""
    n = min(spec.node_gpus, 8)
    size = max(spec.by_design_domains, default=1)

    def cell(i: int, j: int) -> str:
        if spec.layout == "hybrid-cube-mesh":
            c = CUBE_MESH.get((i, j), "SYS")
        elif spec.build == "nvswitch":
            c = f"NV{spec.nvlinks_per_gpu}"
        elif spec.build in ("mesh", "bridge") and i // size == j // size:
            c = f"NV{spec.nvlinks_per_gpu // (size - 1)}"
        else:
            c = "NODE" if i // 4 == j // 4 else "SYS"
        if (i, j) == weaken and c.startswith("NV"):
            c = f"NV{int(c[2:]) - 1}"
        return c

    return _machine(n, cell, spec.key)


LINKED = [s for s in all_gpus() if s.build in ("nvswitch", "mesh", "bridge")]


@pytest.mark.parametrize("spec", all_gpus(), ids=lambda s: s.key)
def test_healthy_standard_node_raises_nothing(spec: GpuSpec) -> None:
    report = analyze(standard_node(spec), source=SRC)
    loud = [f for f in report.findings if f.severity != Severity.INFO]
    assert loud == [], [f.message for f in loud]
    assert report.catalog_entry == spec.key and report.gate.exit_code == 0
    codes = {f.code for f in report.findings}
    if spec.build == "bridge" and spec.node_gpus > max(spec.by_design_domains):
        assert "nvlink-split-domain" in codes  # said, as info: bridged pairs are by design
    if spec.layout == "hybrid-cube-mesh":
        assert "nvlink-partial-mesh" in codes
    if spec.build == "pcie" and spec.node_gpus > 1:
        assert "nvlink-absent" in codes


@pytest.mark.parametrize("spec", LINKED, ids=lambda s: s.key)
def test_one_link_down_is_degraded(spec: GpuSpec) -> None:
    pair = (0, 3) if spec.layout == "hybrid-cube-mesh" else (0, 1)
    report = analyze(standard_node(spec, weaken=pair), source=SRC)
    found = [f for f in report.findings if f.code == "nvlink-degraded"]
    assert found, [f.message for f in report.findings]
    assert found[0].severity == Severity.FAIL and report.gate.exit_code == 1


def test_uniformly_low_links_against_an_unverified_count_only_warn() -> None:
    # every pair NV6 on an A800 (whose 8 links come from one secondary source): no sibling is better, so only
    # the catalog says it is low -- and the catalog is not sure
    report = analyze(_machine(8, lambda i, j: "NV6", "NVIDIA A800-SXM4-80GB"), source=SRC)
    f = next(f for f in report.findings if f.code == "nvlink-degraded")
    assert f.severity == Severity.WARN and "unverified" in f.message and report.gate.exit_code == 0
    sure = analyze(_machine(8, lambda i, j: "NV6", "NVIDIA H800"), source=SRC)
    assert [f.severity for f in sure.findings if f.code == "nvlink-degraded"] == [Severity.FAIL]


@pytest.mark.parametrize("spec", [s for s in LINKED if s.one_domain], ids=lambda s: s.key)
def test_one_domain_model_shown_as_two_fails(spec: GpuSpec) -> None:
    n = min(spec.node_gpus, 8)
    healthy = standard_node(spec)
    half = n // 2
    links = tuple(
        lk if (int(lk.a[3:]) < half) == (int(lk.b[3:]) < half) else Link(lk.a, lk.b, "SYS", *level_from_code("SYS"))
        for lk in healthy.links
    )
    report = analyze(Machine("test", healthy.gpus, (), links), source=SRC)
    split = next(f for f in report.findings if f.code == "nvlink-split-domain")
    assert split.severity == Severity.FAIL and report.gate.exit_code == 1
    assert spec.name in split.message


def test_one_gpu_without_nvlink_on_an_nvswitch_model_is_degraded() -> None:
    # seven GPUs on the switches and one isolated (a B200 whose links are all inactive)
    m = _machine(8, lambda i, j: "SYS" if 7 in (i, j) else "NV18", "NVIDIA B200")
    f = next(f for f in analyze(m, source=SRC).findings if f.code == "nvlink-degraded")
    assert f.severity == Severity.FAIL and f.evidence["gpus"] == [{"gpu": 7, "nvlinks": 0}]


def test_bridged_box_with_a_missing_bridge_warns() -> None:
    m = _machine(8, lambda i, j: "NV12" if i // 2 == j // 2 and i < 6 else "SYS", "NVIDIA H100 NVL")
    f = next(f for f in analyze(m, source=SRC).findings if f.code == "nvlink-split-domain")
    assert f.severity == Severity.WARN and "{6,7}" in f.message


def test_h200_nvl_pairs_and_quads_are_both_by_design() -> None:
    for cell in (lambda i, j: "NV18" if i // 2 == j // 2 else "SYS", lambda i, j: "NV6" if i // 4 == j // 4 else "SYS"):
        report = analyze(_machine(8, cell, "NVIDIA H200 NVL"), source=SRC)
        assert [f.severity for f in report.findings if f.code == "nvlink-split-domain"] == [Severity.INFO]


@pytest.mark.parametrize(
    ("name", "severity"),
    [("NVIDIA H100 NVL", Severity.WARN), ("NVIDIA GH200 480GB", Severity.WARN), ("NVIDIA B200", Severity.FAIL)],
)
def test_no_nvlink_at_all_depends_on_the_build(name: str, severity: Severity) -> None:
    m = _machine(4, lambda i, j: "SYS", name)
    f = next(f for f in analyze(m, source=SRC).findings if f.code == "nvlink-absent")
    assert f.severity == severity


def test_unknown_model_judged_from_links_alone_and_says_so() -> None:
    m = _machine(8, lambda i, j: "NV16" if (i, j) == (1, 2) else "NV18", "NVIDIA Z900 Imaginary")
    report = analyze(m, source=SRC)
    codes = {f.code: f for f in report.findings}
    assert "not in the catalog" in codes["model-unknown"].message and "link counts" in codes["model-unknown"].message
    assert codes["nvlink-degraded"].evidence["expected_nvlinks"] == 18  # from the siblings
    assert not isinstance(report.catalog_entry, str)


# --- real captures --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "model", "entry", "degraded"),
    [
        ("topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", "NVIDIA H800", "H800", False),
        ("topo-h800-8gpu-9nic-bond-nicnames-sglang-1.txt", "NVIDIA H100 80GB HBM3", "H100-SXM", True),
        ("topo-4xh800sxm-nv8-trailingspaces-forum-1.txt", "NVIDIA H800", "H800", False),
        ("topo-4xa100sxm4-nv4-alltoall-2nic-nolegendheader-1.txt", "NVIDIA A100-SXM4-40GB", "A100-SXM", False),
        ("topo-dgx1-v100-hybridcubemesh-oneflow-1.txt", "Tesla PG503-216", "V100-SXM2", False),
        ("topo-8xh100nvl-nv12-pairs-2nic-sglang-1.txt", "NVIDIA H100 NVL", "H100-NVL", False),
        ("topo-4xa100pcie-nv12-pairs-azure-nc96ads-1.txt", "NVIDIA A100 80GB PCIe", "A100-PCIE", False),
        ("topo-2x3090-nv4-bridge-clubrig-1.txt", "NVIDIA GeForce RTX 3090", "RTX3090", False),
        ("topo-2gpu-nv3-partial-bridge-tabs-slowtopo-1.txt", "NVIDIA GeForce RTX 3090", "RTX3090", True),
        ("topo-8xh20-3e-nv18-2nic-gpu0only-sglang-1.txt", "NVIDIA H20-3e", "H20", False),
        ("topo-gb200-4gpu-hand-reformatted-compact-1.txt", "NVIDIA GB200", "GB200", False),
        ("topo-a100-8gpu-stas-compressed-spaces-1.txt", "NVIDIA A100-SXM4-80GB", "A100-SXM", False),
    ],
)
def test_real_captures_under_their_model(fixture: str, model: str, entry: str, degraded: bool) -> None:
    loaded = load_path(str(TOPO / fixture))
    report = analyze(loaded.machine, source=loaded.source, options=AuditOptions(gpu_model=model))
    codes = {f.code: f.severity for f in report.findings}
    assert report.catalog_entry == entry
    assert ("nvlink-degraded" in codes) == degraded, codes
    assert codes.get("nvlink-split-domain", Severity.INFO) == Severity.INFO


def test_python_m_topoaudit_catalog_lists_every_model() -> None:
    """`model-unknown` tells users that this command lists the catalog: it prints every key, writes nothing."""
    import subprocess
    import sys

    before = (ROOT / "docs" / "catalog.md").stat().st_mtime_ns
    done = subprocess.run(
        [sys.executable, "-m", "topoaudit.catalog"], capture_output=True, text=True, check=True, cwd=ROOT / "tests"
    )
    for spec in all_gpus():
        assert f"`{spec.key}`" in done.stdout
    assert "<!--" not in done.stdout
    assert (ROOT / "docs" / "catalog.md").stat().st_mtime_ns == before


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("NVIDIA-H100-80GB-HBM3", "H100-SXM"),
        ("NVIDIA-H100-PCIe", "H100-PCIE"),
        ("NVIDIA-GB200", "GB200"),
        ("NVIDIA-A100-SXM4-80GB", "A100-SXM"),
        ("NVIDIA-H2000", None),  # still whole words: no H200
    ],
)
def test_a_name_joined_by_hyphens_as_node_agents_print_it_is_found(name: str, key: str | None) -> None:
    spec = find_gpu(name)
    assert (spec.key if spec else None) == key
