"""A deterministic, offline summariser that keeps what an agent cannot afford to forget.

It does not paraphrase: it picks sentences. What the user says about themselves and their
work (the name they go by, where they live, their people, preferences, constraints,
decisions, questions still open) is kept in their own words, number or no number, ahead of
anything else. Decisions, open questions, action items and sentences dense in specifics
(numbers, dates, identifiers, names) follow, then what a tool returned. Each item cites the
message it came from. A new summary folds the previous one in: earlier items come first, so
facts stated at the start of a session survive every later summary while there is room; when
there is not, tool output and narrative give way first, then the oldest user statements are
clipped, and a statement left out is counted in the summary's text, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from app.budget.summary import SECTION_TITLES, SummaryContent, SummaryItem, render_summary
from app.budget.tokens import TokenCounter
from app.offload import off_the_loop
from app.summarize.base import SourceMessage, SummaryRequest

#: Source text (characters) past which a fold runs in a worker thread.
HEAVY_SOURCE_CHARS = 100_000

MAX_ITEM_CHARS = 240
#: What a fact read from a tool's output starts with, so that later summaries know it from
#: a fact somebody stated.
TOOL_LABEL = "Tool output: "
#: Where a sentence may end: closing punctuation (and any closing quotes or brackets) followed
#: by white space. A full stop inside a token (3.5, v1.2.3, example.com/a.txt, ./run.sh) is
#: never a boundary because no white space follows it.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")
#: Words whose full stop abbreviates rather than ends a sentence.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "ft",
        "vs",
        "cf",
        "approx",
        "dept",
        "fig",
        "inc",
        "ltd",
        "corp",
        "vol",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "mon",
        "tue",
        "wed",
        "thu",
        "fri",
        "sat",
    ]
)
#: Initials and dotted abbreviations: J. / U.S. / e.g. / i.e. / a.m. A lone lower-case
#: letter ("… on a. Still open") is a word that ends a sentence, not an initial.
_DOTTED = re.compile(r"^(?:[A-Z]\.|(?:[A-Za-z]\.){2,})$")
_DECISION = re.compile(
    r"\b(decided|decide|decision|agreed|agree to|we will|we'll|let's|going with|go with|"
    r"chose|chosen|settled on|approved|confirmed)\b",
    re.IGNORECASE,
)
_ACTION = re.compile(
    r"\b(todo|to-do|action item|next step|need to|needs to|must|remember to|follow up|"
    r"follow-up|deadline|by (monday|tuesday|wednesday|thursday|friday|tomorrow|eod))\b",
    re.IGNORECASE,
)
#: The speaker themselves, their people or their work ("us" in lower case only: "the US").
_FIRST_PERSON = re.compile(
    r"(?i:\b(?:i|i['\u2019](?:m|ve|d|ll)|me|my|mine|myself|we|we['\u2019](?:re|ve|d|ll)|our|ours)\b)"
    r"|\bus\b"
)
#: A directive about how to treat the user ("Never book …", "Please avoid …").
_DIRECTIVE = re.compile(
    r"^(?:please\s+)?(?:never|always|don['\u2019]t|do not|avoid|remember|"
    r"keep (?:this |that |it )?in mind|make sure|note that|no|call me)\b",
    re.IGNORECASE,
)
#: What marks a statement of fact about the speaker: who and where they are, their people,
#: what they like, cannot do, or have settled on, and what their project is built on.
_SELF_FACT = re.compile(
    r"\b(?:call me|my name|go by|known as|i live|we live|based in|i['\u2019]m from|i am from|"
    r"we['\u2019]re from|moved to|home for (?:me|us)|i work|we work|is my|are my|"
    r"my (?:wife|husband|partner|sister|brother|mother|mum|mom|father|dad|son|daughter|child|"
    r"children|kids?|grandmother|grandfather|grandma|grandpa|aunt|uncle|nephew|niece|cousin|"
    r"friend|boss|manager|colleague|team|family)|prefer|preference|rather|favou?rite|"
    r"i (?:like|love|hate|dislike|enjoy|need|want)|allerg|intoleran|vegan|vegetarian|can['\u2019]t|"
    r"cannot|never|always|must|avoid|budget|at most|at least|no more than|decided|agreed|"
    r"promised|commit|made up my mind|going with|settled|final|"
    r"we(?:['\u2019]ll| will)|i(?:['\u2019]ll| will)|plan(?:ning)? to|"
    r"our (?:project|app|repo|codebase|service|stack|database|team|product|company|client)|"
    r"we (?:use|run|deploy|ship)|we['\u2019]re using)",
    re.IGNORECASE,
)
#: Courtesy, not content: "Thanks!", "That sounds fine to me."
_SMALL_TALK = re.compile(
    r"^(?:thanks|thank you|thx|ok|okay|great|cool|perfect|nice|awesome|sure|got it|hi|"
    r"hello|hey|no worries|no problem|sounds|that sounds|"
    r"that['\u2019]s (?:fine|great|good|perfect|all))\b",
    re.IGNORECASE,
)
#: A first-person sentence without a marker of a fact is a statement only when this short
#: (a long one is narrative: "we walked along the river and looked at …").
_PLAIN_STATEMENT_WORDS = 25
#: Words too common to tell whether a reply takes up a question.
_COMMON = frozenset(
    [
        "what",
        "which",
        "when",
        "where",
        "should",
        "would",
        "could",
        "there",
        "their",
        "about",
        "this",
        "that",
        "with",
        "from",
        "have",
        "does",
        "will",
        "your",
        "into",
        "still",
        "open",
        "them",
        "they",
        "then",
        "than",
        "been",
        "were",
        "more",
        "some",
        "also",
        "just",
    ]
)
_NUMBER = re.compile(r"\d")
_IDENTIFIER = re.compile(
    r"[A-Za-z]+[_/.:#-][A-Za-z0-9]|\b[a-z]+[A-Z][A-Za-z]+\b|\b[A-Z]{2,}[0-9]*\b|@|https?://"
)
_PROPER_NAME = re.compile(r"(?<=\s)[A-Z][a-z]+")
_NORMALISE = re.compile(r"[\W_]+")
_PER_MESSAGE_LIMIT = {"user": 6, "assistant": 4, "tool": 2}
#: At most this many statements of the user's own are read from one message (a pasted
#: document is not a list of statements about the user).
_USER_STATEMENTS_PER_MESSAGE = 12
#: How short the oldest user statements are clipped when a newer one needs their room.
CLIPPED_CHARS = 90
#: A fact is dense in specifics: at least one number, identifier or name per this many words
#: (a long sentence that merely mentions a number is not a fact worth a line).
_WORDS_PER_SPECIFIC = 20


def _abbreviation(token: str) -> bool:
    token = token.lstrip("(\"'[")
    return _DOTTED.match(token) is not None or token[:-1].lower() in _ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences, one line never joined to the next.

    A full stop after an abbreviation (Dr., e.g., U.S.) or an initial (J. R. Smith) does not
    end a sentence, nor does one followed by a lower-case word; decimals, versions, addresses
    and file paths are never cut.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for end in _SENTENCE_END.finditer(line):
            words = line[start : end.start()].split()
            if not words:
                continue
            following = line[end.end() : end.end() + 1]
            if end.group().rstrip() == "." and (
                following.islower() or _abbreviation(words[-1] + ".")
            ):
                continue
            sentences.append(line[start : end.end()].strip())
            start = end.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


def _normalise(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def _clip(sentence: str) -> str:
    sentence = " ".join(sentence.split())
    if len(sentence) <= MAX_ITEM_CHARS:
        return sentence
    return sentence[: MAX_ITEM_CHARS - 1].rstrip() + "…"


def _specificity(sentence: str) -> int:
    return (
        2 * bool(_NUMBER.search(sentence))
        + 2 * bool(_IDENTIFIER.search(sentence))
        + bool(_PROPER_NAME.search(sentence))
    )


def _dense(sentence: str) -> bool:
    specifics = (
        len(re.findall(r"\d+", sentence))
        + len(_IDENTIFIER.findall(sentence))
        + len(_PROPER_NAME.findall(sentence))
    )
    return specifics * _WORDS_PER_SPECIFIC >= len(sentence.split())


def user_statement(sentence: str) -> bool:
    """Whether a sentence the user wrote states something about themselves or their work.

    It speaks in the first person or is a directive ("never …"), and either marks a name, a
    place, their people, a preference, a constraint, a decision or what their project uses,
    or is short and not small talk ("Pick trains for me.", not "That sounds fine to me.").
    """
    words = len(sentence.split())
    if words < 3 or not (_FIRST_PERSON.search(sentence) or _DIRECTIVE.search(sentence)):
        return False
    if _SELF_FACT.search(sentence):
        return True
    return words <= _PLAIN_STATEMENT_WORDS and not _SMALL_TALK.search(sentence)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4} - _COMMON


def _takes_up(question: str, reply: str) -> bool:
    """Whether ``reply`` answers ``question``: it uses at least half of its content words."""
    asked = _content_words(question)
    return bool(asked) and 2 * len(asked & _content_words(reply)) >= len(asked)


@dataclass(frozen=True)
class _Candidate:
    kind: str  # "decision" | "question" | "action" | "said" | "fact" | "tool fact"
    score: int
    item: SummaryItem
    position: int  # index of the message it came from in the request


def _candidates(message: SourceMessage, position: int) -> list[_Candidate]:
    found: list[_Candidate] = []
    said: list[_Candidate] = []
    user = message.role == "user"
    for raw in split_sentences(message.text):
        sentence = _clip(raw)
        if len(sentence) < 8:
            continue
        item = SummaryItem(sentence, (message.message_id,), from_user=user)
        specificity = _specificity(sentence)
        if message.role != "tool" and _DECISION.search(sentence):
            found.append(_Candidate("decision", specificity + 3, item, position))
        elif message.role != "tool" and sentence.endswith("?"):
            found.append(_Candidate("question", specificity + 2, item, position))
        elif (
            user
            and user_statement(sentence)
            and (_SELF_FACT.search(sentence) or not _ACTION.search(sentence))
        ):
            # A task the user sets ("we need to renew …") stays an action item.
            said.append(_Candidate("said", specificity, item, position))
        elif message.role != "tool" and _ACTION.search(sentence):
            found.append(_Candidate("action", specificity + 1, item, position))
        elif not _dense(sentence):
            continue
        elif message.role == "tool" and specificity >= 3:
            labelled = SummaryItem(_clip(TOOL_LABEL + sentence), item.source_message_ids)
            found.append(_Candidate("tool fact", specificity, labelled, position))
        elif specificity >= 2:
            found.append(_Candidate("fact", specificity, item, position))
    # What the user decides or asks is not held to the limit, nor what they state about
    # themselves (up to its own limit).
    kept = [c for c in found if user and c.kind in ("decision", "question")]
    rest = sorted((c for c in found if c not in kept), key=lambda c: -c.score)
    return [
        *kept,
        *said[:_USER_STATEMENTS_PER_MESSAGE],
        *rest[: _PER_MESSAGE_LIMIT.get(message.role, 2)],
    ]


def _answered(question: str, asker: str, replies: Iterable[SourceMessage]) -> bool:
    """Whether a message of the other side (an assistant's answer to the user, the user's to
    the assistant) among ``replies`` takes the question up."""
    answerer = "assistant" if asker == "user" else "user"
    return any(m.role == answerer and _takes_up(question, m.text) for m in replies)


def _fit(text: str, limit: int, counter: TokenCounter) -> str:
    """``text`` cut short (at a word) until it counts at most ``limit`` tokens."""
    while text and counter.count_text(text) > limit:
        text = text[: int(len(text) * 0.8)].rsplit(" ", 1)[0] if " " in text else ""
    return text


def _narrative(
    messages: Iterable[SourceMessage], previous: SummaryContent | None, left_out: int = 0
) -> tuple[str, str]:
    """What was folded: its first sentence (always kept), and the whole with the most recent
    requests."""
    requests = [_clip(m.text)[:120] for m in messages if m.role == "user" and m.text.strip()]
    head = f"Earlier conversation: {len(requests)} user request(s) summarised"
    if previous is not None:
        head += ", on top of an earlier summary"
    if left_out:
        head += f"; {left_out} user statement(s) left out for room"
    if not requests:
        return head + ".", head + "."
    return head + ".", head + ". Most recent: " + " | ".join(requests[-3:]) + "."


class ExtractiveSummarizer:
    """The built-in summariser: deterministic, offline, and fast (no model call)."""

    @property
    def name(self) -> str:
        return "extractive"

    async def summarize(self, request: SummaryRequest) -> SummaryContent:
        # Folding a long range (or a previous summary of many items) is CPU for tens of
        # milliseconds or more: in a worker thread, so that other requests are served.
        if sum(len(m.text) for m in request.messages) > HEAVY_SOURCE_CHARS:
            return await off_the_loop(lambda: summarize_extractive(request))
        return summarize_extractive(request)


def _from_tool(item: SummaryItem) -> bool:
    return item.text.startswith(TOOL_LABEL)


def _clipped(item: SummaryItem, chars: int) -> SummaryItem:
    """The start of a statement, cut at a word, marked as cut."""
    if len(item.text) <= chars:
        return item
    cut = item.text[: chars - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return SummaryItem(cut + "…", item.source_message_ids, item.from_user)


def summarize_extractive(request: SummaryRequest) -> SummaryContent:
    previous = request.previous
    messages = request.messages
    fresh: dict[str, list[SummaryItem]] = {
        "decision": [],
        "question": [],
        "action": [],
        "said": [],
        "fact": [],
        "tool fact": [],
    }
    found = [c for index, m in enumerate(messages) for c in _candidates(m, index)]
    # The user's statements keep the order they were made in; the rest goes by score.
    ranked = [c for c in found if c.item.from_user] + sorted(
        (c for c in found if not c.item.from_user), key=lambda c: -c.score
    )
    for candidate in ranked:
        kind = candidate.kind
        if kind == "question":
            asker = "user" if candidate.item.from_user else "assistant"
            if _answered(candidate.item.text, asker, messages[candidate.position + 1 :]):
                if not candidate.item.from_user:
                    continue  # the user answered it: nothing left open
                kind = "said"  # what the user asked stays, no longer open
        fresh[kind].append(candidate.item)
    earlier = previous or SummaryContent(summary_text="")
    answered = {
        id(i)
        for i in earlier.open_questions
        if _answered(i.text, "user" if i.from_user else "assistant", messages)
    }
    earlier_questions = [i for i in earlier.open_questions if id(i) not in answered]
    # A question of the user's answered since: still what they asked, no longer open.
    earlier_asked = [i for i in earlier.open_questions if i.from_user and id(i) in answered]

    def said_by_user(items: Iterable[SummaryItem]) -> list[SummaryItem]:
        return [i for i in items if i.from_user]

    def others(items: Iterable[SummaryItem]) -> list[SummaryItem]:
        return [i for i in items if not i.from_user]

    stated = [i for i in others(earlier.key_facts) if not _from_tool(i)]
    read = [i for i in earlier.key_facts if _from_tool(i)]

    # Priority, highest first. What earlier summaries held stays: nothing new evicts it, and
    # of it the user's own words come first. New decisions, questions and facts come next,
    # again the user's first, then action items, and last what a tool returned: it fills
    # the room that is left and gives it up to anything said in the conversation.
    ordered: list[tuple[str, SummaryItem]] = []
    ordered += [("key_facts", i) for i in said_by_user(earlier.key_facts)]
    ordered += [("decisions", i) for i in said_by_user(earlier.decisions)]
    ordered += [("open_questions", i) for i in said_by_user(earlier_questions)]
    ordered += [("key_facts", i) for i in earlier_asked]
    ordered += [("decisions", i) for i in others(earlier.decisions)]
    ordered += [("open_questions", i) for i in others(earlier_questions)]
    ordered += [("key_facts", i) for i in stated]
    ordered += [("decisions", i) for i in said_by_user(fresh["decision"])]
    ordered += [("open_questions", i) for i in said_by_user(fresh["question"])]
    ordered += [("key_facts", i) for i in fresh["said"]]
    ordered += [("key_facts", i) for i in said_by_user(fresh["fact"])]
    ordered += [("decisions", i) for i in others(fresh["decision"])]
    ordered += [("open_questions", i) for i in others(fresh["question"])]
    ordered += [("key_facts", i) for i in others(fresh["fact"])]
    ordered += [("action_items", i) for i in said_by_user(earlier.action_items)]
    ordered += [("action_items", i) for i in others(earlier.action_items)]
    ordered += [("action_items", i) for i in said_by_user(fresh["action"])]
    ordered += [("action_items", i) for i in others(fresh["action"])]
    ordered += [("key_facts", i) for i in read]
    ordered += [("key_facts", i) for i in fresh["tool fact"]]

    counter = request.counter
    target = request.target_tokens
    # Each section reads oldest first: what earlier summaries held, then what is new.
    earlier_items = (
        *earlier.key_facts,
        *earlier.decisions,
        *earlier.open_questions,
        *earlier.action_items,
    )
    ages = {id(item): index for index, item in enumerate(earlier_items)}
    # Items carry the facts; the narrative only says what was folded. Its first sentence is
    # set aside, the items are chosen, and the narrative takes what room is left (at most a
    # quarter of the target), so a longer narrative never pushes an item out.
    head, _ = _narrative(messages, previous)
    used = counter.count_text(head) + 1
    picked: list[tuple[str, SummaryItem]] = []
    seen: set[str] = set()
    titled: set[str] = set()
    left_out = 0

    def line_cost(field: str, item: SummaryItem) -> int:
        # A line costs its text, its bullet and its line break; the first line of a section
        # also pays for the section's title.
        cost = counter.count_text(f"- {item.text}") + 1
        if field not in titled:
            cost += counter.count_text(f"{SECTION_TITLES[field]}:") + 1
        return cost

    for field, item in ordered:
        key = _normalise(item.text.removeprefix(TOOL_LABEL))
        if not key or key in seen:
            continue
        cost = line_cost(field, item)
        if used + cost > target and item.from_user:
            # A user statement makes room by clipping the oldest user statements first.
            for index, (kept_field, kept) in enumerate(picked):
                if used + cost <= target:
                    break
                if not kept.from_user or len(kept.text) <= CLIPPED_CHARS:
                    continue
                shorter = _clipped(kept, CLIPPED_CHARS)
                ages[id(shorter)] = ages.get(id(kept), len(earlier_items))
                used -= counter.count_text(f"- {kept.text}") - counter.count_text(
                    f"- {shorter.text}"
                )
                picked[index] = (kept_field, shorter)
        if used + cost > target:
            if item.from_user:
                # Never silently: the summary says how many it could not hold.
                left_out += 1
                longer, _ = _narrative(messages, previous, left_out)
                used += counter.count_text(longer) - counter.count_text(head)
                head = longer
            continue
        seen.add(key)
        titled.add(field)
        picked.append((field, item))
        used += cost
    _, full_narrative = _narrative(messages, previous, left_out)
    room = target - used + counter.count_text(head) + 1
    narrative = _fit(full_narrative, min(target // 4, room), counter)
    if counter.count_text(narrative) < counter.count_text(head) and room > 0:
        narrative = _fit(head, room, counter)

    def build() -> SummaryContent:
        sections: dict[str, list[tuple[int, int, SummaryItem]]] = {f: [] for f in SECTION_TITLES}
        for rank, (field, item) in enumerate(picked):
            age = ages.get(id(item), len(earlier_items))
            sections[field].append((age, rank, item))
        return SummaryContent(
            summary_text=narrative,
            **{f: tuple(item for _, _, item in sorted(rows)) for f, rows in sections.items()},
        )

    content = build()
    # Lines were counted apart; tokens can merge across line breaks, so check the whole and
    # give up the narrative before any item, then items from the lowest priority up.
    while counter.count_text(render_summary(content)) > target:
        if len(narrative) > len(head) or (narrative and not picked):
            narrative = narrative[: max(len(narrative) // 2, len(head) if picked else 0)]
        elif picked:
            picked.pop()
        else:
            break
        content = build()
    return content
