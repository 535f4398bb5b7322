"""The queries of the drop-in endpoints: a session's last stored messages, its open turn, and
the drop-in note on an audit row."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import AuditRecord, MessageRecord, TurnRecord, TurnStatus
from app.proxy.conversation import Fingerprint, stored_fingerprint

#: The key of an audit row's ``block_telemetry`` that says how a drop-in request's history
#: matched the session (docs/drop-in.md).
AUDIT_KEY = "drop_in"


@dataclass(frozen=True)
class OpenTurnRef:
    id: str
    steps: int


class ProxyRepository:
    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    async def last_fingerprints(self, session_id: str, *, limit: int) -> list[Fingerprint]:
        """The fingerprints of the session's last ``limit`` stored messages, oldest first
        (whatever their state: a summarised message is still part of the history)."""
        query = (
            select(
                MessageRecord.role,
                MessageRecord.content,
                MessageRecord.tool_calls,
                MessageRecord.tool_call_id,
            )
            .where(
                MessageRecord.tenant_id == self.tenant_id, MessageRecord.session_id == session_id
            )
            .order_by(MessageRecord.seq.desc())
            .limit(limit)
        )
        rows = (await self.db.execute(query)).all()
        return [stored_fingerprint(*row) for row in reversed(rows)]

    async def open_turn(self, session_id: str) -> OpenTurnRef | None:
        query = select(TurnRecord.id, TurnRecord.steps).where(
            TurnRecord.tenant_id == self.tenant_id,
            TurnRecord.session_id == session_id,
            TurnRecord.status == TurnStatus.OPEN,
        )
        row = (await self.db.execute(query)).first()
        return OpenTurnRef(row[0], row[1]) if row is not None else None

    async def note_on_audit(self, audit_id: int, note: dict[str, Any]) -> None:
        """Add the drop-in note to an assembly's audit row."""
        query = select(AuditRecord.block_telemetry).where(
            AuditRecord.id == audit_id, AuditRecord.tenant_id == self.tenant_id
        )
        telemetry = (await self.db.execute(query)).scalar_one_or_none()
        await self.db.execute(
            update(AuditRecord)
            .where(AuditRecord.id == audit_id, AuditRecord.tenant_id == self.tenant_id)
            .values(block_telemetry={**(telemetry or {}), AUDIT_KEY: note})
        )
