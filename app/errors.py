"""The error tree and the one format every error is rendered in.

ServiceError (code, status, message, details, headers)
├── InvalidRequestError        422 invalid_request
├── InvalidBudgetError         422 invalid_budget
├── UnauthenticatedError       401 unauthenticated
├── ForbiddenScopeError        403 forbidden_scope
├── NotFoundError              404 *_not_found
├── ConflictError              409 turn_in_progress / turn_not_open / session_exists /
│                                  idempotency_key_reused
├── BudgetExceededError        422 context_budget_exceeded (keeps its audit row)
└── DatabaseUnavailableError   503 database_unavailable (with Retry-After)

Malformed requests of every kind (JSON that does not parse, a body too deeply nested to
parse, a wrong field) are 422 ``invalid_request``; a body over the size limit is 413
``payload_too_large``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

logger = logging.getLogger(__name__)


class ServiceError(Exception):
    status_code = 400
    code = "bad_request"
    #: Commit the request's writes before answering (the audit row of a rejection).
    keeps_writes = False
    headers: dict[str, str] | None = None

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        """The error as the client sees it."""
        return error_body(self.code, self.message, self.details)


class InvalidRequestError(ServiceError):
    status_code = 422
    code = "invalid_request"


class ToolCallIdReusedError(InvalidRequestError):
    """A step's tool call reuses an id the session's active history already has."""

    code = "tool_call_id_reused"


class InvalidBudgetError(ServiceError):
    status_code = 422
    code = "invalid_budget"


class UnauthenticatedError(ServiceError):
    status_code = 401
    code = "unauthenticated"
    headers = {"WWW-Authenticate": "Bearer"}  # noqa: RUF012


class ForbiddenScopeError(ServiceError):
    status_code = 403
    code = "forbidden_scope"


class NotFoundError(ServiceError):
    status_code = 404
    code = "not_found"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class ConflictError(ServiceError):
    status_code = 409
    code = "conflict"

    def __init__(self, code: str, message: str, *, details: dict[str, Any] | None = None):
        super().__init__(message, details=details)
        self.code = code


class BudgetExceededError(ServiceError):
    status_code = 422
    code = "context_budget_exceeded"
    keeps_writes = True


class DatabaseUnavailableError(ServiceError):
    """The database cannot be reached: nothing of the request was stored; try again."""

    status_code = 503
    code = "database_unavailable"
    retry_after_seconds = 2
    headers = {"Retry-After": str(retry_after_seconds)}  # noqa: RUF012


class ErrorInfo(BaseModel):
    code: str
    message: str
    details: dict[str, Any] | None = None


class ErrorResponse(BaseModel):
    """The one shape of every error."""

    error: ErrorInfo


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": description}
    for status, description in {
        401: "unauthenticated: no API key, or an unknown or revoked one",
        403: "forbidden_scope: the key lacks the scope this endpoint needs",
        404: "the session, turn or audit row does not exist for this tenant",
        409: "conflict: turn_in_progress, turn_not_open, session_exists, idempotency_key_reused",
        413: "payload_too_large",
        422: "invalid_request, invalid_budget or context_budget_exceeded",
        503: "database_unavailable: retry after the Retry-After seconds",
    }.items()
}
"""The error answers of the API, as OpenAPI documents them."""


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, error: ServiceError) -> JSONResponse:
        return JSONResponse(error.body(), status_code=error.status_code, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            {
                "location": ".".join(str(part) for part in problem.get("loc", ())),
                "problem": problem.get("msg", ""),
            }
            for problem in error.errors()
        ]
        return JSONResponse(
            error_body("invalid_request", "the request is malformed", {"errors": problems}),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 400:
            # The framework's answer to a body it could not parse (JSON nested past the
            # parser's depth): malformed like any other, so the same status and code.
            return JSONResponse(
                error_body("invalid_request", f"the request body cannot be read: {error.detail}"),
                status_code=422,
            )
        code = {
            404: "not_found",
            405: "method_not_allowed",
            413: "payload_too_large",
        }.get(error.status_code, "http_error")
        return JSONResponse(
            error_body(code, str(error.detail)),
            status_code=error.status_code,
            headers=getattr(error, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, error: Exception) -> JSONResponse:
        logger.exception("unhandled error")
        return JSONResponse(
            error_body("internal_error", "an unexpected error occurred; it has been logged"),
            status_code=500,
        )
