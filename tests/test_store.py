"""The store: migrations, and the shortcut that skips Alembic when already at head."""

from __future__ import annotations

from pathlib import Path

import pytest
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


def test_a_store_from_a_newer_version_is_a_clean_error(isolated_home: Path) -> None:
    """A store at a revision this version does not know (after a downgrade) is refused with
    a plain error naming the store, not an internal error, and is left as it was."""
    import os
    import sqlite3

    from conftest import install_examples, run_cli

    install_examples(isolated_home)
    run_cli("distill", "--days", "100000")
    db = Path(os.environ["HABITUS_HOME"]) / "habitus.db"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zzzz9999'")
    before = db.read_bytes()
    for path in (isolated_home / ".claude" / "projects").rglob("*.jsonl"):
        os.utime(path, (path.stat().st_atime, path.stat().st_mtime - 60))  # something to read
    done = run_cli("distill", "--days", "100000", check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("habitus: error: the store (") and "zzzz9999" in done.stderr
    assert "internal error" not in done.stderr and db.read_bytes() == before


def test_database_errors_are_reported_without_their_sql(tmp_path: Path) -> None:
    """A write to a read-only store raises SQLAlchemy's OperationalError, whose text holds
    the SQL and its parameters (transcript paths): the CLI reports only the database's
    own message."""
    import sqlite3

    from habitus.cli import _store_problem

    db = tmp_path / "ro.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (path TEXT)")
    engine = sa.create_engine(f"sqlite:///file:{db}?mode=ro&uri=true")
    with engine.connect() as conn, pytest.raises(sa.exc.OperationalError) as caught:
        conn.execute(sa.text("INSERT INTO t VALUES (:p)"), {"p": "/home/dev/secret-project/x.jsonl"})
    engine.dispose()
    message = _store_problem(caught.value)
    assert message is not None and "readonly" in message
    assert "secret-project" not in message and "INSERT" not in message
    assert _store_problem(ValueError("x")) is None


def test_a_new_store_removes_what_a_killed_creation_left(tmp_path: Path) -> None:
    """A store creation killed before its end leaves ``.habitus.db.<pid>.new`` (and its
    journal): the next creation removes them when that process is gone, keeps others'."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(dead.stdout)
    stale = [tmp_path / f".habitus.db.{pid}.new", tmp_path / f".habitus.db.{pid}.new-journal"]
    for path in stale:
        path.write_bytes(b"half made")
    mine = tmp_path / f".habitus.db.{1}.new"  # pid 1 is alive
    mine.write_bytes(b"in progress")
    Store.open(tmp_path / "habitus.db").close()
    assert not any(p.exists() for p in stale) and mine.exists()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_language_belief_from_database_counts_matches_the_turn_by_turn_answer(tmp_path: Path, seed: int) -> None:
    """The pipeline asks the store for counts by language and loads only the majority
    language's turns; that gives the candidate computed from every stored turn in Python
    (same text, same evidence turns, picked in the order they were stored)."""
    import random

    from test_rules_extractor import turn_row

    from habitus.extract.language import language_candidate, language_candidate_from_counts

    rng = random.Random(seed)
    rows = []
    for n in range(300):
        row = turn_row(f"{rng.getrandbits(64):016x}", f"s{rng.randrange(40)}", n, "words", "2026-11-20T10:00:00.000Z")
        row["agent"] = rng.choice(["claude", "codex"])
        row["language"] = rng.choices(["fr", "en", "de", None], weights=[7 + seed, 2, 1, 3])[0]
        rows.append(row)
    with Store.open(tmp_path / "habitus.db") as store:
        for i in range(0, len(rows), 70):  # several inserts, as a run's flushes do
            store.add_turns(rows[i : i + 70])
        counts = store.language_counts()
        french = store.turns_in_language("fr")
        from_store = language_candidate_from_counts(counts, store.turns_in_language, min_sessions=3)
    assert counts == {code: sum(r["language"] == code for r in rows) for code in ("fr", "en", "de") if any(r["language"] == code for r in rows)}
    assert [t["id"] for t in french] == [r["id"] for r in rows if r["language"] == "fr"]
    expected = language_candidate(rows, min_sessions=3)
    assert expected is not None and expected.text == "Reply in French."
    assert from_store is not None and from_store.evidence == expected.evidence and from_store.why == expected.why


def test_rows_inserted_in_bulk_read_back_as_written_with_defaults(tmp_path: Path) -> None:
    """The bulk insert behind a first scan (tuples straight to the driver) stores every
    column as given, NULL for a column left out, and the column default (``rereads``) where
    the schema has one, the same as SQLAlchemy's own insert."""
    from habitus.store.core import _insert_many
    from habitus.store.schema import files

    whole = {"id": "f1", "agent": "claude", "path": "p/a.jsonl", "session_id": "s", "project": "/w", "size": 10, "mtime": 1.5, "inode": 7, "offset": 10, "lines": 2, "fingerprint": "ab", "first_read": "t0", "last_read": "t1", "rereads": 3}
    partial = {k: v for k, v in whole.items() if k not in ("project", "rereads")} | {"id": "f2"}
    with Store.open(tmp_path / "habitus.db") as store:
        _insert_many(store.conn, files, [whole, partial])
        store.conn.execute(sa.insert(files), [partial | {"id": "f3"}])
        got = {r["id"]: dict(r) for r in store.conn.execute(sa.select(files)).mappings()}
    assert got["f1"] == whole
    assert got["f2"] == partial | {"project": None, "rereads": 0}
    assert {k: v for k, v in got["f3"].items() if k != "id"} == {k: v for k, v in got["f2"].items() if k != "id"}
