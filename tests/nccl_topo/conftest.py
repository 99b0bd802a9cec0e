"""Fake boxes for the topology file: the probe's own fake NVML and sysfs tree, fed this folder's scenarios."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "probe"))
sys.path.insert(0, str(Path(__file__).parent))

SCENARIOS = Path(__file__).parents[1] / "fixtures" / "nccl_topo"


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """``box("azure-ndv5")``: install the scenario of tests/fixtures/nccl_topo and return its sysfs root."""
    import fakebox
    import fakenvml

    def make(name: str) -> Path:
        if (SCENARIOS / f"{name}.toml").exists():  # else one of the probe's own scenarios
            monkeypatch.setattr(fakenvml, "SCENARIOS", SCENARIOS)
        return fakebox.make_box(name, tmp_path, monkeypatch).root

    return make
