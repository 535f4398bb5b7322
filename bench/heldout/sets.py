"""What the second to fifth held-out sets share: the frame a user's detail is made from, the
turns still free, when a correction may come, where the later questions go, and how the
third, fourth and fifth sets build an agent's working turns from their own agents' words.

Each set keeps its own words (frames, phrasings, agents); only the rules that place them are
here, so that a set written apart from the others differs in what users say, not in how a
session is laid out. Moving a set onto these left its sessions byte-identical for a seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from bench.heldout.generator import MIN_QUESTION_GAP, source_window
from bench.heldout.scenario import Question, SourceRole, Step, ToolCall, Turn, shares_a_word

#: A tool's output, drawn afresh each call.
Output = Callable[[random.Random], str]


@dataclass(frozen=True)
class Frame:
    """One detail a user states: its kind, the values it may take, ways of saying it, a
    question that shares a word with it and one in other words."""

    kind: str
    values: tuple[str, ...]
    statements: tuple[str, ...]
    ask_shared: str
    ask_other: str
    #: The fact restated with ``{v}``; set for facts a user may later correct.
    restate: str | None = None
    #: For a detail the user may drop: what dropping it says (``{new}``, and ``{old}`` where
    #: it names it) and the words, in ``{new}``, that then stand in its place.
    retract: tuple[str, str] | None = None


#: (who said it, its turn, the message, the value, (question sharing a word, one not)).
Source = tuple[SourceRole, int, str, str, tuple[str, str]]


def free_turns(slots: dict[int, Turn], start: int, end: int) -> list[int]:
    """The turns in ``[start, end)`` that nothing has been placed in yet."""
    return [t for t in range(start, end) if t not in slots]


def free_pairs(slots: dict[int, Turn], start: int, end: int) -> list[int]:
    """The turns in ``[start, end - 1)`` free together with the turn after them."""
    return [t for t in range(start, end - 1) if t not in slots and t + 1 not in slots]


def correction_start(rng: random.Random, turn: int, limit: int, *, farthest: int) -> int:
    """The first turn a correction of what ``turn`` said may come at: a few turns later, or
    20 to ``farthest`` turns later (when that would pass ``limit``, a few)."""
    if rng.random() >= 0.4 and turn + 30 < limit:
        return turn + rng.randint(20, min(farthest, limit - turn - 10))
    return turn + rng.randint(3, 9)


def ask_later(
    rng: random.Random,
    slots: dict[int, Turn],
    sources: list[Source],
    *,
    turns: int,
    answers: Sequence[str],
    leads: Sequence[str] = (),
) -> list[Question]:
    """Place one question per source in the session's second half, at least
    ``MIN_QUESTION_GAP`` turns after the source; each asks in the source's words or in other
    words, at random, after one of ``leads`` ("quick q: ") when the set has them."""
    questions: list[Question] = []
    rng.shuffle(sources)
    for role, source_turn, text, value, (ask_shared, ask_other) in sources:
        free = free_turns(slots, max(turns // 2, source_turn + MIN_QUESTION_GAP), turns - 1)
        if not free:
            continue
        at = rng.choice(free)
        ask = ask_shared if rng.random() < 0.5 else ask_other
        if leads:
            lead = rng.choice(leads)
            ask = f"{lead}{ask[0].lower()}{ask[1:]}" if lead else ask
        slots[at] = Turn(ask, (), rng.choice(answers), "question")
        questions.append(
            Question(
                at, source_turn, role, value, source_window(text, value), shares_a_word(ask, text)
            )
        )
    return sorted(questions, key=lambda q: q.turn)


# The agents of the third and fourth sets: each set has its own, built from these.


@dataclass(frozen=True)
class Tool:
    definition: dict[str, object]
    arguments: Callable[[random.Random], dict[str, object]]
    outputs: tuple[Output, ...]

    @property
    def name(self) -> str:
        return str(self.definition["function"]["name"])  # type: ignore[index]


@dataclass(frozen=True)
class Detail:
    """Something the assistant states while working (``sentence``), or a tool returns in a
    record (``record``, a template of the tool output), asked about much later."""

    value: Callable[[random.Random], str]
    ask_shared: str
    ask_other: str
    sentence: str = ""
    #: For a tool's detail: which tool, and its output holding ``{v}``.
    tool: str = ""
    record: str = ""


@dataclass(frozen=True)
class Agent:
    name: str
    system: str
    goal: str
    tools: tuple[Tool, ...]
    requests: tuple[str, ...]
    sentences: tuple[str, ...]
    details: tuple[Detail, ...]

    def tool(self, name: str) -> Tool:
        return next(tool for tool in self.tools if tool.name == name)


def pick(*words: str) -> Callable[[random.Random], str]:
    """A value drawn from ``words``."""
    return lambda rng: rng.choice(words)


class AgentWords(Protocol):
    """What a set's agents module says for its agents: the text of a step, a call's id, a
    request, a tool call with its output, the assistant's prose. Each set has its own."""

    @property
    def STEP_TEXTS(self) -> Sequence[str | None]: ...

    def call_id(self, rng: random.Random) -> str: ...

    def request(self, rng: random.Random, agent: Agent) -> str: ...

    def tool_call(
        self, rng: random.Random, agent: Agent
    ) -> tuple[str, dict[str, object], Output]: ...

    def prose(self, rng: random.Random, agent: Agent) -> str: ...


@dataclass(frozen=True)
class WorkingTurns:
    """An agent's working turns as the third, fourth and fifth sets lay them out, in the words
    of a set's agents module; the sets differ only in how many calls a step makes, drawn
    uniformly from ``calls_per_step``. Every draw is made in the order the sets made it
    when each had its own copy, so a seed's session stays the same, byte for byte."""

    words: AgentWords
    calls_per_step: tuple[int, ...]

    def step(self, rng: random.Random, agent: Agent) -> Step:
        """One LLM call that asked for tools: its calls and their results."""
        calls, results = [], []
        for _ in range(rng.choice(self.calls_per_step)):
            name, arguments, output = self.words.tool_call(rng, agent)
            call_id = self.words.call_id(rng)
            calls.append(ToolCall(call_id, name, json.dumps(arguments, ensure_ascii=False)))
            results.append(output(rng))
        return Step(rng.choice(self.words.STEP_TEXTS), tuple(calls), tuple(results))

    def routine(self, rng: random.Random, agent: Agent, answer: str | None = None) -> Turn:
        """A request, zero to three steps, and the answer (``answer``, or prose)."""
        steps = tuple(self.step(rng, agent) for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))))
        return Turn(
            self.words.request(rng, agent), steps, answer or self.words.prose(rng, agent), "routine"
        )

    def tool_detail(self, rng: random.Random, agent: Agent, detail: Detail, value: str) -> Turn:
        """A routine turn one of whose tool calls returns the record that holds ``value``."""
        tool = agent.tool(detail.tool)
        call_id = self.words.call_id(rng)  # drawn before the arguments, as the sets drew it
        arguments = json.dumps(tool.arguments(rng), ensure_ascii=False)
        call = ToolCall(call_id, tool.name, arguments)
        step = Step(rng.choice(self.words.STEP_TEXTS), (call,), (detail.record.format(v=value),))
        steps = (
            *(self.step(rng, agent) for _ in range(rng.choice((0, 1)))),
            step,
            *(self.step(rng, agent) for _ in range(rng.choice((0, 0, 1)))),
        )
        return Turn(self.words.request(rng, agent), steps, self.words.prose(rng, agent), "routine")
