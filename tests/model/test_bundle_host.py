"""Whose bundle a folder holds: `--out DIR` replaces an earlier bundle of the same host, and may not replace
another host's evidence (bundle_conflict gives the sentence; "" means the same host)."""

from __future__ import annotations

import dataclasses

import report_samples as rs

from topoaudit.model.machine import Host
from topoaudit.model.report import Report, SourceInfo, bundle_conflict
from topoaudit.render import render


def _of(host: str | None = None, *, uuids: bool = False, source: str = "topo.txt") -> Report:
    machine = rs.split_machine(with_ids=uuids, host=Host(hostname=host) if host else None)
    return rs.report_of(machine, source=SourceInfo("topo-matrix", source))


def test_the_same_hosts_bundle_is_replaced_by_name_short_or_full() -> None:
    assert bundle_conflict(render(_of("gpu-a01.dc3.example"), "json"), _of("GPU-A01")) == ""


def test_another_hosts_bundle_is_named_and_kept() -> None:
    assert bundle_conflict(render(_of("gpu-a01"), "json"), _of("gpu-b07")) == (
        "it holds the bundle of host 'gpu-a01', and this report is of host 'gpu-b07'"
    )


def test_without_host_names_the_gpu_uuids_tell_the_host() -> None:
    saved = render(_of(uuids=True), "json")
    assert bundle_conflict(saved, _of(uuids=True)) == ""
    other = _of(uuids=True)
    gpus = tuple(dataclasses.replace(g, uuid=f"GPU-0000-{g.index}") for g in other.machine.gpus)
    other = dataclasses.replace(other, machine=dataclasses.replace(other.machine, gpus=gpus))
    assert bundle_conflict(saved, other).startswith("it holds the bundle of the GPUs 'GPU-3c2f6b1e")


def test_without_names_or_uuids_the_input_tells_it_and_another_input_cannot_be_shown_the_same() -> None:
    saved = render(_of(source="node7/topo.txt"), "json")
    assert bundle_conflict(saved, _of(source="node7/topo.txt")) == ""
    assert bundle_conflict(saved, _of(source="node8/topo.txt")) == (
        "it holds the bundle of the input 'node7/topo.txt', and this report is of the input 'node8/topo.txt'"
    )
    assert "cannot be shown to be the same host" in bundle_conflict(saved, _of("gpu-a01"))


def test_a_redacted_or_unreadable_bundle_cannot_be_told_apart_so_it_is_kept() -> None:
    redacted = dataclasses.replace(_of("host-1"), extras={"redaction": {"note": "redacted"}})
    assert "a redacted bundle" in bundle_conflict(render(redacted, "json"), _of("host-1"))
    assert bundle_conflict("{ not json", _of("gpu-a01")).startswith("its report.json cannot be read (report.json: not")
