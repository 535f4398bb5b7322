"""ORM tables. Every relationship is ``lazy="raise"``: loading is always explicit."""

from app.models.base import Base
from app.models.tables import (
    AuditRecord,
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
    "MessageRecord",
    "MessageState",
    "SessionRecord",
    "SummaryJobRecord",
    "SummaryJobStatus",
    "SummaryRecord",
    "TurnRecord",
    "TurnStatus",
]
