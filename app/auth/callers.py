"""Who is calling: a tenant and the scopes of its key. Plain values, which the key service,
the key cache and the request dependencies all use, and which import nothing of theirs."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

#: The tenant of every session when the service runs without keys.
DEFAULT_TENANT = "default"


class Scope(StrEnum):
    AGENT = "agent"  # sessions, turns, messages, summaries
    OPS = "ops"  # audit rows and metrics, read only


@dataclass(frozen=True)
class Caller:
    """Who is calling: everything a request may touch belongs to ``tenant_id``."""

    tenant_id: str
    scopes: frozenset[Scope]
    #: None when the service runs open (no key exists).
    key_id: str | None


OPEN_CALLER = Caller(tenant_id=DEFAULT_TENANT, scopes=frozenset(Scope), key_id=None)
