"""The error tree and the one format every error is rendered in.

ServiceError (code, status, message, details, headers)
├── InvalidRequestError        422 invalid_request
│   ├── ToolCallIdReusedError  422 tool_call_id_reused
│   └── (app.search.terms)     422 invalid_search_query
├── InvalidBudgetError         422 invalid_budget
├── UnauthenticatedError       401 unauthenticated
├── ForbiddenScopeError        403 forbidden_scope
├── NotFoundError              404 *_not_found
├── ConflictError              409 turn_in_progress / turn_not_open / session_exists /
│                                  idempotency_key_reused
├── BudgetExceededError        422 context_budget_exceeded (keeps its audit row)
└── DatabaseUnavailableError   503 database_unavailable (with Retry-After)

Malformed requests of every kind (bytes that are not UTF-8, JSON that does not parse, a body
too deeply nested to parse, a wrong field) are 422 ``invalid_request`` with a message that
says which; a body that is not sent as JSON is 415 ``unsupported_media_type``; a body over
the size limit is 413 ``payload_too_large``. ``ERROR_CODES`` lists every code.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
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
    """The database cannot be reached: nothing of the request was stored; try again after
    ``retry_after_seconds`` (what recovery takes, :mod:`app.recovery`)."""

    status_code = 503
    code = "database_unavailable"

    def __init__(self, message: str, *, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
        self.headers = {"Retry-After": str(retry_after_seconds)}


@dataclass(frozen=True)
class ErrorCode:
    """One ``code`` the API can answer with: its status and what it means."""

    code: str
    status: int
    meaning: str


#: Every error ``code`` the API answers with, in one place: the OpenAPI document and the
#: documentation (app/reference.py) list them from here, and a test fails when code answers
#: with one not listed.
ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode("unauthenticated", 401, "no API key, or an unknown or revoked one"),
    ErrorCode("forbidden_scope", 403, "the key lacks the scope this endpoint needs"),
    ErrorCode("not_found", 404, "no such path"),
    ErrorCode("session_not_found", 404, "no such session for this tenant"),
    ErrorCode("turn_not_found", 404, "no such turn in this session"),
    ErrorCode("summary_not_found", 404, "the session's summary was erased meanwhile"),
    ErrorCode(
        "audit_not_found", 404, "no such audit row (or none for the session) for this tenant"
    ),
    ErrorCode("key_not_found", 404, "no such API key"),
    ErrorCode("method_not_allowed", 405, "the path exists but not with this method"),
    ErrorCode("turn_in_progress", 409, "the session has an open turn: complete it first"),
    ErrorCode("turn_not_open", 409, "the turn is already completed or failed"),
    ErrorCode("session_exists", 409, "a session with this id already exists"),
    ErrorCode(
        "idempotency_key_reused", 409, "the Idempotency-Key was used for a different request"
    ),
    ErrorCode("payload_too_large", 413, "the body is over the size limit"),
    ErrorCode(
        "unsupported_media_type", 415, "the body is not sent as Content-Type: application/json"
    ),
    ErrorCode(
        "invalid_request",
        422,
        "the body or a parameter is malformed: details.errors says where and what",
    ),
    ErrorCode("invalid_budget", 422, "the limits leave no input budget"),
    ErrorCode("invalid_search_query", 422, "a search query with no word to look for, or too long"),
    ErrorCode(
        "tool_call_id_reused",
        422,
        "a tool call reuses an id the session's active history already has",
    ),
    ErrorCode(
        "context_budget_exceeded",
        422,
        "even after summarising and pruning the prompt does not fit (figures in details)",
    ),
    ErrorCode("internal_error", 500, "a bug: it has been logged"),
    ErrorCode(
        "upstream_failed",
        502,
        "drop-in endpoints: the model's upstream timed out, broke off or answered something "
        "that is not its protocol; retry after Retry-After",
    ),
    ErrorCode(
        "database_unavailable", 503, "the database cannot be reached: retry after Retry-After"
    ),
    ErrorCode(
        "upstream_unavailable",
        503,
        "drop-in endpoints: the model's upstream cannot be reached; retry after Retry-After",
    ),
)


class ErrorInfo(BaseModel):
    code: str = Field(
        description="Stable, machine-readable: "
        + ", ".join(f"`{error.code}` ({error.status})" for error in ERROR_CODES)
    )
    message: str
    details: dict[str, Any] | None = None


class ErrorResponse(BaseModel):
    """The one shape of every error."""

    error: ErrorInfo


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {
        "model": ErrorResponse,
        "description": "; ".join(
            f"`{error.code}`: {error.meaning}" for error in ERROR_CODES if error.status == status
        ),
    }
    for status in sorted({error.status for error in ERROR_CODES} - {500, 502})
}
"""The error answers of the API, as OpenAPI documents them (a 502 is the drop-in endpoints'
alone, which answer in the provider's shape)."""


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
    async def _validation_error(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        if not _sent_as_json(request) and any(_body_not_an_object(p) for p in problems):
            content_type = request.headers.get("content-type") or "none"
            return JSONResponse(
                error_body(
                    "unsupported_media_type",
                    "the body must be JSON sent with Content-Type: application/json; "
                    f"this request's Content-Type is {content_type!r}",
                ),
                status_code=415,
            )
        return JSONResponse(
            error_body(
                "invalid_request",
                _validation_summary(problems),
                {"errors": [_problem(p) for p in problems]},
            ),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, error: StarletteHTTPException) -> JSONResponse:
        if error.status_code == 400:
            # The framework's answer to a body it could not parse: malformed like any other,
            # so the same status and code, with the reason it could not be read.
            return JSONResponse(
                error_body("invalid_request", _unreadable_body(error.__cause__)),
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


def _sent_as_json(request: Request) -> bool:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def _body_not_an_object(problem: Mapping[str, Any]) -> bool:
    """The whole body failed as an object: what a body the framework did not parse as JSON
    (another Content-Type) looks like to validation."""
    return tuple(problem.get("loc", ())) == ("body",) and problem.get("type") in {
        "model_attributes_type",
        "dict_type",
    }


def _location(problem: Mapping[str, Any]) -> str:
    return ".".join(str(part) for part in problem.get("loc", ()))


def _problem(problem: Mapping[str, Any]) -> dict[str, str]:
    # A validator's own words, without pydantic's label for them.
    message = str(problem.get("msg", "")).removeprefix("Value error, ")
    if problem.get("type") == "json_invalid":
        # pydantic says only "JSON decode error"; the decoder's own reason says what and where.
        reason = (problem.get("ctx") or {}).get("error")
        position = problem.get("loc", ("body", "?"))[-1]
        message = f"the body is not valid JSON: {reason or message} (at character {position})"
        return {"location": "body", "problem": message}
    return {"location": _location(problem), "problem": message}


def _validation_summary(problems: Sequence[Mapping[str, Any]]) -> str:
    """The message: what is wrong and where, for the first problem a validator of contextd
    worded, else the first problem (details list them all). A value that fails one branch of
    a union fails the others too, in pydantic's words: "Input should be a valid string" for
    a part list says less than the part's own problem."""
    if not problems:
        return "the request is malformed"
    worded = (problem for problem in problems if problem.get("type") == "value_error")
    first = _problem(next(worded, problems[0]))
    more = f" (and {len(problems) - 1} more in details.errors)" if len(problems) > 1 else ""
    return f"the request is malformed: {first['location']}: {first['problem']}{more}"


def _unreadable_body(cause: BaseException | None) -> str:
    if isinstance(cause, UnicodeDecodeError):
        return (
            "the request body is not valid UTF-8: byte "
            f"0x{cause.object[cause.start]:02x} at offset {cause.start} cannot be decoded"
        )
    if isinstance(cause, RecursionError):
        return "the request body is nested too deeply to parse"
    if isinstance(cause, json.JSONDecodeError):
        return f"the request body is not valid JSON: {cause.msg} at character {cause.pos}"
    return "the request body cannot be read as JSON"
