"""API keys: issued by the command line, shown once, stored as a hash of their secret.

A key reads ``ctxd_<id>_<secret>``: the id finds the stored key, the secret proves it (a
sha256 of 256 random bits needs no slow hash: nothing short enough to guess goes in).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.cache import keys_changed

# Who is calling lives in app.auth.callers (the key cache needs it too); named here as well,
# where the key service has always given it.
from app.auth.callers import DEFAULT_TENANT as DEFAULT_TENANT
from app.auth.callers import OPEN_CALLER as OPEN_CALLER
from app.auth.callers import Caller as Caller
from app.auth.callers import Scope as Scope
from app.auth.repository import ApiKeyRepository
from app.errors import InvalidRequestError, NotFoundError
from app.models import ApiKeyRecord
from app.models.base import utcnow
from app.settings import Settings

logger = logging.getLogger(__name__)

KEY_PREFIX = "ctxd_"
TENANT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


@dataclass(frozen=True)
class IssuedKey:
    record: ApiKeyRecord
    #: The whole key. It exists only here: the database keeps a hash of its secret.
    key: str


class AuthNotConfiguredError(RuntimeError):
    """No API key exists and the bind is reachable from other machines."""


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _tell_caches_on_commit(db: AsyncSession) -> None:
    """Once ``db`` commits, this process's key caches forget what they read: a new key closes
    an open service, and a revoked one is refused, from the next request on. (On commit, not
    now: a request in between would read, and keep, the keys as they were.)"""
    event.listen(db.sync_session, "after_commit", lambda _: keys_changed(), once=True)


class KeyService:
    def __init__(self, db: AsyncSession) -> None:
        self.keys = ApiKeyRepository(db)
        self.db = db

    async def create(
        self, *, tenant_id: str, scopes: Iterable[Scope], name: str | None = None
    ) -> IssuedKey:
        """A new key for a tenant; the returned key is the only copy of its secret."""
        if not re.fullmatch(TENANT_PATTERN, tenant_id):
            raise InvalidRequestError(f"tenant ids match {TENANT_PATTERN}: {tenant_id!r}")
        granted = sorted(set(scopes))
        if not granted:
            raise InvalidRequestError("a key needs at least one scope: agent or ops")
        key_id = secrets.token_hex(8)
        secret = secrets.token_urlsafe(32)
        record = ApiKeyRecord(
            id=key_id,
            tenant_id=tenant_id,
            scopes=[str(scope) for scope in granted],
            name=name,
            secret_hash=_hash(secret),
        )
        self.keys.add(record)
        await self.db.flush()
        _tell_caches_on_commit(self.db)
        return IssuedKey(record=record, key=f"{KEY_PREFIX}{key_id}_{secret}")

    async def list(self) -> Sequence[ApiKeyRecord]:
        """Every key, revoked ones included, by tenant."""
        return await self.keys.list()

    async def revoke(self, key_id: str) -> ApiKeyRecord:
        """Revoke a key for good; requests with it are refused from now on."""
        record = await self.keys.get(key_id)
        if record is None:
            raise NotFoundError("key_not_found", f"no API key {key_id!r}")
        if record.revoked_at is None:
            record.revoked_at = utcnow()
            await self.db.flush()
            _tell_caches_on_commit(self.db)
        return record

    async def authenticate(self, key: str) -> Caller | None:
        """The caller a key stands for; None for an unknown, malformed or revoked key."""
        if not key.startswith(KEY_PREFIX):
            return None
        key_id, _, secret = key.removeprefix(KEY_PREFIX).partition("_")
        if not key_id or not secret or len(key_id) > 32:
            return None
        record = await self.keys.get(key_id)
        if record is None or record.revoked_at is not None:
            return None
        if not hmac.compare_digest(record.secret_hash, _hash(secret)):
            return None
        return Caller(
            tenant_id=record.tenant_id,
            scopes=frozenset(Scope(scope) for scope in record.scopes),
            key_id=record.id,
        )

    async def any_active(self) -> bool:
        """Whether the service must ask every caller for a key."""
        return await self.keys.any_active()


async def check_open_mode(db: AsyncSession, settings: Settings, *, warn: bool = True) -> None:
    """At start-up: with no key, run open only where that is safe, and say so loudly."""
    if await KeyService(db).any_active():
        return
    if not (settings.binds_loopback or settings.allow_unauthenticated):
        raise AuthNotConfiguredError(
            f"no API key exists and {settings.host} is reachable from other machines: create "
            "one with `contextd keys create --tenant NAME --scope agent`, bind 127.0.0.1, or "
            "set CONTEXTD_ALLOW_UNAUTHENTICATED=true if an open service is really intended"
        )
    if warn:
        logger.warning(
            "NO API KEYS: contextd is serving WITHOUT AUTHENTICATION on %s; every caller is "
            "tenant %r with every scope. Create a key with `contextd keys create` to close it.",
            settings.host,
            DEFAULT_TENANT,
        )
