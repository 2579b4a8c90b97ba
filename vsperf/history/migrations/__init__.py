"""Alembic migrations of the results store (shipped as package data: env.py, versions/*.py).

A lab's database outlives many vsperf versions: vsperf upgrades an older store when it opens it
and refuses a newer one. To change the schema, add a file to versions/ whose `down_revision` is
the previous head and whose `upgrade()` makes the change, and change vsperf/history/schema.py to
match (tests/unit/test_history_migrate.py compares them).
"""
