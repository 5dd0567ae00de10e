"""Safe writes to files a user may own: atomic replace, backup before the first change,
write only when the content changed, keep the file's mode.

Pattern from pre-commit (STYLE.md habit 7): back up, write atomically, say when nothing
changed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from habitus.errors import HabitusError


def file_mode(path: Path) -> int:
    """The permission bits a file written at ``path`` gets: those of the file there now,
    else what a new file gets under the current umask (``0o666 & ~umask``)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same folder, fsync,
    ``os.replace``), keeping the old file's permission bits; a new file gets the usual
    ``0o666 & ~umask``. A symlink is written through (its target is replaced, the link is
    kept), so a dotfiles link stays a link. Raises ``OSError``."""
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


#: Backups kept per file name; older ones are removed when a new one is made.
KEEP_BACKUPS = 20


def backup(path: Path, backup_dir: Path) -> Path | None:
    """Copy ``path`` into ``backup_dir`` as ``<name>.<UTC timestamp>.bak`` (the newest
    ``KEEP_BACKUPS`` per name are kept); ``None`` when ``path`` does not exist. Returns the
    backup's path."""
    if not path.exists():
        return None
    backup_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = backup_dir / f"{path.name}.{stamp}.bak"
    shutil.copy2(path, target)
    for old in sorted(backup_dir.glob(f"{path.name}.*.bak"))[:-KEEP_BACKUPS]:
        old.unlink()
    return target


def write_if_changed(path: Path, data: bytes, *, backup_dir: Path | None = None) -> tuple[bool, Path | None]:
    """Write ``data`` to ``path`` only if it differs; back it up first when ``backup_dir`` is
    given and the file exists. Returns ``(written, backup_path)``. Raises
    :class:`HabitusError` when ``path`` exists but is read-only (the user's choice is
    respected) and ``OSError`` on other failures."""
    try:
        if path.read_bytes() == data:
            return False, None
        if not os.stat(path).st_mode & 0o200:
            raise HabitusError(f"{path} is read-only; habitus leaves it as it is")
    except FileNotFoundError:
        pass
    saved = backup(path, backup_dir) if backup_dir is not None else None
    atomic_write(path, data)
    return True, saved
