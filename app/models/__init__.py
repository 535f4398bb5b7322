"""ORM tables. Every relationship is ``lazy="raise"``: loading is always explicit."""

from app.models.base import Base
from app.models.tables import (
    AuditRecord,
    CalibrationRecord,
    MessageRecord,
    MessageState,
    SessionRecord,
    SummaryJobRecord,
    SummaryJobStatus,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)

__all__ = [
    "AuditRecord",
    "Base",
    "CalibrationRecord",
    "MessageRecord",
    "MessageState",
    "SessionRecord",
    "SummaryJobRecord",
    "SummaryJobStatus",
    "SummaryRecord",
    "TurnRecord",
    "TurnStatus",
]
