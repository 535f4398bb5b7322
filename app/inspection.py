"""``contextd inspect SESSION``: a session's context as the policy left it, as tables.

Read straight from the database through the repositories (no server needed): the budget,
the blocks of the newest assembly with their tokens, the latest summary, and each turn's
messages by state (active, summarised, pruned).
"""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.repository import AuditRepository
from app.audit.schemas import AuditFilter
from app.budget.tokens import content_text
from app.errors import NotFoundError
from app.models import AuditRecord, MessageRecord, MessageState
from app.sessions.repository import SessionRepository
from app.settings import Settings
from app.tokens.budgets import session_budget
from app.tokens.registry import TokenizerRegistry
from app.turns.repository import TurnRepository

STATES = (MessageState.ACTIVE, MessageState.SUMMARISED, MessageState.PRUNED)
_PAGE = 1000


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, indent: str = "  ") -> str:
    """A plain-text table: figures right-aligned (numbers with thousands separators,
    percentages), text left."""

    def cell(value: object) -> str:
        if isinstance(value, bool) or value is None:
            return "-" if value is None else str(value).lower()
        if isinstance(value, int):
            return f"{value:,}"
        if isinstance(value, float):
            return f"{value:,.1f}"
        return str(value)

    cells = [[cell(value) for value in row] for row in rows]

    def is_figure(value: object) -> bool:
        if isinstance(value, str):
            return value.endswith("%")
        return isinstance(value, int | float) and not isinstance(value, bool)

    numeric = [all(is_figure(row[i]) for row in rows) for i in range(len(headers))]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        parts = [
            value.rjust(width) if right else value.ljust(width)
            for value, width, right in zip(values, widths, numeric, strict=True)
        ]
        return (indent + "  ".join(parts)).rstrip()

    rule = indent + "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in cells)])


@dataclass
class _TurnMessages:
    states: Counter[str] = field(default_factory=Counter)
    active_tokens: int = 0


def _preview(message: MessageRecord, width: int = 60) -> str:
    if message.tool_calls:
        names = ", ".join(str(c.get("function", {}).get("name", "?")) for c in message.tool_calls)
        text = f"calls {names}"
    else:
        text = content_text(message.content)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _blocks_section(audit: AuditRecord, *, rejected_after: AuditRecord | None) -> list[str]:
    total = sum(audit.blocks.values())
    budget = audit.input_budget
    rows = [[name, tokens, f"{tokens / budget:.1%}"] for name, tokens in audit.blocks.items()]
    rows.append(["total", total, f"{total / budget:.1%}"])
    when = audit.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        f"Context as last assembled (audit #{audit.id}, turn {audit.turn_seq} step "
        f"{audit.step}, {when})",
        table(["block", "tokens", "of budget"], rows),
        f"  policy: tokens before {audit.estimated_input_tokens_before:,} → after summary "
        f"{audit.estimated_input_tokens_after_summary:,} → after prune "
        f"{audit.estimated_input_tokens_after_prune:,}; summary "
        f"{'yes (' + str(audit.summary_reason) + ')' if audit.summary_triggered else 'no'}"
        f"{', fell back to truncation' if audit.summary_fallback else ''}; prune "
        f"{'yes' if audit.prune_triggered else 'no'}; estimator {audit.estimator}",
    ]
    if rejected_after is not None:
        lines.append(
            f"  then rejected: audit #{rejected_after.id} (turn {rejected_after.turn_seq}) needed "
            f"{rejected_after.estimated_input_tokens_after_prune:,} tokens "
            f"(context_budget_exceeded)"
        )
    return lines


async def inspect_session(
    db: AsyncSession,
    session_id: str,
    *,
    tenant_id: str,
    settings: Settings,
    tokenizers: TokenizerRegistry | None = None,
    list_messages: bool = False,
) -> str:
    """The report ``contextd inspect`` prints; NotFoundError when the tenant has no such
    session."""
    session = await SessionRepository(db, tenant_id=tenant_id).get(session_id)
    if session is None:
        raise NotFoundError("session_not_found", f"no session {session_id!r}")
    turns = TurnRepository(db, tenant_id=tenant_id)
    audit = AuditRepository(db)
    resolved = session_budget(
        session, settings=settings, tokenizers=tokenizers or TokenizerRegistry()
    )
    budget = resolved.budget
    open_turn = await SessionRepository(db, tenant_id=tenant_id).open_turn(session_id)

    messages: list[MessageRecord] = []
    after = 0
    while page := await turns.list_messages(session_id, after_seq=after, limit=_PAGE, state=None):
        messages.extend(page)
        after = page[-1].seq
    by_turn: dict[int, _TurnMessages] = defaultdict(_TurnMessages)
    for message in messages:
        counts = by_turn[message.turn_seq]
        counts.states[message.state] += 1
        if message.state == MessageState.ACTIVE:
            counts.active_tokens += message.token_count
    state_totals = Counter(message.state for message in messages)

    lines = [
        f"Session {session.id}   tenant {session.tenant_id}   model {session.model} "
        f"(counted with {resolved.counter.name})",
        f"  budget: context {budget.model_context_limit:,} - output reserve "
        f"{budget.output_reserve:,} - overhead {budget.overhead_reserve:,} = input budget "
        f"{budget.input_budget:,} tokens",
        f"  turns: {session.turn_count:,} (open: {open_turn.seq if open_turn else 'none'})   "
        f"messages: {len(messages):,} = "
        + ", ".join(f"{state_totals[state]:,} {state}" for state in STATES),
        "",
    ]

    newest = await audit.list(
        AuditFilter(tenant_id=tenant_id, session_id=session_id), before_id=None, limit=1
    )
    accepted = await audit.list(
        AuditFilter(tenant_id=tenant_id, session_id=session_id, overflow_rejected=False),
        before_id=None,
        limit=1,
    )
    if accepted:
        rejected_after = newest[0] if newest and newest[0].overflow_rejected else None
        lines += _blocks_section(accepted[0], rejected_after=rejected_after)
    else:
        lines.append("Context: never assembled (no accepted turn yet)")
    lines.append("")

    summary = await turns.latest_summary(session_id)
    if summary is None:
        lines.append("Latest summary: none")
    else:
        lines.append(
            f"Latest summary #{summary.id} (made at turn {summary.turn_seq}; covers messages "
            f"{summary.from_seq}-{summary.to_seq}; {summary.token_count:,} tokens; "
            f"{summary.summarizer})"
        )
        lines += textwrap.wrap(
            summary.summary_text, width=96, initial_indent="  ", subsequent_indent="  "
        )[:8]
        lines.append(
            f"  key facts {len(summary.key_facts)} · decisions {len(summary.decisions)} · "
            f"open questions {len(summary.open_questions)} · "
            f"action items {len(summary.action_items)}"
        )
    lines.append("")

    lines.append("Messages by turn")
    rows = [
        [
            turn_seq,
            counts.states.total(),
            counts.states[MessageState.ACTIVE],
            counts.states[MessageState.SUMMARISED],
            counts.states[MessageState.PRUNED],
            counts.active_tokens,
        ]
        for turn_seq, counts in sorted(by_turn.items())
    ]
    lines.append(
        table(["turn", "messages", "active", "summarised", "pruned", "active tokens"], rows)
    )

    if list_messages:
        lines += ["", "Messages"]
        lines.append(
            table(
                ["seq", "turn", "step", "role", "state", "tokens", "content"],
                [
                    [m.seq, m.turn_seq, m.step, m.role, m.state, m.token_count, _preview(m)]
                    for m in messages
                ],
            )
        )
    return "\n".join(lines)
