"""A synthetic tool-using conversation, the same for every seed, to feed contextd and the
in-process libraries it is compared with.

Each turn is a user message, zero or more tool steps (an assistant message with tool calls,
then one result per call) and the assistant's answer. Tool results are mostly small with a
long tail up to several thousand tokens. Early turns plant facts, decisions and open
questions, each carrying a marker string (e.g. ``FACT-03-QZKA``) so that a later prompt can
be searched for it.

On request (``user_facts_per_kind``), early turns also carry what a user says about themselves and
their plans without any number or identifier: the name they go by, where they live, a family
member, a preference, a constraint, a decision. Each has a short probe string (the name, the
city, the allergen…) to look for in a later prompt, and tool output mentions other values of
the same kinds (other cities, other names, a review written in the first person), so that a
prompt holding tool output does not pass for one holding what the user said.

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


#: The kinds of user-stated facts, in the order the benchmark reports them.
USER_FACT_KINDS = ("name", "place", "relation", "preference", "constraint", "decision")

#: Per kind: the values a fact can take, each ``(probe, value)``. A session's planted facts
#: and its distractors are drawn from the same list without overlap. No probe is a word of
#: the filler vocabulary, nor a substring of another probe.
_USER_VALUES: dict[str, tuple[tuple[str, str], ...]] = {
    "name": tuple(
        (name, name)
        for name in (
            "Wren",
            "Tamsin",
            "Odile",
            "Bartholomew",
            "Ximena",
            "Caspian",
            "Marisol",
            "Leofric",
            "Anouk",
            "Thaddeus",
        )
    ),
    "place": tuple(
        (city, city)
        for city in (
            "Ljubljana",
            "Tallinn",
            "Groningen",
            "Trondheim",
            "Bratislava",
            "Coimbra",
            "Lausanne",
            "Aarhus",
            "Gdansk",
            "Salzburg",
        )
    ),
    "relation": tuple(
        (name, f"{member}|{name}")
        for member, name in (
            ("sister", "Ines"),
            ("brother", "Bruno"),
            ("mother", "Maud"),
            ("father", "Florian"),
            ("daughter", "Greta"),
            ("son", "Cosimo"),
            ("grandmother", "Ottilie"),
            ("partner", "Yannick"),
            ("aunt", "Philippa"),
            ("nephew", "Dorian"),
        )
    ),
    "preference": (
        ("aisle seats", "aisle seats"),
        ("quiet rooms", "quiet rooms away from the lift"),
        ("vegetarian", "vegetarian restaurants"),
        ("boutique hotels", "boutique hotels over chains"),
        ("trains over planes", "trains over planes"),
        ("balcony", "a room with a balcony"),
        ("late checkout", "a late checkout"),
        ("ground floor", "a ground floor room"),
    ),
    "constraint": (
        ("peanuts", "allergy|peanuts"),
        ("shellfish", "allergy|shellfish"),
        ("penicillin", "allergy|penicillin"),
        ("sesame", "allergy|sesame"),
        ("red-eye", "rule|never book red-eye flights"),
        ("stairs", "rule|no hotels without a lift, I cannot manage stairs"),
        ("tight budget", "rule|keep it cheap, we are on a tight budget"),
        ("overnight layovers", "rule|no overnight layovers"),
    ),
    "decision": (
        ("Postgres", "use Postgres for the booking records"),
        ("ferry", "take the ferry to the islands"),
        ("rental car", "hire a rental car for the coast"),
        ("riverside guesthouse", "stay at the riverside guesthouse"),
        ("cooking class", "book the cooking class instead of the museum"),
        ("travel insurance", "buy travel insurance for everyone"),
        ("walking tour", "skip the walking tour"),
        ("sleeper train", "go north on the sleeper train"),
    ),
}

#: Several ways a user says each kind; ``{v}`` is the value (``{a}``/``{b}`` its two parts).
_USER_PHRASINGS: dict[str, tuple[str, ...]] = {
    "name": (
        "Please call me {v} from now on.",
        "I go by {v}, not my full name.",
        "You can call me {v}.",
        "My name is {v}, by the way.",
    ),
    "place": (
        "I live in {v}.",
        "I'm based in {v} these days.",
        "Home for me is {v}, so every trip starts there.",
        "We moved to {v} last spring.",
    ),
    "relation": (
        "My {a} is called {b}.",
        "I'm travelling with my {a}, {b}.",
        "{b} is my {a} and comes along on this trip.",
        "My {a} {b} will join us.",
    ),
    "preference": (
        "I prefer {v}.",
        "I'd much rather have {v}.",
        "Whenever you can, pick {v} for me.",
        "My preference is {v}, whenever possible.",
    ),
    "allergy": (
        "I'm allergic to {v}.",
        "I have a serious allergy to {v}.",
        "Please remember that I can't eat {v}, I'm allergic.",
    ),
    "rule": (
        "Please {v}.",
        "One rule for me: {v}.",
        "Keep this in mind: {v}.",
    ),
    "decision": (
        "We decided to {v}.",
        "I've made up my mind: we {v}.",
        "Final answer from me, we'll {v}.",
        "I promised the others we would {v}.",
    ),
}

#: How a tool's output mentions a value of each kind (other cities, names, dishes…).
_DISTRACTORS: dict[str, tuple[str, ...]] = {
    "name": ("Guest on file: {v}.", "Review by {v}: I loved the breakfast."),
    "place": ("Also available in {v}.", "Review: I live in {v} and the room was fine."),
    "relation": ("Booked for the {a} of the guest, {b}.", "Contact person: {b}."),
    "preference": ("Popular with guests: {v}.", "Tag: {v}."),
    "allergy": ("Menu note: contains {p}.", "Review: I had the {p} dish, lovely."),
    "rule": ("Provider policy: {b}.", "Other travellers asked us to {b}."),
    "decision": ("Suggested add-on: {v}.", "Other travellers chose to {v}."),
}


@dataclass(frozen=True)
class UserFact:
    """Something the user says about themselves or their plans, with no number in it."""

    kind: str  # one of USER_FACT_KINDS
    probe: str  # what a prompt that still carries the fact contains
    turn: int  # 0-based index of the turn whose user message states it
    text: str


def _phrase(rng: random.Random, kind: str, value: str) -> str:
    if kind == "constraint":
        sort, value = value.split("|", 1)
        text = rng.choice(_USER_PHRASINGS[sort]).format(v=value)
    elif kind == "relation":
        member, name = value.split("|", 1)
        text = rng.choice(_USER_PHRASINGS[kind]).format(a=member, b=name)
    else:
        text = rng.choice(_USER_PHRASINGS[kind]).format(v=value)
    return text[0].upper() + text[1:]


def _distractor(rng: random.Random, kind: str, probe: str, value: str) -> str:
    parts = value.split("|", 1)
    shape = rng.choice(_DISTRACTORS[parts[0] if kind == "constraint" else kind])
    return shape.format(v=value, a=parts[0], b=parts[-1], p=probe)


def user_facts(
    seed: int, per_kind: int, plant_within: int = 12
) -> tuple[tuple[UserFact, ...], tuple[tuple[str, str, str], ...]]:
    """The user-stated facts of a seed, ``per_kind`` of each kind, stated in the first
    ``plant_within`` turns, and the distractors (kind, probe, value) that tool output may
    mention: the other values of the same kinds."""
    rng = random.Random(seed * 104_729 + 17)
    facts: list[UserFact] = []
    distractors: list[tuple[str, str, str]] = []
    for kind in USER_FACT_KINDS:
        values = list(_USER_VALUES[kind])
        rng.shuffle(values)
        for probe, value in values[:per_kind]:
            turn = rng.randrange(plant_within)
            facts.append(UserFact(kind, probe, turn, _phrase(rng, kind, value)))
        if per_kind:
            distractors += [(kind, probe, value) for probe, value in values[per_kind:]]
    facts.sort(key=lambda fact: fact.turn)
    return tuple(facts), tuple(distractors)


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
    user_facts: tuple[UserFact, ...] = field(default=())

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
    user_facts_per_kind: int = 0,
) -> Conversation:
    """``turns`` turns; the planted items are stated in the first ``plant_within`` turns
    (facts and questions by the user, decisions in the assistant's answer). With
    ``user_facts_per_kind``, the user also states that many facts of each of
    :data:`USER_FACT_KINDS` in those turns, and about one tool result in four mentions a
    distractor; without, the conversation is the same as ever."""
    rng = random.Random(seed)
    stated, distractors = user_facts(seed, user_facts_per_kind, plant_within)
    # Their own generator: the rest of the conversation is the same with or without them.
    distracting = random.Random(seed * 31 + 5)
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
        user_parts += [fact.text for fact in stated if fact.turn == number]
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
                    "content": _tool_result(rng, number, tool_result_tokens(rng))
                    + _distracting_line(distracting, distractors),
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
    said = tuple(fact for fact in stated if fact.turn < turns)
    return Conversation(seed, SYSTEM, tuple(built), kept, said)


def _distracting_line(rng: random.Random, distractors: tuple[tuple[str, str, str], ...]) -> str:
    if not distractors or rng.random() >= 0.25:
        return ""
    kind, probe, value = rng.choice(distractors)
    return "\n" + _distractor(rng, kind, probe, value)


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
