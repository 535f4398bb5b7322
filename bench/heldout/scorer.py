"""Drives the real app as an agent would and checks every prompt it gets back.

How things are matched (all on text made by :func:`bench.heldout.scenario.normalise`: NFKC,
case-folded, dashes unified, white space collapsed; accents kept):

- A fact is *present* when its value (the corrected value for a corrected fact) occurs as a
  whole word sequence anywhere in the last prompt's text: raw message, summary or recall.
- A corrected fact's old value is *presented as current* when some line of the last prompt
  (lines split at newlines and semicolons) holds the old value without the new one; a line that
  names both ("not X: Y", "used to be X") is history, not a current fact. A fact corrected
  twice has two old values: either one alone on a line counts.
- A question's *source is in its prompt* when the prompt holds the source message's own words
  around the detail (30 characters either side); the *answer is in its prompt* when the
  detail's value is, in whatever words.
- A prompt is *over budget* when OpenAI's counting rules (tiktoken, the cookbook's message
  overheads, the tool definitions) give more than the session's ``input_budget``; *invalid*
  when it breaks OpenAI's chat rules: a ``tool`` message must answer a call of the assistant
  message before it (only tool messages in between), and every call must have its answer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from bench.heldout.generator import value_pattern
from bench.heldout.scenario import Question, Scenario, normalise
from tests.openai_counting import prompt_tokens

_PIECES = re.compile(r"[\n;]")


def prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Every word the model is shown, normalised."""
    texts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
        for call in message.get("tool_calls") or ():
            texts.append(str(call.get("function", {}).get("arguments", "")))
    return normalise("\n".join(texts).replace("\n", " \n "))


def _lines(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    raw = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            raw.append(content)
        elif isinstance(content, list):
            raw.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return [normalise(piece) for text in raw for piece in _PIECES.split(text)]


def chat_problems(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where ``messages`` break OpenAI's chat-completions rules for tool calls."""
    problems = []
    open_calls: set[str] = set()
    previous_role = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call = message.get("tool_call_id")
            if previous_role not in ("assistant", "tool") or call not in open_calls:
                problems.append(f"message {index}: tool result {call} answers no call before it")
            open_calls.discard(str(call))
        else:
            if open_calls:
                problems.append(f"message {index}: calls {sorted(open_calls)} have no result")
            open_calls = {c["id"] for c in message.get("tool_calls") or ()}
        previous_role = role
    if open_calls:
        problems.append(f"end: calls {sorted(open_calls)} have no result")
    return problems


@dataclass
class QuestionResult:
    shares_word: bool
    source_role: str
    source_present: bool
    answer_present: bool
    kind: str = ""
    turn: int = 0


@dataclass
class SessionResult:
    seed: int
    recall: bool
    #: kind -> (present, total)
    facts: dict[str, list[int]] = field(default_factory=dict)
    corrections: int = 0
    correction_new_present: int = 0
    correction_old_current: int = 0
    #: style -> (corrections, new value present, old value presented as current), for a set
    #: that labels how each correction was made.
    by_style: dict[str, list[int]] = field(default_factory=dict)
    questions: list[QuestionResult] = field(default_factory=list)
    prompts: int = 0
    over_budget: int = 0
    invalid: int = 0
    refused: int = 0
    max_share: float = 0.0
    #: The control: facts (and corrections) found in the prompt of the very turn that states
    #: them, where they must be; less than all means the matching, not contextd, is wrong.
    stated_found: int = 0
    stated: int = 0
    problems: list[str] = field(default_factory=list)
    agent: str = ""


class Agent:
    """Posts a scenario's turns as an agent would and checks what comes back."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        scenario: Scenario,
        *,
        recall: bool,
        settled: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.client = client
        self.scenario = scenario
        #: Awaited before a turn that asks a question (every message embedded by then).
        self.settled = settled
        self.result = SessionResult(scenario.seed, recall, agent=scenario.agent)
        self.budget = 0
        self.session = ""

    def _check(self, where: str, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = body["messages"]
        result = self.result
        result.prompts += 1
        tokens = prompt_tokens(self.scenario.model, messages, self.scenario.tools)
        result.max_share = max(result.max_share, tokens / self.budget)
        if tokens > self.budget:
            result.over_budget += 1
            result.problems.append(f"{where}: {tokens} tokens over {self.budget}")
        problems = chat_problems(messages)
        if problems:
            result.invalid += 1
            result.problems.append(f"{where}: {problems[0]}")
        return messages

    async def run(self) -> SessionResult:
        scenario = self.scenario
        created = await self.client.post(
            "/v1/sessions",
            json={
                "model": scenario.model,
                "context_limit": scenario.context_limit,
                "system": scenario.system,
                "goal": scenario.goal,
                "tools": scenario.tools,
                "recall": {"enabled": self.result.recall},
            },
        )
        created.raise_for_status()
        self.session = created.json()["id"]
        self.budget = created.json()["budget"]["input_budget"]
        questions: dict[int, list[Question]] = {}
        for question in scenario.questions:
            questions.setdefault(question.turn, []).append(question)
        # A turn may state more than one value (two facts in one message).
        stated: dict[int, list[str]] = {}
        for fact in scenario.facts:
            stated.setdefault(fact.turn, []).append(fact.value)
            for value, said in fact.superseded:
                stated.setdefault(said, []).append(value)
            if fact.corrected_to is not None and fact.correction_turn is not None:
                stated.setdefault(fact.correction_turn, []).append(fact.corrected_to)
        last: list[dict[str, Any]] = []
        base = f"/v1/sessions/{self.session}"
        for index, turn in enumerate(scenario.turns):
            if self.settled is not None and index in questions:
                await self.settled()
            started = await self.client.post(
                f"{base}/turns", json={"message": {"role": "user", "content": turn.user}}
            )
            if started.status_code == 422:
                self.result.refused += 1
                self.result.problems.append(f"turn {index}: {started.json()['error']['code']}")
                continue
            started.raise_for_status()
            turn_id = started.json()["turn_id"]
            last = self._check(f"turn {index}", started.json())
            for question in questions.get(index, ()):
                self._score_question(question, last)
            for value in stated.get(index, ()):
                self.result.stated += 1
                self.result.stated_found += bool(value_pattern(value).search(prompt_text(last)))
            for number, step in enumerate(turn.steps, 1):
                posted = await self.client.post(
                    f"{base}/turns/{turn_id}/steps",
                    json={
                        "assistant": {
                            "content": step.content,
                            "tool_calls": [
                                {
                                    "id": call.id,
                                    "type": "function",
                                    "function": {"name": call.name, "arguments": call.arguments},
                                }
                                for call in step.calls
                            ],
                        },
                        "tool_results": [
                            {"tool_call_id": call.id, "content": output}
                            for call, output in zip(step.calls, step.results, strict=True)
                        ],
                    },
                )
                if posted.status_code == 422:
                    self.result.refused += 1
                    self.result.problems.append(
                        f"turn {index} step {number}: {posted.json()['error']['code']}"
                    )
                    break
                posted.raise_for_status()
                self._check(f"turn {index} step {number}", posted.json())
            completed = await self.client.post(
                f"{base}/turns/{turn_id}/complete", json={"assistant": {"content": turn.answer}}
            )
            completed.raise_for_status()
        self._score_facts(last)
        return self.result

    def _score_question(self, question: Question, messages: list[dict[str, Any]]) -> None:
        text = prompt_text(messages)
        self.result.questions.append(
            QuestionResult(
                shares_word=question.shares_word,
                source_role=question.source_role,
                source_present=question.source_window in text,
                answer_present=bool(value_pattern(question.value).search(text)),
                kind=question.kind,
                turn=question.turn,
            )
        )

    def _score_facts(self, messages: list[dict[str, Any]]) -> None:
        text = prompt_text(messages)
        lines = _lines(messages)
        for fact in self.scenario.facts:
            current = fact.corrected_to or fact.value
            present = bool(value_pattern(current).search(text))
            counts = self.result.facts.setdefault(fact.kind, [0, 0])
            counts[0] += present
            counts[1] += 1
            if fact.corrected_to is None:
                continue
            self.result.corrections += 1
            self.result.correction_new_present += present
            olds = [value_pattern(value) for value in fact.old_values]
            new = value_pattern(fact.corrected_to)
            shown = any(old.search(line) and not new.search(line) for line in lines for old in olds)
            self.result.correction_old_current += shown
            if fact.style:
                row = self.result.by_style.setdefault(fact.style, [0, 0, 0])
                row[0] += 1
                row[1] += present
                row[2] += shown
