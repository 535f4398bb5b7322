"""A deterministic, offline summariser that keeps the user's own words first.

It does not paraphrase: it picks sentences, in six named stages (:func:`summarize_extractive`).
Every sentence the user wrote is a candidate, judged by :mod:`app.budget.statements`: a
statement (a name in any script, a place, a person, an owner, a rule, a preference, a time or
an amount in words, a fact inside a request, another language), a routine request, or small
talk. Statements fill a bounded block (:data:`USER_BLOCK_SHARE` of the target) newest first;
routine requests only while the block is at most half full; small talk never. What the
previous summary held competes with the new on the same terms, and a correction replaces the
statement it revises. Decisions, open questions, action items and sentences dense in specifics
read off the assistant's and the tools' messages fill what is left. A statement that leaves
the block is counted and listed by message id in the summary's text (a notice never cut) and
in ``SummaryContent.left_out`` (recorded in the audit row); a routine line that leaves it is
listed in ``SummaryContent.routine_left_out`` (recorded in the audit row, not in the notice).
Each item cites its messages.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from app.budget.proposals import (
    Proposal,
    Response,
    asked_in_full,
    chosen_line,
    declines,
    proposal,
    respond,
    subject,
)
from app.budget.statements import (
    ROUTINE_SHAPE_MENTIONS,
    Tier,
    answer_line,
    asks,
    asks_for_value,
    claim,
    fix_typo,
    holds_revised_value,
    is_answer,
    is_answer_line,
    is_bare_revision,
    is_correction,
    is_request,
    keeps_history,
    question_subject,
    refers_back,
    restated,
    revises,
    revises_nearest,
    revision_keys,
    revision_probe,
    shape,
    slots,
    subject_key,
    tier,
    typo_fix,
)
from app.budget.summary import SECTION_TITLES, SummaryContent, SummaryItem
from app.budget.tokens import TokenCounter
from app.offload import off_the_loop
from app.summarize.base import SourceMessage, SummaryRequest
from app.summarize.pasted import is_pasted_line
from app.summarize.pasted import read as read_pasted

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
        "etc",
        "al",
        "no",
        "nr",
        "ca",
    ]
)
#: Initials and dotted abbreviations: J. / U.S. / e.g. / i.e. / a.m. A lone lower-case
#: letter ("… on a. Still open") is a word that ends a sentence, not an initial.
_DOTTED = re.compile(r"^(?:[A-Z]\.|(?:[A-Za-z]\.){2,})$")
#: A day and a month as European dates are written, before the stop that ends them: "14.03".
_DAY_MONTH = re.compile(r"^\(?\d{1,2}\.\d{1,2}$")
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
#: A fact is dense in specifics: at least one number, identifier or name per this many words
#: (a long sentence that merely mentions a number is not a fact worth a line).
_WORDS_PER_SPECIFIC = 20


def _abbreviation(token: str) -> bool:
    token = token.lstrip("(\"'[")
    return _DOTTED.match(token) is not None or token[:-1].lower() in _ABBREVIATIONS


def split_sentences(text: str, *, list_marks: bool = False) -> list[str]:
    """``text`` cut into sentences, one line never joined to the next.

    A full stop after an abbreviation (Dr., e.g., U.S.) or an initial (J. R. Smith) does not
    end a sentence, nor does one followed by a lower-case word; decimals, versions, addresses
    and file paths are never cut. With ``list_marks`` (a user's message), a numbered list's
    mark at the start of a line ("1. The venue is …") stays with its line.
    """
    sentences: list[str] = []
    for line in text.splitlines():
        start = 0
        for end in _SENTENCE_END.finditer(line):
            words = line[start : end.start()].split()
            if not words:
                continue
            following = line[end.end() : end.end() + 1]
            # Chat often starts a sentence in lower case: a full stop followed by a lower-case
            # word ends one unless what it follows is an abbreviation or a single letter.
            if end.group().rstrip() == "." and (
                _abbreviation(words[-1] + ".")
                # A numbered list's mark ("1. The venue is …") opens its line, it ends nothing.
                or (list_marks and start == 0 and len(words) == 1 and words[0].isdigit())
                or (following.islower() and len(words[-1].strip("(\"'[")) <= 1)
                # A day and month written with their full stops ("14.03. 8:00", "am 14.03.
                # um 9 Uhr"): the date's own stop, with its time or the sentence after it.
                or (_DAY_MONTH.match(words[-1]) is not None and not following.isupper())
            ):
                continue
            sentences.append(line[start : end.end()].strip())
            start = end.end()
        sentences.append(line[start:].strip())
    return [sentence for sentence in sentences if sentence]


#: How many distinct texts the fold remembers what it read off (each cache below). A long
#: session's summary holds hundreds of items and every fold weighs each of them again; what
#: is read off an item depends on its text alone, so a fold pays only for the new.
TEXTS_REMEMBERED = 32_768


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _normalise(text: str) -> str:
    return _NORMALISE.sub(" ", text.lower()).strip()


def _clip(sentence: str) -> str:
    sentence = " ".join(sentence.split())
    if len(sentence) <= MAX_ITEM_CHARS:
        return sentence
    return sentence[: MAX_ITEM_CHARS - 1].rstrip() + "…"


@lru_cache(maxsize=TEXTS_REMEMBERED)
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


def _content_words(text: str) -> frozenset[str]:
    # Only item-sized texts are remembered: a whole reply may be megabytes, and the cache
    # would keep every one of them alive for the life of the process.
    if len(text) <= MAX_ITEM_CHARS:
        return _item_content_words(text)
    return _words_of_content(text)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _item_content_words(text: str) -> frozenset[str]:
    return _words_of_content(text)


def _words_of_content(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 4) - _COMMON


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
    #: For the user's confirmation of a correction the assistant proposed: the values the
    #: user said before that it replaces.
    replaces: tuple[str, ...] = ()
    #: And what that correction is about ("venue").
    subject: str = ""


#: Words before which a long unpunctuated message is cut into statements.
_CLAUSE_BREAKS = frozenset(["so", "because", "but", "and", "then", "which", "while", "though"])


#: Where a request or a question to the agent starts inside a user's sentence typed without
#: a full stop ("the status page belongs to Ingeborg's team can you check why …", "the team
#: sits in Dunedin now what's the p99 …"): a piece of its own,
#: so that its tier is judged apart from the statement before it.
_EMBEDDED_REQUEST = re.compile(
    r"(?<=\S)\s+(?=(?:can|could|would) you\b|(?:please|pls)\s+[^\W\d_]|"
    r"what['\u2019]s\b|what is\b|why\b|"
    r"how (?:come|do|does|did|is|are|many|much)\b|any idea\b|(?:does|did|do you)\b|"
    r"(?:grep|rerun|restart|tail|"
    r"check|show|list|bump|open|kill|compare|run|search|look)\s+(?:the|a|for|at|me|it|that|"
    r"again|job|worker|build|logs?|pods?)\b)",
    re.IGNORECASE,
)
#: A name right before a cut: a capitalised word, or one with a letter outside ASCII.
_NAMED_WORD = re.compile(r"(?:^|\s)(?:[A-Z]\S*|\S*[^\x00-\x7f]\S*)\s*$")
#: A request cut out of a sentence needs this many words before it.
_WORDS_BEFORE_REQUEST = 3


def _requests_apart(sentence: str) -> list[str]:
    """``sentence`` cut before each request that follows a statement of a few words."""
    pieces: list[str] = []
    start = 0
    for match in _EMBEDDED_REQUEST.finditer(sentence):
        before = sentence[start : match.start()]
        # A question's own lead-in ("do you think we could run the demo out of …") is no
        # statement to cut a request from.
        # "Zdeněk does the badges": a name before "does" or "did" is its subject, no question.
        verb = sentence[match.end() :].split(maxsplit=1)[0].lower()
        subject = verb in ("does", "did") and _NAMED_WORD.search(before) is not None
        if len(before.split()) >= _WORDS_BEFORE_REQUEST and not is_request(before) and not subject:
            pieces.append(sentence[start : match.start()].strip())
            start = match.end()
    pieces.append(sentence[start:].strip())
    return [piece for piece in pieces if piece]


def _pieces(sentence: str) -> list[str]:
    """A sentence longer than an item may be, cut into pieces before a joining word ("so",
    "because", "but"…) where one falls late enough, else at a word: a long message typed
    without punctuation is still read whole."""
    words = sentence.split()
    pieces: list[str] = []
    current: list[str] = []
    length = 0
    for word in words:
        late = length >= MAX_ITEM_CHARS * 2 // 3 and word.lower() in _CLAUSE_BREAKS
        if current and (late or length + len(word) + 1 > MAX_ITEM_CHARS):
            pieces.append(" ".join(current))
            current, length = [], 0
        current.append(word)
        length += len(word) + 1
    if current:
        pieces.append(" ".join(current))
    return pieces


def _with_clauses_after_questions(sentences: list[str]) -> list[str]:
    """A question and the clause after it that refers back to it, as one ("is the Dunedin
    region big enough? that's where the customer is"): the clause alone has lost its name,
    the question alone reads as a request of the work in hand."""
    joined: list[str] = []
    for sentence in sentences:
        if joined and joined[-1].rstrip().endswith("?") and refers_back(sentence):
            joined[-1] = f"{joined[-1].rstrip()} {sentence.strip()}"
        else:
            joined.append(sentence)
    return joined


def _user_candidates(message: SourceMessage, position: int) -> list[_Candidate]:
    """Every sentence the user wrote, in their words; its tier is judged when room is given
    out. At most a number of them per message: a pasted document is not a list of
    statements about the user."""
    found: list[_Candidate] = []
    # A pasted block or chat thread is read apart from what the user wrote around it, and a
    # dictated message with its punctuation said aloud is read as typed.
    said = read_pasted(message.text)
    text = " ".join(said.prose.split())
    # A correction said in a few sentences ("wait no, I got that wrong before. staging has
    # 32 nodes. sorry", "no wait, a week on Thursday! not the Monday after next") is one
    # statement: apart, the mark leaves the new value and the old value stands alone.
    whole = len(text) <= MAX_ITEM_CHARS and "\n" not in said.prose.strip()
    sentences = (
        [text]
        if whole and is_correction(text)
        else _with_clauses_after_questions(split_sentences(said.prose, list_marks=True))
    )
    for raw in sentences:
        for sentence in (p for part in _requests_apart(raw) for p in _pieces(part)):
            if len(sentence) < 3:
                continue
            item = SummaryItem(sentence, (message.message_id,), from_user=True)
            if _DECISION.search(sentence):
                kind = "decision"
            elif sentence.endswith("?"):
                kind = "question"
            elif _ACTION.search(sentence) and not _SELF_FACT.search(sentence):
                kind = "action"  # a task the user sets ("we need to renew …")
            else:
                kind = "said"
            found.append(_Candidate(kind, 0, item, position))
    found = found[:_USER_STATEMENTS_PER_MESSAGE]
    for line in said.lines:
        item = SummaryItem(_clip(line), (message.message_id,), from_user=True)
        found.append(_Candidate("said", 0, item, position))
    # Other people's words in a pasted thread, with who said them: below all the rest.
    for line in said.thread:
        item = SummaryItem(_clip(line), (message.message_id,))
        found.append(_Candidate("tool fact", 0, item, position))
    return found


def _question_subject(message: SourceMessage) -> str:
    """What the last question in an assistant's message that asks for a value and names
    something asks about (:func:`app.budget.statements.question_subject`); "" when it asks
    for none."""
    if not any(mark in message.text for mark in _QUESTION_MARKS):
        return ""
    for sentence in reversed(split_sentences(message.text)):
        if sentence.rstrip(" \"')]").endswith(_QUESTION_MARKS) and asks_for_value(sentence):
            subject = question_subject(sentence)
            if subject:
                return subject
    return ""


#: A question's mark in Latin, Chinese and Japanese, and Arabic script.
_QUESTION_MARKS = ("?", "\uff1f", "\u061f")


def _answer_candidate(
    messages: tuple[SourceMessage, ...], index: int, before: SourceMessage | None
) -> _Candidate | None:
    """A short message of the user's that answers the question the assistant's message
    just before it asked ("Which day works for the delivery?" - "Thursday"), as one line
    that keeps the question's subject beside the user's words: alone, "Thursday" says
    nothing. A request, a question, courtesy or an answer put off is no answer. The first
    message of a fold answers ``before``, the question the previous fold ended on."""
    message = messages[index]
    asked = messages[index - 1] if index else before
    if message.role != "user" or asked is None or asked.role != "assistant":
        return None
    if not _needs_its_question(message.text):
        return None
    subject = _question_subject(asked)
    if not subject:
        return None
    line = answer_line(subject, message.text)
    item = SummaryItem(line, (message.message_id,), from_user=True)
    return _Candidate("said", 0, item, index)


def _needs_its_question(reply: str) -> bool:
    """Whether the user's ``reply`` is a short answer that says nothing alone ("Thursday",
    "the 17th", "eksekutif aja"): it is kept with its question's subject. An answer that is
    a statement on its own ("5th, no lift") is judged as one, at no extra cost."""
    return len(reply) <= MAX_ITEM_CHARS and is_answer(reply) and _tier(reply) > Tier.PLAIN


def _answered_next(messages: tuple[SourceMessage, ...], index: int) -> bool:
    """Whether the user's message right after ``messages[index]`` (the assistant's) answers
    its question in a line of its own: the question is no longer open."""
    after = index + 1
    return (
        after < len(messages)
        and messages[after].role == "user"
        and _needs_its_question(messages[after].text)
        and bool(_question_subject(messages[index]))
    )


def _question_before(
    earlier: SummaryContent | None, messages: tuple[SourceMessage, ...]
) -> SummaryItem | None:
    """The assistant's question the previous fold ended on, when this fold opens with the
    user's short answer to it: folds part at turns, so a question that ends one turn and
    its answer that opens the next often land in two folds. It is the previous summary's
    open question citing the newest message that summary cites. A proposal the question
    puts forward may be chosen a few messages into the fold ("let me check" … "ok, the
    cheaper one")."""
    if earlier is None or not messages or messages[0].role != "user":
        return None
    cited = [_newest(item) for field in SECTION_TITLES for item in getattr(earlier, field)]
    newest = max(cited, default=-1)
    for item in earlier.open_questions:
        if (
            not item.from_user
            and _newest(item) == newest >= 0
            and _needs_its_question(messages[0].text)
        ):
            return item
    # Folds may part between the proposal and the reply more than once: the newest
    # proposal still open, of a few messages of this session before this fold. Message ids
    # are shared by all sessions, so the distance is counted in the session's messages the
    # previous summary cites after the proposal, not in ids.
    cited_ids = {
        i
        for field in SECTION_TITLES
        for it in getattr(earlier, field)
        for i in it.source_message_ids
    }
    open_proposals = [
        item
        for item in earlier.open_questions
        if not item.from_user
        and len({i for i in cited_ids if i > _newest(item)}) < _PROPOSAL_REACH
        and proposal(item.text) is not None
    ]
    if open_proposals:
        item = max(open_proposals, key=_newest)
        asked = SourceMessage(_newest(item), "assistant", item.text)
        if _BEFORE in _responses(messages, asked)[1]:
            return item
    return None


#: A proposal the previous summary holds is chosen within this many of the session's messages
#: of it that the summary cites (a turn with a tool step is four).
_PROPOSAL_REACH = 16
#: Where :func:`_responses` says the question the previous fold ended on was responded to.
_BEFORE = -1
#: A choice said a few messages after the proposal ("let me check with Dave" … "ok, the
#: later one") is looked for this many of the assistant's messages back.
_PROPOSALS_BACK = 3


def _responses(
    messages: tuple[SourceMessage, ...], before: SourceMessage | None
) -> tuple[dict[int, _Candidate], set[int]]:
    """The user's replies that choose or confirm what the assistant put forward (by the
    index of the reply: its line), and the assistant's messages whose proposal was chosen
    or declined (no longer open). A reply right after the proposal may be a bare yes; one
    said a few messages later must say which ("ok, the later one", "the Hilton"), with no
    proposal of the assistant's in between."""
    chosen: dict[int, _Candidate] = {}
    responded: set[int] = set()
    if not any(m.role == "assistant" and "?" in m.text for m in messages) and before is None:
        return chosen, responded
    for index, message in enumerate(messages):
        if message.role != "user":
            continue
        back = 0
        for at in range(index - 1, -2, -1):
            asked = messages[at] if at >= 0 else before
            if asked is None or asked.role != "assistant":
                continue
            back += 1
            if back > _PROPOSALS_BACK or (at >= 0 and at in responded):
                break
            put_forward = proposal(asked.text)
            if put_forward is None:
                if "?" in asked.text:
                    break  # a question of its own in between: the reply answers that one
                continue
            response = respond(put_forward, message.text)
            if response is not None and (
                back == 1 or response.named or len(put_forward.options) > 1
            ):
                chosen[index] = _chosen(put_forward, asked, message, response, index)
            elif declines(put_forward, message.text):
                pass
            else:
                break
            responded.add(at if at >= 0 else _BEFORE)
            break
    return chosen, responded


def _chosen(
    put_forward: Proposal,
    asked: SourceMessage,
    reply: SourceMessage,
    response: Response,
    position: int,
) -> _Candidate:
    line = _clip(chosen_line(put_forward, reply.text, response))
    ids = tuple(i for i in (asked.message_id, reply.message_id) if i >= 0)
    item = SummaryItem(line, ids, from_user=True)
    # Only a confirmation of the assistant's own value revises what the user said before;
    # a value of the user's own in its place is read as their words, and revises nothing.
    replaces = put_forward.replaces if response.chosen else ()
    return _Candidate("said", 0, item, position, replaces, subject(put_forward))


def _candidates(message: SourceMessage, position: int) -> list[_Candidate]:
    if message.role == "user":
        return _user_candidates(message, position)
    found: list[_Candidate] = []
    for raw in split_sentences(message.text):
        sentence = _clip(raw)
        if len(sentence) < 8:
            continue
        item = SummaryItem(sentence, (message.message_id,))
        specificity = _specificity(sentence)
        if message.role != "tool" and _DECISION.search(sentence):
            found.append(_Candidate("decision", specificity + 3, item, position))
        elif message.role != "tool" and sentence.endswith("?"):
            put_forward = proposal(message.text) if message.role == "assistant" else None
            if put_forward is not None and put_forward.sentence.endswith(raw.strip()):
                # What it offers goes with it: the choice may come in the next fold.
                item = SummaryItem(_clip(asked_in_full(put_forward)), item.source_message_ids)
            found.append(_Candidate("question", specificity + 2, item, position))
        elif message.role != "tool" and _ACTION.search(sentence):
            found.append(_Candidate("action", specificity + 1, item, position))
        elif not _dense(sentence):
            continue
        elif message.role == "tool" and specificity >= 3:
            labelled = SummaryItem(_clip(TOOL_LABEL + sentence), item.source_message_ids)
            found.append(_Candidate("tool fact", specificity, labelled, position))
        elif specificity >= 2:
            found.append(_Candidate("fact", specificity, item, position))
    ranked = sorted(found, key=lambda c: -c.score)
    return ranked[: _PER_MESSAGE_LIMIT.get(message.role, 2)]


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


#: The share of a summary's target that the user's own words may fill (the user block). The
#: rest, and whatever the block leaves unused, goes to decisions, facts and questions read
#: off the assistant's and the tools' messages, and to the narrative.
USER_BLOCK_SHARE = 0.75
#: Routine requests and small talk are kept only while the block is at most this full.
ROUTINE_ROOM_SHARE = 0.5
#: A statement said again and again word for word is kept while it fits in this share of
#: the block, after the statements said fewer times.
REPEATED_STATEMENT_SHARE = 1.0
#: Of one paste's lines, this many (its most specific) take room as the user's statements
#: do; the rest give way to every sentence the user wrote, plain ones included.
PASTE_LEAD_LINES = 3
#: How many message ids the notice of what was left out lists (the audit row lists all).
NOTICE_IDS = 12
#: Of the assistant's and tools' items, which kind gives way last.
_KIND_RANK = {"decision": 0, "question": 1, "fact": 2, "action": 3, "tool fact": 4}
_FIELD_OF = {
    "decision": "decisions",
    "question": "open_questions",
    "action": "action_items",
    "said": "key_facts",
    "fact": "key_facts",
    "tool fact": "key_facts",
}


@dataclass(frozen=True)
class _Entry:
    """An item competing for room: new or carried from the previous summary alike."""

    field: str
    item: SummaryItem
    #: Which gives way first: a user tier (statements, routine, small talk) or a kind rank.
    rank: int
    score: int
    #: The newest message it cites (message ids grow with time); -1 when it cites none.
    newest: int
    #: Held by the previous summary: leaving now is leaving the block, counted and listed.
    carried: bool = False
    #: A request judged a statement on its own, made routine by being said again and again:
    #: leaving, it is listed with the routine lines that left (``routine_left_out``).
    repeated: bool = False
    #: Of those, one that asks nothing (a statement said again and again): it gives way to
    #: the statements said fewer times, and leaves the block as a statement, counted.
    stated: bool = False
    #: A confirmed correction the assistant proposed: the values of the user's earlier
    #: statement it replaces.
    replaces: tuple[str, ...] = ()
    #: And what that correction is about.
    subject: str = ""


def _newest(item: SummaryItem) -> int:
    return max(item.source_message_ids, default=-1)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _tier(text: str) -> int:
    """The user's sentence's tier (:func:`app.budget.statements.tier`), judged once per text:
    the rules are the code's, so a text's tier cannot change within a process."""
    return int(tier(text))


#: A target no summary reaches.
_ANY_SIZE = 1 << 40


def texts_read() -> int:
    """How many of the user's sentences this process has read a tier off (each read once, then
    remembered): what a fold reads afresh, as a count."""
    return _tier.cache_info().misses


def read_items(content: SummaryContent, counter: TokenCounter) -> int:
    """Read off ``content``'s items what a fold on top of it reads, so that the first fold of
    this summary in the process pays only for its new messages; returns the items read.

    A worker that has not folded a summary itself (a restart, another worker's summary) would
    otherwise read every carried item on that first fold: for a long session's summary of
    ~700 items, a second or more of CPU against ~20 ms for the next fold. Bounded by the
    summary's size, never by the session's history. The fold's outcome is the same either
    way (each reading depends on the text alone)."""
    # Stages 2 to 6 over the carried items alone: tiers, keys, revision keys, lines counted
    # (a target that takes every line: each is counted, none is dropped and counted again).
    summarize_extractive(
        SummaryRequest(previous=content, messages=(), target_tokens=_ANY_SIZE, counter=counter)
    )
    items = [item for field in SECTION_TITLES for item in getattr(content, field)]
    for item in items:
        # What a new statement is weighed against (``_revises``): each carried statement's
        # claim and those of the statements run on inside it.
        if item.from_user and _tier(item.text) <= Tier.PLAIN:
            for text in (item.text, *_run_on_parts(item.text)):
                claim(text)
    return len(items)


def forget_texts() -> None:
    """Forget what the fold read off texts (the next fold reads everything again). The
    outcome of a fold is the same either way; only its cost differs."""
    for remembered in (
        _tier,
        _normalise,
        _specificity,
        _item_content_words,
        _run_on_parts,
        _pasted_line,
    ):
        remembered.cache_clear()
    _LINE_TOKENS.clear()


def _user_entry(
    field: str,
    item: SummaryItem,
    *,
    carried: bool = False,
    replaces: tuple[str, ...] = (),
    subject: str = "",
) -> _Entry:
    return _Entry(
        field,
        item,
        _tier(item.text),
        0,
        _newest(item),
        carried,
        replaces=replaces,
        subject=subject,
    )


def _other_entry(field: str, kind: str, item: SummaryItem, score: int) -> _Entry:
    return _Entry(field, item, _KIND_RANK[kind], score, _newest(item))


def _extract(
    messages: tuple[SourceMessage, ...], asked_before: SummaryItem | None = None
) -> tuple[list[_Entry], list[_Entry]]:
    """Stage 1: what the new messages offer: the user's sentences, and the rest by score.

    A question is open only while no later message of the other side takes it up (or the
    user's next message answers it); the user's answered question stays what they asked,
    as a key fact. ``asked_before`` is the question the previous fold ended on."""
    users: list[_Entry] = []
    others: list[_Entry] = []
    before = (
        None
        if asked_before is None
        else SourceMessage(_newest(asked_before), "assistant", asked_before.text)
    )
    chosen, responded = _responses(messages, before)
    for index, message in enumerate(messages):
        answer = chosen.get(index) or _answer_candidate(messages, index, before)
        for candidate in [answer] if answer else _candidates(message, index):
            kind = candidate.kind
            if kind == "question":
                asker = "user" if candidate.item.from_user else "assistant"
                if (
                    _answered(candidate.item.text, asker, messages[index + 1 :])
                    or (asker == "assistant" and _answered_next(messages, index))
                    or (asker == "assistant" and index in responded)
                ):
                    if not candidate.item.from_user:
                        continue
                    kind = "said"
            if candidate.item.from_user:
                users.append(
                    _user_entry(
                        _FIELD_OF[kind],
                        candidate.item,
                        replaces=candidate.replaces,
                        subject=candidate.subject,
                    )
                )
            else:
                others.append(_other_entry(_FIELD_OF[kind], kind, candidate.item, candidate.score))
    return users, others


def _carried(
    earlier: SummaryContent,
    messages: tuple[SourceMessage, ...],
    answered: SummaryItem | None = None,
) -> tuple[list[_Entry], list[_Entry]]:
    """Stage 2: the previous summary's items, to compete with the new ones on the same terms
    (the user's by tier and age, the rest by kind and specificity, never by age alone).
    ``answered`` is the assistant's question this fold's first message answers: no longer
    open, it is kept as the answer's line."""
    users: list[_Entry] = []
    others: list[_Entry] = []
    for field in SECTION_TITLES:
        for item in getattr(earlier, field):
            if item is answered:
                continue
            if field == "open_questions":
                asker = "user" if item.from_user else "assistant"
                if _answered(item.text, asker, messages):
                    if not item.from_user:
                        continue
                    field = "key_facts"  # still what they asked, no longer open
            if item.from_user:
                users.append(_user_entry(field, item, carried=True))
                continue
            kind = {
                "decisions": "decision",
                "open_questions": "question",
                "action_items": "action",
            }.get(field, "tool fact" if _from_tool(item) else "fact")
            score = _specificity(item.text) + (3 - min(3, _KIND_RANK[kind]))
            others.append(_other_entry(field, kind, item, score))
    return users, others


def _unique(entries: Iterable[_Entry]) -> list[_Entry]:
    """One entry per text (compared normalised), the first seen, citing every source."""
    kept: dict[str, _Entry] = {}
    for entry in entries:
        key = _normalise(entry.item.text.removeprefix(TOOL_LABEL))
        if not key:
            continue
        if key in kept:
            first = kept[key]
            ids = tuple(
                dict.fromkeys((*first.item.source_message_ids, *entry.item.source_message_ids))
            )
            item = SummaryItem(first.item.text, ids, first.item.from_user or entry.item.from_user)
            kept[key] = _Entry(
                first.field,
                item,
                first.rank,
                first.score,
                max(first.newest, entry.newest),
                first.carried or entry.carried,
            )
        else:
            kept[key] = entry
    return list(kept.values())


def _routine_key(text: str) -> str:
    """What a recurring sentence is recognised by: a request's or a question's shape
    (:func:`app.budget.statements.shape`), any other sentence's words. Declaratives of one
    shape with other values are a list of facts ("Person 3 is Bogdana, who works from
    Malmö …", "customer Acme is on Gold"), not a routine."""
    return (asks(text) and shape(text)) or _normalise(text)


def _chosen_line(entry: _Entry) -> bool:
    """Whether ``entry`` is the line of a choice or a confirmation of what the assistant put
    forward: an answer's line citing the proposal beside the reply."""
    return len(entry.item.source_message_ids) > 1 and is_answer_line(entry.item.text)


def _routines(entries: list[_Entry]) -> list[_Entry]:
    """Stage 2b: the user's requests and questions of one shape said
    :data:`~app.budget.statements.ROUTINE_SHAPE_MENTIONS` times or more, each time of other
    names or times ("did the reminder go out to X?", "cancel X's 11:45, she's sick"), and
    any sentence said word for word as often (the same aside about a slow morning, or a
    fact an agent sends anew every turn: "I am allergic to penicillin"), give way to the
    statements said fewer times. A correction is never one. A choice's line is one like any
    other (routine confirmations, "deploy build 4811 to staging? \u2192 yes", said again and
    again): of a shape chosen that many times only the newest line is kept. A request leaves
    the block like a routine request; a statement said again and again leaves it as a statement
    (counted in the notice), for it may be a fact the user wants kept."""
    mentions: dict[str, int] = {}
    newest_choice: dict[str, int] = {}
    for entry in entries:
        if entry.item.from_user and entry.rank <= Tier.PLAIN:
            key = _routine_key(entry.item.text)
            if _chosen_line(entry):
                # One line per choice, citing the proposal and the reply: counted once.
                mentions[key] = mentions.get(key, 0) + 1
                newest_choice[key] = max(newest_choice.get(key, -1), entry.newest)
            else:
                mentions[key] = mentions.get(key, 0) + len(entry.item.source_message_ids)
    routine: list[_Entry] = []
    for entry in entries:
        key = _routine_key(entry.item.text)
        if (
            entry.item.from_user
            and entry.rank <= Tier.PLAIN
            and mentions.get(key, 0) >= ROUTINE_SHAPE_MENTIONS
            and not is_correction(entry.item.text)
        ):
            if _chosen_line(entry) and entry.newest < newest_choice.get(key, -1):
                continue  # the same confirmation again: only its newest is kept
            entry = replace(
                entry, rank=Tier.ROUTINE, repeated=True, stated=not asks(entry.item.text)
            )
        routine.append(entry)
    return routine


#: Where a message typed as one run-on line may start a new statement.
_RUN_ON = re.compile(
    r"\s+(?=(?:the|my|our|ok|so|also|and|but|oh|btw|fyi)\b)"
    # A capitalised word after a lower-case one: a name that starts the next statement
    # ("… nodes at peak Gustavo owns the payments dashboard").
    r"|(?<=[a-z0-9,])\s+(?=[A-Z][^\W\d_]+\s)"
)
#: A piece of a run-on message states something of its own only when it has a verb of its
#: own; "the last Friday in April" belongs to the piece before it.
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|owns?|handles?|belongs?|runs?|uses?|needs?|"
    r"wants?|works?|sits?|lives?|moved|prefers?|likes?|loves?|hates?|signs?|approves?|must|"
    r"can|will|should|goes|keep|never|always|don['\u2019]t)\b",
    re.IGNORECASE,
)


#: How many words a piece left of a revised run-on message needs to stay.
_RUN_ON_WORDS = 5


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _run_on_parts(statement: str) -> tuple[str, ...]:
    """A message typed as one run-on line, cut where a new statement may start; a piece
    without a verb of its own stays joined to the piece before it (or after, if first)."""
    parts: list[str] = []
    pending = ""
    for piece in _RUN_ON.split(statement):
        if not piece.strip():
            continue
        if parts and not _VERB.search(piece):
            parts[-1] += " " + piece
            continue
        piece = f"{pending} {piece}".strip() if pending else piece
        if not _VERB.search(piece):
            pending = piece
            continue
        parts.append(piece)
        pending = ""
    if pending:
        if parts:
            parts[-1] += " " + pending
        else:
            parts.append(pending)
    return tuple(parts)


def _revises(correction: str, statement: str, just_before: bool) -> int:
    """How strongly ``correction`` revises ``statement`` or one statement run on inside it."""
    return max(
        revises(correction, statement, just_before=just_before),
        *(revises(correction, part, just_before=just_before) for part in _run_on_parts(statement)),
    )


def _unrevised(statement: str, correction: str, just_before: bool) -> str:
    """What of a run-on ``statement`` the correction does not revise ("" when all of it is
    revised, or no part of it alone is)."""
    parts = _run_on_parts(statement)
    kept = [part for part in parts if not revises(correction, part, just_before=just_before)]
    revised = [part for part in parts if part not in kept]
    # What is left must read as a statement of its own, or it is a stray value; and the old
    # value must be in what leaves: "my manager is" revised leaves "Zoë Lindqvist, who signs
    # off …", the old manager still.
    if any(len(part.split()) < _RUN_ON_WORDS for part in kept) or not any(
        holds_revised_value(part, correction) for part in revised
    ):
        return ""
    if len(kept) in (0, len(parts)):
        return ""
    return " ".join(kept)


def _revise(
    result: dict[int, _Entry],
    gone: set[int],
    later: int,
    earlier: int,
    correction: str,
    just_before: bool,
    *,
    history: bool = True,
) -> None:
    """The statement at ``earlier`` revised by (part of) the one at ``later``: it leaves, or
    only its revised part does; the correction cites it too, so pruning keeps both. A bare
    correction ("make that Thursday instead") says what it revises as history: "make that
    Thursday instead (was: the retro is on Tuesday)"; a second copy of the same fact
    (``history`` off) adds no second "(was: …)"."""
    replaced = result[earlier].item
    rest = _unrevised(replaced.text, correction, just_before)
    if rest:
        # Only part of a run-on message is revised: the rest of it stays, in its words.
        kept = SummaryItem(rest, replaced.source_message_ids, from_user=True)
        result[earlier] = _user_entry(result[earlier].field, kept, carried=True)
    else:
        gone.add(earlier)
    current = result[later]
    ids = tuple(dict.fromkeys((*current.item.source_message_ids, *replaced.source_message_ids)))
    text = current.item.text
    if history and keeps_history(correction, replaced.text):
        # What it revised says what the correction does not: which statement a bare one
        # revises, or a detail it leaves as it was ("same flight, but on the 9th" keeps the
        # flight's number). One clause, so that it reads as history of this line.
        was = replaced.text.removesuffix(rest).strip() if rest else replaced.text
        was = was.replace(";", ",").replace("\n", " ")
        text = _clip(f"{text} (was: {was})")
    item = SummaryItem(text, ids, from_user=True)
    result[later] = replace(current, item=item)


#: A bare correction revises a statement of one of this many messages before it.
_JUST_BEFORE_MESSAGES = 3


def _index(by_key: dict[str, list[int]], index: int, text: str) -> None:
    """File the statement at ``index`` under each word ``text`` may be revised through (a
    correction that took "(was: …)" is filed again under the words of what it revised)."""
    for key in revision_keys(text):
        by_key.setdefault(key, []).append(index)


def _sharing(
    part: str,
    said_before: int,
    ordered: list[_Entry],
    by_key: dict[str, list[int]],
    messages: list[int],
    here: int,
) -> list[int]:
    """Of the statements ``ordered[:said_before]`` (those of earlier messages), the ones
    ``part`` may revise, in the order they were said: those sharing a word it could revise
    them through (:func:`app.budget.statements.revision_probe`), and, for a bare
    correction, those of the messages just before it (``messages[here]`` is its own)."""
    found = {
        index
        for key in revision_probe(part)
        for index in by_key.get(key, ())
        if index < said_before
    }
    if is_bare_revision(part):
        first = messages[max(0, here - _JUST_BEFORE_MESSAGES)]
        found.update(
            index
            for index in range(bisect_left([e.newest for e in ordered], first), said_before)
            if ordered[index].rank <= Tier.PLAIN
        )
    return sorted(found)


def _supersede(
    statements: list[_Entry],
    messages_now: tuple[SourceMessage, ...] = (),
    summarised: SummaryContent | None = None,
) -> tuple[list[_Entry], dict[int, int]]:
    """Stage 3: a later statement replaces the earlier one it revises, which leaves the
    summary (:func:`app.budget.statements.revises`): a correction or an unmarked
    restatement on the same subject with another value, or a bare correction ("make that
    Thursday instead") of the nearest statement holding a value of its kind. Each
    correction run on in one message revises its own statement; a carried statement is
    revised like a new one. A typo fix ("*Kowalski", "sorry, 45 not 54") puts right only the
    user's message just before it, and a star that fixes nothing there is no statement.

    Returns the statements left, and the user's messages every statement of which (small
    talk aside) a later one replaced whole, each to the message that replaced it
    (``_replaced_messages``)."""
    ordered = sorted(statements, key=lambda entry: entry.newest)
    # The user's messages, new and summarised, and what the assistant said between them (in
    # the new messages, or as the previous summary kept it: "Should Dana or Lee sign?").
    user_ids = sorted(
        {i for entry in ordered for i in entry.item.source_message_ids}
        | {m.message_id for m in messages_now if m.role == "user"}
    )
    assistant_said: dict[int, str] = {}
    for field in SECTION_TITLES if summarised is not None else ():
        for item in getattr(summarised, field):
            if not item.from_user:  # answered or not: what the assistant asked
                said = assistant_said.get(_newest(item), "")
                assistant_said[_newest(item)] = f"{said} {item.text.lower()}"
    for message in messages_now:
        if message.role == "assistant":
            assistant_said[message.message_id] = message.text.lower()
    gone: set[int] = set()
    # The statements replaced whole, each to the message of the statement that replaced it.
    replaced_by: dict[int, int] = {}
    result: dict[int, _Entry] = dict(enumerate(ordered))
    messages = sorted({entry.newest for entry in ordered})
    order_of = {message: index for index, message in enumerate(messages)}
    newests = [entry.newest for entry in ordered]
    # Each statement is weighed only against the earlier ones sharing a word it could
    # revise them through (what is left of a revised one holds no word its whole did not).
    by_key: dict[str, list[int]] = {}
    for index, entry in enumerate(ordered):
        if entry.rank <= Tier.PLAIN:
            _index(by_key, index, entry.item.text)
    for later, entry in enumerate(ordered):
        # A carried statement has replaced what it revised in the fold that brought it.
        if entry.carried or entry.rank > Tier.PLAIN or later in gone:
            continue
        text = entry.item.text
        here = order_of[entry.newest]
        # The statements of earlier messages are those before the first of this one's.
        said_before = bisect_left(newests, entry.newest)
        if entry.replaces:
            left = set(gone)
            _confirm_correction(result, gone, ordered, later, said_before)
            if _answers_just_before(entry, messages_now):
                # A "yes" to a proposal further back may answer something else: what it
                # revised stays in the summary's hands, but is not superseded for recall.
                replaced_by |= dict.fromkeys(gone - left, entry.newest)
            continue
        fix = typo_fix(text)
        if fix is not None:
            fixed = _fix_typo_before(result, gone, ordered, later, fix, user_ids, assistant_said)
            if fixed is not None:
                _index(by_key, fixed, result[fixed].item.text)
            elif fix[1] is None:
                # "*important", "price*", "*ptr": emphasis, a footnote, no statement.
                result[later] = replace(entry, rank=Tier.SMALL_TALK)
            continue
        if _answers_either_or(text, _asked_before(entry.newest, user_ids, assistant_said)):
            continue  # "Lee, not Dana" to "Should Dana or Lee sign?" chooses, it revises nothing
        marked = is_correction(text)
        # Corrections run on in one message are revised apart, when each says its subject
        # ("correction: the new hire is Lorcan and the office moved to Riga"); a mark that
        # names no subject ("I was wrong about X.") belongs to the rest of the message.
        parts = [p for p in _run_on_parts(text) if is_correction(p)] if marked else []
        if len(parts) < 2 or not all(subject_key(p) for p in parts):
            parts = [text]
        options = {
            part: [
                (strength, earlier, just_before)
                for earlier in _sharing(part, said_before, ordered, by_key, messages, here)
                # A statement already revised is no option (with several parts, each
                # part's count of options decides which chooses first: all are counted).
                if len(parts) > 1 or earlier not in gone
                if (
                    strength := _revises(
                        part,
                        result[earlier].item.text,
                        just_before := here - order_of[ordered[earlier].newest]
                        <= _JUST_BEFORE_MESSAGES,
                    )
                )
                > 0
            ]
            for part in parts
        }
        # The part with the fewest candidates chooses first, so that each finds its own.
        for part in sorted(parts, key=lambda p: len(options[p])):
            free = [option for option in options[part] if option[1] not in gone]
            if free:
                _, earlier, just_before = max(free)
                revised = result[earlier].item.text
                # The fact said twice ("the plumber is X", later "as I said, the plumber is
                # X"): every copy it revises leaves with it, or the old value stays current.
                copies = [
                    (copy, near)
                    for _, copy, near in sorted(free, key=lambda option: option[1])
                    if copy != earlier and restated(revised, result[copy].item.text, part)
                ]
                for replaced, near in [(earlier, just_before), *copies]:
                    _revise(result, gone, later, replaced, part, near, history=replaced == earlier)
                    if replaced in gone:
                        replaced_by[replaced] = entry.newest
                _index(by_key, later, result[later].item.text)
            elif revises_nearest(part):
                # Said long after what it revises: the nearest statement of its kind.
                kinds = slots(part)
                nearest = [
                    earlier
                    for earlier in range(said_before)
                    if ordered[earlier].rank <= Tier.PLAIN
                    and earlier not in gone
                    and kinds & slots(result[earlier].item.text)
                ]
                if nearest:
                    _revise(result, gone, later, max(nearest), part, True)
                    if max(nearest) in gone:
                        replaced_by[max(nearest)] = entry.newest
                    _index(by_key, later, result[later].item.text)
    kept = [entry for index, entry in sorted(result.items()) if index not in gone]
    return kept, _replaced_messages(ordered, replaced_by)


def _replaced_messages(ordered: list[_Entry], replaced_by: dict[int, int]) -> dict[int, int]:
    """The user's messages (by the message each statement was said in, its newest) whose
    every statement but small talk is one of ``replaced_by`` (indexes of ``ordered``), each
    to the newest message that replaced one of them. A message that also says something no
    correction replaced, or only part of which a correction replaced (what is left of it
    stays in the summary), is not one. A typo fix is not a replacement: the line it puts
    right stays, and the fix alone ("*Kowalski") would say nothing recalled."""
    said_in: dict[int, list[int]] = {}
    for index, entry in enumerate(ordered):
        if entry.rank < Tier.SMALL_TALK and entry.newest >= 0:
            said_in.setdefault(entry.newest, []).append(index)
    return {
        message: max(replaced_by[index] for index in indexes)
        for message, indexes in said_in.items()
        if all(index in replaced_by for index in indexes)
    }


def _answers_just_before(entry: _Entry, messages_now: Sequence[SourceMessage]) -> bool:
    """Whether a confirmation answers the assistant's message just before it: the proposal
    it confirms (cited first) is the message before the user's reply in this fold."""
    ids = entry.item.source_message_ids
    if len(ids) < 2:
        return False
    order = [message.message_id for message in messages_now]
    reply = order.index(entry.newest) if entry.newest in order else 0
    return reply > 0 and order[reply - 1] == ids[0]


def _confirm_correction(
    result: dict[int, _Entry], gone: set[int], ordered: list[_Entry], later: int, said_before: int
) -> None:
    """The user confirmed the correction the assistant proposed ("You said the venue is the
    Marriott, but the booking shows the Hilton: should I update it?" - "yes"): the nearest
    earlier statement of the user's that holds a value it replaces, is about what the
    proposal is about (shares its subject's words) and says nothing else ("the venue is
    the Marriott") leaves, told as history. One that says more ("Marta's birthday dinner is
    at Nonna's") stays as it is, and the confirmation's line beside it says what changed.
    When unsure (no statement about the proposal's subject), nothing is revised."""
    entry = ordered[later]
    about = _words(entry.subject) - _PLAIN_STATEMENT
    if not about:
        return
    for earlier in range(said_before - 1, -1, -1):
        if earlier in gone or ordered[earlier].rank > Tier.PLAIN:
            continue
        replaced = result[earlier].item
        olds = [
            value
            for value in entry.replaces
            if re.search(rf"(?<!\w){re.escape(value)}(?!\w)", replaced.text, re.IGNORECASE)
        ]
        if not replaced.from_user or not olds:
            continue
        said = _words(replaced.text)
        if not about & said:
            continue  # holds the old value, but is about something else
        rest = said - about - {w for old in olds for w in _words(old)} - _PLAIN_STATEMENT
        if not rest:
            gone.add(earlier)  # else it says more than the value: kept whole
        ids = tuple(dict.fromkeys((*entry.item.source_message_ids, *replaced.source_message_ids)))
        # The old value as history, in few words: the line says what it is about.
        text = _clip(f"{entry.item.text} (was: {' / '.join(olds)})")
        result[later] = replace(entry, item=SummaryItem(text, ids, from_user=True))
        return


#: Words that say nothing of their own in a statement a confirmed correction revises.
_PLAIN_STATEMENT_TEXT = """i you it we my our your the a an is are was were be been will now
    still just at in on for of to by with s"""
_PLAIN_STATEMENT = frozenset(_PLAIN_STATEMENT_TEXT.split())


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W_]+", text)}


#: A choice said as "X, not Y" ("tea, not coffee", "Lee, not Dana").
_CHOICE = re.compile(r"^\W*(?:the\s+)?([^\s,;:!?]+),?\s+not\s+(?:the\s+)?([^\s,;:!?]+?)\W*$")


def _asked_before(newest: int, user_ids: list[int], assistant_said: dict[int, str]) -> str:
    """What the assistant said between the user's message ``newest`` and the one before."""
    here = bisect_left(user_ids, newest)
    before = user_ids[here - 1] if here else -1
    return " ".join(t for i, t in sorted(assistant_said.items()) if before < i < newest)


def _names_both(asked: str, first: str, second: str) -> bool:
    return bool(asked) and all(
        re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", asked) for w in (first, second)
    )


def _answers_either_or(text: str, asked: str) -> bool:
    """Whether ``text`` picks one of two things the assistant just named ("Tea or coffee?":
    "tea, not coffee"): an answer, not a correction of what the user said before."""
    choice = _CHOICE.match(text)
    return choice is not None and _names_both(asked, choice.group(1), choice.group(2))


def _fix_typo_before(
    result: dict[int, _Entry],
    gone: set[int],
    ordered: list[_Entry],
    later: int,
    fix: tuple[str, str | None],
    user_ids: list[int],
    assistant_said: dict[int, str],
) -> int | None:
    """Put right, by the typo ``fix`` the statement ``later`` makes, a statement of the user's
    message just before it (never an older one), and say which; None when none holds the
    word it fixes, or when the assistant just asked which of the two ("Should Dana or Lee
    sign?": "sorry, Lee not Dana" answers, it fixes nothing)."""
    entry = ordered[later]
    here = bisect_left(user_ids, entry.newest)
    if here == 0:
        return None
    before = user_ids[here - 1]
    asked = _asked_before(entry.newest, user_ids, assistant_said)
    for earlier in range(later - 1, -1, -1):
        replaced = result[earlier].item
        if before not in replaced.source_message_ids or ordered[earlier].newest > before:
            continue
        if earlier in gone or ordered[earlier].rank > Tier.PLAIN:
            continue
        fixed = fix_typo(replaced.text, fix)
        if fixed is None:
            continue
        old = fixed.rsplit(" (was: ", 1)[-1].removesuffix(")").lower()
        if _names_both(asked, fix[0], old):
            return None
        ids = tuple(dict.fromkeys((*replaced.source_message_ids, *entry.item.source_message_ids)))
        item = SummaryItem(_clip(fixed), ids, from_user=True)
        result[earlier] = replace(result[earlier], item=item)
        gone.add(later)
        return earlier
    return None


#: Tokens of a summary's line by the counter's name (which names how it counts: encoding,
#: scale, rules) and the line: a long summary's hundreds of lines are weighed at every fold.
_LINE_TOKENS: dict[tuple[str, str], int] = {}


def _line_tokens(counter: TokenCounter, counter_name: str, line: str) -> int:
    key = (counter_name, line)
    tokens = _LINE_TOKENS.get(key)
    if tokens is None:
        if len(_LINE_TOKENS) >= TEXTS_REMEMBERED:
            _LINE_TOKENS.clear()
        tokens = _LINE_TOKENS[key] = counter.count_text(line)
    return tokens


@dataclass
class _Room:
    """What a summary has used of its target, counted line by line."""

    counter: TokenCounter
    used: int = 0
    titled: set[str] | None = None

    def __post_init__(self) -> None:
        self.counter_name = self.counter.name

    def cost(self, entry: _Entry) -> int:
        # A line costs its text, its bullet and its line break; the first line of a section
        # also pays for the section's title.
        titled = self.titled if self.titled is not None else set()
        cost = _line_tokens(self.counter, self.counter_name, f"- {entry.item.text}") + 1
        if entry.field not in titled:
            title = f"{SECTION_TITLES[entry.field]}:"
            cost += _line_tokens(self.counter, self.counter_name, title) + 1
        return cost

    def take(self, entry: _Entry, cost: int) -> None:
        """Book ``entry`` at the ``cost`` just weighed for it."""
        self.used += cost
        if self.titled is None:
            self.titled = set()
        self.titled.add(entry.field)


def left_out_notice(left_out: Sequence[SummaryItem]) -> str:
    """How a summary says which of the user's statements left its block ("" for none)."""
    if not left_out:
        return ""
    ids = sorted({i for item in left_out for i in item.source_message_ids})
    shown = ", ".join(f"#{i}" for i in ids[:NOTICE_IDS]) + (", …" if len(ids) > NOTICE_IDS else "")
    return f"{len(left_out)} user statement(s) left out for room (messages {shown})"


def _notice(left_out: list[_Entry]) -> str:
    """What left the block, said in the summary itself (never cut)."""
    if not left_out:
        return ""
    return "; " + left_out_notice([entry.item for entry in left_out])


@dataclass
class _UserBlock:
    """What stage 4 made of the user's words."""

    kept: list[_Entry]
    #: Statements that left for room: counted in the summary's notice, listed in the audit.
    left_out: list[_Entry]
    #: Routine lines that left the block (carried, or a request said again and again): no
    #: statement, so not in the notice, but listed in the audit all the same.
    routine_left_out: list[_Entry]


def _leaves_as_routine(entry: _Entry) -> bool:
    """Whether a routine line the block does not keep leaves it (and is listed): it was in
    the block, or it would be a statement but for being said again and again. A routine
    request of this fold the block never took is folded, not left out."""
    return entry.carried or entry.repeated


def _paste_surplus(statements: Iterable[_Entry]) -> set[int]:
    """The entries (by ``id``) that are a paste's lines beyond its first
    :data:`PASTE_LEAD_LINES`. A paste gives its lines most specific first
    (:func:`app.summarize.pasted.read`) and a summary keeps them in that order, so a line
    carried from an earlier summary is judged as it was when new."""
    lines_of: dict[int, int] = {}
    surplus: set[int] = set()
    for entry in statements:
        if entry.rank > Tier.PLAIN or not entry.item.source_message_ids:
            continue
        if not _pasted_line(entry.item.text):
            continue
        paste = entry.item.source_message_ids[0]
        lines_of[paste] = lines_of.get(paste, 0) + 1
        if lines_of[paste] > PASTE_LEAD_LINES:
            surplus.add(id(entry))
    return surplus


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _pasted_line(text: str) -> bool:
    return is_pasted_line(text)


def _block_order(statements: list[_Entry]) -> list[_Entry]:
    """The user's entries in the order they take room (the reverse of the order they give
    it back): statements, then plain statements, then a paste's lines beyond its most
    specific few, then routine lines; within each, newest first."""
    surplus = _paste_surplus(statements)

    def order(entry: _Entry) -> tuple[int, int, int]:
        behind = id(entry) in surplus
        return (Tier.PLAIN if behind else entry.rank, int(behind), -entry.newest)

    return sorted(statements, key=order)


def _fill_user_block(statements: list[_Entry], limit: int, room: _Room) -> _UserBlock:
    """Stage 4: the user's words, newest first, within the block's share: statements while
    they fit, routine requests only while the block is at most half full, small talk
    never (courtesy carries nothing the agent needs). What the user wrote in their own
    sentences takes room before what they pasted beyond its most specific lines."""
    block = _UserBlock([], [], [])
    newest_first = _block_order(statements)
    for entry in newest_first:
        cost = room.cost(entry)
        if entry.rank <= Tier.PLAIN:
            if room.used + cost <= limit:
                room.take(entry, cost)
                block.kept.append(entry)
            else:
                block.left_out.append(entry)
        elif entry.rank == Tier.ROUTINE and room.used + cost <= limit * (
            REPEATED_STATEMENT_SHARE if entry.stated else ROUTINE_ROOM_SHARE
        ):
            room.take(entry, cost)
            block.kept.append(entry)
        elif entry.stated:
            block.left_out.append(entry)
        elif _leaves_as_routine(entry):
            block.routine_left_out.append(entry)
    return block


def _fill_others(others: list[_Entry], limit: int, room: _Room) -> list[_Entry]:
    """Stage 5: the assistant's and tools' items fill what is left, by kind then specificity
    then age."""
    kept: list[_Entry] = []
    for entry in sorted(others, key=lambda e: (e.rank, -e.score, -e.newest)):
        cost = room.cost(entry)
        if room.used + cost <= limit:
            room.take(entry, cost)
            kept.append(entry)
    return kept


def _content(
    narrative: str,
    entries: list[_Entry],
    left_out: list[_Entry],
    routine_left_out: list[_Entry],
) -> SummaryContent:
    """The summary: each section in the order things were said."""
    sections: dict[str, list[_Entry]] = {field: [] for field in SECTION_TITLES}
    for entry in sorted(entries, key=lambda e: e.newest):
        sections[entry.field].append(entry)
    items = {f: tuple(e.item for e in rows) for f, rows in sections.items()}
    return SummaryContent(
        summary_text=narrative,
        key_facts=items["key_facts"],
        decisions=items["decisions"],
        open_questions=items["open_questions"],
        action_items=items["action_items"],
        left_out=tuple(entry.item for entry in left_out),
        routine_left_out=tuple(entry.item for entry in sorted(routine_left_out, key=_by_age)),
    )


def _by_age(entry: _Entry) -> int:
    return entry.newest


def _take_back(left_out: list[_Entry], users: list[_Entry], room: _Room, target: int) -> None:
    """Room the others left unused takes back statements that left the block, newest first
    (each one taken back also shortens the notice)."""
    counter = room.counter
    for entry in list(left_out):
        notice_saved = counter.count_text(_notice(left_out)) - counter.count_text(
            _notice([e for e in left_out if e is not entry])
        )
        cost = room.cost(entry)
        if room.used + cost - notice_saved <= target:
            room.used -= notice_saved
            room.take(entry, cost)
            users.append(entry)
            left_out.remove(entry)


def _assemble(
    request: SummaryRequest, statements: list[_Entry], others: list[_Entry]
) -> SummaryContent:
    """Stage 6: the block, then the rest, then the narrative (at most a quarter of the
    target), each line counted as it is taken."""
    counter, target = request.counter, request.target_tokens
    head, full = _narrative(request.messages, request.previous)
    room = _Room(counter, used=counter.count_text(head) + 1)
    block = _fill_user_block(statements, int(target * USER_BLOCK_SHARE), room)
    users, left_out = block.kept, block.left_out
    # The notice of what left takes its room before anything else may use it.
    room.used += counter.count_text(_notice(left_out))
    rest = _fill_others(others, target, room)
    _take_back(left_out, users, room, target)
    spare = target - room.used
    told = head.removesuffix(".") + _notice(left_out) + "."
    narrative = told
    if spare > 0 and full != head:
        longer = _fit(full.removeprefix(head), min(target // 4, spare), counter)
        narrative = told + longer if longer.strip() else told
    return _within_target(request, head, narrative, users, rest, left_out, block.routine_left_out)


def _within_target(
    request: SummaryRequest,
    head: str,
    narrative: str,
    users: list[_Entry],
    rest: list[_Entry],
    left_out: list[_Entry],
    routine_left_out: list[_Entry],
) -> SummaryContent:
    """Stage 7: lines were counted apart and tokens can merge across line breaks, so the
    whole is checked: over the target, the narrative gives way to its first sentence and the
    notice, then the others go, then the oldest of the user's (each counted in the notice,
    which is never cut while anything else is left)."""
    counter, target = request.counter, request.target_tokens
    content = _content(narrative, [*users, *rest], left_out, routine_left_out)
    while content.tokens(counter) > target:
        told = head.removesuffix(".") + _notice(left_out) + "."
        if len(narrative) > len(told):
            narrative = told
        elif rest:
            rest.pop()
        elif users:
            oldest = _block_order(users)[-1]
            users.remove(oldest)
            if oldest.rank <= Tier.PLAIN or oldest.stated:
                left_out.append(oldest)
            else:
                routine_left_out.append(oldest)
            narrative = head.removesuffix(".") + _notice(left_out) + "."
        else:
            # A target too small for the notice itself (a few tokens): the count alone, and
            # past that as much of it as fits.
            count = f"{len(left_out)} user statement(s) left out for room." if left_out else ""
            narrative = count if len(narrative) > len(count) else _fit(narrative, target, counter)
            content = _content(narrative, [], left_out, routine_left_out)
            if content.tokens(counter) <= target or not narrative:
                break
            narrative = _fit(narrative, target, counter)
        content = _content(narrative, [*users, *rest], left_out, routine_left_out)
    return content


def summarize_extractive(request: SummaryRequest) -> SummaryContent:
    """Fold ``request.messages`` into ``request.previous`` within ``request.target_tokens``:
    what the new messages offer (1) and what the previous summary held (2) compete on the
    same terms; corrections replace what they revise (3); the user's words fill their block
    (4), the rest what is left (5); the whole is assembled (6) and held to the target (7)."""
    earlier = request.previous or SummaryContent(summary_text="")
    asked_before = _question_before(request.previous, request.messages)
    new_users, new_others = _extract(request.messages, asked_before)
    old_users, old_others = _carried(earlier, request.messages, asked_before)
    statements, replaced = _supersede(
        _routines(_unique([*old_users, *new_users])), request.messages, earlier
    )
    said = {_normalise(entry.item.text) for entry in statements}
    others = [
        entry
        for entry in _unique([*old_others, *new_others])
        if _normalise(entry.item.text.removeprefix(TOOL_LABEL)) not in said
    ]
    revisions = FoldRevisions.of(statements, replaced, request.messages, new_users)
    return revisions.recorded(earlier, _assemble(request, statements, others))


@dataclass(frozen=True)
class FoldRevisions:
    """What a fold's corrections replaced, recorded with the summary it makes
    (``SummaryContent.superseded``) so that recall can tell, by id alone, a user message
    whose every statement is no longer current."""

    #: The user's messages this fold found wholly replaced, each to the message that did.
    replaced: Mapping[int, int]
    #: The statements the fold kept weighing after its corrections (small talk aside): the
    #: message each was said in, and its text.
    statements: tuple[tuple[int, str], ...]
    #: The fold's new user messages that say more than their statements (a pasted code
    #: block, a table): never superseded, whatever replaces their statements.
    says_more: frozenset[int] = frozenset()

    @staticmethod
    def of(
        statements: Iterable[_Entry],
        replaced: Mapping[int, int],
        messages: Sequence[SourceMessage] = (),
        said: Iterable[_Entry] = (),
    ) -> FoldRevisions:
        """The record of a fold: the statements it kept, what its corrections replaced, and
        which of its ``messages`` say more than the statements ``said`` in them."""
        texts: dict[int, list[str]] = {}
        for entry in said:
            texts.setdefault(entry.newest, []).append(entry.item.text)
        says_more = frozenset(
            message.message_id
            for message in messages
            if message.role == "user" and _says_more(message.text, texts.get(message.message_id))
        )
        return FoldRevisions(
            {m: by for m, by in replaced.items() if m not in says_more},
            tuple(
                (entry.newest, entry.item.text)
                for entry in statements
                if entry.rank < Tier.SMALL_TALK and entry.newest >= 0
            ),
            says_more,
        )

    def recorded(self, previous: SummaryContent | None, content: SummaryContent) -> SummaryContent:
        """``content`` (the fold's summary, on top of ``previous``) with the superseded
        messages of every fold so far and the messages it holds only part of.

        A message some statement of which left the summary (for room, or as routine) while
        another stays is held only in part: it says more than the summary shows, so when a
        later fold replaces what is left of it, it is not superseded (recall may still bring
        it back for what left). Carried from summary to summary while anything of it is
        held. A replaced message's record follows a later replacement of what replaced it
        (a twice-corrected value names the newest correction)."""
        earlier_partly = _partly_held(previous)
        held_items = [
            item for name in SECTION_TITLES for item in getattr(content, name) if item.from_user
        ]
        held_texts = {item.text for item in held_items}
        held = {_newest(item) for item in held_items}
        partly = (
            {message for message, text in self.statements if text not in held_texts}
            | earlier_partly
            | self.says_more
        )
        fresh = {m: by for m, by in self.replaced.items() if m not in earlier_partly}
        superseded = {
            m: fresh.get(by, by) for m, by in (previous.superseded if previous else ())
        } | fresh
        return replace(
            content,
            superseded=tuple(sorted(superseded.items())),
            partly_held=tuple(sorted(partly & held)),
        )


def _partly_held(previous: SummaryContent | None) -> frozenset[int]:
    """The messages ``previous`` holds only in part. A summary stored before summaries kept
    this record cannot tell: every user message it holds may say more than it shows, so none
    of them is superseded later (only messages the folds after it bring in are)."""
    if previous is None:
        return frozenset()
    if previous.partly_held is not None:
        return frozenset(previous.partly_held)
    return frozenset(
        _newest(item)
        for name in SECTION_TITLES
        for item in getattr(previous, name)
        if item.from_user
    )


def _says_more(text: str, statements: Iterable[str] | None) -> bool:
    """Whether a user message's ``text`` still has words once the ``statements`` extracted
    from it (in its own words) are taken out: what no statement holds, such as code."""
    rest = text
    for statement in sorted(statements or (), key=len, reverse=True):
        rest = rest.replace(statement, " ", 1)
    return re.search(r"[^\W_]", rest) is not None


@dataclass(frozen=True)
class UserBlock:
    """The user's words a summary keeps, chosen as :func:`summarize_extractive` chooses them,
    for a summariser that writes the rest of the summary another way."""

    #: The kept statements in their sections (no narrative), with ``left_out`` set.
    content: SummaryContent
    #: The user's statements a correction replaced: no longer current, wherever they appear.
    revised: tuple[SummaryItem, ...]
    #: What the fold's corrections replaced, to record with the summary it ends in.
    revisions: FoldRevisions


def user_block(request: SummaryRequest, limit: int) -> UserBlock:
    """Stages 1 to 4 for the user's words alone: what the new messages and the previous
    summary's user items offer, corrections applied, within ``limit`` tokens."""
    earlier = request.previous or SummaryContent(summary_text="")
    asked_before = _question_before(request.previous, request.messages)
    new_users, _ = _extract(request.messages, asked_before)
    old_users, _ = _carried(earlier, request.messages, asked_before)
    candidates = _unique([*old_users, *new_users])
    statements, replaced = _supersede(_routines(candidates), request.messages, earlier)
    current = {_normalise(entry.item.text) for entry in statements}
    block = _fill_user_block(statements, limit, _Room(request.counter))

    def gone(key: str) -> bool:
        # A bare correction stays, told with what it revised: "… instead (was: …)".
        return key not in current and not any(c.startswith(f"{key} was ") for c in current)

    return UserBlock(
        content=_content("", block.kept, block.left_out, block.routine_left_out),
        revised=tuple(e.item for e in candidates if gone(_normalise(e.item.text))),
        revisions=FoldRevisions.of(statements, replaced, request.messages, new_users),
    )
