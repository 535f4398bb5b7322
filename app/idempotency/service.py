"""Replay of first answers for requests sent with an ``Idempotency-Key``.

The record of a request's answer is written in the request's own transaction: either both
the work and its record are stored, or neither is. Only answers that stored something are
recorded: a success, and a ``context_budget_exceeded`` rejection (its audit row is kept, so a
retry replays the rejection instead of writing a second row). Any other error stored nothing,
and a retry simply runs again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import ConflictError, ServiceError
from app.idempotency.repository import IdempotencyRepository
from app.models import IdempotencyRecord
from app.models.base import utcnow

Result = TypeVar("Result", bound=BaseModel)


def request_hash(method: str, path: str, body: BaseModel) -> str:
    """The request as sent (fields left out stay out), independent of key order and spacing."""
    canonical = json.dumps(
        {
            "method": method,
            "path": path,
            "body": body.model_dump(mode="json", by_alias=True, exclude_unset=True),
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class IdempotencyService:
    def __init__(self, db: AsyncSession, *, tenant_id: str, ttl_seconds: int) -> None:
        self.records = IdempotencyRepository(db, tenant_id=tenant_id)
        self.tenant_id = tenant_id
        self.ttl = timedelta(seconds=ttl_seconds)

    async def run(
        self,
        key: str | None,
        *,
        request: tuple[str, str, BaseModel],
        session_id: str | Callable[[Result], str],
        status_code: int,
        work: Callable[[], Awaitable[Result]],
    ) -> Result | JSONResponse:
        """Do ``work`` once per key: the first time, record its answer with it; afterwards,
        replay that answer. ``request`` is (method, path, body): the same key with another
        request is 409 ``idempotency_key_reused``. Without a key, just do the work."""
        if key is None:
            return await work()
        fingerprint = request_hash(*request)  # only a request that may be replayed needs it
        replay = await self._replay(key, fingerprint)
        if replay is not None:
            return replay
        try:
            result = await work()
        except ServiceError as error:
            if error.keeps_writes and isinstance(session_id, str):
                self._remember(key, fingerprint, session_id, error.status_code, error.body())
            raise
        body = result.model_dump(mode="json", by_alias=True)
        owner = session_id if isinstance(session_id, str) else session_id(result)
        self._remember(key, fingerprint, owner, status_code, body)
        return JSONResponse(body, status_code=status_code)

    async def _replay(self, key: str, fingerprint: str) -> JSONResponse | None:
        await self.records.lock(key)
        record = await self.records.get(key)
        if record is None:
            return None
        if record.created_at < utcnow() - self.ttl:
            await self.records.delete(record)
            return None
        if record.request_hash != fingerprint:
            raise ConflictError(
                "idempotency_key_reused",
                "this Idempotency-Key was already used for a different request; "
                "use a new key for a new request",
            )
        return JSONResponse(record.response, status_code=record.status_code)

    def _remember(
        self, key: str, fingerprint: str, session_id: str, status_code: int, body: dict[str, Any]
    ) -> None:
        self.records.add(
            IdempotencyRecord(
                tenant_id=self.tenant_id,
                key=key,
                request_hash=fingerprint,
                session_id=session_id,
                status_code=status_code,
                response=body,
            )
        )
