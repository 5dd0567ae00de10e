"""The store: the only code that writes SQL. A SQLite file in ``$HABITUS_HOME`` by default.

:class:`Store` (in :mod:`habitus.store.core`) is imported lazily: SQLAlchemy and Alembic are
heavy, and a re-run with nothing to do decides so with :mod:`habitus.store.readonly` alone.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

#: The newest migration. Opening a store already at this revision skips Alembic entirely;
#: a test keeps it equal to Alembic's own head.
HEAD_REVISION = "0002_state"

if TYPE_CHECKING:  # pragma: no cover
    from habitus.store.core import Store


def now_iso() -> str:
    """The current time as ISO-8601 UTC with milliseconds and ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def default_db_path() -> Path:
    """``$HABITUS_HOME/habitus.db`` (the platform user data dir when unset)."""
    from habitus.paths import user_dir

    return user_dir() / "habitus.db"


def __getattr__(name: str) -> Any:
    if name in ("Store", "_MIGRATIONS"):
        from habitus.store import core

        return getattr(core, name)
    raise AttributeError(f"module 'habitus.store' has no attribute {name!r}")


__all__ = ["HEAD_REVISION", "Store", "default_db_path", "now_iso"]
