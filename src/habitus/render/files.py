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


def atomic_write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically (temp file in the same folder, fsync,
    ``os.replace``), keeping the old file's permission bits. Raises ``OSError``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def backup(path: Path, backup_dir: Path) -> Path | None:
    """Copy ``path`` into ``backup_dir`` as ``<name>.<UTC timestamp>.bak``; ``None`` when
    ``path`` does not exist. Returns the backup's path."""
    if not path.exists():
        return None
    backup_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = backup_dir / f"{path.name}.{stamp}.bak"
    shutil.copy2(path, target)
    return target


def write_if_changed(path: Path, data: bytes, *, backup_dir: Path | None = None) -> tuple[bool, Path | None]:
    """Write ``data`` to ``path`` only if it differs; back it up first when ``backup_dir`` is
    given and the file exists. Returns ``(written, backup_path)``."""
    try:
        if path.read_bytes() == data:
            return False, None
    except FileNotFoundError:
        pass
    saved = backup(path, backup_dir) if backup_dir is not None else None
    atomic_write(path, data)
    return True, saved
