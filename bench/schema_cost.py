"""What each part of the schema costs Postgres on a turn and on a 128-call step.

In-process (the app under httpx's ASGI transport) on a fresh Postgres database: agents' turns
(start, then completion, with the synthetic conversation's bodies, a new session every 40
turns, as ``bench wrk-load`` sends them) and 128-call steps (``bench neighbours``' steps, into
a turn grown to 1,000 calls). The CPU of the Postgres backends serving the database is read
from ``/proc/<pid>/stat`` (user + system ticks) before and after each batch, and divided by
the turns or steps it served. The schema is changed between batches on the same database,
each variant in turn, several rounds, so that all variants see the same machine:

- ``as is``: the schema the migrations make;
- ``text parsed twice (0013)``: the search vector's function as 0013_search_parts made it
  (the whole text parsed twice; 0014_search_vector_once parses it once and only its
  compounds again), new rows' vectors only;
- ``no search vector``: ``messages.search_vector`` (the generated full-text column and its
  GIN index) dropped;
- ``keys and audit indexes of 0014``: the turns' primary key ``(id)``, a message's two
  foreign keys (to its turn by id, to its session) and the audit indexes as 0014 left them,
  against 0015_keys_by_session's one foreign key to the turn by ``(id, tenant_id,
  session_id)`` and audit indexes led by the tenant;
- ``no message foreign keys``: the foreign keys of ``messages`` and ``turns`` dropped;
- ``no turn_id index``: ``ix_messages_turn_id`` dropped;
- ``four audit indexes fewer``: the audit table's created_at, tenant and model, tenant and
  turn indexes dropped (its primary key, session index and flag indexes stay).

Each is put back after its batch. A variant is not a proposal: it measures what maintaining
that part costs each write.

    python -m bench schema-cost [--rounds 3] [--turns 120] [--steps 7] [--variant NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import statistics
from typing import Any

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from app.main import create_app
from app.settings import Settings
from bench import synth
from bench.common import DEFAULT_SERVER, fresh_database
from bench.neighbours import CALLS_PER_STEP, step_body
from bench.wrk_load import Meter, backends

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")
MODEL = "gpt-4o"
TURNS_PER_SESSION = 40

_VECTOR = (
    "ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
    "(contextd_search_vector(content)) STORED",
    "CREATE INDEX ix_messages_search_vector ON messages USING gin (search_vector)",
)
_FOREIGN_KEYS = (
    (
        "messages",
        "fk_messages_turn_turns",
        "(turn_id, tenant_id, session_id) REFERENCES turns (id, tenant_id, session_id) "
        "ON UPDATE CASCADE",
    ),
    (
        "turns",
        "fk_turns_session_sessions",
        "(tenant_id, session_id) REFERENCES sessions (tenant_id, id)",
    ),
)
_AUDIT_INDEXES = (
    ("ix_turn_context_audit_created_at", "(created_at)"),
    ("ix_turn_context_audit_tenant_id_model_alias_id", "(tenant_id, model_alias, id)"),
    ("ix_turn_context_audit_tenant_id_id", "(tenant_id, id)"),
    ("ix_turn_context_audit_turn_id", "(turn_id)"),
)
_FLAGS = (
    "summary_triggered",
    "prune_triggered",
    "overflow_rejected",
    "summary_fallback",
    "estimator_fallback",
)
#: The flags whose (id) index 0015 dropped (it keeps summary_triggered's and prune_triggered's).
_RARE_FLAGS = ("overflow_rejected", "summary_fallback", "estimator_fallback")
#: The turns' key, the messages' two foreign keys and the audit indexes of 0014, against
#: 0015_keys_by_session's.
_KEYS_0015 = (
    "ALTER TABLE messages DROP CONSTRAINT fk_messages_turn_turns",
    "ALTER TABLE turns DROP CONSTRAINT pk_turns",
    "ALTER TABLE turns ADD CONSTRAINT pk_turns PRIMARY KEY (id, tenant_id, session_id)",
    "ALTER TABLE messages ADD CONSTRAINT fk_messages_turn_turns FOREIGN KEY "
    "(turn_id, tenant_id, session_id) REFERENCES turns (id, tenant_id, session_id) "
    "ON DELETE CASCADE ON UPDATE CASCADE",
    "CREATE INDEX ix_turn_context_audit_tenant_id_session_id_id "
    "ON turn_context_audit (tenant_id, session_id, id)",
    "CREATE INDEX ix_turn_context_audit_tenant_id_model_alias_id "
    "ON turn_context_audit (tenant_id, model_alias, id)",
    *(
        f"CREATE INDEX ix_turn_context_audit_tenant_id_{flag} "
        f"ON turn_context_audit (tenant_id, id) WHERE {flag}"
        for flag in _FLAGS
    ),
)
_KEYS_0014 = (
    "ALTER TABLE messages DROP CONSTRAINT fk_messages_turn_turns",
    "ALTER TABLE turns DROP CONSTRAINT pk_turns",
    "ALTER TABLE turns ADD CONSTRAINT pk_turns PRIMARY KEY (id)",
    "ALTER TABLE messages ADD CONSTRAINT fk_messages_turn_id_turns FOREIGN KEY (turn_id) "
    "REFERENCES turns (id) ON DELETE CASCADE",
    "ALTER TABLE messages ADD CONSTRAINT fk_messages_session_sessions FOREIGN KEY "
    "(tenant_id, session_id) REFERENCES sessions (tenant_id, id) ON DELETE CASCADE",
    "CREATE INDEX ix_turn_context_audit_session_id_id ON turn_context_audit (session_id, id)",
    "CREATE INDEX ix_turn_context_audit_model_alias_id ON turn_context_audit (model_alias, id)",
    *(
        f"CREATE INDEX ix_turn_context_audit_{flag} ON turn_context_audit (id) WHERE {flag}"
        for flag in _RARE_FLAGS
    ),
)
# The search vector's function before and after it parsed each text once.
_SEARCH_VECTOR_ONCE = importlib.import_module("migrations.versions.0014_search_vector_once")
#: Each variant: the statements that make it, the statements that undo it.
VARIANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "as is": ((), ()),
    "text parsed twice (0013)": ((_SEARCH_VECTOR_ONCE.TWICE,), (_SEARCH_VECTOR_ONCE.ONCE,)),
    "no search vector": (("ALTER TABLE messages DROP COLUMN search_vector",), _VECTOR),
    "no message foreign keys": (
        tuple(f"ALTER TABLE {table} DROP CONSTRAINT {name}" for table, name, _ in _FOREIGN_KEYS),
        tuple(
            f"ALTER TABLE {table} ADD CONSTRAINT {name} FOREIGN KEY {key} ON DELETE CASCADE"
            for table, name, key in _FOREIGN_KEYS
        ),
    ),
    "no turn_id index": (
        ("DROP INDEX ix_messages_turn_id",),
        ("CREATE INDEX ix_messages_turn_id ON messages (turn_id)",),
    ),
    "keys and audit indexes of 0014": (
        (
            *_KEYS_0014,
            "DROP INDEX ix_turn_context_audit_tenant_id_session_id_id",
            "DROP INDEX ix_turn_context_audit_tenant_id_model_alias_id",
            *(f"DROP INDEX ix_turn_context_audit_tenant_id_{flag}" for flag in _FLAGS),
        ),
        (
            "ALTER TABLE messages DROP CONSTRAINT fk_messages_turn_id_turns",
            "ALTER TABLE messages DROP CONSTRAINT fk_messages_session_sessions",
            *_KEYS_0015[1:],
            "DROP INDEX ix_turn_context_audit_session_id_id",
            "DROP INDEX ix_turn_context_audit_model_alias_id",
            *(f"DROP INDEX ix_turn_context_audit_{flag}" for flag in _RARE_FLAGS),
        ),
    ),
    "four audit indexes fewer": (
        tuple(f"DROP INDEX {name}" for name, _ in _AUDIT_INDEXES),
        tuple(f"CREATE INDEX {name} ON turn_context_audit {key}" for name, key in _AUDIT_INDEXES),
    ),
}


class Agent:
    """Turns and steps through the app, with the Postgres CPU they cost."""

    def __init__(self, client: httpx.AsyncClient, server_url: str, database_url: str) -> None:
        self.client = client
        self.server_url = server_url
        self.database_url = database_url
        self.turns = synth.generate(60, seed=1).turns
        self.sent = 0

    async def _postgres_ms(self, work: Any) -> float:
        pids = await backends(self.server_url, self.database_url)
        meter = Meter()
        meter.start(pids)
        await work()
        return meter.spent(pids) * 1000 / TICKS_PER_SECOND

    async def _post(self, path: str, body: dict[str, Any], status: int) -> dict[str, Any]:
        response = await self.client.post(path, json=body)
        if response.status_code != status:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
        answer: dict[str, Any] = response.json()
        return answer

    async def turns_cost(self, count: int) -> float:
        """Postgres CPU per turn (start + completion), in ms."""

        async def work() -> None:
            session = ""
            for number in range(count):
                if number % TURNS_PER_SESSION == 0:
                    body = {"model": MODEL, "system": {"global": synth.SYSTEM}}
                    session = (await self._post("/v1/sessions", body, 201))["id"]
                turn = self.turns[self.sent % len(self.turns)]
                self.sent += 1
                base = f"/v1/sessions/{session}/turns"
                started = await self._post(base, turn.start_body(), 201)
                await self._post(f"{base}/{started['turn_id']}/complete", turn.complete_body(), 200)

        return await self._postgres_ms(work) / count

    async def steps_cost(self, count: int) -> float:
        """Postgres CPU per 128-call step into one growing open turn, in ms."""
        body = {"model": MODEL, "system": {"global": "You are a coding agent."}}
        session = (await self._post("/v1/sessions", body, 201))["id"]
        base = f"/v1/sessions/{session}/turns"
        turn = (await self._post(base, {"message": {"content": "Audit it."}}, 201))["turn_id"]
        self.sent += 1
        tag = f"s{self.sent}"

        async def work() -> None:
            for number in range(count):
                step = step_body(number * CALLS_PER_STEP, CALLS_PER_STEP, tag)
                await self._post(f"{base}/{turn}/steps", step, 200)

        return await self._postgres_ms(work) / count


async def run(
    server_url: str, rounds: int, turns: int, steps: int, variants: list[str]
) -> dict[str, Any]:
    per_turn: dict[str, list[float]] = {name: [] for name in variants}
    per_step: dict[str, list[float]] = {name: [] for name in variants}
    async with fresh_database(server_url, "contextd_bench_schema") as database_url:
        app = create_app(
            Settings(
                _env_file=None,
                database_url=database_url,
                auto_migrate=True,
                api_key_cache_seconds=60,
                calibration_cache_seconds=60,
            )
        )
        plain = make_url(database_url).set(drivername="postgresql")
        admin = await asyncpg.connect(plain.render_as_string(hide_password=False))
        try:
            async with (
                app.router.lifespan_context(app),
                httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=app), base_url="http://contextd", timeout=600
                ) as client,
            ):
                agent = Agent(client, server_url, database_url)
                await agent.turns_cost(turns // 2)  # warm-up: every statement prepared
                for _ in range(rounds):
                    for name in variants:
                        make, undo = VARIANTS[name]
                        for statement in make:
                            await admin.execute(statement)
                        await agent.turns_cost(5)  # statements prepared again after the change
                        per_turn[name].append(await agent.turns_cost(turns))
                        per_step[name].append(await agent.steps_cost(steps))
                        for statement in undo:
                            await admin.execute(statement)
        finally:
            await admin.close()
    return {"per_turn": per_turn, "per_step": per_step}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=120, help="turns a batch")
    parser.add_argument("--steps", type=int, default=7, help="128-call steps a batch")
    parser.add_argument(
        "--variant",
        action="append",
        choices=[name for name in VARIANTS if name != "as is"],
        help="measure only this variant beside 'as is' (repeatable; all of them by default)",
    )
    args = parser.parse_args()
    variants = ["as is", *args.variant] if args.variant else list(VARIANTS)
    results = asyncio.run(run(args.database_url, args.rounds, args.turns, args.steps, variants))
    per_turn, per_step = results["per_turn"], results["per_step"]
    base_turn = statistics.median(per_turn["as is"])
    base_step = statistics.median(per_step["as is"])
    print(  # noqa: T201
        "| schema | Postgres CPU per turn, ms (rounds) | median | vs as is "
        "| per 128-call step, ms (rounds) | median | vs as is |\n"
        "|---|---|---:|---:|---|---:|---:|"
    )
    for name in variants:
        turn, step = statistics.median(per_turn[name]), statistics.median(per_step[name])
        print(  # noqa: T201
            f"| {name} | {', '.join(f'{x:.2f}' for x in per_turn[name])} | {turn:.2f} "
            f"| {turn / base_turn:.0%} | {', '.join(f'{x:.1f}' for x in per_step[name])} "
            f"| {step:.1f} | {step / base_step:.0%} |"
        )


if __name__ == "__main__":
    main()
