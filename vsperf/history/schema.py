"""The results store's tables (SQLAlchemy Core), as the newest migration leaves them.

A run is one row of `runs`; its tags, tests and components hang off it (deleted with it). A
series is one (test, deployment, frame size, metric, vswitch, vnf, trafficgen, testbed, variant)
across runs; `measurements` holds one value per series per test of a run. Times are UTC, naive.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

runs = Table(
    "runs", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime),
    Column("status", String(16), nullable=False),
    Column("vsperf_version", String(64), nullable=False),
    Column("vsperf_commit", String(64)),
    Column("command_line", Text, nullable=False),  # JSON list of arguments
    Column("simulated", Boolean, nullable=False),
    Column("hostname", String(255), nullable=False),
    Column("testbed", String(255), nullable=False),  # testbed file's stem, "local" without one
    Column("results_dir", Text, nullable=False),  # absolute path where it was recorded from
    Column("report", String(255)),  # the HTML report's file name in results_dir, if any
    Column("environment", Text, nullable=False),  # JSON: the run's host facts
    Column("source_sha256", String(64), nullable=False, server_default=""),  # of the results.json recorded
    Column("recorded_at", DateTime, nullable=False),
)

tags = Table(
    "tags", metadata,
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(128), primary_key=True),
    Column("value", Text, nullable=False),
)

tests = Table(
    "tests", metadata,
    Column("run_id", String(64), ForeignKey("runs.run_id", ondelete="CASCADE"), primary_key=True),
    Column("test_index", Integer, primary_key=True),
    Column("name", String(255), nullable=False),
    Column("deployment", String(64), nullable=False),
    Column("traffic_type", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("error", Text),
    Column("started_at", DateTime, nullable=False),
    Column("finished_at", DateTime),
    Column("vswitch", String(128), nullable=False),
    Column("vswitch_version", String(255), nullable=False),
)

components = Table(
    "components", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("test_index", Integer, primary_key=True),
    Column("position", Integer, primary_key=True),
    Column("role", String(64), nullable=False),
    Column("name", String(255), nullable=False),
    Column("version", String(255), nullable=False),
    ForeignKeyConstraint(["run_id", "test_index"], ["tests.run_id", "tests.test_index"], ondelete="CASCADE"),
)

series = Table(
    "series", metadata,
    Column("series_id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(1024), nullable=False, unique=True),
    Column("test", String(255), nullable=False),
    Column("deployment", String(64), nullable=False),
    Column("packet_size", Integer, nullable=False),
    Column("metric", String(128), nullable=False),
    Column("vswitch", String(128), nullable=False),
    Column("vnf", String(128), nullable=False),
    Column("trafficgen", String(128), nullable=False),
    Column("testbed", String(255), nullable=False),
    Column("variant", String(512), nullable=False),  # a --test-params sweep element, "" otherwise
    # a frame mix's name (IMIX), "" for one frame size; packet_size is then the mix's mean, rounded
    Column("frame_mix", String(255), nullable=False, server_default=""),
)

measurements = Table(
    "measurements", metadata,
    Column("run_id", String(64), primary_key=True),
    Column("test_index", Integer, primary_key=True),
    Column("series_id", Integer, ForeignKey("series.series_id"), primary_key=True),
    Column("started_at", DateTime, nullable=False),  # the run's start: series are ordered by it
    Column("value", Float, nullable=False),
    ForeignKeyConstraint(["run_id", "test_index"], ["tests.run_id", "tests.test_index"], ondelete="CASCADE"),
    Index("ix_measurements_series_time", "series_id", "started_at", "run_id", "test_index", "value"),
)

Index("ix_runs_started_at", runs.c.started_at)
Index("ix_tags_key_value", tags.c.key, tags.c.value)
