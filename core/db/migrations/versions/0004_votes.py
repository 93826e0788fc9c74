"""votes and vote_history: blind votes on side-by-side replies (core/votes, the Compare page).
One current vote per owner per turn of a conversation (or of a scripted comparison); every vote
ever given is appended to the history.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _vote_columns() -> list[sa.Column]:
    return [
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("conversation", sa.Text, nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("methods", sa.Text, nullable=False),
        sa.Column("winner", sa.Text, nullable=False),
        sa.Column("replies", sa.Text, nullable=False, server_default="[]"),
        sa.Column("measures", sa.Text, nullable=False, server_default="{}"),
        sa.Column("created_at", sa.Float, nullable=False),
    ]


def upgrade() -> None:
    op.create_table("votes", *_vote_columns(), sa.PrimaryKeyConstraint("owner", "conversation", "turn"))
    op.create_index("votes_by_owner", "votes", ["owner", "created_at"])
    op.create_table(
        "vote_history",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        *_vote_columns(),
        sa.Column("via", sa.Text, nullable=False, server_default="page"),
        sqlite_autoincrement=True,
    )
    op.create_index("vote_history_by_turn", "vote_history", ["owner", "conversation", "turn"])
