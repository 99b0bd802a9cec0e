"""Peer-to-peer captures: ``nvidia-smi topo -p2p r|w|n|a`` (NVML's P2P status per GPU pair, with its codes
OK/CNS/GNS/TNS/NS/DR/U) and CUDA samples' ``p2pBandwidthLatencyTest`` (can-access-peer, copy bandwidth and the
GPU-to-GPU latency matrices; the CPU-side latency blocks under them are not GPU pairs and are left out).

The statuses become the same :class:`~topoaudit.model.machine.P2PStatus` facts the probe records, so the
probe's P2P rule judges them against the topology (a ``topo -m`` pasted in the same file gives it); the
bandwidth and latency matrices are kept as measured facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from topoaudit.errors import InputError, NothingToJudge
from topoaudit.model.machine import Gpu, P2PStatus
from topoaudit.model.nccl_topo import BandwidthMatrix, CopyTestFailure, LatencyMatrix
from topoaudit.model.values import Probed, Unsupported
from topoaudit.parse import tensorflow_log
from topoaudit.parse.bare_matrix import bare_matrices, holds_bare_matrix, holds_titled_matrix, titled_headers

# ``nvidia-smi topo -p2p`` legend (X = Self, OK = Status Ok, CNS = Chipset not supported, ...), in NVML's words.
P2P_CODES = {
    "OK": "ok",
    "CNS": "chipset-not-supported",
    "GNS": "gpu-not-supported",
    "TNS": "topology-not-supported",
    "DR": "disabled-by-regkey",
    "NS": "not-supported",
    "U": "unknown",
}
# ``-p2p r|w|n|a``: the capability the matrix answers, as P2PStatus names it.
MODES = {"r": "read", "w": "write", "n": "nvlink", "a": "atomics"}

_HEADER = re.compile(r"^\s*(GPU\d{1,6})(\s+GPU\d{1,6})*\s*$")
_COMMAND = re.compile(r"nvidia-smi\s+topo\s+-p2p\s+(\w+)")
_LEGEND = re.compile(r"^\s*(Legend:|[A-Z]{1,3}\s+=\s)")
_DEVICE = re.compile(
    r"^Device: (\d{1,6}), (.+?), pciBusID: ([0-9a-fA-F]{1,8}), pciDeviceID: ([0-9a-fA-F]{1,8}),"
    r" pciDomainID:\s*(\d{1,9})"
)
_PEER_ACCESS = re.compile(r"^Device=(\d{1,6}) (CAN|CANNOT) Access Peer Device=(\d{1,6})\s*$")
"""The sample's answer for each ordered pair, printed before its matrices (cudaDeviceCanAccessPeer)."""
_SAMPLE_MATRIX = re.compile(
    r"^(P2P Connectivity Matrix|(Uni|Bi)?directional P2P=\w+ Bandwidth.*Matrix \(GB/s\)"
    r"|P2P=\w+ Latency(?: \(P2P \w+\))? Matrix \(us\)"
    r"|P2P Bandwidth Matrix \(GB/s\) - (?:Uni|Bi)directional, P2P=\w+|Host/Device Bandwidth Matrix \(GB/s\).*)\s*$"
)
_BUSGRIND_TITLE = re.compile(
    r"P2P Bandwidth Matrix \(GB/s\) - (?:Uni|Bi)directional, P2P=\w+|Host/Device Bandwidth Matrix \(GB/s\)"
)
"""The CUDA demo suite's busGrind: its GPU-pair matrices name direction and peer access after the title; its
host/device matrix has a row per direction (D2H, H2D, BiDir) and a column per GPU."""
_HOST_ROW = re.compile(r"^\s*(D2H|H2D|BiDir)\s+(\S.*)$")
_LATENCY_TITLE = re.compile(r"Latency(?: \(P2P \w+\))? Matrix \(us\)")
_BANDWIDTH_TITLE = re.compile(r"(?:Uni|Bi)?directional P2P=\w+ Bandwidth.*Matrix \(GB/s\)")  # a paste may cut "Bi"
_SAMPLE_ROW = re.compile(r"^\s*(\d{1,6})\s+(\S.*)$")
_UNTITLED_HEADER = re.compile(r"^\s*D\\D(?:\s+\d{1,6})+\s*$")
"""The column header of the sample's bandwidth matrices (its latency matrices head theirs with ``GPU``)."""
_UNTITLED_LATENCY_HEADER = re.compile(r"^\s*GPU(?:\s+\d{1,6}){2,}\s*$")
"""The column header of the sample's latency matrices ("   GPU     0      1 ..."), here without its title above."""
UNTITLED_LATENCY = "Latency Matrix (us)"
"""A latency matrix pasted without its title: whether peer access was on is unknown; its microseconds still say
whether a copy works."""
UNTITLED_BANDWIDTH = "Bandwidth Matrix (GB/s)"
"""A bandwidth matrix pasted without its title: direction and peer access unknown, read as one-way copies."""
COPY_BENCHMARK = "GPU copy benchmark"
"""The tool of a matrix titled only by its figures' unit: a copy kernel's or a site's own test."""
_DASH_RULE = re.compile(r"^\s*-{8,}\s*$")
_DIAGONAL_MARKS = frozenset({"-", "\u2014", "\u2013", "X", "x", "N/A", "n/a"})
"""What a reformatted matrix puts on its diagonal instead of a GPU's copy to itself."""
MAX_GBPS = 1e6
"""No copy moves a million GB/s: a figure above is damage (``1e308``), not a measurement."""


@dataclass(frozen=True)
class ParsedP2P:
    """The P2P statuses and matrices of one paste, and the lines they took (to find a ``topo -m`` beside them)."""

    gpus: tuple[Gpu, ...]
    statuses: tuple[P2PStatus, ...]
    matrices: tuple[BandwidthMatrix, ...]
    used_lines: frozenset[int]  # 1-based lines that belong to the P2P captures
    notes: tuple[tuple[int, str], ...]
    tool: str  # "nvidia-smi topo -p2p" | "p2pBandwidthLatencyTest"
    damaged: tuple[tuple[int, str], ...] = ()  # (line, a row or header read around): the audit is incomplete
    stopped: tuple[CopyTestFailure, ...] = ()  # p2pBandwidthLatencyTest ended on a matrix's header: it hung there
    latency: tuple[LatencyMatrix, ...] = ()  # p2pBandwidthLatencyTest's GPU-to-GPU latency matrices (us)


@dataclass(frozen=True)
class _TfMatrix:
    """TensorFlow's peer-access matrix as read: each row's (line index, GPU, Y/N cells, the columns above it)."""

    rows: tuple[tuple[int, int, tuple[str, ...], tuple[int, ...]], ...]
    used: frozenset[int]  # 1-based lines of its titles, column lines and rows


def looks_like_p2p(text: str) -> bool:
    """An ``nvidia-smi topo -p2p`` matrix (GPU header, then rows of P2P codes) or a p2pBandwidthLatencyTest."""
    head = text[:200_000]
    if "P2P Connectivity Matrix" in head or "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]" in head:
        return True
    if "Matrix (us)" in head and _LATENCY_TITLE.search(head):
        return True
    if "Matrix (GB/s)" in head and (_BANDWIDTH_TITLE.search(head) or _BUSGRIND_TITLE.search(head)):
        return True
    if ("D\\D" in head or "GPU " in head) and any(
        _UNTITLED_HEADER.match(line) or _UNTITLED_LATENCY_HEADER.match(line) for line in head.splitlines()
    ):
        return True
    if "Access Peer Device=" in head and any(_PEER_ACCESS.match(line.strip()) for line in head.splitlines()):
        return True
    if holds_bare_matrix(head):
        return True
    if holds_titled_matrix(head):
        return True
    if any(mark in head for mark in tensorflow_log.MARKS) and _tensorflow_matrix(head.splitlines()).rows:
        return True
    return bool(_smi_blocks(head.splitlines()))


def _tensorflow_matrix(lines: list[str]) -> _TfMatrix:
    """Each Y/N row of TensorFlow's peer-access matrix under the column line above it, and the lines it took."""
    rows: list[tuple[int, int, tuple[str, ...], tuple[int, ...]]] = []
    used: set[int] = set()
    columns: tuple[int, ...] = ()
    for i, line in enumerate(lines):
        said = tensorflow_log.body(line)
        if cols := tensorflow_log.COLUMNS.match(said):
            columns = tuple(int(c) for c in cols[1].split())
        elif columns and (row := tensorflow_log.ROW.match(said)):
            rows.append((i, int(row[1]), tuple(row[2].split()), columns))
        elif not tensorflow_log.TITLE.match(said):
            columns = columns if not said else ()  # another line of the log ends the matrix; other text does not
            continue
        used.add(i + 1)
    return _TfMatrix(tuple(rows), frozenset(used))


def _smi_blocks(lines: list[str]) -> list[tuple[int, list[str], list[tuple[int, str, list[str]]]]]:
    """Each ``topo -p2p`` matrix: (header line index, column labels, rows (line index, label, cells))."""
    blocks = []
    i = 0
    while i < len(lines):
        header = _HEADER.match(lines[i])
        if not header:
            bare = _bare_smi_rows(lines, i)
            if bare:
                blocks.append((i, [f"GPU{k}" for k in range(len(bare[0][2]))], bare))
                i += len(bare)
            else:
                i += 1
            continue
        columns = lines[i].split()
        rows = []
        j = i + 1
        while j < len(lines):
            tokens = lines[j].split()
            if not tokens or not tokens[0].startswith("GPU") or tokens[0] not in columns:
                break
            rows.append((j, tokens[0], tokens[1:]))
            j += 1
        codes = {c for _, _, cells in rows for c in cells}
        if rows and codes <= {*P2P_CODES, "X"} and codes - {"X"}:
            blocks.append((i, columns, rows))
        i = max(j, i + 1)
    return blocks


def _bare_smi_rows(lines: list[str], start: int) -> list[tuple[int, str, list[str]]]:
    """Rows of a ``topo -p2p`` matrix pasted without its header line, from ``start``: each row's X stands in its own
    GPU's column, which gives the columns (GPU0 to GPUn-1), as the header would have."""
    k = start - 1
    while k >= 0 and (tokens := lines[k].split()) and tokens[0].startswith("GPU") and not _all_labels(tokens):
        k -= 1  # the rows above this one, up to whatever heads them
    if k >= 0 and _all_labels(lines[k].split()):
        return []  # under a header the reader refused (damaged): its rows are that matrix's, not a bare one
    rows: list[tuple[int, str, list[str]]] = []
    for j in range(start, len(lines)):
        tokens = lines[j].split()
        label = tokens[0] if tokens else ""
        if not (label.startswith("GPU") and label[3:].isdecimal() and len(label) <= 9):
            break
        cells = tokens[1:]
        own = int(label[3:])
        if rows and len(cells) != len(rows[0][2]):
            break
        if own >= len(cells) or cells[own] != "X" or cells.count("X") != 1 or not set(cells) <= {*P2P_CODES, "X"}:
            break
        rows.append((j, label, cells))
    return rows if len(rows) >= 2 or (rows and len(rows[0][2]) >= 2) else []


def _all_labels(tokens: list[str]) -> bool:
    return bool(tokens) and all(t.startswith("GPU") for t in tokens)


def parse_p2p(text: str, name: str) -> ParsedP2P:
    """Read every P2P capture in ``text``."""
    lines = text.splitlines()
    if (
        "P2P Connectivity Matrix" in text
        or "Bandwidth Latency Test" in text
        or _LATENCY_TITLE.search(text)
        or _BANDWIDTH_TITLE.search(text)
        or _BUSGRIND_TITLE.search(text)
        or any(
            _UNTITLED_HEADER.match(line) or _UNTITLED_LATENCY_HEADER.match(line) or _PEER_ACCESS.match(line.strip())
            for line in lines
        )
        or holds_bare_matrix(text)
        or holds_titled_matrix(text)
    ):
        return _cuda_sample(lines, name)
    if any(mark in text for mark in tensorflow_log.MARKS) and (matrix := _tensorflow_matrix(lines)).rows:
        return _tensorflow(matrix)
    return _nvidia_smi(lines, name)


def _tensorflow(matrix: _TfMatrix) -> ParsedP2P:
    """TensorFlow's start-up matrix of peer access (``DMA:`` in 1.x, ``strength 1 edge matrix`` later): Y where it
    enabled peer access between two GPUs (cuDeviceCanAccessPeer said yes), N where it could not."""
    access: dict[tuple[int, int], bool] = {}
    damaged: list[tuple[int, str]] = []
    for i, a, cells, columns in matrix.rows:
        if len(cells) != len(columns):
            damaged.append((i + 1, f"GPU{a}'s row has {len(cells)} cells for {len(columns)} columns; row left out"))
            continue
        access.update({(a, b): cell == "Y" for b, cell in zip(columns, cells, strict=True) if a != b})
    indices = sorted({a for a, _ in access} | {b for _, b in access} | {a for _, a, _, _ in matrix.rows})
    statuses = [
        P2PStatus(a, b, read="ok" if access.get((a, b), True) and access.get((b, a), True) else "not-supported")
        for a in indices
        for b in indices
        if a < b and ((a, b) in access or (b, a) in access)
    ]
    return ParsedP2P(
        tuple(Gpu(index=i) for i in indices),
        tuple(statuses),
        (),
        matrix.used,
        (),
        "TensorFlow peer access matrix",
        tuple(damaged),
    )


def _nvidia_smi(lines: list[str], name: str) -> ParsedP2P:
    blocks = _smi_blocks(lines)
    if not blocks:
        raise InputError(f"{name}: no `nvidia-smi topo -p2p` matrix in it")
    used: set[int] = set()
    notes: list[tuple[int, str]] = []
    damaged: list[tuple[int, str]] = []
    pairs: dict[tuple[int, int], P2PStatus] = {}
    indices: set[int] = set()
    for header, columns, rows in blocks:
        command = next((_COMMAND.search(lines[k]) for k in range(header - 1, max(-1, header - 4), -1)
                        if _COMMAND.search(lines[k])), None)  # fmt: skip
        letters = command.group(1) if command else ""
        modes = [MODES[c] for c in letters if c in MODES] or ["read"]
        if not command or len(letters) != 1 or letters not in MODES:
            notes.append(
                (header + 1, f"the paste does not say which `-p2p` capability this matrix answers; read as {modes[0]}")
            )
        if not _HEADER.match(lines[header]):
            notes.append(
                (
                    header + 1,
                    f"rows without their header line: columns read as GPU0 to GPU{len(columns) - 1}, where each "
                    "row's X stands",
                )
            )
        used.update([header, *(k for k, _, _ in rows)])
        k = rows[-1][0] + 1
        while k < len(lines) and (not lines[k].strip() or _LEGEND.match(lines[k])):
            used.add(k)
            k += 1
        for k, label, cells in rows:
            a = int(label[3:])
            indices.add(a)
            if len(cells) != len(columns):
                damaged.append(
                    (k + 1, f"{label}'s row has {len(cells)} cells for {len(columns)} columns; row left out")
                )
                continue
            for column, cell in zip(columns, cells, strict=True):
                b = int(column[3:])
                indices.add(b)
                if a == b or cell == "X":
                    continue
                key = (min(a, b), max(a, b))
                status = pairs.get(key, P2PStatus(*key))
                for mode in modes:
                    before = getattr(status, mode)
                    said = P2P_CODES[cell]
                    if not isinstance(before, str) or before == "ok":  # the worse direction wins
                        status = replace(status, **{mode: said})  # type: ignore[arg-type]
                pairs[key] = status
    gpus = tuple(Gpu(index=i) for i in sorted(indices))
    statuses = tuple(pairs[k] for k in sorted(pairs))
    used_lines = frozenset(k + 1 for k in used)
    return ParsedP2P(gpus, statuses, (), used_lines, tuple(notes), "nvidia-smi topo -p2p", tuple(damaged))


def _cuda_sample(lines: list[str], name: str) -> ParsedP2P:
    gpus: dict[int, Gpu] = {}
    matrices: list[BandwidthMatrix] = []
    latencies: list[LatencyMatrix] = []
    access: dict[tuple[int, int], bool] = {}
    title = ""
    columns: list[int] = []
    rows: list[tuple[int, list[float]]] = []
    damaged: list[tuple[int, str]] = []
    notes: list[tuple[int, str]] = []
    host_rows: list[tuple[str, list[float]]] = []  # busGrind's host/device matrix: (direction, one figure per GPU)
    bare = {matrix.first: matrix for matrix in bare_matrices(lines)}
    titled = titled_headers(lines)

    def close() -> None:
        directions = list(host_rows)
        host_rows.clear()
        if title.startswith("Host/Device") and directions and columns:
            matrices.extend(_host_device(title, tuple(f"GPU{c}" for c in columns), directions))
            return
        if not title or not rows:
            return
        if title.startswith("P2P Connectivity"):
            for a, values in rows:
                for b, v in zip(columns, values, strict=False):
                    if a != b:
                        access[(a, b)] = v >= 1
            return
        labels = tuple(f"GPU{c}" for c in columns)
        named_rows = tuple(f"GPU{a}" for a, _ in rows)
        tool = (
            "busGrind"
            if _BUSGRIND_TITLE.match(title)
            else "p2pBandwidthLatencyTest"
            if _SAMPLE_MATRIX.match(title) or title in (UNTITLED_BANDWIDTH, UNTITLED_LATENCY)
            else COPY_BENCHMARK
        )
        cells: tuple[tuple[Probed[float], ...], ...] = tuple(
            tuple(
                Unsupported(tool, "a GPU's copy to itself, not a pair") if a == b else v
                for b, v in zip(columns, values, strict=False)
            )
            for a, values in rows
        )
        if _LATENCY_TITLE.search(title):
            untitled = title == UNTITLED_LATENCY
            test = "Latency (its title not pasted)" if untitled else title.removesuffix(" Matrix (us)").strip()
            latencies.append(LatencyMatrix(test, title, named_rows, labels, cells))
            return
        test = title.removesuffix(" Matrix (GB/s)").strip()
        matrices.append(BandwidthMatrix(test, title, named_rows, labels, cells, tool=tool))

    for number, line in enumerate(lines, 1):
        device = _DEVICE.match(line.strip())
        if device:
            index = int(device.group(1))
            bus = f"{int(device.group(5)):04x}:{int(device.group(3), 16):02x}:{int(device.group(4), 16):02x}.0"
            gpus[index] = Gpu(index=index, name=device.group(2).strip(), pci_bus_id=bus)
            continue
        peer = _PEER_ACCESS.match(line.strip())
        if peer:
            access[(int(peer.group(1)), int(peer.group(3)))] = peer.group(2) == "CAN"
            continue
        if _SAMPLE_MATRIX.match(line.strip()):
            close()
            title, columns, rows = line.strip(), [], []
            continue
        if not title and (number - 1) in titled:
            title, columns, rows = titled[number - 1], [int(c) for c in line.split()], []
            notes.append(
                (
                    number,
                    "a copy benchmark's matrix, titled only by its unit: read as one-way copies between the GPUs its "
                    "header numbers; whether peer access was on is not in the paste",
                )
            )
            continue
        if title and columns and not rows and _DASH_RULE.match(line):
            continue  # the rule under its header
        if not title and (number - 1) in bare:
            matrix = bare[number - 1]
            title = UNTITLED_BANDWIDTH if matrix.measures == "bandwidth" else UNTITLED_LATENCY
            columns, rows = list(range(matrix.columns)), []
            side = "largest" if matrix.measures == "bandwidth" else "smallest"
            notes.append(
                (
                    number,
                    f"rows of a matrix without its title or column header: read as a {matrix.measures} matrix (each "
                    f"GPU's cell to itself is its row's {side}), its columns as GPUs 0 to {matrix.columns - 1}; "
                    "whether peer access was on is not in the paste",
                )
            )
        if not title and _UNTITLED_LATENCY_HEADER.match(line):
            title, columns, rows = UNTITLED_LATENCY, [], []
            notes.append(
                (number, "a latency matrix without its title line: whether peer access was on is not in the paste")
            )
        if title and not columns and _LATENCY_TITLE.search(title) and line.split()[:1] == ["GPU"]:
            line = line.replace("GPU", "D\\D", 1)  # the latency matrices head their columns with "GPU"
        if title and columns and line.split()[:1] == ["CPU"]:
            close()  # the CPU-side latency under a GPU matrix: not GPU pairs
            title, columns, rows = "", [], []
            continue
        if not title and _UNTITLED_HEADER.match(line):
            title, columns, rows = UNTITLED_BANDWIDTH, [], []
            notes.append(
                (
                    number,
                    "a bandwidth matrix without its title line: whether its copies ran one way or both ways, and "
                    "with peer access or staged, is not in the paste; read as one-way copies",
                )
            )
        if title and line.strip().startswith(("D\\D", "Dir\\D")):
            if rows or host_rows:  # a second header under one title (a paste of two cut matrices): the rows above
                close()  # are the first header's, read with its columns
                rows = []
            labels = line.split()[1:]
            if labels and all(c.isdecimal() and len(c) < 6 for c in labels):
                columns = [int(c) for c in labels]
            else:
                damaged.append((number, f"{title}: its header names no GPU columns; matrix left out"))
                title, columns, rows = "", [], []
            continue
        host = _HOST_ROW.match(line) if title.startswith("Host/Device") and columns else None
        if host:
            values, why = _sample_values(host.group(2).split(), len(columns))
            if why:
                damaged.append((number, f"{title}: its {host.group(1)} row {why}; row left out"))
            else:
                host_rows.append((host.group(1), values))
            continue
        row = _SAMPLE_ROW.match(line.replace("\t", " ")) if title and columns else None
        if row:
            own = int(row.group(1))
            diagonal = columns.index(own) if own in columns else -1
            values, why = _sample_values(row.group(2).split(), len(columns), diagonal)
            if why:
                damaged.append((number, f"{title}: GPU {row.group(1)[:6]}'s row {why}; row left out"))
            else:
                rows.append((int(row.group(1)), values))
        elif title and line.strip():
            close()
            title, columns, rows = "", [], []
    stopped = () if host_rows else _stopped_at(lines, title, rows)  # busGrind's host rows are no GPU rows
    close()
    labels = [x for m in matrices for x in (*m.rows, *m.columns)] + [
        x for m in latencies for x in (*m.rows, *m.columns)
    ]
    measured = {int(label[3:]) for label in labels if label.startswith("GPU") and label[3:].isdecimal()}
    indices = sorted(set(gpus) | {a for a, _ in access} | {b for _, b in access} | measured)
    if not indices:
        raise NothingToJudge(f"{name}: a p2pBandwidthLatencyTest paste with neither devices nor matrices")
    statuses = []
    for a in indices:
        for b in indices:
            if a < b and ((a, b) in access or (b, a) in access):
                can = access.get((a, b), True) and access.get((b, a), True)
                # CUDA says only whether peer access works, not why; NVML's word for that is not-supported.
                statuses.append(P2PStatus(a, b, read="ok" if can else "not-supported"))
    all_gpus = tuple(gpus.get(i, Gpu(index=i)) for i in indices)
    return ParsedP2P(
        all_gpus,
        tuple(statuses),
        tuple(matrices),
        frozenset(),
        tuple(notes),
        "p2pBandwidthLatencyTest",
        tuple(damaged),
        stopped,
        tuple(latencies),
    )


def _host_device(title: str, gpus: tuple[str, ...], directions: list[tuple[str, list[float]]]) -> list[BandwidthMatrix]:
    """busGrind's host/device matrix as one matrix per direction between the host (``CPU0``) and each GPU.

    D2H copies from each GPU to the host, H2D from the host to each GPU, BiDir both at once (its title then says
    Bidirectional, as the pair matrices' do); a GPU far below its siblings has a PCIe link trained narrow or slow.
    """
    host = ("CPU0",)
    memory = title.partition(",")[2].strip()  # "memory=Pinned"
    found = []
    for direction, values in directions:
        test = f"Host/Device {direction}" + (f" ({memory})" if memory else "")
        named = f"{title}: {direction}" + (" (Bidirectional)" if direction == "BiDir" else "")
        figures: tuple[Probed[float], ...] = tuple(values)
        if direction == "H2D":
            found.append(BandwidthMatrix(test, named, host, gpus, (figures,), tool="busGrind"))
        else:
            found.append(BandwidthMatrix(test, named, gpus, host, tuple((v,) for v in figures), tool="busGrind"))
    return found


def _stopped_at(lines: list[str], title: str, rows: list[tuple[int, list[float]]]) -> tuple[CopyTestFailure, ...]:
    """The matrix the test was measuring when its output ends: its title printed, not one of its rows.

    The sample prints each matrix's title before it copies anything; output that ends there is a copy that never
    finished (or a paste cut there).
    """
    if not title or rows or not _SAMPLE_MATRIX.match(title):
        return ()  # a header without the sample's title line (or another benchmark's): nothing says the test stopped
    if title.startswith("P2P Connectivity"):
        return ()  # its rows are cudaDeviceCanAccessPeer answers, printed at once: no copy to hang in, a paste cut
    number = max(i for i, line in enumerate(lines, 1) if line.strip() == title)
    return (
        CopyTestFailure(
            kind="stopped",
            testcase=title.removesuffix(" Matrix (GB/s)").removesuffix(" Matrix (us)").strip(),
            message="the output ends on this matrix's title, before its first row",
            detail="",
            cuda_error=Unsupported("p2pBandwidthLatencyTest", "the test printed no error"),
            line=number,
            text=title,
        ),
    )


def _sample_values(tokens: list[str], columns: int, diagonal: int = -1) -> tuple[list[float], str]:
    """A matrix row's figures, or why they are none: one per column, each a bandwidth a copy can reach.

    A dash or X in the row's own column (a matrix reformatted for a post) stands for the GPU's copy to itself.
    """
    if len(tokens) != columns:
        return [], f"has {len(tokens)} values for {columns} columns"
    values = []
    for column, token in enumerate(tokens):
        if column == diagonal and token in _DIAGONAL_MARKS:
            values.append(0.0)  # the diagonal is no pair: close() records it as such
            continue
        try:
            value = float(token)
        except ValueError:
            return [], f"holds {token[:20]!r}, not a figure"
        if not 0 <= value <= MAX_GBPS:  # NaN fails too
            return [], f"holds {token[:20]}, not a bandwidth"
        values.append(value)
    return values, ""
