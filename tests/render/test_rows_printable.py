"""The row model scrubs control characters from every string, and copies only the objects that had one."""

from __future__ import annotations

import dataclasses

import report_samples as rs

from topoaudit.render import rows


def test_a_clean_view_is_kept_as_it_is_not_copied() -> None:
    clean = rows._view(rs.report_of(rs.split_machine()))
    assert rows._printable_tree(clean) is clean


def test_only_the_branch_with_a_control_character_is_rebuilt() -> None:
    clean = rows._view(rs.report_of(rs.split_machine()))
    dirty = dataclasses.replace(clean, source="topo-matrix box\x1b[2J\x07")
    scrubbed = rows._printable_tree(dirty)
    assert scrubbed.source == "topo-matrix box\ufffd[2J\ufffd"
    assert scrubbed.findings is clean.findings  # untouched branches are shared, not copied
    assert rows.view(rs.hostile_report()) == rows._printable_tree(rows._view(rs.hostile_report()))
