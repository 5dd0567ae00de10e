"""state: small key/value facts about the last render (for the no-op fast path)

Revision ID: 0002_state
Revises: 0001_initial
"""

import sqlalchemy as sa
from alembic import op

revision = "0002_state"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "state",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("state")
