"""Startup: every command imports only what it uses (checked in a fresh interpreter, by ``sys.modules``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import topoaudit.examples
from topoaudit.cli import COMMANDS

MATRIX = str(Path(topoaudit.examples.__file__).parent / "hgx-h100.txt")  # a real 8-GPU `topo -m` capture

HEAVY = ("networkx", "rich.console", "torch", "pynvml", "jinja2", "tomllib")
TOPOAUDIT_HEAVY = ("topoaudit.plan", "topoaudit.judge.policy", "topoaudit.pipeline", "topoaudit.model.report")


USE_CASES = ("analyze", "audit", "bench", "fleet", "healthcheck", "plan", "report")
OTHER_USE_CASES = {name: tuple(f"topoaudit.app.{other}" for other in USE_CASES if other != name) for name in USE_CASES}


def _modules(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def loaded_after(*args: str) -> set[str]:
    """The modules ``topoaudit ARGS`` added to a fresh interpreter (beyond what the interpreter itself holds,
    e.g. a coverage tracer started in every child process)."""
    bare = _modules("import json, sys\nprint(json.dumps(sorted(sys.modules)))\n")
    code = (
        "import json, sys\n"
        "from topoaudit.cli import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    return _modules(code) - bare


def heavy_in(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


@pytest.mark.parametrize("args", [("--help",), *((name, "--help") for name in sorted(COMMANDS))])
def test_help_loads_no_graph_library_planner_or_policy_parser(args: tuple[str, ...]) -> None:
    modules = loaded_after(*args)
    assert heavy_in(modules, HEAVY) == []
    assert heavy_in(modules, TOPOAUDIT_HEAVY) == []


def test_examples_list_loads_no_graph_judge_or_renderer() -> None:
    modules = loaded_after("examples", "--format", "json")
    assert heavy_in(modules, ("networkx", "rich.console", "torch", "pynvml", "jinja2")) == []
    assert heavy_in(modules, ("topoaudit.plan", "topoaudit.judge", "topoaudit.pipeline", "topoaudit.render")) == []


def test_plan_without_a_machine_reads_no_capture_and_no_policy() -> None:
    modules = loaded_after("plan", "--params", "744B", "--precision", "int4", "--gpu", "H200", "--format", "json")
    assert heavy_in(modules, ("torch", "pynvml", "rich.console", "jinja2")) == []
    assert (
        heavy_in(modules, ("topoaudit.readers", "topoaudit.parse", "topoaudit.judge.policy", "topoaudit.probe")) == []
    )
    assert heavy_in(modules, ("topoaudit.model.bench", "topoaudit.model.nccl", "topoaudit.model.nccl_topo")) == []
    assert heavy_in(modules, ("topoaudit.model.host_checks", "topoaudit.model.policy", *OTHER_USE_CASES["plan"])) == []


def test_analyze_json_loads_no_terminal_renderer_torch_or_nvml() -> None:
    modules = loaded_after("analyze", "--example", "hgx-h100", "--format", "json")
    assert heavy_in(modules, OTHER_USE_CASES["analyze"]) == []
    assert heavy_in(modules, ("torch", "pynvml", "rich.console", "jinja2", "topoaudit.judge.policy")) == []


def test_networkx_loads_only_for_a_fabric_that_needs_graph_algorithms() -> None:
    """A fully switched paste's domains and placements need no graph library; a partial mesh (DGX-1's cube
    mesh) is split into TP groups by networkx's cliques, and the planner alone never sees a machine."""
    assert "networkx" not in loaded_after("analyze", MATRIX, "--no-color")
    assert "networkx" not in loaded_after("plan", "--params", "744B", "--precision", "int4", "--gpu", "H200")
    assert "networkx" in loaded_after("analyze", "--example", "dgx1-cube-mesh", "--format", "json")


def test_analyze_console_on_a_matrix_loads_only_what_a_matrix_needs() -> None:
    """The default path (a pasted `topo -m`, shown in the terminal) pays for no other input's model, parser or
    judge, no browser/template code, not rich's emoji table, and no TOML parser (the matrix names no GPU model,
    so the catalog is not read)."""
    modules = loaded_after("analyze", MATRIX, "--no-color")
    assert "rich.console" in modules and "topoaudit.parse.topo_matrix" in modules  # what the command is
    not_needed = (
        "torch",
        "pynvml",
        "jinja2",
        "rich._emoji_codes",
        "tomllib",
        "topoaudit.judge.policy",
        "topoaudit.model.bench",
        "topoaudit.model.plan",
        "topoaudit.model.nccl",
        "topoaudit.model.nccl_topo",
        "topoaudit.parse.nccl_log",
        "topoaudit.parse.nccl_xml",
        "topoaudit.parse.nccl_tests",
        "topoaudit.rules.nccl_rules",
        "topoaudit.rules.capture_rules",
        "topoaudit.bench",
        "topoaudit.probe",
        "topoaudit.render.html",
        "topoaudit.render.markdown",
        "topoaudit.render.bench_rows",
        "topoaudit.render.plan_rows",
        "topoaudit.render.nccl_rows",
        "topoaudit.render.fact_rows",
        "topoaudit.model.host_checks",
        "topoaudit.model.policy",
        *OTHER_USE_CASES["analyze"],
    )
    assert heavy_in(modules, not_needed) == []


def test_a_saved_report_reads_its_host_checks_back(tmp_path: Path) -> None:
    """Host checks load only with a report that has them; a probe's saved report still renders them after a
    round trip through report.json, in a fresh process."""
    snapshot = Path(__file__).parents[1] / "fixtures" / "probe" / "real" / "snapshot-h200-vm-1gpu.json"
    saved = tmp_path / "report.json"
    run = [sys.executable, "-m", "topoaudit"]
    subprocess.run([*run, "analyze", str(snapshot), "--format", "json", "-o", str(saved)], timeout=120, check=False)
    direct = subprocess.run([*run, "analyze", str(snapshot), "--format", "markdown"], capture_output=True, text=True)
    again = subprocess.run([*run, "report", str(saved), "--format", "markdown"], capture_output=True, text=True)
    assert "Host checks" in direct.stdout and "Traceback" not in again.stderr
    assert _without_timestamps(again.stdout) == _without_timestamps(direct.stdout)
    modules = loaded_after("analyze", str(saved), "--format", "json")
    assert "topoaudit.model.host_checks" in modules


def _without_timestamps(text: str) -> str:
    import re

    return re.sub(r"\d{4}-\d\d-\d\dT[\d:]+\+00:00", "TS", text)
