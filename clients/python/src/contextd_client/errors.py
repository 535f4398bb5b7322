"""The exceptions the client raises: one class per error ``code`` the service answers with.

    ContextdError
    ├── ServiceUnreachable                  no answer at all (connection refused, timeout)
    └── ApiError                            an error answer: status, code, message, details
        ├── InvalidRequest                  422 invalid_request
        ├── InvalidBudget                   422 invalid_budget
        ├── BudgetExceeded                  422 context_budget_exceeded
        ├── Unauthenticated                 401 unauthenticated
        ├── ForbiddenScope                  403 forbidden_scope
        ├── NotFound                        404
        │   ├── SessionNotFound             session_not_found
        │   └── TurnNotFound                turn_not_found
        ├── Conflict                        409
        │   ├── SessionExists               session_exists
        │   ├── TurnInProgress              turn_in_progress
        │   ├── TurnNotOpen                 turn_not_open
        │   └── IdempotencyKeyReused        idempotency_key_reused
        ├── PayloadTooLarge                 413 payload_too_large
        └── DatabaseUnavailable             503 database_unavailable (retried first)

A code this client does not know yet raises the class of its status (or ``ApiError``).
"""

from __future__ import annotations

from typing import Any


class ContextdError(Exception):
    """Anything that went wrong talking to contextd."""


class ServiceUnreachable(ContextdError):
    """No answer from the service, after the retries."""


class ApiError(ContextdError):
    """An error answer: ``status``, the stable ``code``, ``message``, ``details``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        #: Seconds the service asked the caller to wait (``Retry-After``), when it said.
        self.retry_after = retry_after


class InvalidRequest(ApiError):
    """The body or the query is wrong; ``details`` says where."""


class InvalidSearchQuery(InvalidRequest):
    """A search query with no word to look for, or too long."""


class InvalidBudget(ApiError):
    """The session's budget leaves no room for input (output reservation too large)."""


class BudgetExceeded(ApiError):
    """The prompt cannot fit even after summarising and pruning; ``details`` has the figures,
    the per-block breakdown, the audit id and what to do."""


class Unauthenticated(ApiError):
    """No API key, or one the service does not know."""


class ForbiddenScope(ApiError):
    """The API key lacks the scope this call needs."""


class NotFound(ApiError):
    """The thing asked for does not exist (for this tenant)."""


class SessionNotFound(NotFound):
    pass


class TurnNotFound(NotFound):
    pass


class Conflict(ApiError):
    """The call contradicts the current state."""


class SessionExists(Conflict):
    pass


class TurnInProgress(Conflict):
    """The session already has an open turn: complete it before starting another."""


class TurnNotOpen(Conflict):
    """The turn is already completed or failed."""


class IdempotencyKeyReused(Conflict):
    """The same ``Idempotency-Key`` came with another body."""


class PayloadTooLarge(ApiError):
    pass


class DatabaseUnavailable(ApiError):
    """The service's database is down; nothing was stored. The client retries these."""


ERRORS_BY_CODE: dict[str, type[ApiError]] = {
    "invalid_request": InvalidRequest,
    "invalid_search_query": InvalidSearchQuery,
    "invalid_budget": InvalidBudget,
    "context_budget_exceeded": BudgetExceeded,
    "unauthenticated": Unauthenticated,
    "forbidden_scope": ForbiddenScope,
    "session_not_found": SessionNotFound,
    "turn_not_found": TurnNotFound,
    "session_exists": SessionExists,
    "turn_in_progress": TurnInProgress,
    "turn_not_open": TurnNotOpen,
    "idempotency_key_reused": IdempotencyKeyReused,
    "payload_too_large": PayloadTooLarge,
    "database_unavailable": DatabaseUnavailable,
}

_ERRORS_BY_STATUS: dict[int, type[ApiError]] = {
    401: Unauthenticated,
    403: ForbiddenScope,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
}


def error_class(status: int, code: str) -> type[ApiError]:
    """The exception for an error answer: by its code, else by its status."""
    return ERRORS_BY_CODE.get(code) or _ERRORS_BY_STATUS.get(status) or ApiError
