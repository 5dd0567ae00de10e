"""initial schema: files, turns, beliefs, evidence, events

Revision ID: 0001_initial
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("agent", sa.String(16), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("session_id", sa.String(128)),
        sa.Column("project", sa.Text),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("mtime", sa.Float, nullable=False),
        sa.Column("inode", sa.Integer, nullable=False),
        sa.Column("offset", sa.Integer, nullable=False),
        sa.Column("lines", sa.Integer, nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("first_read", sa.String(32), nullable=False),
        sa.Column("last_read", sa.String(32), nullable=False),
        sa.Column("rereads", sa.Integer, nullable=False),
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("agent", sa.String(16), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("file_id", sa.String(16)),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("byte_start", sa.Integer, nullable=False),
        sa.Column("byte_end", sa.Integer, nullable=False),
        sa.Column("uuid", sa.String(64)),
        sa.Column("timestamp", sa.String(32)),
        sa.Column("cwd", sa.Text),
        sa.Column("project", sa.Text),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("text_key", sa.String(16), nullable=False),
        sa.Column("language", sa.String(8)),
        sa.Column("run_id", sa.String(32)),
    )
    op.create_index("ix_turns_text_key", "turns", ["text_key"])
    op.create_index("ix_turns_session", "turns", ["agent", "session_id"])
    op.create_table(
        "beliefs",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("key", sa.Text, nullable=False, unique=True),
        sa.Column("slug", sa.String(80), nullable=False, unique=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("scope", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("explicit", sa.Boolean, nullable=False),
        sa.Column("sessions", sa.Integer, nullable=False),
        sa.Column("why", sa.Text, nullable=False),
        sa.Column("how_to_apply", sa.Text, nullable=False),
        sa.Column("extractor", sa.String(32), nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.Column("decided_by", sa.String(64)),
        sa.Column("decided_at", sa.String(32)),
        sa.Column("supersedes", sa.String(16)),
        sa.Column("superseded_by", sa.String(16)),
    )
    op.create_index("ix_beliefs_status", "beliefs", ["status"])
    op.create_table(
        "evidence",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("belief_id", sa.String(16), sa.ForeignKey("beliefs.id"), nullable=False),
        sa.Column("turn_id", sa.String(16), sa.ForeignKey("turns.id"), nullable=False),
        sa.Column("agent", sa.String(16), nullable=False),
        sa.Column("session_id", sa.String(128), nullable=False),
        sa.Column("path", sa.Text, nullable=False),
        sa.Column("line", sa.Integer, nullable=False),
        sa.Column("uuid", sa.String(64)),
        sa.Column("timestamp", sa.String(32)),
        sa.Column("excerpt", sa.Text, nullable=False),
        sa.Column("explicit", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.String(32), nullable=False),
    )
    op.create_index("ix_evidence_belief", "evidence", ["belief_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("belief_id", sa.String(16)),
        sa.Column("actor", sa.String(64)),
        sa.Column("detail", sa.Text),
    )
    op.create_index("ix_events_kind_at", "events", ["kind", "at"])


def downgrade() -> None:
    for name in ("events", "evidence", "beliefs", "turns", "files"):
        op.drop_table(name)
