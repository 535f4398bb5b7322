"""A synthetic tool-using conversation, the same for every seed, to feed contextd and the
in-process libraries it is compared with.

Each turn is a user message, zero or more tool steps (an assistant message with tool calls,
then one result per call) and the assistant's answer. Tool results are mostly small with a
long tail up to several thousand tokens. Early turns plant facts, decisions and open
questions, each carrying a marker string (e.g. ``FACT-03-QZKA``) so that a later prompt can
be searched for it.

Only the standard library is used here: the unit tests import this module without the
``bench`` extra.
"""

from __future__ import annotations

import json
import math
import random
import string
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]

SYSTEM = "You are a careful travel assistant. Use the tools to check before you answer."

#: Common English words: with tiktoken's encodings almost every one is a single token.
_VOCABULARY = (
    "the",
    "a",
    "to",
    "of",
    "and",
    "in",
    "for",
    "on",
    "with",
    "at",
    "by",
    "from",
    "about",
    "after",
    "before",
    "hotel",
    "flight",
    "train",
    "room",
    "price",
    "city",
    "river",
    "station",
    "airport",
    "museum",
    "dinner",
    "lunch",
    "breakfast",
    "morning",
    "evening",
    "night",
    "week",
    "day",
    "ticket",
    "seat",
    "window",
    "aisle",
    "bag",
    "transfer",
    "tour",
    "guide",
    "map",
    "street",
    "bridge",
    "park",
    "beach",
    "north",
    "south",
    "east",
    "west",
    "early",
    "late",
    "cheap",
    "quick",
    "quiet",
    "large",
    "small",
    "near",
    "far",
    "open",
    "closed",
    "booking",
    "option",
    "list",
    "result",
    "rating",
    "review",
    "stars",
    "guest",
    "adult",
    "child",
    "family",
    "group",
    "meeting",
    "client",
    "team",
    "plan",
    "trip",
    "route",
    "stop",
    "change",
    "delay",
    "gate",
    "terminal",
    "coffee",
    "view",
    "garden",
    "pool",
    "check",
    "available",
    "confirm",
    "cancel",
    "refund",
    "policy",
    "total",
    "rate",
    "tax",
    "fee",
    "included",
    "extra",
    "free",
    "walk",
    "drive",
    "car",
    "taxi",
    "bus",
    "metro",
    "line",
    "platform",
    "arrive",
    "depart",
    "return",
    "single",
    "double",
    "twin",
)
_TOOLS = ("search_hotels", "search_flights", "get_weather", "lookup_booking", "find_restaurants")


@dataclass(frozen=True)
class Planted:
    """Something said early that a good context should still carry much later."""

    kind: str  # "fact" | "decision" | "question"
    marker: str
    turn: int  # 0-based index of the turn that states it
    text: str


@dataclass(frozen=True)
class ToolStep:
    assistant: Message  # role assistant, content None, tool_calls
    results: tuple[Message, ...]  # role tool, one per call

    def body(self) -> dict[str, Any]:
        """The request body of POST /v1/sessions/{id}/turns/{turn_id}/steps."""
        return {
            "assistant": {"content": None, "tool_calls": self.assistant["tool_calls"]},
            "tool_results": [
                {"tool_call_id": r["tool_call_id"], "content": r["content"]} for r in self.results
            ],
        }


@dataclass(frozen=True)
class Turn:
    user: Message
    steps: tuple[ToolStep, ...]
    answer: Message

    def messages(self) -> list[Message]:
        flat = [self.user]
        for step in self.steps:
            flat.append(step.assistant)
            flat.extend(step.results)
        flat.append(self.answer)
        return flat

    def start_body(self) -> dict[str, Any]:
        """The request body of POST /v1/sessions/{id}/turns."""
        return {"message": {"role": "user", "content": self.user["content"]}}

    def complete_body(self) -> dict[str, Any]:
        """The request body of POST /v1/sessions/{id}/turns/{turn_id}/complete."""
        return {"assistant": {"content": self.answer["content"]}}


@dataclass(frozen=True)
class Conversation:
    seed: int
    system: str
    turns: tuple[Turn, ...]
    planted: tuple[Planted, ...] = field(default=())

    def messages(self) -> list[Message]:
        """Every message in order, without the system message."""
        return [m for turn in self.turns for m in turn.messages()]

    def chat(self) -> list[Message]:
        """The whole conversation as one OpenAI chat list, system message first."""
        return [{"role": "system", "content": self.system}, *self.messages()]


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(_VOCABULARY) for _ in range(count))


def _marker(rng: random.Random, prefix: str, index: int) -> str:
    return f"{prefix}-{index:02d}-" + "".join(rng.choice(string.ascii_uppercase) for _ in range(4))


def tool_result_tokens(rng: random.Random) -> int:
    """About how many tokens a tool returns: mostly tens to a few hundred, now and then
    thousands (a log-normal, capped at 6,000)."""
    return max(8, min(6000, round(math.exp(rng.gauss(4.6, 1.1)))))


def _tool_result(rng: random.Random, turn: int, tokens: int) -> str:
    lines = []
    written = 0
    row = 0
    while written < tokens:
        size = rng.randint(8, 30)
        code = f"H-{turn}{row:03d}"
        lines.append(f"{row}. {code} {rng.randint(40, 900)} EUR {_words(rng, size)}")
        written += size + 8
        row += 1
    return "\n".join(lines)


def _plant(rng: random.Random, kind: str, index: int, turn: int) -> Planted:
    if kind == "fact":
        marker = _marker(rng, "FACT", index)
        city = rng.choice(("Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao"))
        text = (
            f"For the record, my loyalty number for {city} bookings is {marker} and my "
            f"budget there is {rng.randint(3, 40) * 100} EUR."
        )
    elif kind == "decision":
        marker = _marker(rng, "DEC", index)
        text = (
            f"We decided to go with option {marker}: the {_words(rng, 2)} hotel, "
            f"checking in at {rng.randint(12, 18)}:00."
        )
    else:
        marker = _marker(rng, "OPEN", index)
        text = (
            f"Still open ({marker}): should the transfer on day {rng.randint(2, 9)} leave "
            f"at {rng.randint(6, 11)}am or later?"
        )
    return Planted(kind, marker, turn, text)


def generate(
    turns: int,
    seed: int = 0,
    *,
    facts: int = 6,
    decisions: int = 4,
    questions: int = 4,
    plant_within: int = 12,
) -> Conversation:
    """``turns`` turns; the planted items are stated in the first ``plant_within`` turns
    (facts and questions by the user, decisions in the assistant's answer)."""
    rng = random.Random(seed)
    planted_rng = random.Random(seed * 7919 + 1)
    kinds = ["fact"] * facts + ["decision"] * decisions + ["question"] * questions
    # Planned over ``plant_within`` turns whatever ``turns`` is, so that a shorter
    # conversation of a seed is a prefix of a longer one.
    slots = sorted(planted_rng.sample(range(plant_within * 2), len(kinds)))
    planted: list[Planted] = []
    counters = {"fact": 0, "decision": 0, "question": 0}
    for kind, slot in zip(planted_rng.sample(kinds, len(kinds)), slots, strict=True):
        counters[kind] += 1
        planted.append(_plant(planted_rng, kind, counters[kind], slot // 2))
    built: list[Turn] = []
    for number in range(turns):
        here = [p for p in planted if p.turn == number]
        user_parts = [f"Turn {number}: {_words(rng, rng.randint(8, 90))}."]
        user_parts += [p.text for p in here if p.kind != "decision"]
        steps = []
        for step in range(rng.choice((0, 1, 1, 1, 2, 3))):
            calls = [
                {
                    "id": f"call_{number}_{step}_{i}",
                    "type": "function",
                    "function": {
                        "name": rng.choice(_TOOLS),
                        "arguments": json.dumps({"query": _words(rng, rng.randint(2, 6))}),
                    },
                }
                for i in range(rng.choice((1, 1, 1, 2)))
            ]
            results = tuple(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": _tool_result(rng, number, tool_result_tokens(rng)),
                }
                for call in calls
            )
            steps.append(
                ToolStep({"role": "assistant", "content": None, "tool_calls": calls}, results)
            )
        answer_parts = [_words(rng, rng.randint(10, 140)) + "."]
        answer_parts += [p.text for p in here if p.kind == "decision"]
        built.append(
            Turn(
                {"role": "user", "content": " ".join(user_parts)},
                tuple(steps),
                {"role": "assistant", "content": " ".join(answer_parts)},
            )
        )
    kept = tuple(p for p in planted if p.turn < turns)
    return Conversation(seed, SYSTEM, tuple(built), kept)


def with_messages(count: int, seed: int = 0) -> Conversation:
    """The shortest conversation of this seed with at least ``count`` messages (whole turns)."""
    full = generate(max(4, count // 2), seed)
    total = 0
    for index, turn in enumerate(full.turns):
        total += len(turn.messages())
        if total >= count:
            planted = tuple(p for p in full.planted if p.turn <= index)
            return Conversation(seed, full.system, full.turns[: index + 1], planted)
    raise AssertionError("a turn holds at least 2 messages")
