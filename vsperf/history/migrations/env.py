"""Alembic's environment: migrate the connection vsperf hands over (never a URL of its own)."""

from __future__ import annotations

from alembic import context

connection = context.config.attributes["connection"]
# render_as_batch: SQLite alters tables by copying them; Alembic's batch mode does that.
context.configure(connection=connection, target_metadata=None, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
