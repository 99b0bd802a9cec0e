"""How this copy of topoaudit was installed, and so the install command for one of its extras that works here.

A checkout (a clone installed with ``pip install -e``, or run in place) is recognised by the pyproject.toml
beside the package. Otherwise pip's record in the installed distribution's metadata decides:
``direct_url.json`` (PEP 610) is there for an install from a path, an archive or a VCS URL; it is absent
for an install from an index. Only an index install can ask the index for ``topoaudit[extra]``; a wheel
file or a VCS URL is given the extra's own requirements to install.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "topoaudit"


def extra_install_command(extra: str) -> str:
    """The ``pip install`` command line that brings ``extra``'s requirements to this installation."""
    from importlib import metadata

    tree = source_tree()
    if tree is not None:  # a clone, installed editable (or only on sys.path): install from it, editable
        return f"pip install -e '{tree}[{extra}]'"
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _requirements_command(None, extra)
    raw = dist.read_text("direct_url.json")
    if raw is None:  # installed from an index: the index has the extra too
        return f"pip install '{DISTRIBUTION}[{extra}]'"
    try:
        direct = json.loads(raw)
    except ValueError:
        return _requirements_command(dist, extra)
    url = str(direct.get("url", "")) if isinstance(direct, dict) else ""
    info = direct.get("dir_info") if isinstance(direct, dict) else None
    where = urlparse(url)
    path = unquote(where.path)
    if isinstance(info, dict) and where.scheme == "file" and Path(path).is_dir():
        editable = "-e " if info.get("editable") else ""
        return f"pip install {editable}'{path}[{extra}]'"
    return _requirements_command(dist, extra)  # a wheel or sdist file, a VCS URL: name what the extra needs


def source_tree() -> Path | None:
    """The checkout this package is imported from (its pyproject.toml names topoaudit), else None."""
    import topoaudit

    root = Path(topoaudit.__file__).resolve().parent.parent
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if re.search(rf"""^name\s*=\s*["']{DISTRIBUTION}["']""", text, re.MULTILINE) else None


def _requirements_command(dist: object, extra: str) -> str:
    """``pip install`` of the extra's requirements as the metadata lists them (``torch>=2.1``)."""
    needs = _extra_requirements(dist, extra) or _DEFAULTS.get(extra, [])
    return "pip install " + " ".join(f"'{r}'" if any(c in r for c in "<>=!~ ;") else r for r in needs)


_DEFAULTS = {"bench": ["torch"]}


def _extra_requirements(dist: object, extra: str) -> list[str]:
    """The requirements whose only marker is ``extra == "<extra>"`` (how setuptools writes an extra)."""
    pattern = re.compile(rf"""^\s*([^;]+?)\s*;\s*extra\s*==\s*["']{re.escape(extra)}["']\s*$""")
    found = (pattern.match(line) for line in getattr(dist, "requires", None) or [])
    return [m.group(1).replace(" ", "") for m in found if m]
