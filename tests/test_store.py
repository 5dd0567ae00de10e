"""The store: migrations, and the shortcut that skips Alembic when already at head."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory

from habitus.store import _MIGRATIONS, HEAD_REVISION, Store


def test_head_revision_constant_matches_alembic() -> None:
    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    assert ScriptDirectory.from_config(cfg).get_current_head() == HEAD_REVISION


def test_migrations_create_every_table_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with Store.open(db) as store:
        names = set(sa.inspect(store.conn).get_table_names())
    assert {"files", "turns", "beliefs", "evidence", "events", "alembic_version"} <= names
    before = db.read_bytes()
    with Store.open(db) as store:
        assert store.status_counts() == {}
    assert db.read_bytes() == before  # opening a store at head writes nothing


def test_dry_run_store_is_in_memory(tmp_path: Path) -> None:
    with Store.open(tmp_path / "missing.db", in_memory_if_missing=True) as store:
        store.add_event("run")
        store.commit()
    assert not (tmp_path / "missing.db").exists()
