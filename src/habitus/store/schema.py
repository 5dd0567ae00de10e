"""The store's tables, in SQLAlchemy Core. Portable SQL only: no SQLite-only constructs, so
the same schema runs on PostgreSQL later. Migrations in ``migrations/versions`` create them."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

#: One row per transcript file habitus has read: how far, and a fingerprint of what it read.
files = Table(
    "files",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("agent", String(16), nullable=False),
    Column("path", Text, nullable=False),
    Column("session_id", String(128)),
    Column("project", Text),
    Column("size", Integer, nullable=False),
    Column("mtime", Float, nullable=False),
    Column("inode", Integer, nullable=False),
    Column("offset", Integer, nullable=False),
    Column("lines", Integer, nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("first_read", String(32), nullable=False),
    Column("last_read", String(32), nullable=False),
    Column("rereads", Integer, nullable=False, default=0),
)

#: Human turns (redacted text) with their provenance; the id is content-addressed.
turns = Table(
    "turns",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("agent", String(16), nullable=False),
    Column("session_id", String(128), nullable=False),
    Column("file_id", String(16)),
    Column("path", Text, nullable=False),
    Column("line", Integer, nullable=False),
    Column("byte_start", Integer, nullable=False),
    Column("byte_end", Integer, nullable=False),
    Column("uuid", String(64)),
    Column("timestamp", String(32)),
    Column("cwd", Text),
    Column("project", Text),
    Column("kind", String(32), nullable=False),
    Column("text", Text, nullable=False),
    Column("text_key", String(16), nullable=False),
    Column("language", String(8)),
    Column("run_id", String(32)),
    Index("ix_turns_text_key", "text_key"),
    Index("ix_turns_session", "agent", "session_id"),
)

#: Beliefs: one per rule, whatever its status (nothing is deleted).
beliefs = Table(
    "beliefs",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("key", Text, nullable=False, unique=True),
    Column("slug", String(80), nullable=False, unique=True),
    Column("text", Text, nullable=False),
    Column("type", String(16), nullable=False),
    Column("scope", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("confidence", Float, nullable=False),
    Column("explicit", Boolean, nullable=False),
    Column("sessions", Integer, nullable=False),
    Column("why", Text, nullable=False, default=""),
    Column("how_to_apply", Text, nullable=False, default=""),
    Column("extractor", String(32), nullable=False),
    Column("created_at", String(32), nullable=False),
    Column("updated_at", String(32), nullable=False),
    Column("decided_by", String(64)),
    Column("decided_at", String(32)),
    Column("supersedes", String(16)),
    Column("superseded_by", String(16)),
    Index("ix_beliefs_status", "status"),
)

#: Evidence: which human turn supports which belief, with a redacted excerpt.
evidence = Table(
    "evidence",
    metadata,
    Column("id", String(16), primary_key=True),
    Column("belief_id", String(16), ForeignKey("beliefs.id"), nullable=False),
    Column("turn_id", String(16), ForeignKey("turns.id"), nullable=False),
    Column("agent", String(16), nullable=False),
    Column("session_id", String(128), nullable=False),
    Column("path", Text, nullable=False),
    Column("line", Integer, nullable=False),
    Column("uuid", String(64)),
    Column("timestamp", String(32)),
    Column("excerpt", Text, nullable=False),
    Column("explicit", Boolean, nullable=False),
    Column("created_at", String(32), nullable=False),
    Index("ix_evidence_belief", "belief_id"),
)

#: An append-only trail: runs, approvals, rejections, supersessions, renders, LLM calls.
events = Table(
    "events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", String(32), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("belief_id", String(16)),
    Column("actor", String(64)),
    Column("detail", Text),
    Index("ix_events_kind_at", "kind", "at"),
)

#: Small facts kept between runs, e.g. the stamp of the last render (migration 0002).
state = Table(
    "state",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)
