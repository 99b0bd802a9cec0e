"""Orchestration tests: the fake probe box of tests/probe is importable here, and a real Slurm cluster
(``slurm`` marker) is started once per module that asks for it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))
sys.path.insert(0, str(Path(__file__).parent))

from slurm_cluster import SlurmCluster, require_slurm


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slurm: starts a real Slurm cluster (munged, slurmctld, slurmd) on this host")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    """One node named after this host, in the foreground, stopped at the end; skipped (failed in CI) without Slurm."""
    require_slurm()
    cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
