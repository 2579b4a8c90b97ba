"""A series' frame mix: results of a frame mix (IMIX) name it instead of a frame size (results.json
schema 2). Its series keep `packet_size` as the mix's mean size, rounded, and `frame_mix` its name;
series of one frame size have frame_mix "" (their keys are unchanged).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("series") as batch:
        batch.add_column(sa.Column("frame_mix", sa.String(255), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("series") as batch:
        batch.drop_column("frame_mix")
