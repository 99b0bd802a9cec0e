"""The report bundle: everything a provider ticket needs, in one directory.

``report.json`` (canonical), ``report.md`` (references ``topology.svg``), ``report.html`` (self-contained),
``topology.svg``, ``junit.xml`` (the gate for CI), the raw evidence under ``evidence/`` (the input text,
the snapshot, nvidia-smi outputs) and ``SHA256SUMS`` (``sha256sum -c`` format). Every file is written to
a temporary name and renamed; ``SHA256SUMS`` is removed first and written last, so a bundle is complete
exactly when its manifest exists and checks -- an interrupted run never leaves something that looks finished.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from topoaudit.errors import InputError
from topoaudit.model.report import Report
from topoaudit.redact import Redactor, redact_report
from topoaudit.render import RenderOptions, render
from topoaudit.render.svg_topology import topology_svg

MANIFEST = "SHA256SUMS"
EVIDENCE_DIR = "evidence"
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Bundle:
    directory: Path
    report: Report  # the report as written (redacted when asked)
    files: tuple[str, ...]  # relative paths, manifest last


def safe_name(name: str) -> str:
    """A plain file name for an evidence item: no directories, no leading dots, no odd characters."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = _SAFE.sub("_", base).lstrip(".")
    return base[:120] or "evidence"


def bundle_files(
    report: Report, evidence: Mapping[str, str | bytes] | None = None, *, redact: bool = False
) -> tuple[Report, dict[str, bytes]]:
    """The bundle's files in memory (relative path -> bytes), without the manifest."""
    items: list[tuple[str, str | bytes]] = list((evidence or {}).items())
    if redact:
        redactor = Redactor()
        redactor.learn_data(_plain(report))
        texts: list[tuple[str, str | bytes]] = []
        for name, content in items:
            text = _as_text(content)
            if text is None:
                text = f"[binary evidence {name!r} left out: --redact cannot check binary data]\n"
            redactor.learn_text(text)
            texts.append((name, text))
        items = [(redactor.text(name), redactor.text(str(text))) for name, text in texts]
        report = redact_report(report, redactor)
    files: dict[str, bytes] = {
        "report.json": render(report, "json").encode(),
        "report.md": render(report, "markdown", RenderOptions(picture="topology.svg")).encode(),
        "report.html": render(report, "html").encode(),
        "topology.svg": topology_svg(report, standalone=True).encode(),
        "junit.xml": render(report, "junit").encode(),
    }
    for name, content in items:
        path = f"{EVIDENCE_DIR}/{safe_name(name)}"
        stem, dot, ext = path.rpartition(".")
        k = 2
        while path in files:
            path = f"{stem}-{k}.{ext}" if dot else f"{path}-{k}"
            k += 1
        files[path] = content if isinstance(content, bytes) else content.encode()
    return report, files


def _plain(report: Report) -> dict[str, object]:
    from topoaudit.model.report import report_to_dict

    return report_to_dict(report)


def _as_text(content: str | bytes) -> str | None:
    if isinstance(content, str):
        return content
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError:
        return None


def manifest(files: Mapping[str, bytes]) -> bytes:
    """``sha256sum``-compatible lines, sorted by path."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items())).encode()


def write_bundle(
    report: Report,
    out_dir: str | os.PathLike[str],
    evidence: Mapping[str, str | bytes] | None = None,
    *,
    redact: bool = False,
) -> Bundle:
    """Write the bundle into ``out_dir`` (created if needed); the manifest is removed first, written last."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a directory; --out needs a directory")
    written_report, files = bundle_files(report, evidence, redact=redact)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / MANIFEST).unlink(missing_ok=True)
        for name, data in files.items():
            _write_atomic(out / name, data)
        _write_atomic(out / MANIFEST, manifest(files))
    except PermissionError as exc:
        raise InputError(f"{out}: permission denied writing the bundle ({exc.filename})") from exc
    return Bundle(out, written_report, (*files, MANIFEST))


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def verify_bundle(out_dir: str | os.PathLike[str]) -> list[str]:
    """Problems with a bundle on disk (empty when its manifest exists and every file matches)."""
    out = Path(out_dir)
    sums = out / MANIFEST
    if not sums.is_file():
        return [f"{MANIFEST} missing: the bundle is incomplete"]
    problems = []
    for line in sums.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        target = out / name
        if not target.is_file():
            problems.append(f"{name}: missing")
        elif hashlib.sha256(target.read_bytes()).hexdigest() != digest:
            problems.append(f"{name}: checksum differs")
    return problems
