"""The caller of a request, and the scope each endpoint needs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.service import OPEN_CALLER, Caller, KeyService, Scope
from app.db import DbSession
from app.errors import ForbiddenScopeError, UnauthenticatedError
from app.runtime import Runtime

_bearer = HTTPBearer(
    auto_error=False,
    description="An API key from `contextd keys create`: `Authorization: Bearer ctxd_…`.",
)


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def get_caller(request: Request, db: DbSession, credentials: Credentials) -> Caller:
    """The key's tenant and scopes; with no key in the database (and a bind that allows it),
    the open caller. A key that is sent is always checked, open or not. Both answers come
    from the process's key cache while it trusts them (``api_key_cache_seconds``)."""
    return await caller_for_key(
        request, db, credentials.credentials if credentials is not None else None
    )


async def caller_for_key(
    request: Request, db: AsyncSession, key: str | None, *, header: str = "Authorization: Bearer"
) -> Caller:
    """:func:`get_caller` for a key read from wherever the route takes it (``header`` names
    that place in the message that asks for one)."""
    runtime: Runtime = request.app.state.runtime
    keys = KeyService(db)
    if key is not None:
        caller = await runtime.api_keys.caller(key, lambda: keys.authenticate(key))
        if caller is None:
            raise UnauthenticatedError("the API key is unknown or revoked")
        return caller
    settings = runtime.settings
    may_run_open = settings.binds_loopback or settings.allow_unauthenticated
    if may_run_open and not await runtime.api_keys.any_active(keys.any_active):
        return OPEN_CALLER
    raise UnauthenticatedError(f"send an API key: `{header} ctxd_…`")


def require(scope: Scope) -> Callable[..., Awaitable[Caller]]:
    # One dependency, not a scope check on top of get_caller: every layer of dependencies
    # costs its resolution on every request of the hot routes.
    async def caller_with_scope(
        request: Request, db: DbSession, credentials: Credentials
    ) -> Caller:
        caller = await get_caller(request, db, credentials)
        if scope not in caller.scopes:
            raise ForbiddenScopeError(f"this API key lacks the {scope!s} scope")
        return caller

    return caller_with_scope


AgentCaller = Annotated[Caller, Depends(require(Scope.AGENT))]
"""Sessions, turns, messages and summaries."""
OpsCaller = Annotated[Caller, Depends(require(Scope.OPS))]
"""The audit trail and metrics."""
