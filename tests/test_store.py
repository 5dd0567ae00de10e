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


def _schema(db: Path) -> dict[str, object]:
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        out: dict[str, object] = {}
        for table in sorted(inspector.get_table_names()):
            out[table] = {
                "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default")) for c in inspector.get_columns(table)],
                "pk": inspector.get_pk_constraint(table)["constrained_columns"],
                "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in inspector.get_indexes(table)),
                "unique": sorted(tuple(u["column_names"]) for u in inspector.get_unique_constraints(table)),
                "fks": sorted((tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"])) for f in inspector.get_foreign_keys(table)),
            }
        rev = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
    engine.dispose()
    out["revision"] = rev
    return out


def test_a_new_store_has_the_schema_the_migrations_build(tmp_path: Path) -> None:
    """A new store is created from the metadata and stamped at head (no Alembic run); it
    must be exactly what replaying every migration builds."""
    from alembic import command

    fresh = tmp_path / "fresh.db"
    Store.open(fresh).close()
    migrated = tmp_path / "migrated.db"
    engine = sa.create_engine(f"sqlite:///{migrated}")
    with engine.connect() as conn:
        cfg = Config()
        cfg.set_main_option("script_location", str(_MIGRATIONS))
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
        conn.commit()
    engine.dispose()
    assert _schema(fresh) == _schema(migrated)
    assert _schema(fresh)["revision"] == [HEAD_REVISION]
