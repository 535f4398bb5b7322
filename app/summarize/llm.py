"""An abstractive summariser over any OpenAI-compatible chat-completions API.

The user's own words do not depend on the model. Their block is chosen by contextd, as the
extractive summariser chooses it (:func:`app.summarize.extractive.user_block`: statements in
the user's words, newest first, within :data:`USER_BLOCK_SHARE` of the target, corrections
applied), and shown to the model read-only. The model is asked only for the rest: the
narrative, decisions, open questions and action items, and facts read off the assistant's and
the tools' messages. What it returns that restates a user statement is left out (the block
holds it), and so is what presents a value the user has since corrected. Whatever leaves the
block is counted and listed by message id in the summary's text and in
``SummaryContent.left_out``; room the model's part leaves unused goes back to the block.

The model's answer is validated: an answer that is not the seed 003 §7 contract (or that is
an apology or an error message dressed as one) gets one repair request, then the summariser
raises and the caller falls back (seed 003 §9). A valid answer keeps what the previous summary
established (:func:`app.budget.carryover.carry_over`) and is token-counted: over its room,
the model is asked again for a shorter one, a bounded number of times.
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
from app.budget.summary import SECTION_TITLES, SummaryContent, SummaryItem
from app.metrics import Metrics
from app.summarize.base import SummaryRequest
from app.summarize.beside_block import (
    UserWords,
    merged,
    model_part,
    within_target,
    without_user_words,
)
from app.summarize.extractive import USER_BLOCK_SHARE, user_block
from app.upstream import api_client

logger = logging.getLogger(__name__)

Outcome = Literal["ok", "repaired", "fallback", "timeout"]

SYSTEM_PROMPT = """\
You summarise the earlier part of a conversation between a user and an AI agent, so that the \
agent can continue without the raw messages. The user's own statements are kept word for \
word by the service and shown to you as "user_statements", read-only: do not restate them. \
Answer with ONE JSON object and nothing else:
{"summary_text": "<a short narrative>",
 "key_facts": [{"text": "...", "source_message_ids": [<ids>]}],
 "decisions": [...], "open_questions": [...], "action_items": [...]}
Rules, most important first:
- Summarise the work: what the assistant did, found and decided, what the tools returned \
that still matters, questions still open and actions still due. Refer to what the user said \
where it helps, never against it: where the user corrected something, only the corrected \
value holds.
- Fold the new messages into the previous summary (if any). Keep every key fact, decision \
and open question of the previous summary, with its source_message_ids, unless a newer \
message contradicts it.
- A question that a later message answers is no longer open.
- When space is short, give up facts read from tool output and the narrative first.
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


_EMPTY = SummaryContent(summary_text="")


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


def request_prompt(
    request: SummaryRequest, *, block: SummaryContent | None = None, room: int | None = None
) -> str:
    """The user message: the user's statements the summary keeps (read-only), what the model
    wrote in the previous summary, the messages to fold in, and the limit of its part."""
    previous = model_part(request.previous)
    statements = [
        {"text": i.text, "source_message_ids": list(i.source_message_ids)}
        for name in SECTION_TITLES
        for i in (getattr(block, name) if block is not None else ())
    ]
    return json.dumps(
        {
            "user_statements": statements,
            "previous_summary": _summary_json(previous) if previous else None,
            "messages": [
                {"id": m.message_id, "role": m.role, "text": m.text} for m in request.messages
            ],
            "max_tokens": request.target_tokens if room is None else room,
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
        counter, target = request.counter, request.target_tokens
        block_limit = int(target * USER_BLOCK_SHARE)
        block = user_block(request, block_limit)
        words = UserWords(block, request.messages)
        previous = model_part(request.previous)
        # The model's part has what the block and its notice leave of the target.
        room = max(0, target - merged(block.content, _EMPTY).tokens(counter))
        known = frozenset(m.message_id for m in request.messages) | (
            request.previous.anchor_message_ids() | _action_ids(request.previous)
            if request.previous
            else frozenset()
        )
        conversation: list[dict[str, str]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": request_prompt(request, block=block.content, room=room),
            },
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
            # The model gets to shorten its own part first; on the last try the carried
            # items are kept and the new ones give way (carry_over's trimming).
            model = without_user_words(
                carry_over(
                    previous,
                    _content(contract, known),
                    target_tokens=room if last_try else None,
                    counter=counter,
                ),
                words,
            )
            tokens = merged(block.content, model).tokens(counter)
            if tokens <= target or last_try:
                content = self._fitted(request, block.content, model, block_limit)
                # The superseded user messages, as the block's corrections decided.
                return block.revisions.recorded(request.previous, content), repaired
            conversation += [
                {"role": "assistant", "content": answer[:8000]},
                {
                    "role": "user",
                    "content": f"That summary is {tokens - target + room} tokens, over the "
                    f"limit of {room}. Answer again, shorter, keeping every fact, decision and "
                    "open question (shorten tool-derived facts and the narrative first).",
                },
            ]
        raise AssertionError("unreachable: the last try returns")  # pragma: no cover

    @staticmethod
    def _fitted(
        request: SummaryRequest, block: SummaryContent, model: SummaryContent, block_limit: int
    ) -> SummaryContent:
        """The block and the model's part within the target; room the model's part leaves
        unused takes back statements that left the block (the same selection, given more)."""
        counter, target = request.counter, request.target_tokens
        block, model = within_target(block, model, target, counter)
        content = merged(block, model)
        spare = target - content.tokens(counter)
        if block.left_out and spare > 0:
            larger = merged(user_block(request, block_limit + spare).content, model)
            if larger.tokens(counter) <= target and len(larger.left_out) < len(block.left_out):
                content = larger
        if content.tokens(counter) > target:
            raise SummarizerError(f"the summary stays over its target of {target} tokens")
        return content

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
