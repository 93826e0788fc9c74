"""turns.checks: what the app judged about a stored turn (JSON; today the NLI consistency of a
reply against the turns before it, with the model that judged it), so a reload, a reconnect to
another replica or a second tab shows it without running the model again.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("turns", sa.Column("checks", sa.Text, nullable=True))  # NULL: not judged yet
