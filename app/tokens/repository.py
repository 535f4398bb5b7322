"""Every query on the calibration table."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as postgres_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import CalibrationRecord


class CalibrationRepository:
    def __init__(self, db: AsyncSession) -> None:
        self.db = db

    async def get(self, tenant_id: str, model: str, estimator: str) -> CalibrationRecord | None:
        return await self.db.get(CalibrationRecord, (tenant_id, model, estimator))

    async def list(self, tenant_id: str) -> Sequence[CalibrationRecord]:
        query = select(CalibrationRecord).where(CalibrationRecord.tenant_id == tenant_id)
        return (await self.db.execute(query)).scalars().all()

    async def lock(self, tenant_id: str, model: str, estimator: str) -> CalibrationRecord:
        """The row, created if missing, locked until the request ends (Postgres), so that two
        reports for one model never overwrite each other's update."""
        key = {"tenant_id": tenant_id, "model": model, "estimator": estimator}
        values = {**key, "ratio": 1.0, "samples": 0, "rejected": 0, "outlier_streak": 0}
        insert = (
            postgres_insert if self.db.get_bind().dialect.name == "postgresql" else sqlite_insert
        )
        await self.db.execute(insert(CalibrationRecord).values(**values).on_conflict_do_nothing())
        query = (
            select(CalibrationRecord)
            .where(
                CalibrationRecord.tenant_id == tenant_id,
                CalibrationRecord.model == model,
                CalibrationRecord.estimator == estimator,
            )
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        return (await self.db.execute(query)).scalar_one()
