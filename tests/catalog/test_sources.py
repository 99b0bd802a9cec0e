"""The catalog cites public sources a reader can look up, and the captures it cites back its figures.

Every figure in ``gpus.toml`` names where it comes from; a report shows that text as the source of an
expectation, so it must name a document, an issue or a real capture, never the team's working notes. The
captures it names are kept in ``tests/fixtures`` with their provenance, and the ones that show a catalog
figure directly (per-link speeds, link counts, host-copy rates) are read here and compared with the entry.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from topoaudit.catalog import all_gpus, find_gpu

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CAPTURES = FIXTURES / "catalog"
SPECS = {s.key: s for s in all_gpus()}

# Words that point at working notes instead of a public source ("anchors s9", "nvml-nccl D4", a path into the
# shared notes, the capture index those notes keep), and section shorthands like "s9" or "D4".
NOTES_WORDS = re.compile(r"anchors|nvml-nccl|\bseeds?\b|\.\./shared|shared/notes|\bINDEX\b|the notes", re.IGNORECASE)
SECTION_SHORTHAND = re.compile(r"\b[sD]\d{1,2}\b")
CAPTURE_NAME = re.compile(r"\b(?:topo|nccltest|nvlink|nvbandwidth|p2p)-[a-z0-9][a-z0-9.-]*?-\d+\b")


def _source_texts() -> list[tuple[str, str]]:
    """(where, text) for every piece of catalog text that cites or explains a figure."""
    texts: list[tuple[str, str]] = []
    for spec in all_gpus():
        texts += [(f"{spec.key}.sources", s) for s in spec.sources]
        texts += [(f"{spec.key}.cite.{field}", s) for field, s in spec.cites]
        texts += [(f"{spec.key}.busbw[{b.gpus} {b.algo}]", f"{b.source} {b.note}") for b in spec.busbw]
        texts += [(f"{spec.key}.exceptions", s) for s in spec.exceptions]
        texts.append((f"{spec.key}.notes", spec.notes))
    return texts


def test_no_source_points_at_working_notes() -> None:
    offenders = [
        f"{where}: {text}"
        for where, text in _source_texts()
        if NOTES_WORDS.search(text) or SECTION_SHORTHAND.search(text)
    ]
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize(
    "path",
    [
        "topoaudit/catalog/gpus.toml",
        "topoaudit/catalog/__init__.py",
        "topoaudit/catalog/__main__.py",
        "docs/catalog.md",
    ],
)
def test_catalog_files_name_no_working_notes(path: str) -> None:
    """The data file's comments, the module's docstrings and the generated page say the same as the data."""
    text = (ROOT / path).read_text(encoding="utf-8")
    found = sorted(
        {m.group(0) for m in NOTES_WORDS.finditer(text)} | {m.group(0) for m in SECTION_SHORTHAND.finditer(text)}
    )
    assert not found, f"{path} mentions {found}"


def test_a_warning_sign_says_unverified_in_words() -> None:
    """A reader who does not know the convention still learns that the figure is unverified."""
    missing = [f"{where}: {text}" for where, text in _source_texts() if "\u26a0" in text and "unverified" not in text]
    assert not missing, "\n".join(missing)


def test_every_capture_a_source_names_is_kept_with_its_provenance() -> None:
    named = {m.group(0) for _, text in _source_texts() for m in CAPTURE_NAME.finditer(text)}
    assert len(named) >= 20, sorted(named)  # the pattern still finds the captures the catalog names
    missing = []
    for name in sorted(named):
        files = [p for p in FIXTURES.glob(f"*/{name}.*") if p.suffix != ".tsv"]
        rows = [
            line
            for p in files
            for line in (p.parent / "PROVENANCE.tsv").read_text(encoding="utf-8").splitlines()
            if line.startswith(f"{p.name}\t")
        ]
        if not files or not rows:
            missing.append(name)
    assert not missing, f"captures named by the catalog but not kept in tests/fixtures with provenance: {missing}"


def _nvlink_status(name: str) -> dict[str, list[float]]:
    """`nvidia-smi nvlink -s` text -> {GPU line: per-link GB/s}, for the blocks the paste shows in full."""
    blocks: dict[str, list[float]] = {}
    current = ""
    for line in (CAPTURES / name).read_text(encoding="utf-8").splitlines():
        if line.startswith("GPU "):
            current = line.split(" (UUID")[0]
            blocks[current] = []
        elif line.strip() == "...":  # the author elided the rest of this block
            blocks.pop(current, None)
            current = ""
        elif current and (m := re.match(r"\s*Link \d+: ([\d.]+) GB/s", line)):
            blocks[current].append(float(m.group(1)))
    return blocks


@pytest.mark.parametrize(
    ("capture", "key"),
    [
        ("nvlink-h800-status-8links-elided-1.txt", "H800"),
        ("nvlink-gb200-status-53gbps-elided-1.txt", "GB200"),
        ("nvlink-2x3090-status-14gbps-clubrig-1.txt", "RTX3090"),
    ],
)
def test_link_count_and_shown_speed_match_a_real_nvlink_status(capture: str, key: str) -> None:
    spec = SPECS[key]
    blocks = _nvlink_status(capture)
    assert blocks, capture
    for gpu, speeds in blocks.items():
        assert find_gpu(gpu.split(": ", 1)[1]) == spec, gpu
        assert len(speeds) == spec.nvlinks_per_gpu, gpu
        assert set(speeds) == {spec.nvlink_rate_shown_gbps}, gpu


def test_b300_host_copy_rate_is_the_one_the_capture_measured() -> None:
    text = (CAPTURES / "nvbandwidth-7xb300-sxm6-dell-xe9780-one-gpu-missing-1.txt").read_text(encoding="utf-8")
    table = text.split("Running host_to_device_memcpy_ce.", 1)[1].split("SUM", 1)[0]
    row = next(line for line in table.splitlines() if line.split()[:1] == ["0"] and "." in line)  # CPU row 0
    rates = [float(x) for x in row.split()[1:]]
    assert len(rates) == 7 and SPECS["B300"].pcie_host_gbps == pytest.approx(sum(rates) / len(rates), abs=0.05)


def test_h100_product_name_in_a_capture_lands_on_the_sxm_entry() -> None:
    text = (CAPTURES / "nvbandwidth-8xh100-azure-ndh100v5-v0.4-1.txt").read_text(encoding="utf-8")
    names = re.findall(r"^Device \d+: (.+)$", text, re.MULTILINE)
    assert len(names) == 8
    found = [find_gpu(n) for n in names]
    assert {(s.key, s.memory_bytes) if s else None for s in found} == {("H100-SXM", 80 * 10**9)}


def test_rtx5090_pair_shows_no_p2p_as_the_entry_says() -> None:
    cells = (CAPTURES / "p2p-2x5090-rw-gns-1.txt").read_text(encoding="utf-8").split("Legend")[0].split()
    assert cells.count("GNS") == 2 and "OK" not in cells
    spec = SPECS["RTX5090"]
    assert spec.build == "pcie" and any("GNS" in e for e in spec.exceptions)
