"""Edges of the assembly that an agent meets: reused tool-call ids, and the figures a
rejected assembly reports."""

from __future__ import annotations

import httpx

from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    step_body,
    stored_messages,
    words,
)


async def test_a_tool_call_id_already_in_the_session_is_refused_and_nothing_is_stored(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client)
    sid = session["id"]
    first = await start_turn(client, sid, "Find flights to Lisbon.")
    await post_step(client, sid, first["turn_id"], ["call_1"], ["3 flights found"])
    await complete_turn(client, sid, first["turn_id"], "There are 3 flights.")
    second = await start_turn(client, sid, "And trains?")
    before = await stored_messages(client, sid)

    response = await client.post(
        f"/v1/sessions/{sid}/turns/{second['turn_id']}/steps",
        json=step_body(["call_1"], ["2 trains found"]),
    )

    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "tool_call_id_reused"
    assert error["details"]["tool_call_ids"] == ["call_1"]
    assert await stored_messages(client, sid) == before
    # The turn goes on with a fresh id.
    again = await post_step(client, sid, second["turn_id"], ["call_2"], ["2 trains found"])
    assert again["messages"][-1]["tool_call_id"] == "call_2"


async def test_a_rejected_assembly_reports_figures_that_only_go_down_stage_by_stage(
    client: httpx.AsyncClient,
) -> None:
    # A total cap squeezes memory; the current turn is too large for the budget anyway.
    session = await create_session(client, memory=words(1500), block_caps={"total": 3000})
    sid = session["id"]

    response = await client.post(
        f"/v1/sessions/{sid}/turns", json={"message": {"content": words(6000)}}
    )

    assert response.status_code == 422, response.text
    row = (await audit_rows(client, sid))[-1]
    assert row["overflow_rejected"]
    figures = [
        row["estimated_input_tokens_before"],
        row["estimated_input_tokens_after_summary"],
        row["estimated_input_tokens_after_prune"],
        row["estimated_input_tokens"],
    ]
    assert figures == sorted(figures, reverse=True), figures
    # The squeeze did happen: the final figure left most of memory out.
    assert figures[-1] < figures[-2]
    assert row["rejection"]["estimated_input_tokens"] == figures[-1]
