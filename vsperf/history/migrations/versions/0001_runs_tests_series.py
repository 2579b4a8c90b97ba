"""The first schema: runs, their tags, tests and components, series and measurements.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("vsperf_version", sa.String(64), nullable=False),
        sa.Column("vsperf_commit", sa.String(64)),
        sa.Column("command_line", sa.Text, nullable=False),
        sa.Column("simulated", sa.Boolean, nullable=False),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("testbed", sa.String(255), nullable=False),
        sa.Column("results_dir", sa.Text, nullable=False),
        sa.Column("report", sa.String(255)),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "tags",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("key", sa.String(128), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "tests",
        sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("test_index", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("deployment", sa.String(64), nullable=False),
        sa.Column("traffic_type", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("vswitch", sa.String(128), nullable=False),
        sa.Column("vswitch_version", sa.String(255), nullable=False),
    )
    op.create_table(
        "components",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("test_index", sa.Integer, primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("role", sa.String(64), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("version", sa.String(255), nullable=False),
        sa.ForeignKeyConstraint(["run_id", "test_index"], ["tests.run_id", "tests.test_index"], ondelete="CASCADE"),
    )
    op.create_table(
        "series",
        sa.Column("series_id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key", sa.String(1024), nullable=False, unique=True),
        sa.Column("test", sa.String(255), nullable=False),
        sa.Column("deployment", sa.String(64), nullable=False),
        sa.Column("packet_size", sa.Integer, nullable=False),
        sa.Column("metric", sa.String(128), nullable=False),
        sa.Column("vswitch", sa.String(128), nullable=False),
        sa.Column("vnf", sa.String(128), nullable=False),
        sa.Column("trafficgen", sa.String(128), nullable=False),
        sa.Column("testbed", sa.String(255), nullable=False),
        sa.Column("variant", sa.String(512), nullable=False),
    )
    op.create_table(
        "measurements",
        sa.Column("run_id", sa.String(64), primary_key=True),
        sa.Column("test_index", sa.Integer, primary_key=True),
        sa.Column("series_id", sa.Integer, sa.ForeignKey("series.series_id"), primary_key=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.ForeignKeyConstraint(["run_id", "test_index"], ["tests.run_id", "tests.test_index"], ondelete="CASCADE"),
    )


def downgrade() -> None:
    for table in ("measurements", "series", "components", "tests", "tags", "runs"):
        op.drop_table(table)
