"""The report bundle: everything a provider ticket needs, in one directory.

``report.json`` (canonical), ``report.md`` (references ``topology.svg``), ``report.html`` (self-contained),
``topology.svg``, ``junit.xml`` (the gate for CI), the raw evidence under ``evidence/`` (the input text,
the snapshot, nvidia-smi outputs) and ``SHA256SUMS`` (``sha256sum -c`` format). The whole directory is
built beside its target and swapped in at once, so the directory holds one run's files and exactly the
files its manifest lists -- an interrupted run leaves the previous bundle as it was.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from topoaudit.errors import OutputError
from topoaudit.model.report import Report, bundle_conflict
from topoaudit.outputs.files import write_directory
from topoaudit.outputs.redact import Redactor, redact_report
from topoaudit.parse.text import exact_capture_text
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
    """Evidence as text for redaction, decoded as the analysis decoded it; None where it is not text."""
    return content if isinstance(content, str) else exact_capture_text(content)


def manifest(files: Mapping[str, bytes]) -> bytes:
    """``sha256sum``-compatible lines, sorted by path."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items())).encode()


def write_bundle(
    report: Report,
    out_dir: str | os.PathLike[str],
    evidence: Mapping[str, str | bytes] | None = None,
    *,
    redact: bool = False,
    force: bool = False,
) -> Bundle:
    """Write the bundle into ``out_dir``: a new or empty directory, or a previous bundle, replaced whole.

    A directory holding anything else is refused, so one bundle never mixes two machines' evidence; so is
    a bundle of another host (or one whose host cannot be told), which is someone's evidence, unless
    ``force`` is given.
    """
    out = Path(out_dir)
    replaces = _check_replaceable(out)
    written_report, files = bundle_files(report, evidence, redact=redact)
    if replaces and not force:
        _check_same_host(out, written_report)
    write_directory(out, {**files, MANIFEST: manifest(files)})
    return Bundle(out, written_report, (*files, MANIFEST))


def _check_replaceable(out: Path) -> bool:
    """Refuse a path that is not a directory, or a non-empty directory that is not an earlier bundle (one whose
    manifest lists every file in it); True when it holds an earlier bundle."""
    if not out.exists():
        return False
    if not out.is_dir():
        raise OutputError(f"cannot write a bundle to {out}: it exists and is not a directory; --out needs a directory")
    try:
        present = _files_in(out)
        listed = set(_listed(out)) if MANIFEST in present else set()
    except OSError as exc:
        raise OutputError(f"cannot write a bundle to {out}: cannot read it ({exc.strerror})") from exc
    if not present:
        return False
    if MANIFEST not in present:
        raise OutputError(
            f"{out} is not empty and is not a topoaudit bundle (it has no {MANIFEST}); "
            "give a new or empty directory to --out"
        )
    unlisted = sorted(present - listed - {MANIFEST})
    if unlisted:
        raise OutputError(
            f"{out} holds files its {MANIFEST} does not list ({', '.join(unlisted[:3])}"
            f"{', ...' if len(unlisted) > 3 else ''}); move them away or give a new directory to --out"
        )
    return True


def _check_same_host(out: Path, report: Report) -> None:
    """Refuse to replace a bundle that cannot be shown to be of the host ``report`` (as written) is of."""
    try:
        conflict = bundle_conflict((out / "report.json").read_text(encoding="utf-8", errors="replace"), report)
    except OSError as exc:
        reason = (exc.strerror or "unreadable").lower()
        conflict = f"its report.json cannot be opened ({reason}), so whose it is cannot be told"
    if conflict:
        raise OutputError(
            f"refusing to replace the bundle in {out}: {conflict}; "
            "give --force to replace it, or another directory to --out"
        )


def _files_in(directory: Path) -> set[str]:
    """Every non-directory entry below ``directory``, as a POSIX path relative to it (hidden files included)."""
    return {p.relative_to(directory).as_posix() for p in directory.rglob("*") if not p.is_dir()}


def _listed(out: Path) -> dict[str, str]:
    """The manifest's entries: relative path -> sha256 hex digest."""
    entries = {}
    for line in (out / MANIFEST).read_text(encoding="utf-8", errors="replace").splitlines():
        digest, _, name = line.partition("  ")
        if name:
            entries[name] = digest
    return entries


def verify_bundle(out_dir: str | os.PathLike[str]) -> list[str]:
    """Problems with a bundle on disk (empty when its manifest exists, every file matches and none is unlisted)."""
    out = Path(out_dir)
    sums = out / MANIFEST
    if not sums.is_file():
        return [f"{MANIFEST} missing: the bundle is incomplete"]
    problems = []
    listed = _listed(out)
    for name, digest in listed.items():
        target = out / name
        if not target.is_file():
            problems.append(f"{name}: missing")
        elif hashlib.sha256(target.read_bytes()).hexdigest() != digest:
            problems.append(f"{name}: checksum differs")
    for name in sorted(_files_in(out) - set(listed) - {MANIFEST}):
        problems.append(f"{name}: not listed in {MANIFEST}")
    return problems
