"""Writing what the user asked for: one atomic writer for reports (``-o``) and bundles (``--out``).

A file is written to a temporary name in its own directory, flushed to disk (fsync) and renamed over the
target, so a reader never sees half a report. A directory is built beside its target and swapped in whole,
so it never mixes an old run's files with a new one's. Every filesystem failure becomes an
:class:`~topoaudit.errors.OutputError`: one sentence naming the path, exit 4 -- the user's environment,
never a bug. Parent directories are never created: a mistyped path is an error, not a new tree.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from topoaudit.errors import OutputError

_REASONS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EROFS: "the filesystem is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "the operation is not permitted there",
    errno.ENOTDIR: "a part of the path is a file, not a directory",
    errno.EISDIR: "it is a directory",
    errno.ENOENT: "the directory does not exist or does not accept new files",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EXDEV: "the temporary copy landed on another filesystem",
}


def write_file(path: str | os.PathLike[str], content: str | bytes) -> Path:
    """Write ``content`` to ``path`` atomically (temporary file in the same directory, fsync, rename).

    A device or pipe that already exists (``/dev/stdout``) is written in place: it cannot be renamed over.
    A symbolic link is followed: the file it points to is replaced, the link stays.
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    data = content.encode("utf-8") if isinstance(content, str) else content
    _check_parent(target)
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _error(target, exc) from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {target}: it is a directory; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(target, data)
        return target
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        _write_new(tmp, data)
        os.replace(tmp, target)
        _sync_directory(target.parent)
    except OSError as exc:
        raise _error(target, exc) from exc
    finally:
        _remove_quietly(tmp)
    return target


def write_directory(path: str | os.PathLike[str], files: Mapping[str, bytes]) -> Path:
    """Make ``path`` hold exactly ``files`` (relative path -> bytes), replacing what was there whole.

    The new tree is built in a hidden directory beside ``path`` and swapped in by one rename (an atomic
    exchange where the kernel offers it), so ``path`` holds either the old tree or the new one, never both.
    Whether an existing directory may be replaced is the caller's decision, taken before calling.
    """
    target = Path(os.path.abspath(path))
    _check_parent(target)
    if target.exists() and not target.is_dir():
        raise OutputError(f"cannot write {path}: it exists and is not a directory")
    if Path.cwd().is_relative_to(target):
        raise OutputError(f"cannot replace {path}: it holds the current directory; give another directory")
    staging = target.with_name(f".{target.name}.{secrets.token_hex(4)}.new")
    try:
        os.mkdir(staging)
        for name, data in files.items():
            file = staging / name
            file.parent.mkdir(parents=True, exist_ok=True)
            _write_new(file, data)
            _sync_directory(file.parent)
        _swap_in(staging, target)
        _sync_directory(target.parent)
    except OSError as exc:
        raise _error(Path(path), exc) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_parent(target: Path) -> None:
    """The parent must be an existing directory: say which part of the path is missing or is a file."""
    parent = target.parent
    if parent.is_dir():
        return
    for ancestor in (parent, *parent.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                raise OutputError(f"cannot write {target}: {ancestor} is a file, not a directory")
            break
    raise OutputError(f"cannot write {target}: the directory {parent} does not exist (create it first)")


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist), write, flush and fsync; the mode follows the umask like any new file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _write_in_place(target: Path, data: bytes) -> None:
    try:
        with open(target, "wb") as fh:
            fh.write(data)
            fh.flush()
    except OSError as exc:
        raise _error(target, exc) from exc


def _sync_directory(directory: Path) -> None:
    """Persist a rename: fsync the directory that holds it (not every filesystem allows it; then skip)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _swap_in(staging: Path, target: Path) -> None:
    """Put ``staging`` at ``target``; an existing ``target`` ends up at ``staging`` (then removed)."""
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        return
    old = target.with_name(f".{target.name}.{secrets.token_hex(4)}.old")
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(old, target)
        raise
    os.rename(old, staging)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where it is not offered."""
    import ctypes  # only a directory swap needs it, not every report written with -o

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _error(target: Path, exc: OSError) -> OutputError:
    reason = _REASONS.get(exc.errno or 0) or (exc.strerror or type(exc).__name__).lower()
    return OutputError(f"cannot write {target}: {reason}")
