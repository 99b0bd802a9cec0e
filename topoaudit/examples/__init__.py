"""Bundled example boxes: captured (or, where no capture exists, constructed) machines to try every command
on without a GPU. ``index.toml`` names each one's file, GPU model, description and provenance."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Example:
    """One bundled box: its `nvidia-smi topo -m` file and what its GPUs report (topo -m omits the model)."""

    name: str
    file: str
    gpu_model: str
    description: str
    provenance: str

    def text(self) -> str:
        """The capture itself."""
        return resources.files(__name__).joinpath(self.file).read_text(encoding="utf-8")


def examples() -> dict[str, Example]:
    """The bundled example boxes by name (reads ``index.toml``; no graph or report code is loaded)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    index = tomllib.loads(resources.files(__name__).joinpath("index.toml").read_text(encoding="utf-8"))
    return {
        name: Example(name, e["file"], e["gpu_model"], e["description"], e["provenance"])
        for name, e in index["example"].items()
    }


__all__ = ["Example", "examples"]
