"""ORM tables. Every relationship is ``lazy="raise"``: loading is always explicit."""

from app.models.base import Base
from app.models.tables import (
    ApiKeyRecord,
    AuditRecord,
    IdempotencyRecord,
    MessageRecord,
    MessageState,
    SessionRecord,
    SummaryRecord,
    TurnRecord,
    TurnStatus,
)

__all__ = [
    "ApiKeyRecord",
    "AuditRecord",
    "Base",
    "IdempotencyRecord",
    "MessageRecord",
    "MessageState",
    "SessionRecord",
    "SummaryRecord",
    "TurnRecord",
    "TurnStatus",
]
