"""Read-only peeks at the store with the standard library's ``sqlite3``, for the no-op fast
path: deciding that a re-run has nothing to do must not cost the import of SQLAlchemy and
Alembic (more than the whole check). These queries mirror :class:`habitus.store.Store`'s
``file_states``, ``get_state`` and ``beliefs_stamp``; any error means "cannot tell", and
the caller takes the normal path."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any


class Peek:
    """An open read-only connection (``mode=ro``: never creates or changes the file)."""

    def __init__(self, db: Path) -> None:
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        self.conn.row_factory = sqlite3.Row

    @classmethod
    def at_head(cls, db: Path) -> Peek | None:
        """A peek at the store ``db`` when it exists, opens and is at this version's schema
        revision; else ``None`` (no store yet, another revision, an error): the caller then
        takes the normal path."""
        from habitus.store import HEAD_REVISION

        if not db.is_file():
            return None
        try:
            peek = cls(db)
        except sqlite3.Error:
            return None
        try:
            if peek.revision() == HEAD_REVISION:
                return peek
        except sqlite3.Error:
            pass
        peek.close()
        return None

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def revision(self) -> str | None:
        """The Alembic revision the file is at."""
        row = self.conn.execute("SELECT version_num FROM alembic_version").fetchone()
        return row[0] if row else None

    def file_states(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Read states by file id (see ``Store.file_states``)."""
        out: dict[str, dict[str, Any]] = {}
        batch = list(ids)
        for i in range(0, len(batch), 500):
            part = batch[i : i + 500]
            marks = ",".join("?" * len(part))
            for row in self.conn.execute(f"SELECT * FROM files WHERE id IN ({marks})", part):
                out[row["id"]] = dict(row)
        return out

    def file_stats(self, paths: Iterable[str]) -> dict[tuple[str, str], tuple[int, float, int]]:
        """``(size, mtime, inode)`` by ``(agent, path)`` for the files whose stored relative
        ``path`` is in ``paths``: what decides "unchanged" (see
        ``habitus.sources.incremental.plan``), without hashing file ids or building a row
        dict per file."""
        out: dict[tuple[str, str], tuple[int, float, int]] = {}
        batch = list(dict.fromkeys(paths))
        for i in range(0, len(batch), 500):
            part = batch[i : i + 500]
            marks = ",".join("?" * len(part))
            query = f"SELECT agent, path, size, mtime, inode FROM files WHERE path IN ({marks})"
            for agent, path, size, mtime, inode in self.conn.execute(query, part):
                out[(agent, path)] = (size, mtime, inode)
        return out

    def get_state(self, key: str) -> str | None:
        """See ``Store.get_state``."""
        row = self.conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def beliefs_stamp(self) -> str:
        """See ``Store.beliefs_stamp``."""
        count, newest = self.conn.execute("SELECT count(*), max(updated_at) FROM beliefs").fetchone()
        return f"{count}:{newest or ''}"
