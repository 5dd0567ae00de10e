""":class:`Store`: owns one SQLAlchemy connection, runs the Alembic migrations on open, and
exposes small, named operations. SQL is SQLAlchemy Core with portable constructs only (no
SQLite-only SQL), so a PostgreSQL URL works the same way."""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from habitus.errors import NotFoundError, StoreError
from habitus.store import HEAD_REVISION, default_db_path, now_iso
from habitus.store.schema import beliefs, events, evidence, files, metadata, state, turns

_MIGRATIONS = Path(__file__).parent / "migrations"
_BATCH = 500


class Store:
    """An open store. Use as a context manager, or call :meth:`close`.

    ``url`` is a SQLAlchemy URL (``sqlite:///path``; ``sqlite://`` is in memory). Writes
    happen inside :meth:`transaction`; :meth:`rollback` throws a whole run away (``--dry-run``).
    Raises :class:`StoreError` when the database cannot be opened or migrated.
    """

    def __init__(self, url: str, *, fresh: bool = False) -> None:
        self.url = url
        try:
            kwargs: dict[str, Any] = {}
            if url in ("sqlite://", "sqlite:///:memory:"):
                kwargs["poolclass"] = sa.pool.StaticPool
            self.engine: Engine = sa.create_engine(url, **kwargs)
            if url.startswith("sqlite"):
                sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            self.conn: Connection = self.engine.connect()
            self._migrate(fresh=fresh or url == "sqlite://")
        except sa.exc.SQLAlchemyError as exc:
            raise StoreError(f"cannot open the store at {url}: {exc}") from exc
        self._tx: sa.engine.Transaction | None = None

    @classmethod
    def open(cls, path: Path | None = None, *, in_memory_if_missing: bool = False) -> Store:
        """Open the SQLite store at ``path`` (default :func:`default_db_path`), creating it.

        With ``in_memory_if_missing`` a store that does not exist yet is opened in memory
        instead, so a dry run leaves nothing on disk.
        """
        path = path or default_db_path()
        if in_memory_if_missing and not path.exists():
            return cls("sqlite://")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            cls._create(path)
        return cls(f"sqlite:///{path}")

    @classmethod
    def _create(cls, path: Path) -> None:
        """Build a new store in a temporary file beside ``path`` and move it into place only
        when complete (SQLite commits each ``CREATE TABLE`` on its own, so a store built in
        place and interrupted would be left half made). If another process created ``path``
        meanwhile, its store is kept."""
        temporary = path.with_name(f".{path.name}.{os.getpid()}.new")
        _remove_stale(path)
        try:
            cls(f"sqlite:///{temporary}", fresh=True).close()
            os.chmod(temporary, 0o600)  # it holds the user's (redacted) prompts: theirs alone
            try:
                os.link(temporary, path)  # atomic, and never replaces an existing store
            except FileExistsError:
                pass
            except OSError:  # a filesystem without hard links
                if not path.exists():
                    os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)

    def _migrate(self, *, fresh: bool = False) -> None:
        if fresh:
            # A new store (or a throwaway in-memory one for a dry run): the tables come from
            # the same metadata the migrations build, stamped at head, without importing
            # Alembic or replaying history (Alembic's own advice for new databases;
            # tests/test_store.py checks both ways build the same schema).
            metadata.create_all(self.conn)
            self.conn.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL, CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"))
            self.conn.execute(sa.text("INSERT INTO alembic_version VALUES (:v)"), {"v": HEAD_REVISION})
            self.conn.commit()
            return
        inspector = sa.inspect(self.conn)
        if inspector.has_table("alembic_version"):
            current = self.conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
            if current == [HEAD_REVISION]:
                self.conn.rollback()
                return
        from alembic import command
        from alembic.config import Config

        cfg = Config()
        cfg.set_main_option("script_location", str(_MIGRATIONS))
        cfg.attributes["connection"] = self.conn
        command.upgrade(cfg, "head")
        self.conn.commit()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Roll back anything uncommitted and close the connection."""
        if self.conn.in_transaction():
            self.conn.rollback()
        self.conn.close()
        self.engine.dispose()

    def commit(self) -> None:
        """Make everything written since the last commit durable."""
        if self.conn.in_transaction():
            self.conn.commit()

    def rollback(self) -> None:
        """Throw away everything written since the last commit."""
        if self.conn.in_transaction():
            self.conn.rollback()

    # ----- files -------------------------------------------------------------------------
    def file_states(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored read states of many files at once, by file id."""
        out: dict[str, dict[str, Any]] = {}
        batch = list(ids)
        for i in range(0, len(batch), _BATCH):
            part = batch[i : i + _BATCH]
            for row in self.conn.execute(sa.select(files).where(files.c.id.in_(part))).mappings():
                out[row["id"]] = dict(row)
        return out

    def save_file_states(self, rows: Sequence[Mapping[str, Any]], existing: Iterable[str]) -> None:
        """Insert (in one statement) or update many files' read states; ``existing`` are the
        ids stored when the run planned its reads. A row missing from ``existing`` that is
        stored by now (a run that ended after this one looked) is updated, keeping its
        ``first_read``."""
        known = set(existing)
        new = [r for r in rows if r["id"] not in known]
        if new:  # a first scan: one row per transcript file, handed to the driver as tuples
            _insert_many(self.conn, files, new, keep_on_conflict=("id", "first_read"))
        for row in rows:
            if row["id"] in known:
                self.save_file_state(row)

    def file_state(self, file_id: str) -> Mapping[str, Any] | None:
        """The stored read state of a file, or ``None`` when it was never read."""
        row = self.conn.execute(sa.select(files).where(files.c.id == file_id)).mappings().first()
        return dict(row) if row else None

    def save_file_state(self, state: Mapping[str, Any]) -> None:
        """Insert or replace a file's read state (keys are the ``files`` columns)."""
        exists = self.conn.execute(sa.select(files.c.id).where(files.c.id == state["id"])).first()
        if exists:
            values = {k: v for k, v in state.items() if k not in ("id", "first_read")}
            self.conn.execute(sa.update(files).where(files.c.id == state["id"]).values(**values))
        else:
            self.conn.execute(sa.insert(files).values(**state))

    # ----- turns -------------------------------------------------------------------------
    def known_turns(self, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` already stored."""
        found: set[str] = set()
        batch = list(ids)
        for i in range(0, len(batch), _BATCH):
            part = batch[i : i + _BATCH]
            found.update(self.conn.execute(sa.select(turns.c.id).where(turns.c.id.in_(part))).scalars())
        return found

    def add_turns(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert turn rows (their ids must be new: check with :meth:`known_turns`); a column
        a row leaves out is NULL. A first scan inserts tens of thousands of rows (see
        :func:`_insert_many`)."""
        if rows:
            _insert_many(self.conn, turns, rows)

    def has_turns(self) -> bool:
        """Whether any human turn is stored."""
        return self.conn.execute(sa.select(turns.c.id).limit(1)).first() is not None

    def turns_by_ids(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored turns by id."""
        out: dict[str, dict[str, Any]] = {}
        batch = list(ids)
        for i in range(0, len(batch), _BATCH):
            part = batch[i : i + _BATCH]
            for row in self.conn.execute(sa.select(turns).where(turns.c.id.in_(part))).mappings():
                out[row["id"]] = dict(row)
        return out

    def turns_with_keys(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        """``agent``, ``text_key``, ``path`` and ``timestamp`` of stored turns whose normalised
        text hash is one of ``keys``."""
        out: list[dict[str, Any]] = []
        batch = list(keys)
        cols = (turns.c.agent, turns.c.text_key, turns.c.path, turns.c.timestamp)
        for i in range(0, len(batch), _BATCH):
            part = batch[i : i + _BATCH]
            out.extend(dict(r) for r in self.conn.execute(sa.select(*cols).where(turns.c.text_key.in_(part))).mappings())
        return out

    def turns_with_key(self, agent: str, text_key: str) -> list[dict[str, Any]]:
        """Stored turns of ``agent`` whose normalised text hash is ``text_key``."""
        query = sa.select(turns).where(turns.c.agent == agent, turns.c.text_key == text_key)
        return [dict(r) for r in self.conn.execute(query).mappings()]

    def language_counts(self) -> dict[str, int]:
        """Stored human turns by detected language code (turns without one left out)."""
        query = sa.select(turns.c.language, sa.func.count()).where(turns.c.language.is_not(None)).group_by(turns.c.language)
        return {str(code): int(n) for code, n in self.conn.execute(query)}

    def turns_in_language(self, code: str) -> list[dict[str, Any]]:
        """``id``, ``agent`` and ``session_id`` of the stored human turns in language
        ``code``, in table order (the order they were stored, on SQLite)."""
        query = sa.select(turns.c.id, turns.c.agent, turns.c.session_id).where(turns.c.language == code)
        return [dict(r) for r in self.conn.execute(query).mappings()]

    def count_turns(self) -> int:
        """How many human turns are stored."""
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(turns)).scalar_one())

    # ----- beliefs -----------------------------------------------------------------------
    def beliefs(self, statuses: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Beliefs, optionally only those with one of ``statuses``, strongest first."""
        query = sa.select(beliefs)
        if statuses is not None:
            query = query.where(beliefs.c.status.in_(list(statuses)))
        query = query.order_by(
            beliefs.c.confidence.desc(), beliefs.c.sessions.desc(), beliefs.c.created_at, beliefs.c.id
        )
        return [dict(r) for r in self.conn.execute(query).mappings()]

    def belief(self, ident: str) -> dict[str, Any]:
        """One belief by id, unique id prefix (at least 4 characters) or slug.

        Raises :class:`NotFoundError` when none or several match."""
        exact = self.conn.execute(
            sa.select(beliefs).where(sa.or_(beliefs.c.id == ident, beliefs.c.slug == ident))
        ).mappings().all()
        if len(exact) == 1:
            return dict(exact[0])
        if len(ident) >= 4:
            rows = self.conn.execute(
                sa.select(beliefs).where(beliefs.c.id.startswith(ident, autoescape=True))
            ).mappings().all()
            if len(rows) == 1:
                return dict(rows[0])
            if len(rows) > 1:
                raise NotFoundError(f"belief id {ident!r} is ambiguous ({len(rows)} match)")
        hint = " (an id prefix needs at least 4 characters)" if len(ident) < 4 else ""
        raise NotFoundError(f"no belief with id or name {ident!r}{hint}")

    def belief_by_key(self, key: str) -> dict[str, Any] | None:
        """The belief whose grouping key is ``key``, or ``None``."""
        row = self.conn.execute(sa.select(beliefs).where(beliefs.c.key == key)).mappings().first()
        return dict(row) if row else None

    def slug_taken(self, slug: str) -> bool:
        """Whether a belief already uses ``slug`` as its ledger file name."""
        return self.conn.execute(sa.select(beliefs.c.id).where(beliefs.c.slug == slug)).first() is not None

    def insert_belief(self, row: Mapping[str, Any]) -> None:
        """Insert a new belief row."""
        self.conn.execute(sa.insert(beliefs).values(**row))

    def update_belief(self, belief_id: str, **values: Any) -> None:
        """Change columns of one belief."""
        self.conn.execute(sa.update(beliefs).where(beliefs.c.id == belief_id).values(**values))

    # ----- evidence ----------------------------------------------------------------------
    def evidence_for(self, belief_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Evidence rows by belief id, oldest first."""
        out: dict[str, list[dict[str, Any]]] = {}
        batch = list(belief_ids)
        for i in range(0, len(batch), _BATCH):
            part = batch[i : i + _BATCH]
            query = (
                sa.select(evidence)
                .where(evidence.c.belief_id.in_(part))
                .order_by(evidence.c.timestamp, evidence.c.path, evidence.c.line)
            )
            for row in self.conn.execute(query).mappings():
                out.setdefault(row["belief_id"], []).append(dict(row))
        return out

    def add_evidence(self, rows: Sequence[Mapping[str, Any]]) -> int:
        """Insert evidence rows whose ids are new; return how many were inserted."""
        if not rows:
            return 0
        ids = [r["id"] for r in rows]
        known: set[str] = set()
        for i in range(0, len(ids), _BATCH):
            part = ids[i : i + _BATCH]
            known.update(self.conn.execute(sa.select(evidence.c.id).where(evidence.c.id.in_(part))).scalars())
        fresh = [dict(r) for r in rows if r["id"] not in known]
        if fresh:
            self.conn.execute(sa.insert(evidence), fresh)
        return len(fresh)

    # ----- events ------------------------------------------------------------------------
    def add_event(self, kind: str, *, belief_id: str | None = None, actor: str | None = None, detail: Any = None) -> None:
        """Append an event to the trail (``detail`` is stored as JSON)."""
        self.conn.execute(
            sa.insert(events).values(
                at=now_iso(),
                kind=kind,
                belief_id=belief_id,
                actor=actor,
                detail=json.dumps(detail, ensure_ascii=False, sort_keys=True) if detail is not None else None,
            )
        )

    def count_events(self, kind: str, since: str) -> int:
        """How many events of ``kind`` happened at or after ``since`` (ISO time)."""
        query = sa.select(sa.func.count()).select_from(events).where(events.c.kind == kind, events.c.at >= since)
        return int(self.conn.execute(query).scalar_one())

    def last_event(self, kind: str) -> dict[str, Any] | None:
        """The newest event of ``kind``, with ``detail`` decoded, or ``None``."""
        row = self.conn.execute(
            sa.select(events).where(events.c.kind == kind).order_by(events.c.id.desc()).limit(1)
        ).mappings().first()
        if row is None:
            return None
        out = dict(row)
        out["detail"] = json.loads(out["detail"]) if out["detail"] else None
        return out

    def get_state(self, key: str) -> str | None:
        """A value kept between runs, or ``None``."""
        return self.conn.execute(sa.select(state.c.value).where(state.c.key == key)).scalar_one_or_none()

    def set_state(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``; writes nothing when it is already there."""
        current = self.get_state(key)
        if current == value:
            return
        if current is None:
            self.conn.execute(sa.insert(state).values(key=key, value=value))
        else:
            self.conn.execute(sa.update(state).where(state.c.key == key).values(value=value))

    def beliefs_stamp(self) -> str:
        """Changes whenever any belief changes: count and newest ``updated_at``."""
        count, newest = self.conn.execute(sa.select(sa.func.count(), sa.func.max(beliefs.c.updated_at))).one()
        return f"{count}:{newest or ''}"

    def status_counts(self) -> dict[str, int]:
        """Number of beliefs by status."""
        query = sa.select(beliefs.c.status, sa.func.count()).group_by(beliefs.c.status)
        return {status: int(n) for status, n in self.conn.execute(query)}

    def count_files(self) -> int:
        """How many transcript files have a read state."""
        return int(self.conn.execute(sa.select(sa.func.count()).select_from(files)).scalar_one())


def _remove_stale(path: Path) -> None:
    """Remove what a store creation killed before its end left beside ``path``
    (``.habitus.db.<pid>.new`` and its journal), when that process is gone."""
    prefix = f".{path.name}."
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not name.startswith(prefix) or ".new" not in name:
            continue
        pid = name[len(prefix) :].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            entry.unlink()
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours
    return True


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    # The default rollback journal, not WAL: a run that only reads leaves no file behind,
    # so a no-op re-run changes nothing on disk.
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _insert_many(
    conn: Connection, table: sa.Table, rows: Sequence[Mapping[str, Any]], *, keep_on_conflict: Sequence[str] = ()
) -> None:
    """Insert ``rows`` (mappings by column name) into ``table`` with one ``executemany`` of
    plain tuples: SQLAlchemy's per-row parameter processing costs more than SQLite's insert
    for the thousands of rows of a first scan. A column a row leaves out gets its scalar
    default, else NULL. With ``keep_on_conflict`` (the primary key first), a row whose key
    is already stored updates every other column instead (``ON CONFLICT … DO UPDATE``, in
    SQLite and PostgreSQL alike). Raises
    ``ValueError`` for a table with a computed default (this shortcut would skip it)."""
    names = [c.name for c in table.columns]
    defaults = {}
    for column in table.columns:
        if column.default is not None:
            if not column.default.is_scalar:
                raise ValueError(f"{table.name}.{column.name} has a computed default: insert it with sa.insert")
            defaults[column.name] = getattr(column.default, "arg", None)  # a ScalarElementColumnDefault
    whole = operator.itemgetter(*names)
    values = []
    for row in rows:
        try:
            values.append(whole(row))
        except KeyError:
            values.append(tuple(row.get(n, defaults.get(n)) for n in names))
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"  # sqlite3; psycopg takes %s
    sql = f"INSERT INTO {table.name} ({', '.join(names)}) VALUES ({', '.join([mark] * len(names))})"
    if keep_on_conflict:
        updates = ", ".join(f"{n} = excluded.{n}" for n in names if n not in keep_on_conflict)
        sql += f" ON CONFLICT({keep_on_conflict[0]}) DO UPDATE SET {updates}"
    conn.exec_driver_sql(sql, values)
