"""Alembic's entry point: always called by core.db.migrate with an open connection inside its
transaction (which also holds the migration lock), never from an alembic.ini."""

from alembic import context

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=None, render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
