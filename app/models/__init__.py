"""ORM tables. Every relationship is ``lazy="raise"``: loading is always explicit."""

from app.models.base import Base
from app.models.tables import (
    ApiKeyRecord,
    AuditRecord,
    CalibrationRecord,
    IdempotencyRecord,
    MessageEmbeddingRecord,
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
    "ApiKeyRecord",
    "AuditRecord",
    "Base",
    "CalibrationRecord",
    "IdempotencyRecord",
    "MessageEmbeddingRecord",
    "MessageRecord",
    "MessageState",
    "SessionRecord",
    "SummaryJobRecord",
    "SummaryJobStatus",
    "SummaryRecord",
    "TurnRecord",
    "TurnStatus",
]
