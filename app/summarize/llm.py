"""An abstractive summariser over any OpenAI-compatible chat-completions API.

The model is asked for the seed 003 §7 contract as JSON and its answer is validated: an answer
that is not the contract (or that is an apology or an error message dressed as one) gets one
repair request, then the summariser raises and the caller falls back (seed 003 §9). A valid
summary keeps what the previous one established (:func:`app.budget.carryover.carry_over`) and
is token-counted: over its target, the model is asked again for a shorter one, a bounded
number of times.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.budget.carryover import carry_over
from app.budget.summary import SummaryContent, SummaryItem, render_summary
from app.metrics import Metrics
from app.summarize.base import SummaryRequest
from app.upstream import api_client

logger = logging.getLogger(__name__)

Outcome = Literal["ok", "repaired", "fallback", "timeout"]

SYSTEM_PROMPT = """\
You summarise the earlier part of a conversation between a user and an AI agent, so that the \
agent can continue without the raw messages. Answer with ONE JSON object and nothing else:
{"summary_text": "<a short narrative>",
 "key_facts": [{"text": "...", "source_message_ids": [<ids>], "from_user": true|false}],
 "decisions": [...], "open_questions": [...], "action_items": [...]}
Rules, most important first:
- What the USER said about themselves and their work comes first: the name they go by, where \
they live, their family and colleagues, preferences, constraints (allergies, budgets, things \
never to do), decisions, commitments, and their questions still open. Keep each in the user's \
own words (verbatim or lightly shortened), mark it "from_user": true, and keep it whether or \
not it contains a number. Nothing read from tool output is "from_user".
- Fold the new messages into the previous summary (if any). Keep EVERY item of the previous \
summary marked "from_user", and every key fact, decision and open question, with its \
source_message_ids and its "from_user" mark, unless a newer message contradicts it.
- A question that a later message answers is no longer open: if the user asked it, keep it \
as a key fact with "from_user": true.
- When space is short, give up facts read from tool output and narrative first, then shorten \
the oldest user statements; never drop a user statement.
- Keep specifics verbatim: numbers, dates, names, identifiers, file paths, URLs.
- source_message_ids cite only ids shown to you (a message's "id", or the ids an item of the \
previous summary already cites).
- Stay within the token limit given."""

#: Openings of an answer that is an apology or an error, not a summary.
_ERROR_TEXT = re.compile(
    r"^\s*(i'?m sorry|i am sorry|sorry\b|i apologi[sz]e|as an ai\b|i can(no|')t\b|"
    r"i am unable|i'?m unable|error\s*[:\-]|an error (has )?occurred|internal server error|"
    r"bad gateway|service unavailable|gateway timeout|rate limit|too many requests|"
    r"http \d{3}|\d{3} (internal|bad|service|gateway|not found|forbidden|unauthori[sz]ed))",
    re.IGNORECASE,
)


class SummarizerError(Exception):
    """The summariser gave no usable summary; the caller falls back."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(min_length=1, max_length=2000)
    source_message_ids: list[int] = Field(default_factory=list)
    from_user: bool = False


class _Contract(BaseModel):
    """Seed 003 §7, as the model must return it."""

    model_config = ConfigDict(extra="ignore")

    summary_text: str = Field(max_length=20_000)
    key_facts: list[_Item] = Field(default_factory=list)
    decisions: list[_Item] = Field(default_factory=list)
    open_questions: list[_Item] = Field(default_factory=list)
    action_items: list[_Item] = Field(default_factory=list)

    @field_validator("summary_text")
    @classmethod
    def _not_error_text(cls, value: str) -> str:
        if _ERROR_TEXT.match(value):
            raise ValueError("summary_text reads as an error or a refusal, not a summary")
        return value


def parse_answer(answer: str) -> _Contract:
    """The contract from a model's answer (a ```json fence around it is tolerated)."""
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if _ERROR_TEXT.match(text):
        raise ValueError("the answer is an error or a refusal, not a summary")
    contract = _Contract.model_validate_json(text)
    items = (
        *contract.key_facts,
        *contract.decisions,
        *contract.open_questions,
        *contract.action_items,
    )
    if not contract.summary_text.strip() and not items:
        raise ValueError("the summary is empty")
    # A user may well open with an apology ("sorry, I can't do Tuesdays"): an item that is
    # the user's own words or cites the message it came from is content, not the model's
    # refusal, and refusing the whole summary over it would lose every other item.
    if any(
        _ERROR_TEXT.match(item.text) and not item.from_user and not item.source_message_ids
        for item in items
    ):
        raise ValueError("an item reads as an error or a refusal")
    return contract


def _content(contract: _Contract, known_ids: frozenset[int]) -> SummaryContent:
    """The validated answer as domain data; ids the model was never shown are dropped."""

    def items(raw: list[_Item]) -> tuple[SummaryItem, ...]:
        return tuple(
            SummaryItem(
                " ".join(item.text.split()),
                tuple(dict.fromkeys(i for i in item.source_message_ids if i in known_ids)),
                from_user=item.from_user,
            )
            for item in raw
            if item.text.strip()
        )

    return SummaryContent(
        summary_text=" ".join(contract.summary_text.split()),
        key_facts=items(contract.key_facts),
        decisions=items(contract.decisions),
        open_questions=items(contract.open_questions),
        action_items=items(contract.action_items),
    )


def _summary_json(content: SummaryContent) -> dict[str, Any]:
    def items(raw: tuple[SummaryItem, ...]) -> list[dict[str, Any]]:
        return [
            {"text": i.text, "source_message_ids": list(i.source_message_ids)}
            | ({"from_user": True} if i.from_user else {})
            for i in raw
        ]

    return {
        "summary_text": content.summary_text,
        "key_facts": items(content.key_facts),
        "decisions": items(content.decisions),
        "open_questions": items(content.open_questions),
        "action_items": items(content.action_items),
    }


def request_prompt(request: SummaryRequest) -> str:
    """The user message: the previous summary, the messages to fold in, and the limit."""
    return json.dumps(
        {
            "previous_summary": _summary_json(request.previous) if request.previous else None,
            "messages": [
                {"id": m.message_id, "role": m.role, "text": m.text} for m in request.messages
            ],
            "max_tokens": request.target_tokens,
        },
        ensure_ascii=False,
    )


class LLMSummarizer:
    """Summaries by a chat model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_seconds: float = 60.0,
        max_attempts: int = 3,
        shorten_attempts: int = 2,
        metrics: Metrics | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._client = api_client(
            base_url=base_url, api_key=api_key, timeout_seconds=timeout_seconds, transport=transport
        )
        self.model = model
        self.max_attempts = max_attempts
        self.shorten_attempts = shorten_attempts
        self.metrics = metrics

    @property
    def name(self) -> str:
        return f"llm:{self.model}"[:64]

    async def aclose(self) -> None:
        await self._client.aclose()

    def _record(self, outcome: Outcome, started: float) -> None:
        if self.metrics is not None:
            self.metrics.summarizer_latency.observe(time.perf_counter() - started)
            self.metrics.summarizer_outcomes.labels(outcome).inc()

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        started = time.perf_counter()
        try:
            content, repaired = await self._summarize(request)
        except httpx.TimeoutException as error:
            self._record("timeout", started)
            raise SummarizerError(f"the summariser timed out: {type(error).__name__}") from error
        except Exception:
            self._record("fallback", started)
            raise
        self._record("repaired" if repaired else "ok", started)
        return content

    async def _summarize(self, request: SummaryRequest) -> tuple[SummaryContent, bool]:
        known = frozenset(m.message_id for m in request.messages) | (
            request.previous.anchor_message_ids() | _action_ids(request.previous)
            if request.previous
            else frozenset()
        )
        conversation: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": request_prompt(request)},
        ]
        repaired = False
        for shortening in range(self.shorten_attempts + 1):
            answer = await self._complete(conversation)
            try:
                contract = parse_answer(answer)
            except (ValidationError, ValueError) as error:
                if repaired:
                    raise SummarizerError("the repaired answer is still not a summary") from error
                repaired = True
                logger.info("summariser answer invalid, asking for a repair: %s", error)
                conversation += [
                    {"role": "assistant", "content": answer[:4000]},
                    {
                        "role": "user",
                        "content": "That answer is not valid: "
                        f"{str(error)[:500]}. Answer again with only the JSON object.",
                    },
                ]
                answer = await self._complete(conversation)
                try:
                    contract = parse_answer(answer)
                except (ValidationError, ValueError) as second:
                    raise SummarizerError("the repaired answer is still not a summary") from second
            last_try = shortening == self.shorten_attempts
            # The model gets to shorten its own summary first; on the last try the carried
            # facts are kept and the new items give way (carry_over's trimming).
            content = carry_over(
                request.previous,
                _content(contract, known),
                target_tokens=request.target_tokens if last_try else None,
                counter=request.counter,
            )
            tokens = request.counter.count_text(render_summary(content))
            if tokens <= request.target_tokens:
                return content, repaired
            if not last_try:
                conversation += [
                    {"role": "assistant", "content": answer[:8000]},
                    {
                        "role": "user",
                        "content": f"That summary is {tokens} tokens, over the limit of "
                        f"{request.target_tokens}. Answer again, shorter, keeping every "
                        "statement of the user's, fact, decision and open question (shorten "
                        "tool-derived facts and the narrative first).",
                    },
                ]
        raise SummarizerError(
            f"the summary stays over its target of {request.target_tokens} tokens"
        )

    async def _complete(self, messages: list[dict[str, str]]) -> str:
        """One chat completion's text; transport errors and 5xx retried up to max_attempts."""
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = await self._client.post("chat/completions", json=body)
            except httpx.TimeoutException:
                raise
            except httpx.TransportError as error:
                if attempt == self.max_attempts:
                    raise SummarizerError(f"the summariser is unreachable: {error!r}") from error
                continue
            if response.status_code >= 500 and attempt < self.max_attempts:
                continue
            if response.status_code >= 400:
                # The body is never used as a summary, and only its status is reported.
                raise SummarizerError(f"the summariser answered HTTP {response.status_code}")
            try:
                text = response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError) as error:
                raise SummarizerError("the summariser's answer is not a chat completion") from error
            if not isinstance(text, str):
                raise SummarizerError("the chat completion has no text content")
            return text
        raise SummarizerError("the summariser gave no answer")  # pragma: no cover


def _action_ids(previous: SummaryContent) -> frozenset[int]:
    return frozenset(i for item in previous.action_items for i in item.source_message_ids)
