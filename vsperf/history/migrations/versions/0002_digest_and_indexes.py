"""The digest of the results.json a run was recorded from (an import of an unchanged run does
nothing) and the indexes trends read by: a series' values in time order, runs by date, tags.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Runs recorded before this revision get an empty digest: their next import records them again.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("source_sha256", sa.String(64), nullable=False, server_default=""))
    # A series' values in time order straight from the index (it covers them): no table lookups, no sort.
    op.create_index("ix_measurements_series_time", "measurements",
                    ["series_id", "started_at", "run_id", "test_index", "value"])
    op.create_index("ix_runs_started_at", "runs", ["started_at"])
    op.create_index("ix_tags_key_value", "tags", ["key", "value"])


def downgrade() -> None:
    op.drop_index("ix_tags_key_value", "tags")
    op.drop_index("ix_runs_started_at", "runs")
    op.drop_index("ix_measurements_series_time", "measurements")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("source_sha256")
