"""The ``Idempotency-Key`` header and the service that honours it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header

from app.auth.dependencies import AgentCaller
from app.db import DbSession
from app.idempotency.service import IdempotencyService
from app.runtime import RuntimeDep

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=r"^[\x21-\x7e]{1,255}$",
        description=(
            "Any unique string (a UUID is fine). A retry with the same key and body gets the "
            "first answer back and stores nothing twice; the same key with another body is "
            "409 idempotency_key_reused."
        ),
    ),
]


async def get_idempotency(
    db: DbSession, runtime: RuntimeDep, caller: AgentCaller
) -> IdempotencyService:
    return IdempotencyService(
        db, tenant_id=caller.tenant_id, ttl_seconds=runtime.settings.idempotency_ttl_seconds
    )


IdempotencyDep = Annotated[IdempotencyService, Depends(get_idempotency)]
