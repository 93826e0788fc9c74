"""forget_audit: one row per forget (core/forget.py): who asked, when, which conversation and
which turns were redacted, and how each method's memory was rebuilt. Never the forgotten text.
No foreign key to the conversation: the record outlives a conversation deleted later.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "forget_audit",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("conversation", sa.Text, nullable=False),
        sa.Column("turns", sa.Text, nullable=False),  # JSON list of the redacted turn indices
        sa.Column("memories", sa.Text, nullable=False, server_default="{}"),  # JSON: method -> how it forgot
        sa.Column("created_at", sa.Float, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("forget_audit_by_conversation", "forget_audit", ["owner", "conversation", "seq"])
