"""Findings from a bench result: corruption, below-expected bandwidth, islands vs domains, timeouts, a run
stopped early or crowded onto too few cores. Pure: no torch, no processes.

A group's expectation comes from its links when the machine model gave one (``expected_busbw_gbps``, set
when the result was assembled); otherwise, for GPUs of one host whose model the catalog knows (a pasted
nccl-tests log names them), from the catalog's measured all-reduce band for that many GPUs.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from topoaudit.bench.expect import const
from topoaudit.catalog import GpuSpec, find_gpu
from topoaudit.exitcodes import ExitCode
from topoaudit.model.bench import BenchGroup, BenchResult
from topoaudit.model.busbw import PLATEAU_MIN_BYTES
from topoaudit.model.finding import Finding, Severity
from topoaudit.model.network import NcclVersion, RunFacts, parse_nccl_version
from topoaudit.model.report import Gate
from topoaudit.model.values import Unsupported
from topoaudit.rules.base import RuleContext
from topoaudit.rules.codes import Code, info
from topoaudit.rules.needs import BENCH
from topoaudit.rules.registry import rule
from topoaudit.units import format_size

INTERRUPTED = "interrupted"
"""``RankError.kind`` of a run stopped by Ctrl-C or SIGTERM: the run is incomplete, the box is not at fault."""


def _finding(code: str, message: str, severity: Severity | None = None, **evidence: object) -> Finding:
    entry = info(code)
    return Finding(code, severity or entry.severity, message, dict(evidence), entry.remedy)


@dataclass(frozen=True)
class Expected:
    """What a group should reach, where that figure comes from (said in the finding), and how low is low."""

    busbw_gbps: float
    basis: str
    evidence: dict[str, object]
    warn_below_ratio: float = const("warn_below_ratio")
    fail_below_ratio: float = const("fail_below_ratio")
    warn_at_most: bool = False  # the figure rests on an assumed network: never a fail
    lowest_gbps: float = 0.0  # NCCL's default was assumed: a fail must also be below half of this (the ring's)
    summary: str = ""  # the figure in a few words, for the finding's message
    hint: str = ""  # what a low run most likely means (NVLS did not engage)


def judge_bench(
    result: BenchResult,
    *,
    spec: GpuSpec | None = None,
    expect_busbw_gbps: float | None = None,
    facts: RunFacts | None = None,
) -> tuple[Finding, ...]:
    """Every bench finding, worst first.

    ``spec`` is the catalog entry the audit judged the box against (``--gpu-model`` or the model the source
    names); without one, the model the result's ranks name is looked up. ``expect_busbw_gbps`` is the user's
    gate on the ``all`` plateau (``--expect-busbw``). ``facts`` are the NICs and NCCL release the input or the
    options give (NCCL's ``NET/IB`` and version lines, ``--nics``).
    """
    spec = spec or _spec_named_by_ranks(result)
    facts = facts or RunFacts()
    out: list[Finding] = []
    for group in result.groups:
        out.extend(_corruption(group))
        out.extend(_below_expected(result, group, spec, facts))
    if expect_busbw_gbps:
        out.extend(_below_user_gate(result, expect_busbw_gbps))
    measured, expected = result.measured_islands, result.expected_islands
    from topoaudit.bench.islands import same_partition  # the graph library loads only for a measured sweep

    if isinstance(measured, tuple) and isinstance(expected, tuple) and not same_partition(measured, expected):
        out.append(
            _finding(
                "measured-topology-mismatch",
                f"the pairwise matrix measures {len(measured)} island(s) {_sets(measured)} but the topology "
                f"says {len(expected)} domain(s) {_sets(expected)}",
                measured_islands=[list(x) for x in measured],
                expected_domains=[list(x) for x in expected],
            )
        )
    out.extend(_oversubscribed(result))
    out.extend(_failures(result, already=out))
    skipped = {s.size_bytes for g in result.groups for s in g.skipped_sizes}
    if skipped:
        out.append(
            _finding(
                "bench-size-skipped",
                f"{len(skipped)} size(s) did not fit in free memory and were skipped: "
                + ", ".join(format_size(s) for s in sorted(skipped)),
                sizes_bytes=sorted(skipped),
            )
        )
    out = [f for k, f in enumerate(out) if not _named_before(f, out[:k])]
    out.sort(key=lambda f: -f.severity.rank)
    return tuple(out)


def _named_before(finding: Finding, earlier: list[Finding]) -> bool:
    """A sweep too small for its figure and for --expect-busbw is one fact about the group: said once."""
    return finding.code == "bench-sizes-too-small" and any(
        f.code == finding.code and f.evidence.get("group") == finding.evidence.get("group") for f in earlier
    )


def was_interrupted(result: BenchResult | object) -> bool:
    """True when the run was stopped by Ctrl-C or SIGTERM before it finished."""
    return isinstance(result, BenchResult) and any(e.kind == INTERRUPTED for e in result.errors)


def interrupted_gate(gate: Gate, result: BenchResult | object) -> Gate:
    """A stopped bench ends with exit 130 (interrupted), whatever it found before the stop: the audit is
    incomplete and the caller asked it to end. Any other gate is returned unchanged."""
    if not was_interrupted(result):
        return gate
    assert isinstance(result, BenchResult)
    rows = sum(len(g.rows) for g in result.groups)
    stop = next(e for e in result.errors if e.kind == INTERRUPTED)
    return dataclasses.replace(
        gate,
        exit_code=int(ExitCode.INTERRUPTED),
        reason=f"the bench was stopped ({stop.message}) after {rows} measured row(s); {gate.reason}",
        incomplete=True,
    )


# ------------------------------------------------------------------------------------------- the findings


def _corruption(group: BenchGroup) -> list[Finding]:
    bad = [(r.size_bytes, r.wrong) for r in group.rows if isinstance(r.wrong, int) and r.wrong > 0]
    bad += [
        (r.size_bytes, r.inplace_wrong) for r in group.rows if isinstance(r.inplace_wrong, int) and r.inplace_wrong > 0
    ]
    if not bad:
        return []
    sizes = ", ".join(f"{format_size(s)} ({w} wrong)" for s, w in bad[:6])
    return [
        _finding(
            "bench-data-corruption",
            f"all-reduce returned wrong data in group {group.name} (ranks {_ranks(group.ranks)}): {sizes}",
            group=group.name,
            ranks=list(group.ranks),
            wrong_by_size_bytes={str(s): w for s, w in bad},
        )
    ]


def _below_expected(result: BenchResult, group: BenchGroup, spec: GpuSpec | None, facts: RunFacts) -> list[Finding]:
    """A plateau below its figure's tolerance warns, below half of it fails; a figure resting on an assumed
    network warns at most, and one resting on NCCL's assumed default fails only when the ring's figure fails
    too. A sweep still rising at its largest size is named instead (the plateau was not reached)."""
    plateau = group.plateau_busbw_gbps
    if not isinstance(plateau, float):
        return []
    expected = _expected(result, group, spec, facts)
    if expected is None or expected.busbw_gbps <= 0:
        return []
    ratio = plateau / expected.busbw_gbps  # judged unrounded: 0.4996 is below the 0.5 band, not on it
    verdict = _verdict(plateau, expected)
    if verdict is None:
        return []
    rising = still_rising(group)
    if rising is not None:
        return [_sizes_too_small(group, rising, f"{ratio:.0%} of the {expected.busbw_gbps:g} GB/s {expected.basis}")]
    what = expected.summary or expected.basis
    hosts = ranks_by_host(result, group)
    where = f" ({_hosts_text(hosts)})" if len(hosts) > 1 else ""
    return [
        _finding(
            "bench-below-expected",
            f"group {group.name}{where} plateaus at {plateau:g} GB/s busbw, {ratio:.0%} of the "
            f"{expected.busbw_gbps:g} GB/s {what}{expected.hint}",
            severity=Severity(verdict),
            group=group.name,
            **({"ranks_by_host": hosts} if len(hosts) > 1 else {}),
            measured_busbw_gbps=plateau,
            expected_busbw_gbps=expected.busbw_gbps,
            ratio=round(ratio, 3),
            warn_below=expected.warn_below_ratio,
            fail_below=expected.fail_below_ratio,
            **({"expected_basis": expected.basis} if expected.summary else {}),
            **expected.evidence,
        )
    ]


def ranks_by_host(result: BenchResult, group: BenchGroup) -> dict[str, list[int]]:
    """Which of the group's ranks ran on which host, as the run's device lines say (hosts in order of rank)."""
    by_rank = {r.rank: r.host for r in result.ranks}
    hosts: dict[str, list[int]] = {}
    for rank in group.ranks:
        if rank in by_rank:
            hosts.setdefault(by_rank[rank], []).append(rank)
    return hosts


def _hosts_text(hosts: dict[str, list[int]], shown: int = 4) -> str:
    """``node00 ranks 0-7, node01 ranks 8-15``; past ``shown`` hosts, how many more."""
    named = [f"{host} ranks {_span(ranks)}" for host, ranks in hosts.items()]
    more = f" and {len(named) - shown} more host(s)" if len(named) > shown else ""
    return ", ".join(named[:shown]) + more


def _span(ranks: list[int]) -> str:
    """``0-7`` for consecutive ranks, else ``0,2,4``."""
    ordered = sorted(ranks)
    distinct = len(set(ordered)) == len(ordered)
    if len(ordered) > 2 and distinct and ordered[-1] - ordered[0] == len(ordered) - 1:  # no list of a pasted span
        return f"{ordered[0]}-{ordered[-1]}"
    return ",".join(map(str, ordered))


def _verdict(plateau: float, expected: Expected) -> str | None:
    """ "fail", "warn" or None (not low) for a plateau against its expectation."""
    ratio = plateau / expected.busbw_gbps
    if ratio >= expected.warn_below_ratio:
        return None
    if ratio >= expected.fail_below_ratio or expected.warn_at_most:
        return "warn"
    if expected.lowest_gbps and plateau >= expected.fail_below_ratio * expected.lowest_gbps:
        return "warn"
    return "fail"


RISING_ABOVE = 1.05
"""A sweep is still rising when its largest size's busbw is more than 5% above the size before it: on a plateau
successive doublings agree within ~3% (8x A100 4 GiB 234.17 -> 8 GiB 235.14, fixture
nccltest-a100sxm4-40g-oci-bmgpu48-1node-8gpu-fullsweep-1; 8x H100 x2 nodes 4 -> 8 GiB +2.5%, fixture
nccltest-a3mega-h100-2node-16gpu-1), while B200 still gains 14% from 4 to 16 GiB (740.64 -> 845.67,
stas00/ml-engineering network benchmarks)."""


RISING_STEP = 4
"""Sizes at most 4x apart are neighbours of one sweep (nccl-tests ``-f 2``, the bench's factor 2)."""


def still_rising(group: BenchGroup) -> tuple[int, float, int, float] | None:
    """(size, busbw, previous size, its busbw) when the group's largest size is still gaining on the one before."""
    rows = sorted((r for r in group.rows if r.size_bytes >= PLATEAU_MIN_BYTES), key=lambda r: r.size_bytes)
    if len(rows) < 2:
        return None  # one size past 1 MiB: nothing to compare it with
    last, before = rows[-1], rows[-2]
    if last.size_bytes > before.size_bytes * RISING_STEP:
        return None  # sizes far apart: the curve between them is not known, nor whether it still climbs at the top
    if before.busbw_gbps > 0 and last.busbw_gbps > before.busbw_gbps * RISING_ABOVE:
        return last.size_bytes, last.busbw_gbps, before.size_bytes, before.busbw_gbps
    return None


def _sizes_too_small(group: BenchGroup, rising: tuple[int, float, int, float], against: str) -> Finding:
    size, busbw, before_size, before = rising
    return _finding(
        "bench-sizes-too-small",
        f"group {group.name} is still rising at its largest size ({format_size(before_size)} {before:g} -> "
        f"{format_size(size)} {busbw:g} GB/s busbw, +{busbw / before - 1:.0%}): the plateau was not reached, so "
        f"{against} is not a verdict on the links",
        group=group.name,
        largest_size_bytes=size,
        largest_busbw_gbps=busbw,
        previous_size_bytes=before_size,
        previous_busbw_gbps=before,
        rising_above=RISING_ABOVE,
    )


def ran_algorithm(result: BenchResult) -> tuple[str, str]:
    """(algorithm, how it is known) for the sweep's large sizes; ("", why not) when the input does not say.

    From what the input shows NCCL ran (its TUNING line at the largest size, its ENV line, a pasted
    ``NCCL_ALGO=``: the nccl-tests reader), else the ``NCCL_ALGO`` the ranks ran with (``bench --algo``).
    """
    from topoaudit.model.busbw import normalize_algorithm
    from topoaudit.parse.nccl_tests import ALGORITHM_EVIDENCE_KEY, ALGORITHM_KEY

    env = result.environment
    if env.get(ALGORITHM_KEY):
        return env[ALGORITHM_KEY], env.get(ALGORITHM_EVIDENCE_KEY, "")
    forced = normalize_algorithm(env.get("NCCL_ALGO", ""))
    if forced:
        return forced, f"NCCL_ALGO={env['NCCL_ALGO']} in the ranks' environment"
    return "", "the input does not say which algorithm NCCL ran (NCCL_DEBUG_SUBSYS=TUNING or NCCL_ALGO would)"


ORACLE_BASIS = "oracle: "
"""Prefix of a group's ``expected_basis`` set from the oracle (not from the group's links)."""


def reported_nccl_version(result: BenchResult) -> tuple[NcclVersion | None, str]:
    """(release, where it was read) from what the result carries: the bench ranks' NCCL, nccl-tests'
    ``nccl-library=`` code or its JSON's ``nccl_version``; (None, "") when it names none."""
    tests_line = re.sub(r"(?:nccl|rccl)-tests(?: JSON)? version \S+", "", result.version, flags=re.I)
    for text, where in ((result.environment.get("nccl", ""), "the ranks' NCCL"), (tests_line, result.version)):
        version = parse_nccl_version(text) if text.strip() else None
        if version is not None:
            return version, where
    return None, ""


def _expected(result: BenchResult, group: BenchGroup, spec: GpuSpec | None, facts: RunFacts) -> Expected | None:
    algo, _how = ran_algorithm(result)
    linked = isinstance(group.expected_busbw_gbps, float) and not group.expected_basis.startswith(ORACLE_BASIS)
    oracle = _oracle_figure(result, group, spec, facts)
    nvls = isinstance(oracle, Expected) and oracle.evidence.get("oracle_algorithm") in ("nvls", "default")
    if linked and algo not in ("nvls", "nvls_tree") and not nvls:  # the links model a ring: NVLS has its own figure
        basis = f"the topology predicts ({group.expected_basis})" if group.expected_basis else "the topology predicts"
        assert isinstance(group.expected_busbw_gbps, float)
        return Expected(group.expected_busbw_gbps, basis, {"basis": "links", "expected_basis": group.expected_basis})
    if not isinstance(oracle, Expected) and linked and isinstance(group.expected_busbw_gbps, float):
        basis = f"the topology predicts ({group.expected_basis})" if group.expected_basis else "the topology predicts"
        return Expected(group.expected_busbw_gbps, basis, {"basis": "links", "expected_basis": group.expected_basis})
    return oracle if isinstance(oracle, Expected) else None


def _oracle_figure(result: BenchResult, group: BenchGroup, spec: GpuSpec | None, facts: RunFacts) -> Expected | str:
    """The oracle's figure for this many GPUs of this model, on these nodes, with the algorithm that ran (NCCL's
    own choice when the input does not say), or why there is no figure to hold the group to."""
    from topoaudit.bench.oracle import Figure, expected_busbw

    if spec is None:
        return "the GPU model is unknown (pass --gpu-model)"
    if result.backend == "mscclpp":
        return "the run is MSCCL++'s own kernels, and the figures are NCCL's"
    if not group.ranks and result.collective == "all_reduce" and result.backend != "gloo":
        return "the paste shows no '#  Rank' lines naming the ranks' GPUs"
    if result.backend == "gloo" or result.collective != "all_reduce" or len(group.ranks) < 2:
        return f"no all-reduce figure for an {result.collective} run of {len(group.ranks)} rank(s) on {result.backend}"
    by_rank = {r.rank: r for r in result.ranks}
    members = [by_rank[r] for r in group.ranks if r in by_rank]
    if len(members) != len(group.ranks) or any(m.device == "cpu" for m in members):
        return "the ranks' GPUs are not all known"
    per_host: dict[str, int] = {}
    for m in members:
        per_host[m.host] = per_host.get(m.host, 0) + 1
    rack = spec.layout == "nvl72" and len(group.ranks) <= spec.domain_size  # trays of one NVLink domain
    if len(per_host) == 1 and not (spec.one_domain or spec.build == "pcie" or len(group.ranks) == spec.node_gpus):
        return f"which of the {spec.name} cards share a bridge is not in the input"
    if not rack and len(set(per_host.values())) > 1:
        counts = ", ".join(f"{h} {n}" for h, n in per_host.items())
        return f"the ranks are spread unevenly over the hosts ({counts}): no one figure fits every node"
    algo, how = ran_algorithm(result)
    nodes = 1 if rack else len(per_host)
    per_node = len(group.ranks) if rack else len(group.ranks) // nodes
    version, version_from = (
        (facts.nccl_version, facts.version_source or "given") if facts.nccl_version else reported_nccl_version(result)
    )
    figure = expected_busbw(
        spec,
        per_node,
        nodes=nodes,
        nics=facts.network,
        algorithm=algo,
        one_nvlink_domain=rack,
        nccl_version=version,
    )
    if not isinstance(figure, Figure):
        return figure.reason
    shape = f"{nodes} nodes x {per_node}x {spec.name}" if nodes > 1 else f"{len(group.ranks)}x {spec.name}"
    ran = f"algorithm {algo} ({how})" if algo else f"algorithm {figure.algorithm}, NCCL's own choice (not stated)"
    said = "".join(f"; {a}" for a in figure.assumptions)
    at = f"NCCL {version} ({version_from}); " if version else ""
    basis = f"figure for {shape} (catalog entry {spec.key}): {figure.describe()}; {at}{ran}{said}"
    tolerance = f"warn below {figure.warn_below_ratio:g}x: {figure.tolerance_source}"
    basis += f"; {tolerance}"
    chosen = "" if algo else ", NCCL's own choice here"
    summary = f"{figure.algorithm} figure for {shape} ({figure.kind}{chosen})"
    nics = next((a for a in figure.assumptions if a.startswith("NICs ")), "")
    if figure.warn_at_most and nics:
        summary += f"; {nics}, so it warns at most"
    elif figure.across_nodes and facts.network is not None:
        summary += f" over {facts.network.describe()}"
    evidence: dict[str, object] = {
        "basis": "catalog" if figure.kind != "derived" else "nccl-model",
        "catalog_entry": spec.key,
        "algorithm": algo or "unknown",
        "algorithm_evidence": how,
        "nodes": nodes,
        "gpus_per_node": per_node,
        "nccl_version": str(version) if version else "not reported",
        **figure.evidence(),
    }
    if figure.kind != "derived":
        evidence.update(catalog_size_bytes=figure.size_bytes, catalog_min_gbps=figure.floor_gbps)
        evidence.update(catalog_source=figure.source, catalog_algo=figure.algorithm)
    hint = _nvls_hint(result, group, spec, figure, per_node, nodes, version)
    return Expected(
        figure.busbw_gbps,
        basis,
        evidence,
        warn_below_ratio=figure.warn_below_ratio,
        warn_at_most=figure.warn_at_most,
        lowest_gbps=figure.lowest_gbps,
        summary=summary,
        hint=hint,
    )


def _nvls_hint(
    result: BenchResult,
    group: BenchGroup,
    spec: GpuSpec,
    figure: object,
    per_node: int,
    nodes: int,
    version: NcclVersion | None,
) -> str:
    """Where an NVLS figure's run plateaus at the ring's speed: NVLS did not engage, and where to look."""
    from topoaudit.bench.oracle import Figure, expected_busbw

    plateau = group.plateau_busbw_gbps
    if not isinstance(figure, Figure) or figure.algorithm not in ("nvls", "default") or nodes > 1:
        return ""
    ring = expected_busbw(spec, per_node, algorithm="ring", nccl_version=version)
    if (
        not isinstance(ring, Figure)
        or not isinstance(plateau, float)
        or plateau < ring.warn_below_ratio * ring.busbw_gbps
    ):
        return ""
    return (
        f": the plateau is what a ring reaches ({ring.busbw_gbps:g} GB/s), so NVLS did not engage; check "
        "NCCL_NVLS_ENABLE, NCCL_ALGO, the fabric manager, and the NCCL INFO line 'NVLS multicast support is not "
        "available'"
    )


def with_expectations(result: BenchResult, spec: GpuSpec | None, facts: RunFacts | None = None) -> BenchResult:
    """The result with each group's expected figure, its basis and ratio filled in from the oracle where the links
    gave none, and a note naming each figure's source: what a reader checks beside the verdict."""
    facts = facts or RunFacts()
    groups, notes = [], []
    for group in result.groups:
        expected = _expected(result, group, spec, facts)
        if expected is None and not isinstance(group.expected_busbw_gbps, float):
            why = _oracle_figure(result, group, spec, facts)
            if isinstance(why, str):
                groups.append(dataclasses.replace(group, expected_busbw_gbps=Unsupported("oracle", why)))
                continue
        if expected is None or expected.evidence.get("basis") == "links":
            groups.append(group)
            continue
        plateau = group.plateau_busbw_gbps
        ratio = round(plateau / expected.busbw_gbps, 3) if isinstance(plateau, float) and expected.busbw_gbps else None
        groups.append(
            dataclasses.replace(
                group,
                expected_busbw_gbps=expected.busbw_gbps,
                expected_basis=ORACLE_BASIS + expected.basis,
                ratio=ratio if ratio is not None else group.ratio,
            )
        )
        notes.append(f"expected busbw of group {group.name}: {expected.basis}")
    fresh = tuple(n for n in notes if n not in result.notes)
    return dataclasses.replace(result, groups=tuple(groups), notes=result.notes + fresh)


def _spec_named_by_ranks(result: BenchResult) -> GpuSpec | None:
    """The catalog entry of the one GPU model every rank names (an nccl-tests log prints it per rank)."""
    names = {r.name for r in result.ranks}
    if len(names) != 1:
        return None
    (name,) = names
    return find_gpu(name) if isinstance(name, str) and name else None


def _below_user_gate(result: BenchResult, expect_busbw_gbps: float) -> list[Finding]:
    whole = result.group("all") or (result.groups[0] if result.groups else None)
    if whole is not None and isinstance(whole.plateau_busbw_gbps, float):
        if whole.plateau_busbw_gbps >= expect_busbw_gbps:
            return []
        rising = still_rising(whole)
        if rising is not None:
            return [_sizes_too_small(whole, rising, f"the --expect-busbw {expect_busbw_gbps:g} GB/s")]
        return [
            _finding(
                "bench-below-expected",
                f"group {whole.name} plateaus at {whole.plateau_busbw_gbps:g} GB/s busbw, below the "
                f"--expect-busbw {expect_busbw_gbps:g} GB/s",
                severity=Severity.FAIL,
                group=whole.name,
                measured_busbw_gbps=whole.plateau_busbw_gbps,
                expected_busbw_gbps=expect_busbw_gbps,
                basis="--expect-busbw",
            )
        ]
    if whole is not None or result.status != "complete":
        return [
            _finding(
                "bench-incomplete",
                f"--expect-busbw {expect_busbw_gbps:g} cannot be checked: no large-message plateau was measured",
                expected_busbw_gbps=expect_busbw_gbps,
            )
        ]
    return []


def _oversubscribed(result: BenchResult) -> list[Finding]:
    """More ranks than CPU cores on the reporting host: the ranks take turns, the figures time the scheduler."""
    cores_text = result.environment.get("cpu_cores", "")
    if not cores_text.isdecimal() or not result.ranks:
        return []
    cores = int(cores_text)
    host = next((r.host for r in result.ranks if r.rank == 0), result.ranks[0].host)
    ranks = sum(1 for r in result.ranks if r.host == host)
    if ranks <= cores:
        return []
    return [
        _finding(
            "bench-oversubscribed",
            f"{ranks} ranks ran on {cores} CPU core(s) of {host}: they took turns on the cores, so the figures "
            "measure the scheduler, not the links",
            host=host,
            ranks=ranks,
            cpu_cores=cores,
        )
    ]


def _failures(result: BenchResult, already: list[Finding]) -> list[Finding]:
    """Timeouts and failed ranks are faults; a stop by Ctrl-C or SIGTERM only makes the run incomplete."""
    out: list[Finding] = []
    stops = [e for e in result.errors if e.kind == INTERRUPTED]
    for err in result.errors:
        if err.kind == "timeout":
            where = f" in group {err.group} at {format_size(err.size_bytes)}" if err.group else ""
            out.append(
                _finding(
                    "bench-timeout",
                    f"a collective did not finish{where} (rank {err.rank}): {err.message}",
                    group=err.group,
                    size_bytes=err.size_bytes,
                    rank=err.rank,
                )
            )
            break
    others = [e for e in result.errors if e.kind not in ("timeout", INTERRUPTED)]
    if others and not out:
        first = others[0]
        where = f" in group {first.group} at {format_size(first.size_bytes)}" if first.group else ""
        out.append(
            _finding(
                "bench-rank-failed",
                f"rank {first.rank} {first.kind}{where}: {first.message}"
                + (f" (+{len(others) - 1} more)" if len(others) > 1 else ""),
                errors=[{"rank": e.rank, "kind": e.kind, "message": e.message} for e in others],
            )
        )
    if stops:
        rows = sum(len(g.rows) for g in result.groups)
        out.append(
            _finding(
                "bench-incomplete",
                f"the bench was stopped before it finished ({stops[0].message}); {rows} measured row(s) are kept",
                rows=rows,
                stop=stops[0].message,
            )
        )
    elif (
        result.status != "complete"
        and result.source != "nccl-tests"  # how a pasted run ended is judged from what it printed (rules.run_rules)
        and not out
        and not any(f.code == "bench-incomplete" for f in already)
    ):
        out.append(_finding("bench-incomplete", f"the bench stopped early ({result.status})"))
    return out


def _ranks(ranks: tuple[int, ...]) -> str:
    return ",".join(map(str, ranks))


def _sets(parts: tuple[tuple[int, ...], ...]) -> str:
    return " ".join("{" + _ranks(p) + "}" for p in parts)


__all__ = [
    "INTERRUPTED",
    "RunFacts",
    "interrupted_gate",
    "judge_bench",
    "ran_algorithm",
    "still_rising",
    "was_interrupted",
    "with_expectations",
]


# --- the bench's findings, declared for the judge's one run over every rule ---------------------------------


@rule(
    Code(
        "bench-data-corruption",
        "fail",
        title="An all-reduce returned wrong data (element-wise check of a known pattern)",
        remedy=(
            "Do not run jobs on these GPUs: check IOMMU/ACS settings (PCIe P2P can drop writes silently), `dmesg` for "
            "DMAR/Xid errors, and rerun with NCCL_P2P_DISABLE=1 to localise the path."
        ),
    ),
    Code(
        "bench-below-expected",
        "warn",
        title="A group's large-message busbw is below what its links should carry (or below --expect-busbw)",
        remedy=(
            "Compare the group's links with `nvidia-smi nvlink -s` / PCIe width; rerun with NCCL_DEBUG=INFO "
            "NCCL_DEBUG_SUBSYS=INIT,GRAPH to see the transport NCCL chose (SHM means no P2P)."
        ),
    ),
    Code(
        "bench-sizes-too-small",
        "warn",
        title=(
            "A sweep's busbw is still rising at its largest size: the plateau was not reached, so it is not judged low"
        ),
        remedy=(
            "Rerun with larger sizes (`bench --max-bytes 16G`, nccl-tests `-e 16G`) until two doublings agree within a "
            "few percent; the published figures are taken at 8-16 GiB."
        ),
    ),
    Code(
        "measured-topology-mismatch",
        "warn",
        title="The measured fast islands differ from the NVLink domains the topology reports",
        remedy=(
            "A link that the driver reports is not carrying traffic (or a VM hides one): check peer access (`nvidia-smi"
            " topo -p2p r`), NCCL_P2P_LEVEL, and the NVLink state of the GPUs that disagree."
        ),
    ),
    Code(
        "bench-timeout",
        "fail",
        title="A collective did not finish within the timeout",
        remedy=(
            "A rank or link is wedged: rerun the named group with NCCL_DEBUG=INFO; check for Xid errors and for a GPU "
            "stuck at 100% utilisation; raise --timeout only for very large sizes on slow links."
        ),
    ),
    Code(
        "bench-rank-failed",
        "fail",
        title="A bench rank failed or died; the results are partial",
        remedy=(
            "Read the rank's error in the report; rerun with --groups all to see whether it is tied to one subgroup or "
            "size."
        ),
    ),
    Code(
        "bench-incomplete",
        "warn",
        title="The bench stopped early or could not measure what the gate needs",
        remedy="Rerun without interruption; include sizes of at least 1 MiB so a plateau exists.",
    ),
    Code(
        "bench-oversubscribed",
        "warn",
        title="More bench ranks than CPU cores: the figures measure the scheduler, not the links",
        remedy="Run at most one rank per core (--nproc no larger than `nproc`), or on a machine with more cores.",
    ),
    Code(
        "bench-size-skipped",
        "info",
        title="Some message sizes did not fit in free memory and were skipped",
        remedy="Free GPU memory (stop other processes) or lower --max-bytes.",
    ),
    needs=(BENCH,),
)
def bench_findings(ctx: RuleContext) -> tuple[Finding, ...]:
    """Judge an all-reduce sweep (``topoaudit bench``, ``audit --bench``, or a pasted nccl-tests run).

    Wrong data from a known pattern, a group's large-message busbw below what its links or the catalog's
    measured band say it should carry (or below ``--expect-busbw``), a sweep still rising at its largest size,
    measured fast islands that differ from the NVLink domains, collectives that timed out, ranks that failed,
    a run stopped early, more ranks than cores, sizes that did not fit in memory.
    """
    assert isinstance(ctx.bench, BenchResult)
    return judge_bench(ctx.bench, spec=ctx.spec, expect_busbw_gbps=ctx.expect_busbw_gbps, facts=ctx.run)
