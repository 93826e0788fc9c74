"""The tables at the newest migration (core/db/migrations), as SQLAlchemy Core objects the stores
query with. The migrations create them; this module never does (metadata.create_all is not used)."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    UniqueConstraint,
)

metadata = MetaData()

# Annotator names compare case-insensitively in SQLite (as before); the store lower-cases them
# anyway, so PostgreSQL's plain text orders and compares the same stored values alike.
NOCASE_TEXT = Text().with_variant(Text(collation="NOCASE"), "sqlite")

conversations = Table(
    "conversations", metadata,
    Column("id", Text, primary_key=True),
    Column("title", Text, nullable=False),
    Column("method", Text, nullable=False, server_default=""),
    Column("meta", Text, nullable=False, server_default="{}"),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("owner", Text, nullable=False),
)

turns = Table(
    "turns", metadata,
    Column("conversation_id", Text, nullable=False),
    Column("idx", Integer, nullable=False),
    Column("role", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("turn_id", Text, nullable=False),
    Column("session", Integer, nullable=False, server_default="0"),
    Column("speaker", Text, nullable=False, server_default=""),
    Column("date", Text, nullable=False, server_default=""),
    Column("reply", Text),
    Column("created_at", Float, nullable=False),
    # one key per write (a round of turns), so a write retried after a lost commit acknowledgement
    # finds its own rows instead of appending them twice
    Column("write_key", Text),
    # JSON: what the app judged about the turn (the NLI consistency of a reply), kept so that no
    # replica computes it twice; NULL until judged
    Column("checks", Text),
    PrimaryKeyConstraint("conversation_id", "idx"),
    ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE"),
)

artifacts = Table(
    "artifacts", metadata,
    Column("conversation_id", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("updated_at", Float, nullable=False),
    PrimaryKeyConstraint("conversation_id", "kind"),
    ForeignKeyConstraint(["conversation_id"], ["conversations.id"], ondelete="CASCADE"),
)

owner_settings = Table(
    "owner_settings", metadata,
    Column("owner", Text, primary_key=True),
    Column("data", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)

annotation_tasks = Table(
    "annotation_tasks", metadata,
    Column("id", Text, primary_key=True),
    Column("owner", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("source", Text, nullable=False, server_default=""),
    Column("adjudication", Integer, nullable=False, server_default="0"),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    UniqueConstraint("owner", "name"),
)

annotation_items = Table(
    "annotation_items", metadata,
    Column("task_id", Text, nullable=False),
    Column("item_id", Text, nullable=False),
    Column("position", Integer, nullable=False),
    Column("version", Integer, nullable=False),
    Column("data", Text, nullable=False),
    PrimaryKeyConstraint("task_id", "item_id"),
    ForeignKeyConstraint(["task_id"], ["annotation_tasks.id"], ondelete="CASCADE"),
)

_LABEL_COLUMNS = lambda: [  # noqa: E731 (fresh Column objects for each table)
    Column("label", Text, nullable=False),
    Column("evidence", Text, nullable=False, server_default="[]"),
    Column("not_claim", Integer, nullable=False, server_default="0"),
    Column("comment", Text, nullable=False, server_default=""),
    Column("item_version", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
]

annotation_labels = Table(
    "annotation_labels", metadata,
    Column("task_id", Text, nullable=False),
    Column("item_id", Text, nullable=False),
    Column("annotator", NOCASE_TEXT, nullable=False),
    *_LABEL_COLUMNS(),
    PrimaryKeyConstraint("task_id", "item_id", "annotator"),
    ForeignKeyConstraint(["task_id", "item_id"], ["annotation_items.task_id", "annotation_items.item_id"], ondelete="CASCADE"),
)

annotation_label_history = Table(
    "annotation_label_history", metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("task_id", Text, nullable=False),
    Column("item_id", Text, nullable=False),
    Column("annotator", NOCASE_TEXT, nullable=False),
    *_LABEL_COLUMNS(),
    Column("via", Text, nullable=False, server_default="page"),
    ForeignKeyConstraint(["task_id"], ["annotation_tasks.id"], ondelete="CASCADE"),
    sqlite_autoincrement=True,
)

annotation_adjudications = Table(
    "annotation_adjudications", metadata,
    Column("task_id", Text, nullable=False),
    Column("item_id", Text, nullable=False),
    Column("label", Text, nullable=False),
    Column("lead", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    PrimaryKeyConstraint("task_id", "item_id"),
    ForeignKeyConstraint(["task_id", "item_id"], ["annotation_items.task_id", "annotation_items.item_id"], ondelete="CASCADE"),
)

# Blind votes on side-by-side replies (core/votes): one current vote per owner per turn, every vote
# ever given also in the history. `conversation` is a conversation id or a scripted comparison's id
# (no foreign key: a comparison written by `python -m core compare` has no conversation row).
_VOTE_COLUMNS = lambda: [  # noqa: E731 (fresh Column objects for each table)
    Column("owner", Text, nullable=False),
    Column("conversation", Text, nullable=False),
    Column("turn", Integer, nullable=False),
    Column("methods", Text, nullable=False),  # JSON list, in the order the columns were shown
    Column("winner", Text, nullable=False),  # a method name, "tie", "both_bad" or "all_bad"
    Column("replies", Text, nullable=False, server_default="[]"),  # JSON list, the replies judged, in shown order
    Column("measures", Text, nullable=False, server_default="{}"),  # JSON: method -> {"cs", "factscore", "correct"}
    Column("created_at", Float, nullable=False),
]

votes = Table(
    "votes", metadata,
    *_VOTE_COLUMNS(),
    PrimaryKeyConstraint("owner", "conversation", "turn"),
)

vote_history = Table(
    "vote_history", metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    *_VOTE_COLUMNS(),
    Column("via", Text, nullable=False, server_default="page"),
    sqlite_autoincrement=True,
)

# One row per forget (core/forget.py): who, when, which turns, how each memory forgot; never the text.
forget_audit = Table(
    "forget_audit", metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("owner", Text, nullable=False),
    Column("conversation", Text, nullable=False),
    Column("turns", Text, nullable=False),  # JSON list of the redacted turn indices
    Column("memories", Text, nullable=False, server_default="{}"),  # JSON: method -> "rebuilt" | "dropped" | ...
    Column("created_at", Float, nullable=False),
    sqlite_autoincrement=True,
)

Index("conversations_by_owner", conversations.c.owner, conversations.c.updated_at)
Index("turns_write_key", turns.c.conversation_id, turns.c.write_key, unique=True)
Index("annotation_items_order", annotation_items.c.task_id, annotation_items.c.position, unique=True)
Index("annotation_labels_by_annotator", annotation_labels.c.task_id, annotation_labels.c.annotator)
Index("annotation_history_by_item", annotation_label_history.c.task_id, annotation_label_history.c.item_id,
      annotation_label_history.c.annotator)
Index("votes_by_owner", votes.c.owner, votes.c.created_at)
Index("vote_history_by_turn", vote_history.c.owner, vote_history.c.conversation, vote_history.c.turn)
Index("forget_audit_by_conversation", forget_audit.c.owner, forget_audit.c.conversation, forget_audit.c.seq)

# Tables in an order that respects foreign keys (for `db copy`).
COPY_ORDER = [conversations, turns, artifacts, owner_settings, annotation_tasks, annotation_items, annotation_labels,
              annotation_label_history, annotation_adjudications, votes, vote_history, forget_audit]
