"""Errors of the drop-in endpoints, in the shape of the provider the agent speaks to, so that
its SDK raises what the agent already handles.

OpenAI: ``{"error": {"message", "type", "param", "code"}}`` (openai-python builds
``APIStatusError.code``/``.type`` from these fields). Anthropic: ``{"type": "error", "error":
{"type", "message"}}`` with the types its docs list per status (invalid_request_error 400,
authentication_error 401, permission_error 403, not_found_error 404, request_too_large 413,
api_error 500, overloaded_error 529). Each body also carries ``contextd``: contextd's own
``code`` and, where there are any, its figures and the audit id.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from app.proxy.conversation import Protocol

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "invalid_request_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
}
_OPENAI_TYPES = {401: "authentication_error", 403: "permission_error", 404: "not_found_error"}

#: Seconds an agent is told to wait after contextd or its upstream could not answer.
RETRY_AFTER_SECONDS = 2


class ProxyError(Exception):
    """A drop-in request that contextd answers itself."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        provider_code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.details = details
        #: The provider's own error code (OpenAI ``context_length_exceeded``), else contextd's.
        self.provider_code = provider_code
        self.param = param
        self.headers = dict(headers or {})
        if status_code in (502, 503):
            self.headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))

    def body(self, protocol: Protocol) -> dict[str, Any]:
        """The error as the provider would have written it."""
        contextd: dict[str, Any] = {"code": self.code}
        if self.details:
            contextd.update(self.details)
        if protocol == "anthropic":
            kind = _ANTHROPIC_TYPES.get(self.status_code, "api_error")
            return {
                "type": "error",
                "error": {"type": kind, "message": self.message},
                "contextd": contextd,
            }
        kind = _OPENAI_TYPES.get(self.status_code) or (
            "invalid_request_error" if self.status_code < 500 else "server_error"
        )
        return {
            "error": {
                "message": self.message,
                "type": kind,
                "param": self.param,
                "code": self.provider_code or self.code,
                "contextd": contextd,
            }
        }

    def response(self, protocol: Protocol, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(
            self.body(protocol),
            status_code=self.status_code,
            headers={**(headers or {}), **self.headers},
        )


def context_length_error(protocol: Protocol, details: dict[str, Any]) -> ProxyError:
    """The provider's own context-length error for a prompt contextd cannot fit, with
    contextd's figures (``details`` of ``context_budget_exceeded``) and its audit id."""
    needed = int(details.get("estimated_input_tokens", 0))
    budget = int(details.get("input_budget", 0))
    limit = int(details.get("model_context_limit", 0))
    why = (
        f"contextd could not fit it even after summarising and pruning: {needed} tokens over "
        f"an input budget of {budget} (audit {details.get('audit_id')}). "
        f"{details.get('guidance', '')}"
    ).strip()
    if protocol == "anthropic":
        # Anthropic's wording, which agents match on: "prompt is too long: N tokens > M maximum".
        message = f"prompt is too long: {needed} tokens > {budget} maximum. {why}"
        return ProxyError(400, "context_budget_exceeded", message, details=details)
    message = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {needed} tokens. Please reduce the length of the messages. {why}"
    )
    return ProxyError(
        400,
        "context_budget_exceeded",
        message,
        details=details,
        provider_code="context_length_exceeded",
        param="messages",
    )
