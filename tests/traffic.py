"""Scripted traffic that makes the policy act: summaries, prunes and a rejection."""

from __future__ import annotations

import httpx

from tests.support import complete_turn, create_session, post_step, start_turn, words


async def eventful_session(
    client: httpx.AsyncClient, *, model: str = "gpt-4", turns: int = 10, reject: bool = True
) -> str:
    """A session on a small window (gpt-4: 8k) whose tool results fill it: from the fifth
    turn on its assemblies summarise and prune; with ``reject``, a last turn too big to
    fit is refused. Returns the session id."""
    session_id = str((await create_session(client, model=model))["id"])
    for index in range(turns):
        turn = await start_turn(client, session_id, f"Search {index}")
        await post_step(client, session_id, turn["turn_id"], [f"t{index}"], [words(1300, index)])
        await complete_turn(client, session_id, turn["turn_id"], f"Done {index}")
    if reject:
        await start_turn(client, session_id, words(6000), expect=422)
    return session_id
