"""A topoaudit snapshot (``topoaudit probe``): the answers of one probe, judged as a live audit judges them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from topoaudit.readers import Reader

if TYPE_CHECKING:
    from topoaudit.model.facts import Facts


def sniff(text: str) -> bool:
    if "topoaudit-snapshot" not in text[:1024]:  # cheap test first: most inputs are topo -m text
        return False
    from topoaudit.probe.snapshot import looks_like_snapshot

    return looks_like_snapshot(text)


def load(text: str, name: str) -> Facts:
    from topoaudit.probe.snapshot import snapshot_from_json

    return facts_of_snapshot(snapshot_from_json(text, name), name)


def facts_of_snapshot(snapshot: Any, name: str, kind: str = "snapshot") -> Facts:
    """A probe snapshot (live: kind "live") -> Facts; the same Machine either way, so the same verdict."""
    from topoaudit.model.facts import Facts
    from topoaudit.model.report import SourceInfo
    from topoaudit.probe.interpret import snapshot_summary, snapshot_to_machine

    summary = snapshot_summary(snapshot)
    return Facts(
        snapshot_to_machine(snapshot),
        SourceInfo(kind, name, description=summary["description"]),
        extras={"probe": summary},
        what="a topoaudit snapshot",
    )


READER = Reader("snapshot", 10, "a topoaudit snapshot", sniff, load)
