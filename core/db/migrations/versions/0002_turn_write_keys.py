"""turns.write_key: one key per appended round, unique within a conversation, so a write retried
after its commit acknowledgement was lost (a dropped connection, a database restart) finds its
rows instead of appending them twice.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("turns", sa.Column("write_key", sa.Text, nullable=True))  # NULL for rows from before: never equal
    op.create_index("turns_write_key", "turns", ["conversation_id", "write_key"], unique=True)
