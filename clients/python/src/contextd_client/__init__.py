"""contextd's Python client: sync (:class:`Contextd`) and async (:class:`AsyncContextd`).

    from contextd_client import Contextd

    with Contextd("http://127.0.0.1:8080") as ctx:
        session = ctx.create_session(model="gpt-4o", system={"global": "You are terse."})
        prompt = ctx.start_turn(session["id"], "Find a hotel in Lisbon")
        reply = openai.chat.completions.create(model="gpt-4o", messages=prompt["messages"])
        ctx.complete_turn(session["id"], prompt["turn_id"], reply.choices[0].message.content)

Errors raise a subclass of :class:`ContextdError` per error code (:mod:`contextd_client.errors`).
Writes carry an automatic ``Idempotency-Key``; failed connections and 503s are retried.
"""

from contextd_client._client import NO_RETRIES, AsyncContextd, Contextd, Retries
from contextd_client.errors import (
    ApiError,
    BudgetExceeded,
    Conflict,
    ContextdError,
    DatabaseUnavailable,
    ForbiddenScope,
    IdempotencyKeyReused,
    InvalidBudget,
    InvalidRequest,
    InvalidSearchQuery,
    NotFound,
    PayloadTooLarge,
    ServiceUnreachable,
    SessionExists,
    SessionNotFound,
    TurnInProgress,
    TurnNotFound,
    TurnNotOpen,
    Unauthenticated,
)
from contextd_client.models import (
    AuditEntry,
    AuditPage,
    AuditRollup,
    ModelInfo,
    ModelList,
    Prompt,
    SearchHit,
    SearchResult,
    Session,
    StoredMessage,
    Summary,
    SummaryJob,
    SummaryJobList,
    TokenCount,
    Turn,
)

__all__ = [
    "NO_RETRIES",
    "ApiError",
    "AsyncContextd",
    "AuditEntry",
    "AuditPage",
    "AuditRollup",
    "BudgetExceeded",
    "Conflict",
    "Contextd",
    "ContextdError",
    "DatabaseUnavailable",
    "ForbiddenScope",
    "IdempotencyKeyReused",
    "InvalidBudget",
    "InvalidRequest",
    "InvalidSearchQuery",
    "ModelInfo",
    "ModelList",
    "NotFound",
    "PayloadTooLarge",
    "Prompt",
    "Retries",
    "SearchHit",
    "SearchResult",
    "ServiceUnreachable",
    "Session",
    "SessionExists",
    "SessionNotFound",
    "StoredMessage",
    "Summary",
    "SummaryJob",
    "SummaryJobList",
    "TokenCount",
    "Turn",
    "TurnInProgress",
    "TurnNotFound",
    "TurnNotOpen",
    "Unauthenticated",
]
