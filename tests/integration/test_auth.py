"""API keys, scopes and tenants: who may call, and what each caller can see."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import async_sessionmaker

from app.auth.service import AuthNotConfiguredError, KeyService
from app.db import create_engine
from app.main import create_app
from tests.conftest import Contextd, RunningApp, make_settings
from tests.support import audit_rows, complete_turn, create_session, start_turn


async def test_without_a_key_every_call_is_refused_once_a_key_exists(apps: RunningApp) -> None:
    app, _ = await apps.start()
    await apps.key("acme")

    response = await apps.client(app).post("/v1/sessions", json={"model": "gpt-4o"})

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
    assert response.headers["www-authenticate"] == "Bearer"


async def test_an_unknown_key_is_refused_even_while_the_service_runs_open(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start()
    forged = apps.client(app, "ctxd_0123456789abcdef_not-a-real-secret")

    response = await forged.get("/v1/sessions/anything")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"


async def test_a_key_with_a_wrong_secret_is_refused(apps: RunningApp) -> None:
    app, _ = await apps.start()
    key = await apps.key("acme")
    key_id = key.split("_")[1]

    response = await apps.client(app, f"ctxd_{key_id}_guessed").get("/v1/sessions/x")

    assert response.status_code == 401


async def test_agent_key_works_on_sessions_and_is_forbidden_the_audit(apps: RunningApp) -> None:
    app, _ = await apps.start()
    agent = apps.client(app, await apps.key("acme", "agent"))

    session = await create_session(agent)
    audit = await agent.get("/v1/audit")

    assert session["tenant_id"] == "acme"
    assert audit.status_code == 403
    assert audit.json()["error"]["code"] == "forbidden_scope"


async def test_ops_key_reads_the_audit_and_is_forbidden_sessions(apps: RunningApp) -> None:
    app, _ = await apps.start()
    ops = apps.client(app, await apps.key("acme", "ops"))

    audit = await ops.get("/v1/audit")
    sessions = await ops.post("/v1/sessions", json={"model": "gpt-4o"})

    assert audit.status_code == 200
    assert sessions.status_code == 403
    assert sessions.json()["error"]["code"] == "forbidden_scope"


async def test_another_tenants_session_is_not_found_whatever_the_call(apps: RunningApp) -> None:
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))
    session = await create_session(acme, id="plans")
    turn = await start_turn(acme, "plans", "Our secret plan")
    base = f"/v1/sessions/{session['id']}"

    responses = [
        await globex.get(base),
        await globex.patch(base, json={"goal": "mine now"}),
        await globex.get(f"{base}/messages"),
        await globex.get(f"{base}/summaries"),
        await globex.get(f"{base}/turns/{turn['turn_id']}"),
        await globex.post(f"{base}/turns", json={"message": {"content": "hi"}}),
        await globex.post(
            f"{base}/turns/{turn['turn_id']}/complete", json={"assistant": {"content": "x"}}
        ),
        await globex.delete(base),
    ]

    assert [r.status_code for r in responses] == [404] * len(responses)
    assert {r.json()["error"]["code"] for r in responses} == {"session_not_found"}
    assert (await acme.get(base)).json()["goal"] == "Plan a trip to Lisbon"


async def test_two_tenants_may_choose_the_same_session_id(apps: RunningApp) -> None:
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))
    await create_session(acme, id="support-1", goal="Acme's goal")
    await create_session(globex, id="support-1", goal="Globex's goal")

    await start_turn(acme, "support-1", "Acme speaking")
    globex_turn = await start_turn(globex, "support-1", "Globex speaking")

    assert (await acme.get("/v1/sessions/support-1")).json()["goal"] == "Acme's goal"
    assert [m["content"] for m in globex_turn["messages"][1:]] == ["Globex speaking"]
    assert (await globex.get("/v1/sessions/support-1")).json()["message_count"] == 1


async def test_audit_rows_are_only_the_callers_tenants(apps: RunningApp) -> None:
    app, _ = await apps.start()
    acme = apps.client(app, await apps.key("acme", "agent", "ops"))
    globex = apps.client(app, await apps.key("globex", "agent", "ops"))
    await create_session(acme, id="same")
    await create_session(globex, id="same")
    acme_turn = await start_turn(acme, "same", "one")
    await complete_turn(acme, "same", acme_turn["turn_id"], "ok")
    await start_turn(acme, "same", "two")
    globex_turn = await start_turn(globex, "same", "three")

    acme_rows = await audit_rows(acme, "same")
    globex_rows = await audit_rows(globex, "same")
    foreign = await globex.get(f"/v1/audit/{acme_turn['audit_id']}")

    assert len(acme_rows) == 2
    assert [r["id"] for r in globex_rows] == [globex_turn["audit_id"]]
    assert {r["tenant_id"] for r in acme_rows} == {"acme"}
    assert foreign.status_code == 404


async def test_metrics_need_an_ops_key_once_keys_exist(apps: RunningApp) -> None:
    app, _ = await apps.start()
    agent_key = await apps.key("acme", "agent")
    ops_key = await apps.key("acme", "ops")

    anonymous = await apps.client(app).get("/metrics")
    agent = await apps.client(app, agent_key).get("/metrics")
    ops = await apps.client(app, ops_key).get("/metrics")

    assert (anonymous.status_code, agent.status_code, ops.status_code) == (401, 403, 200)
    assert "http_requests_total" in ops.text


async def test_health_and_readiness_need_no_key(apps: RunningApp) -> None:
    app, _ = await apps.start()
    await apps.key("acme")
    anonymous = apps.client(app)

    assert (await anonymous.get("/healthz")).status_code == 200
    assert (await anonymous.get("/readyz")).status_code == 200


async def test_keys_command_issues_a_key_shown_once_lists_it_and_revokes_it(
    apps: RunningApp, contextd: Contextd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command's change reaches a running server within api_key_cache_seconds; 0 makes it
    # immediate, so that the revocation below is seen by the next request.
    app, _ = await apps.start(api_key_cache_seconds=0)
    await apps.key("acme")  # another key keeps the service closed after the revocation
    monkeypatch.setenv("CONTEXTD_DATABASE_URL", apps.database_url)

    created = await contextd(
        "keys", "create", "--tenant", "acme", "--scope", "agent", "--name", "bot"
    )
    listed = await contextd("keys", "list")
    key = created.out.strip()

    assert created.code == 0, created.err
    assert key.startswith("ctxd_")
    assert "cannot be shown again" in created.err
    session = await create_session(apps.client(app, key))
    assert session["tenant_id"] == "acme"
    assert listed.code == 0, listed.err
    assert key.split("_")[1] in listed.out
    assert key.split("_", 2)[2] not in listed.out
    revoked = await contextd("keys", "revoke", key.split("_")[1])
    assert revoked.code == 0, revoked.err
    refused = await apps.client(app, key).post("/v1/sessions", json={"model": "gpt-4o"})
    assert refused.status_code == 401


async def revoke_key(database_url: str, key: str) -> None:
    """Revoke a key through the service, in this process, as `contextd keys revoke` does."""
    engine = create_engine(database_url)
    try:
        async with async_sessionmaker(engine)() as db:
            await KeyService(db).revoke(key.split("_")[1])
            await db.commit()
    finally:
        await engine.dispose()


async def test_a_key_revoked_in_this_process_is_refused_at_once_though_it_was_cached(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start(api_key_cache_seconds=3600)
    key = await apps.key("acme")
    agent = apps.client(app, key)
    await create_session(agent, id="before")

    await revoke_key(apps.database_url, key)
    refused = await agent.post("/v1/sessions", json={"model": "gpt-4o"})

    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthenticated"


async def test_the_first_key_closes_an_open_service_at_once_though_it_was_cached(
    apps: RunningApp,
) -> None:
    app, client = await apps.start(api_key_cache_seconds=3600)
    await create_session(client, id="while-open")

    key = await apps.key("acme")
    anonymous = await client.post("/v1/sessions", json={"model": "gpt-4o"})
    with_key = await apps.client(app, key).post("/v1/sessions", json={"model": "gpt-4o"})

    assert anonymous.status_code == 401
    assert with_key.status_code == 201


async def test_a_known_key_is_served_from_the_cache_and_keeps_its_tenant(
    apps: RunningApp,
) -> None:
    app, _ = await apps.start(api_key_cache_seconds=3600)
    acme = apps.client(app, await apps.key("acme"))
    globex = apps.client(app, await apps.key("globex"))

    sessions = [await create_session(client) for client in (acme, globex, acme, globex)]

    assert [s["tenant_id"] for s in sessions] == ["acme", "globex", "acme", "globex"]
    assert (
        await apps.client(app, "ctxd_0123456789abcdef_forged").get("/v1/audit")
    ).status_code == 401


async def test_without_keys_a_non_loopback_bind_refuses_to_start(database_url: str) -> None:
    app = create_app(make_settings(database_url, host="0.0.0.0"))

    with pytest.raises(AuthNotConfiguredError, match="contextd keys create"):
        async with app.router.lifespan_context(app):
            pass


async def test_an_open_public_bind_starts_when_explicitly_allowed(database_url: str) -> None:
    app = create_app(make_settings(database_url, host="0.0.0.0", allow_unauthenticated=True))

    async with app.router.lifespan_context(app):
        pass


async def test_a_non_loopback_bind_with_keys_starts_and_asks_for_them(apps: RunningApp) -> None:
    await apps.key("acme")
    _, client = await apps.start(host="0.0.0.0")

    assert (await client.get("/v1/sessions/x")).status_code == 401
