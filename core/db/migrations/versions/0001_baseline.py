"""Baseline: the tables as they were before Alembic (conversations with owners, turns, artifacts,
owner settings; annotation tasks, items, labels, label history, adjudications). An SQLite file from
that time is stamped with this revision after core.db.legacy finishes its old migrations.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

NOCASE = sa.Text().with_variant(sa.Text(collation="NOCASE"), "sqlite")


def _label_columns() -> list[sa.Column]:
    return [
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("evidence", sa.Text, nullable=False, server_default="[]"),
        sa.Column("not_claim", sa.Integer, nullable=False, server_default="0"),
        sa.Column("comment", sa.Text, nullable=False, server_default=""),
        sa.Column("item_version", sa.Integer, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("method", sa.Text, nullable=False, server_default=""),
        sa.Column("meta", sa.Text, nullable=False, server_default="{}"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("owner", sa.Text, nullable=False, server_default="shared/demo"),
    )
    op.create_index("conversations_by_owner", "conversations", ["owner", "updated_at"])
    op.create_table(
        "turns",
        sa.Column("conversation_id", sa.Text, sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("role", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("turn_id", sa.Text, nullable=False),
        sa.Column("session", sa.Integer, nullable=False, server_default="0"),
        sa.Column("speaker", sa.Text, nullable=False, server_default=""),
        sa.Column("date", sa.Text, nullable=False, server_default=""),
        sa.Column("reply", sa.Text),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("conversation_id", "idx"),
    )
    op.create_table(
        "artifacts",
        sa.Column("conversation_id", sa.Text, sa.ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False),
        sa.Column("kind", sa.Text, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("conversation_id", "kind"),
    )
    op.create_table(
        "owner_settings",
        sa.Column("owner", sa.Text, primary_key=True),
        sa.Column("data", sa.Text, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )
    op.create_table(
        "annotation_tasks",
        sa.Column("id", sa.Text, primary_key=True),
        sa.Column("owner", sa.Text, nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("source", sa.Text, nullable=False, server_default=""),
        sa.Column("adjudication", sa.Integer, nullable=False, server_default="0"),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.UniqueConstraint("owner", "name"),
    )
    op.create_table(
        "annotation_items",
        sa.Column("task_id", sa.Text, sa.ForeignKey("annotation_tasks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("task_id", "item_id"),
    )
    op.create_index("annotation_items_order", "annotation_items", ["task_id", "position"], unique=True)
    op.create_table(
        "annotation_labels",
        sa.Column("task_id", sa.Text, nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("annotator", NOCASE, nullable=False),
        *_label_columns(),
        sa.PrimaryKeyConstraint("task_id", "item_id", "annotator"),
        sa.ForeignKeyConstraint(["task_id", "item_id"], ["annotation_items.task_id", "annotation_items.item_id"],
                                ondelete="CASCADE"),
    )
    op.create_index("annotation_labels_by_annotator", "annotation_labels", ["task_id", "annotator"])
    op.create_table(
        "annotation_label_history",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.Text, sa.ForeignKey("annotation_tasks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("annotator", NOCASE, nullable=False),
        *_label_columns(),
        sa.Column("via", sa.Text, nullable=False, server_default="page"),
        sqlite_autoincrement=True,
    )
    op.create_index("annotation_history_by_item", "annotation_label_history", ["task_id", "item_id", "annotator"])
    op.create_table(
        "annotation_adjudications",
        sa.Column("task_id", sa.Text, nullable=False),
        sa.Column("item_id", sa.Text, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("lead", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("task_id", "item_id"),
        sa.ForeignKeyConstraint(["task_id", "item_id"], ["annotation_items.task_id", "annotation_items.item_id"],
                                ondelete="CASCADE"),
    )
