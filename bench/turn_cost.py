"""Does a turn cost the same at 10 and at 10,000 stored messages?

Two sessions on one database: one with 10 stored messages, one with 10,000 (a long history
already folded into a summary, as the policy leaves it). Turns alternate between them and
the time of each call (turn start + one tool step + completion) is compared in the same run.

    python -m bench.turn_cost [--rounds 60] [--stored 10000] [--database-url …]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import insert, update

from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.budget.tokens import count_message, lookup_model
from app.db import create_engine
from app.models import MessageRecord, MessageState, SessionRecord, SummaryRecord, TurnRecord
from app.models.base import utcnow
from app.tokens.registry import TokenizerRegistry
from bench.common import machine, running_app

#: The benchmark runs the service open (no API key): every session is the default tenant's.
TENANT = "default"
SESSION = {
    "model": "gpt-4o",
    "system": {"global": "You are a careful assistant.", "role": "You book travel."},
    "goal": "Plan a trip",
}


async def seed_history(database_url: str, session_id: str, stored: int) -> None:
    """Write ``stored`` messages (4 a turn: user, tool call, result, answer) as a long session
    leaves them: all but the last turns summarised into one summary."""
    counter, _ = TokenizerRegistry().counter_for(lookup_model("gpt-4o"))
    turns = stored // 4
    engine = create_engine(database_url)
    now = utcnow()
    turn_rows, message_rows = [], []
    for t in range(1, turns + 1):
        turn_id = str(uuid.uuid4())
        turn_rows.append(
            {
                "id": turn_id,
                "tenant_id": TENANT,
                "session_id": session_id,
                "seq": t,
                "status": "completed",
                "steps": 1,
                "started_at": now,
            }
        )
        call = [
            {
                "id": f"c{t}",
                "type": "function",
                "function": {"name": "search", "arguments": '{"q": "hotels"}'},
            }
        ]
        base = (t - 1) * 4
        shapes: list[tuple[str, str | None, dict[str, Any]]] = [
            ("user", f"Turn {t}: find a hotel under {100 + t % 50} EUR.", {}),
            ("assistant", None, {"tool_calls": call}),
            (
                "tool",
                f"Hotel {t}: {90 + t % 60} EUR, id H-{t}.",
                {"tool_call_id": f"c{t}", "answers_seq": base + 2},
            ),
            ("assistant", f"Hotel {t} fits.", {}),
        ]
        for offset, (role, content, extra) in enumerate(shapes):
            message = {"role": role, "content": content, **extra}
            chat = {k: v for k, v in message.items() if k != "answers_seq"}
            message_rows.append(
                {
                    "tenant_id": TENANT,
                    "session_id": session_id,
                    "turn_id": turn_id,
                    "seq": base + offset + 1,
                    "turn_seq": t,
                    "step": 1 if offset in (1, 2) else 0,
                    "role": role,
                    "content": content,
                    "tool_calls": extra.get("tool_calls"),
                    "tool_call_id": extra.get("tool_call_id"),
                    "answers_seq": extra.get("answers_seq"),
                    "token_count": count_message(counter, chat),
                    "token_encoding": counter.name,
                    "state": MessageState.SUMMARISED if t <= turns - 3 else MessageState.ACTIVE,
                    "created_at": now,
                }
            )
    summary = SummaryContent(
        summary_text=f"Earlier conversation: {turns - 3} turns of hotel searches.",
        key_facts=tuple(
            SummaryItem(f"Hotel {t}: {90 + t % 60} EUR, id H-{t}.", (t,)) for t in range(1, 40)
        ),
    )
    rendered = render_summary(summary)
    async with engine.begin() as connection:
        await connection.execute(insert(TurnRecord), turn_rows)
        for start in range(0, len(message_rows), 2000):
            await connection.execute(insert(MessageRecord), message_rows[start : start + 2000])
        await connection.execute(
            insert(SummaryRecord),
            [
                {
                    "tenant_id": TENANT,
                    "session_id": session_id,
                    "turn_seq": turns - 3,
                    "from_message_id": None,
                    "to_message_id": 1,
                    "from_seq": 1,
                    "to_seq": (turns - 3) * 4,
                    "summary_text": summary.summary_text,
                    "key_facts": [
                        {"text": i.text, "source_message_ids": []} for i in summary.key_facts
                    ],
                    "open_questions": [],
                    "decisions": [],
                    "action_items": [],
                    "rendered": rendered,
                    "token_count": counter.count_text(rendered),
                    "token_encoding": counter.name,
                    "summarizer": "extractive",
                    "created_at": now,
                }
            ],
        )
        await connection.execute(
            update(SessionRecord)
            .where(SessionRecord.tenant_id == TENANT, SessionRecord.id == session_id)
            .values(turn_count=turns, message_count=turns * 4)
        )
    await engine.dispose()


async def one_turn(client: httpx.AsyncClient, session_id: str, number: int) -> float:
    started = time.perf_counter()
    turn = (
        await client.post(
            f"/v1/sessions/{session_id}/turns",
            json={"message": {"content": f"Round {number}: what about {number} EUR?"}},
        )
    ).json()
    await client.post(
        f"/v1/sessions/{session_id}/turns/{turn['turn_id']}/steps",
        json={
            "assistant": {
                "tool_calls": [
                    {"id": f"r{number}", "function": {"name": "search", "arguments": "{}"}}
                ]
            },
            "tool_results": [{"tool_call_id": f"r{number}", "content": f"{number} results"}],
        },
    )
    await client.post(
        f"/v1/sessions/{session_id}/turns/{turn['turn_id']}/complete",
        json={"assistant": {"content": "Here you go."}},
    )
    return time.perf_counter() - started


async def run(rounds: int, stored: int, database_url: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        url = database_url or f"sqlite+aiosqlite:///{folder}/bench.db"
        async with running_app(url) as client:
            small = (await client.post("/v1/sessions", json=SESSION)).json()["id"]
            large = (await client.post("/v1/sessions", json=SESSION)).json()["id"]
            for number in range(3):  # 10 stored messages after the warm-up below
                await one_turn(client, small, -number)
            await seed_history(url, large, stored)
            times: dict[str, list[float]] = {small: [], large: []}
            for number in range(rounds):
                for session_id in (small, large) if number % 2 else (large, small):
                    times[session_id].append(await one_turn(client, session_id, number))
            sizes = {
                sid: (await client.get(f"/v1/sessions/{sid}")).json()["message_count"]
                for sid in (small, large)
            }
    small_ms = statistics.median(times[small]) * 1000
    large_ms = statistics.median(times[large]) * 1000
    return {
        "stored_small_at_end": sizes[small],
        "stored_large_at_end": sizes[large],
        "median_turn_ms_small": small_ms,
        "median_turn_ms_large": large_ms,
        "ratio_large_to_small": large_ms / small_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--stored", type=int, default=10_000)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    figures = asyncio.run(run(args.rounds, args.stored, args.database_url))
    where = args.database_url.split("@")[-1] if args.database_url else "SQLite"
    print(f"turn cost on {where} — {machine()}; one turn = start + 1 tool step + complete")  # noqa: T201
    for key, value in figures.items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"  {key:24} {shown}")  # noqa: T201


if __name__ == "__main__":
    main()
