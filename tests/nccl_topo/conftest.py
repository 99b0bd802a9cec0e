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


@pytest.fixture(scope="session")
def nccl_load(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NCCL's own XML parser, built once for the session (skips where there is no C++ compiler)."""
    from topofiles import compile_nccl_parser

    binary = compile_nccl_parser(tmp_path_factory.mktemp("nccl"))
    if binary is None:
        pytest.skip("no C++ compiler to build NCCL's parser")
    return binary
