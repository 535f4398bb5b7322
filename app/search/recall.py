"""Recall at a turn: which messages that left the prompt come back in its recall block
(app.budget.recall), chosen once the turn's own policy events are decided.

At a turn start the session's messages that left the prompt (summarised or pruned), and
those leaving it in this very turn, are ranked for the turn's user message: by BM25 over
their words (``SearchRepository.recall_candidates``), fused by reciprocal rank with the
semantic ranking of the message when embeddings are configured, then ordered by
``app.budget.recall.rank``; the best that fit the room the prompt leaves, up to the
session's share of the budget, make the block. The steps of the turn show the same block
word for word, made again from the messages its fingerprint entry names: never searched
again, so the prompt keeps its prefix whichever worker serves the step."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.budget.decision import Decision, with_recall
from app.budget.recall import (
    DEFAULT_CEILING,
    DEFAULT_MAX_HITS,
    DEFAULT_SHARE,
    EXCERPT_SCAN_CHARS,
    MAX_TOOL_RESULTS,
    Candidate,
    RecallBlock,
    RecallHit,
    asks,
    held_text,
    locate,
    only_asks,
    previous_recall,
    rank,
    recall_block,
    recall_room,
    shown_again,
    with_replies,
)
from app.budget.tokens import TokenCounter, content_text
from app.embeddings.vectors import fuse
from app.models import MessageState, SessionRecord
from app.runtime import Runtime
from app.search.repository import MessageHit, SearchRepository
from app.search.semantic import SemanticRanking, passage_of, semantic_ranking
from app.search.terms import recall_query
from app.sessions.repository import SessionRow

#: Candidates each ranking gives per place in the block: the order of ``rank`` is not the
#: database's, so it chooses among more than it keeps.
CANDIDATES_PER_HIT = 4
#: With embeddings, the share of the block's places (``max_hits``) that the words' own best
#: hits keep ahead of the fused ranking, and the fewest places they keep: 2 of 5 messages,
#: 6 of 15. A fixed 2 let the fusion displace most of what the words found once blocks grew
#: (LoCoMo, 15 messages: embeddings on fell below off).
WORDS_FIRST_SHARE = 0.4
WORDS_FIRST = 2
#: With embeddings, a word hit scoring under this share of the best one's is found by the
#: question's common words alone (in a two-person dialogue, the speaker's name, which half
#: the messages say; a month, a weekday): it takes no place in the fusion nor among the
#: words' first, and comes after every message either ranking found. In the fusion of
#: ranks such a hit weighs as much as one that shares the question's rare words, and on
#: LoCoMo the slots they took pushed embeddings on below off (docs/benchmarks.md).
WEAK_WORDS_SHARE = 0.2
#: ... and one scoring no more than this is too, whatever the best: FTS5 gives a word that
#: half the index's messages or more say an IDF of 1e-6, so a hit that says no other word
#: of the question scores about that, and when every hit is one, each is the "best".
WEAK_WORDS_SCORE = 1e-3
_LEFT = (MessageState.SUMMARISED, MessageState.PRUNED)
#: What tools returned is recalled too, as quoted text (app.budget.recall): a detail a tool
#: gave (a port, an order's status) is asked about as often as one the user gave.
_ROLES = ("user", "assistant", "tool")
#: The replies a recalled question brings: what the other speaker said next.
_REPLY_ROLES = ("user", "assistant")


class TurnRecall:
    """One tenant's recall blocks."""

    def __init__(self, db: AsyncSession, *, tenant_id: str, runtime: Runtime) -> None:
        self.search_index = SearchRepository(db, tenant_id=tenant_id)
        self.semantic = SemanticRanking(db, tenant_id=tenant_id, runtime=runtime)
        self.runtime = runtime

    async def shown(
        self,
        session: SessionRecord | SessionRow,
        decision: Decision,
        counter: TokenCounter,
        *,
        turn_seq: int,
        starts_turn: bool,
        left_before: int,
        question: Any,
        superseded: frozenset[int] = frozenset(),
    ) -> Decision:
        """``decision`` (accepted) with the turn's recall block, when the session turned
        recall on and a block fits what the prompt leaves of its share: at a turn start,
        chosen for ``question`` (the user message's content) among the ``left_before``
        messages that had left the prompt and those the decision takes out, less the user's
        messages the summary in force records as ``superseded`` (every statement of theirs
        replaced by a later one: shown alone, they would present an old value as current);
        at a step, the block of the turn start again. The decision as it is otherwise."""
        settings = session.recall
        if not settings or not settings.get("enabled", True) or not decision.accepted:
            return decision
        # A share of what the prompt may take: the input budget, or the total cap if smaller.
        budget = decision.budget.input_budget
        total_cap = (session.block_caps or {}).get("total")
        whole = min(budget, total_cap or budget)
        room = recall_room(
            whole=whole,
            prompt=decision.figures.final,
            share=float(settings.get("share", DEFAULT_SHARE)),
            ceiling=float(settings.get("ceiling", DEFAULT_CEILING)),
        )
        if starts_turn:
            block = await self._choose(
                session,
                decision,
                counter,
                turn_seq=turn_seq,
                left_before=left_before,
                # A block reads no more of a message, nor its search of the question.
                question=content_text(question)[:EXCERPT_SCAN_CHARS],
                max_hits=int(settings.get("max_hits", DEFAULT_MAX_HITS)),
                room=room,
                superseded=superseded,
            )
        else:
            block = await self._again(session, counter)
        if block is None or block.tokens > room:
            # Recall is a help, never the reason a prompt is refused.
            return decision
        return with_recall(decision, block, session.prompt_fingerprint)

    async def _choose(
        self,
        session: SessionRecord | SessionRow,
        decision: Decision,
        counter: TokenCounter,
        *,
        turn_seq: int,
        left_before: int,
        question: str,
        max_hits: int,
        room: int,
        superseded: frozenset[int],
    ) -> RecallBlock | None:
        terms, phrases = recall_query(question)
        leaving = (*decision.summarised_ids, *decision.pruned_ids)
        # Messages are never deleted and only ever leave the prompt, so the number that
        # left names the set the search reads: same number, same hits (a turn start refused
        # and tried again). The creation time tells a session from an erased one of the
        # same id.
        left = left_before + len(leaving)
        if (
            not (terms or phrases) or not left or room <= 0
        ):  # nothing to look for, or to find: no search
            return None
        meaning = question if self.semantic.enabled else None
        key = (
            session.tenant_id,
            session.id,
            session.created_at,
            turn_seq,
            left,
            terms,
            max_hits,
            meaning,
            superseded,
        )
        hits = self.runtime.recalls.get(key)
        if hits is None:
            hits = tuple(
                await self._ranked(
                    session.id,
                    question,
                    terms,
                    phrases,
                    meaning,
                    limit=max_hits * CANDIDATES_PER_HIT,
                    leaving=leaving,
                    superseded=superseded,
                )
            )
            self.runtime.recalls.put(key, hits)
        block = recall_block(
            hits, room=room, max_hits=max_hits, counter=counter, terms=terms, phrases=phrases
        )
        if block is not None:  # the steps of the turn show it again from these
            chosen = frozenset(block.message_ids)
            self.runtime.recalls.put(
                self._recalled_key(session, block.fingerprint()),
                tuple(hit for hit in hits if hit.message_id in chosen),
            )
        return block

    async def _ranked(
        self,
        session_id: str,
        question: str,
        terms: tuple[str, ...],
        phrases: tuple[str, ...],
        meaning: str | None,
        *,
        limit: int,
        leaving: Sequence[int],
        superseded: frozenset[int] = frozenset(),
    ) -> list[RecallHit]:
        """The messages that left the prompt (or leave it now), in the order the block takes
        them: by their words alone; with embeddings, the words' best for the first
        ``WORDS_FIRST_SHARE`` of the block's places, then the fusion of both rankings, then
        the word hits that share only the question's common words (``found_by_words``). A
        user or assistant hit that asks (``asks``) is followed by its reply, the next
        message when the other side said it and it left the prompt too: in a dialogue the
        answer follows the line that names the item ("what did you do at the picnic?" /
        "charades and a scavenger hunt") and often shares none of its words. One with no
        such reply is left out.
        Fusion rather than either one: a message both find
        comes first and each ranking's best stay near the top; and the words' own best
        are kept whatever the fusion says, because a message that shares the question's
        common words and its topic outranks, in a fusion of ranks, the one message that
        shares its rare words: turning embeddings on must never lose what the words found.

        A user message in ``superseded`` is neither a hit nor a reply (a question whose
        only reply it was goes with it, as any unanswered one does): one look-up each."""
        found = await self.search_index.recall_candidates(
            session_id,
            terms,
            phrases,
            limit=limit,
            states=_LEFT,
            roles=_ROLES,
            also=leaving,
        )
        by_words = rank((Candidate(_recall_hit(hit), hit.score) for hit in found), question)
        strong = found_by_words(found)
        by_id = {hit.message_id: hit for hit in found}
        fused = await self._fused(
            session_id,
            # The words' ranking as ``rank`` orders it, so that a ranking by meaning that
            # tells no message apart leaves the words' order as it was.
            [by_id[hit.message_id] for hit in by_words if hit.message_id in strong],
            meaning,
            limit=limit,
            leaving=leaving,
        )
        if fused is None:
            ranked = by_words
        else:
            places = max(WORDS_FIRST, round(limit / CANDIDATES_PER_HIT * WORDS_FIRST_SHARE))
            first = [hit for hit in by_words if hit.message_id in strong][:places]
            kept = {hit.message_id for hit in first}
            # The fusion's own order: ``rank``'s weights were made for BM25's scores, and on
            # reciprocal ranks, a few thousandths apart, half as much again moves a message
            # past dozens that both rankings found.
            ranked = first + [c.hit for c in fused if c.hit.message_id not in kept]
            listed = {hit.message_id for hit in ranked}
            ranked += [hit for hit in by_words if hit.message_id not in listed]
        if superseded:
            ranked = [h for h in ranked if not _superseded(h.role, h.message_id, superseded)]
        ranked = _located(ranked, found, terms, phrases, places=limit // CANDIDATES_PER_HIT)
        # A hit that asks comes back with its reply, or not at all: what answers a question
        # is in the reply, and a question nobody answered (a turn closed without one, the
        # user asking again) holds only the words of the item, which is why it ranks high.
        asked = {hit.seq: hit for hit in ranked if hit.role in _REPLY_ROLES and asks(hit)}
        after = await self.search_index.at_seqs(
            session_id,
            [seq + 1 for seq in asked],
            states=_LEFT,
            roles=_REPLY_ROLES,
            also=leaving,
        )
        replies = {
            seq - 1: _recall_hit(hit)
            for seq, hit in after.items()
            if hit.role != asked[seq - 1].role  # the other side's answer, not a next question
            and not _superseded(hit.role, hit.message_id, superseded)
        }
        # A question that states a number or code of its own is an item in its own right.
        unanswered = {
            hit.message_id
            for seq, hit in asked.items()
            if seq not in replies and only_asks(hit, question)
        }
        return with_replies([hit for hit in ranked if hit.message_id not in unanswered], replies)

    async def _fused(
        self,
        session_id: str,
        found: list[MessageHit],
        meaning: str | None,
        *,
        limit: int,
        leaving: Sequence[int],
    ) -> list[Candidate] | None:
        """The full-text hits ``found`` fused by reciprocal rank with the semantic ranking
        of ``meaning``; None without one (embeddings off, none stored, the API failing)."""
        if meaning is None:
            return None
        near = await self.semantic.rank(
            session_id, meaning, limit=limit, states=_LEFT, roles=_ROLES, also=leaving
        )
        if not near:
            return None
        by_id = {hit.message_id: hit for hit in found}
        fused = fuse(([hit.message_id for hit in found], 1.0), semantic_ranking(near, 1.0))[:limit]
        missing = await self.search_index.messages(
            session_id, [key for key, _ in fused if key not in by_id]
        )
        candidates = []
        for key, score in fused:
            hit = by_id.get(key) or missing.get(key)
            if hit is None:
                continue  # erased meanwhile
            index = near[key].passage if key in near else None
            passage = passage_of(hit.content, index) if index is not None else None
            candidates.append(Candidate(_recall_hit(hit, passage, index), score))
        return candidates

    async def _again(
        self, session: SessionRecord | SessionRow, counter: TokenCounter
    ) -> RecallBlock | None:
        """At a step, the recall block the turn's previous prompt showed (none if it showed
        none), made again word for word from the messages it names in its fingerprint entry.
        Read by id, one read, unless this worker made the block."""
        previous = previous_recall(session.prompt_fingerprint)
        if previous is None:
            return None
        entry, shown = previous
        key = self._recalled_key(session, entry)
        hits = self.runtime.recalls.get(key)
        if hits is None:
            found = await self.search_index.messages(session.id, [r.message_id for r in shown])
            hits = tuple(
                RecallHit(
                    hit.message_id,
                    hit.seq,
                    hit.role,
                    held_text(content_text(hit.content), r.offset or 0),
                    passage_of(hit.content, r.passage) if r.passage is not None else None,
                    r.passage,
                    r.offset or 0,
                )
                for r in shown
                if (hit := found.get(r.message_id)) is not None
            )
            self.runtime.recalls.put(key, hits)
        block = shown_again(shown, {hit.message_id: hit for hit in hits}, counter)
        # Stored messages never change: a block that reads otherwise now is not the one shown.
        return block if block is not None and block.fingerprint() == entry else None

    @staticmethod
    def _recalled_key(session: SessionRecord | SessionRow, entry: str) -> tuple[object, ...]:
        """The recalled messages of a recall block, by its fingerprint entry."""
        return (session.tenant_id, session.id, session.created_at, entry)


def found_by_words(found: Sequence[MessageHit]) -> frozenset[int]:
    """The ids of the word hits ``found`` that share more with the question than its common
    words: those scoring ``WEAK_WORDS_SHARE`` of the best score or more. BM25 weighs a word
    by how few messages say it (FTS5 gives one that most messages say next to nothing), so
    a hit that only says the speaker's name scores a small share of one that says a rare
    word of the question."""
    best = max((hit.score for hit in found), default=0.0)
    return frozenset(
        hit.message_id
        for hit in found
        if hit.score > WEAK_WORDS_SCORE and hit.score >= WEAK_WORDS_SHARE * best
    )


#: Long hits (``EXCERPT_SCAN_CHARS`` and more) among a block's places that are looked into
#: past what a hit holds (``locate``), at most: a block shows ``MAX_TOOL_RESULTS`` tool
#: results, and each look reads up to ``INDEXED_CHARS`` of its message.
LOCATED = 2 * MAX_TOOL_RESULTS


def _located(
    ranked: list[RecallHit],
    found: Sequence[MessageHit],
    terms: Sequence[str],
    phrases: Sequence[str],
    *,
    places: int,
) -> list[RecallHit]:
    """``ranked`` with its first long hits (within ``places``) holding their message from
    the place that says most of the query (``locate``), when that lies past what a hit
    holds from its start: a log whose error line is at 200 kB is shown by that line."""
    contents = {hit.message_id: hit.content for hit in found}
    located = 0
    listed = list(ranked)
    for index, hit in enumerate(listed[:places]):
        if located == LOCATED:
            break
        if len(hit.text) <= EXCERPT_SCAN_CHARS or hit.message_id not in contents:
            continue
        located += 1
        whole = content_text(contents[hit.message_id])
        offset = locate(whole, terms, phrases)
        if offset:
            listed[index] = replace(hit, text=held_text(whole, offset), offset=offset)
    return listed


def _superseded(role: str, message_id: int, superseded: frozenset[int]) -> bool:
    """Whether a hit is a user message every statement of which a later one replaced."""
    return role == "user" and message_id in superseded


def _recall_hit(hit: MessageHit, passage: str | None = None, index: int | None = None) -> RecallHit:
    return RecallHit(
        hit.message_id,
        hit.seq,
        hit.role,
        held_text(content_text(hit.content)),
        passage,
        index if passage is not None else None,
    )
