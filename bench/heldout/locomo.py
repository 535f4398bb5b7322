"""``python -m bench.heldout.locomo --data PATH``: long human-written dialogues that nobody
here wrote, replayed through the app at an 8k budget.

LoCoMo (snap-research/locomo, ACL 2024: "Evaluating Very Long-Term Conversational Memory of
LLM Agents") has ten two-person conversations of 19-35 sessions each, with questions and the
ids of the dialogue lines that hold each answer (``evidence``). The data is not in this
repository: get ``data/locomo10.zip`` from that repository and pass the JSON file
(``locomo10.json``, a list of conversations), a folder of one-conversation files, or one file.

Replay: speaker A is the user and speaker B the assistant; consecutive lines of one speaker
are one message, each line written ``Name: text`` (a shared photo as ``[shares a photo:
caption]``), the first message of each session led by its date line. A session that speaker B
opens starts with a user message holding the date line alone. Then each question is asked as a
user turn, in the file's order, and the turn is closed without an answer (so no answer ever
enters the history). A question's evidence line is *in its prompt* when the first 60
characters of its text, normalised as everywhere in bench.heldout, occur in the prompt.

The report gives, by QA category, the share of questions with all, and with any, of their
evidence lines in the question's prompt. Categories as the data set's own evaluation code
numbers them (snap-research/locomo issue #29): 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (no answer in the dialogue; its evidence is what it is built on).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import running_app
from bench.heldout.scenario import normalise
from bench.heldout.scorer import chat_problems, prompt_text
from bench.recall import wait_for_embeddings
from tests.openai_counting import prompt_tokens

MODEL = "gpt-4o-mini"
CONTEXT_LIMIT = 8192
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
WINDOW = 60
#: What bench/embeddings_server.py serves.
EMBEDDINGS_MODEL = "all-MiniLM-L6-v2"
_SESSION = re.compile(r"^session_(\d+)$")
_EVIDENCE = re.compile(r"D\d+:\d+")


@dataclass(frozen=True)
class Exchange:
    """One user turn of the replay and the assistant's answer (None: no answer)."""

    user: str
    answer: str | None


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    exchanges: list[Exchange]
    #: dialogue id -> the text the scorer looks for
    lines: dict[str, str]
    #: (question, category, evidence ids)
    questions: list[tuple[str, int, list[str]]]


@dataclass
class Tally:
    prompts: int = 0
    over_budget: int = 0
    invalid: int = 0
    refused: int = 0
    #: category -> [questions, all evidence present, any evidence present]
    by_category: dict[int, list[int]] = field(default_factory=dict)
    skipped: int = 0


def load(path: Path) -> list[Conversation]:
    """The conversations of ``path``: locomo10.json, a folder of conversations, or one."""
    if path.is_dir():
        documents = [json.loads(p.read_text()) for p in sorted(path.glob("*.json"))]
        names = [p.stem for p in sorted(path.glob("*.json"))]
    else:
        loaded = json.loads(path.read_text())
        documents = loaded if isinstance(loaded, list) else [loaded]
        names = [str(d.get("sample_id", i)) for i, d in enumerate(documents)]
    return [_conversation(name, doc) for name, doc in zip(names, documents, strict=True)]


def _line_text(line: dict[str, Any]) -> str:
    text = str(line.get("text", ""))
    caption = line.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def _conversation(name: str, document: dict[str, Any]) -> Conversation:
    dialogue = document.get("conversation", document)
    speaker_a, speaker_b = dialogue["speaker_a"], dialogue["speaker_b"]
    numbers = sorted(
        int(m.group(1))
        for key in dialogue
        if (m := _SESSION.match(key)) and isinstance(dialogue[key], list)
    )
    exchanges: list[Exchange] = []
    lines: dict[str, str] = {}
    for number in numbers:
        date = dialogue.get(f"session_{number}_date_time", "")
        groups: list[tuple[str, list[str]]] = []
        for line in dialogue[f"session_{number}"]:
            text = _line_text(line)
            lines[line["dia_id"]] = normalise(str(line.get("text", "")))[:WINDOW]
            said = f"{line['speaker']}: {text}"
            if groups and groups[-1][0] == line["speaker"]:
                groups[-1][1].append(said)
            else:
                groups.append((line["speaker"], [said]))
        heading = f"[{date}]"
        if groups and groups[0][0] != speaker_a:
            groups.insert(0, (speaker_a, []))
        for index in range(0, len(groups), 2):
            user_lines = groups[index][1]
            if index == 0:
                user_lines = [heading, *user_lines]
            answer = groups[index + 1][1] if index + 1 < len(groups) else None
            exchanges.append(Exchange("\n".join(user_lines), "\n".join(answer) if answer else None))
    questions = []
    for qa in document.get("qa", []):
        evidence = [e for item in qa.get("evidence", []) for e in _EVIDENCE.findall(str(item))]
        questions.append((str(qa["question"]), int(qa.get("category", 0)), evidence))
    return Conversation(name, (speaker_a, speaker_b), exchanges, lines, questions)


class Replay:
    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        recall: bool,
        settled: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.client = client
        self.recall = recall
        #: Awaited between the dialogue and its questions (every message embedded).
        self.settled = settled
        self.tally = Tally()
        self.budget = 0

    def _checked(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = body["messages"]
        self.tally.prompts += 1
        if prompt_tokens(MODEL, messages) > self.budget:
            self.tally.over_budget += 1
        if chat_problems(messages):
            self.tally.invalid += 1
        return messages

    async def _turn(self, base: str, user: str, answer: str | None) -> list[dict[str, Any]] | None:
        started = await self.client.post(
            f"{base}/turns", json={"message": {"role": "user", "content": user}}
        )
        if started.status_code == 422:
            self.tally.refused += 1
            return None
        started.raise_for_status()
        messages = self._checked(started.json())
        assistant = {"content": answer} if answer else {}
        completed = await self.client.post(
            f"{base}/turns/{started.json()['turn_id']}/complete", json={"assistant": assistant}
        )
        completed.raise_for_status()
        return messages

    async def run(self, conversation: Conversation) -> Tally:
        speaker_a, speaker_b = conversation.speakers
        created = await self.client.post(
            "/v1/sessions",
            json={
                "model": MODEL,
                "context_limit": CONTEXT_LIMIT,
                "system": {
                    "global": f"A long-running conversation between {speaker_a} and {speaker_b}."
                },
                "recall": {"enabled": self.recall},
            },
        )
        created.raise_for_status()
        self.budget = created.json()["budget"]["input_budget"]
        base = f"/v1/sessions/{created.json()['id']}"
        for exchange in conversation.exchanges:
            await self._turn(base, exchange.user, exchange.answer)
        if self.settled is not None:
            await self.settled()
        for question, category, evidence in conversation.questions:
            wanted = [conversation.lines[e] for e in evidence if e in conversation.lines]
            if not wanted:
                self.tally.skipped += 1
                continue
            messages = await self._turn(base, question, None)
            text = prompt_text(messages) if messages is not None else ""
            found = [w in text for w in wanted]
            counts = self.tally.by_category.setdefault(category, [0, 0, 0])
            counts[0] += 1
            counts[1] += all(found)
            counts[2] += any(found)
        return self.tally


def _share(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f}%)" if total else "-"


def report(tallies: list[Tally], recall: bool, embeddings: str | None = None) -> str:
    merged: dict[int, list[int]] = {}
    for tally in tallies:
        for category, counts in tally.by_category.items():
            row = merged.setdefault(category, [0, 0, 0])
            for i in range(3):
                row[i] += counts[i]
    lines = [
        f"LoCoMo at {CONTEXT_LIMIT} ({MODEL}), recall {'on' if recall else 'off'}, "
        f"embeddings {embeddings or 'off'}, {len(tallies)} conversations",
        f"{'category':<24}{'evidence: all in prompt':>26}{'any in prompt':>22}",
    ]
    for category in sorted(merged):
        total, every, some = merged[category]
        name = f"{category} {CATEGORIES.get(category, '?')}"
        lines.append(f"  {name:<22}{_share(every, total):>26}{_share(some, total):>22}")
    for label, chosen in (("1-4", [1, 2, 3, 4]), ("all", sorted(merged))):
        rows = [merged[c] for c in chosen if c in merged]
        total, every, some = (sum(r[i] for r in rows) for i in range(3))
        lines.append(f"  {label:<22}{_share(every, total):>26}{_share(some, total):>22}")
    prompts = sum(t.prompts for t in tallies)
    lines.append(
        f"prompts {prompts}: over budget {sum(t.over_budget for t in tallies)}, invalid "
        f"{sum(t.invalid for t in tallies)}, refused {sum(t.refused for t in tallies)}; "
        f"questions without a known evidence line skipped: {sum(t.skipped for t in tallies)}"
    )
    return "\n".join(lines)


async def run(
    conversations: list[Conversation], recall: bool, embeddings_url: str | None = None
) -> list[Tally]:
    """Each conversation replayed in one app; with ``embeddings_url`` (an OpenAI-compatible
    ``/embeddings`` server of all-MiniLM-L6-v2, bench/embeddings_server.py), the app embeds
    every message and the questions wait until it has."""
    tallies = []
    settings: dict[str, Any] = {}
    if embeddings_url:
        settings = {
            "embeddings_base_url": embeddings_url,
            "embeddings_model": EMBEDDINGS_MODEL,
            "embeddings_timeout_seconds": 60.0,
            # What is measured is ranking: on a busy machine the default 1 s for a
            # question's embedding would make some questions rank by full text alone.
            "embeddings_query_timeout_seconds": 30.0,
        }
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/locomo.db"

        async def settled() -> float:
            return await wait_for_embeddings(url)

        async with running_app(url, settings=settings) as client:
            for conversation in conversations:
                started = time.perf_counter()
                replay = Replay(client, recall=recall, settled=settled if embeddings_url else None)
                tallies.append(await replay.run(conversation))
                _progress(conversation, tallies[-1], started)
    return tallies


def _progress(conversation: Conversation, tally: Tally, started: float) -> None:
    asked = sum(c[0] for c in tally.by_category.values())
    found = sum(c[1] for c in tally.by_category.values())
    print(  # noqa: T201
        f"{conversation.name}: {len(conversation.exchanges)} turns, evidence of "
        f"{found}/{asked} questions in prompt, {time.perf_counter() - started:.0f}s",
        file=sys.stderr,
    )


def _indices(text: str) -> list[int]:
    """``0-4`` or ``5,7,9`` (or both, comma-separated): places in the load order."""
    chosen: list[int] = []
    for part in text.split(","):
        first, _, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a list of places: {text!r}") from None
        chosen.extend(i for i in range(low, high + 1) if i not in chosen)
    return chosen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.heldout.locomo", description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="locomo10.json or a folder")
    parser.add_argument("--recall", choices=("on", "off"), default="on")
    parser.add_argument("--limit", type=int, help="only the first N conversations")
    parser.add_argument(
        "--conversations",
        type=_indices,
        help="only these conversations, by place in load order: 0-4, or 5,7,9",
    )
    parser.add_argument(
        "--embeddings-url",
        help="embed with this /embeddings server (python -m bench.embeddings_server: "
        "http://127.0.0.1:8091/v1)",
    )
    args = parser.parse_args(argv)
    conversations = load(args.data)
    if args.conversations is not None:
        chosen = [i for i in args.conversations if i < len(conversations)]
        conversations = [conversations[i] for i in chosen]
    conversations = conversations[: args.limit]
    print(  # noqa: T201
        "conversations: " + ", ".join(c.name for c in conversations), file=sys.stderr
    )
    recall = args.recall == "on"
    tallies = asyncio.run(run(conversations, recall, args.embeddings_url))
    embeddings = EMBEDDINGS_MODEL if args.embeddings_url else None
    print(report(tallies, recall, embeddings))  # noqa: T201


if __name__ == "__main__":
    main()
