"""The recall block: what the conversation said earlier, no longer in the prompt, brought back
for the current turn.

A session that turns recall on has its stored messages searched, at each turn start, for the
words of the turn's user message among those that left the prompt (summarised or pruned).
The best hits, within a share of the input budget, go into one ``user`` message placed just
before the current turn: after the whole history, so the prompt up to there is the previous
prompt's prefix and the provider's cache still hits it. User and assistant text, and what
tools returned, is recalled as quoted text inside the block, never as a message of its own
role: a ``tool`` message must answer the ``tool_calls`` of the assistant message before it
(OpenAI), a ``tool_result`` block must follow its ``tool_use`` in the message before
(Anthropic), and a quoted result pairs with nothing. A long tool result, and any message
longer than a block reads (``EXCERPT_SCAN_CHARS``), is shown by the window of its words
that says most of the question's on one line (``excerpt_window``), looked for as deep as
the search index reads when the message is longer than a hit holds (``locate``). The steps of
the turn show the same block, word for word: its fingerprint entry says how it showed each
message, so any worker makes it again from the messages alone.

The block is chosen after the turn's own policy events (summary, prune), in the room they
leave: what left the prompt in this very turn can come back, the block never makes the
policy summarise or prune, and the prompt with it stays within the budget (and a total cap).
The audit row reports its tokens and the ids it recalled.

Ranking (``rank``): the database gives the candidates best first by BM25 (rare words weigh
more than common ones), fused with the semantic ranking when embeddings are configured;
then a question is worth less than a statement (it shares the words, not the answer), a
message that holds details the question does not (numbers, URLs, paths, versions, names)
more than one that merely mentions the item, and ties go to the message that says more of
the question's words, then to the earlier one, never to the newest.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from app.budget.assembly import ChatMessage
from app.budget.tokens import TokenCounter, count_message

RECALL_BLOCK = "recall"
RECALL_HEADING = (
    "Recalled from earlier in this conversation (no longer shown above; for reference only):"
)
#: A session's recall settings when it names none (app.sessions.schemas.RecallSettings):
#: the block's share of the budget, the share of it the prompt with its block may reach
#: when that leaves more than the share (``recall_room``), the most messages it brings back.
DEFAULT_SHARE = 0.15
DEFAULT_CEILING = 0.5
DEFAULT_MAX_HITS = 45
#: A recalled message longer than its room is cut to about this share of it, then counted.
_CUT_MARGIN = 0.9


#: A recall block's entry in a prompt fingerprint; the other kinds: ``s:`` the system
#: message, ``q:`` a message, ``p:`` a set-aside tool result, ``r:`` a message without its
#: reasoning, ``i:`` a tool result without its images (app.budget.assembly, app.budget.views).
RECALL_PREFIX = "c:"


@dataclass(frozen=True)
class RecallHit:
    """A message that left the prompt and matches the current turn, best first."""

    message_id: int
    seq: int
    role: str
    text: str
    #: The part of ``text`` that matched (its passage nearest in meaning, with embeddings):
    #: shown instead of the whole text when that is too long for the room left.
    excerpt: str | None = None
    #: Which of the message's passages (``app.embeddings.vectors.passages``) the excerpt is:
    #: what names it in the block's fingerprint entry, so that it can be shown again.
    passage: int | None = None
    #: The character of the message ``text`` starts at: past 0 when the place that says
    #: most of the question lies deeper in a long message than a block reads (``locate``).
    offset: int = 0


@dataclass(frozen=True)
class Recalled:
    """How a recall block shows one message, enough to show it again word for word from the
    stored message alone: its whole text, its excerpt (``passage``) or the window of its
    words from the ``window``-th (a long tool result) of what it holds from character
    ``offset`` on (``held_text``), and only the first ``kept`` characters of that when it
    was cut to fit."""

    message_id: int
    passage: int | None = None
    kept: int | None = None
    window: int | None = None
    offset: int | None = None

    def entry(self) -> str:
        return (
            str(self.message_id)
            + (f"p{self.passage}" if self.passage is not None else "")
            + (f"o{self.offset}" if self.offset else "")
            + (f"w{self.window}" if self.window is not None else "")
            + (f"k{self.kept}" if self.kept is not None else "")
        )


# Nine digits at most: more names no message, passage or character (and a stored entry is
# not trusted with ``int`` of thousands of digits, which Python refuses).
_RECALLED = re.compile(r"(\d{1,9})(?:p(\d{1,9}))?(?:o(\d{1,9}))?(?:w(\d{1,9}))?(?:k(\d{1,9}))?")


@dataclass(frozen=True)
class RecallBlock:
    """The recall message of one prompt."""

    text: str
    tokens: int
    #: The recalled messages, in the order shown (oldest first).
    shown: tuple[Recalled, ...]

    @property
    def message_ids(self) -> tuple[int, ...]:
        return tuple(recalled.message_id for recalled in self.shown)

    def message(self) -> ChatMessage:
        return {"role": "user", "content": self.text}

    def fingerprint(self) -> str:
        """The block's entry in a prompt fingerprint (see assembly.prompt_fingerprint): its
        text's digest, then how it shows each message (``Recalled``), so that the next step
        of the turn can show it again without searching (``previous_recall``)."""
        digest = hashlib.sha256(self.text.encode()).hexdigest()[:16]
        return f"{RECALL_PREFIX}{digest}:{','.join(r.entry() for r in self.shown)}"


def previous_recall(fingerprint: Sequence[str] | None) -> tuple[str, tuple[Recalled, ...]] | None:
    """The recall block a previous prompt showed, from its fingerprint: the entry and how it
    showed each message; None when it showed none."""
    entry = next((item for item in fingerprint or () if item.startswith(RECALL_PREFIX)), None)
    if entry is None:
        return None
    _, _, listed = entry.partition(":")[2].partition(":")
    shown = []
    for item in listed.split(","):
        match = _RECALLED.fullmatch(item)
        if match is None:
            return None
        passage, offset, window, kept = (
            int(group) if group else None for group in match.groups()[1:]
        )
        shown.append(Recalled(int(match[1]), passage, kept, window, offset))
    return entry, tuple(shown)


def recall_room(*, whole: int, prompt: int, share: float, ceiling: float) -> int:
    """The tokens a recall block may take in a prompt of ``prompt`` tokens without it, out of
    ``whole`` (the input budget, or a smaller total cap): its ``share`` of ``whole``, or more
    when the prompt leaves more under ``ceiling`` (a share of ``whole``), never more than the
    prompt leaves. After a summary or a prune the prompt often sits well under its budget;
    up to the ceiling, more of the messages that left it can come back without making the
    policy act sooner (it decides on the prompt without the block)."""
    return min(whole - prompt, max(int(share * whole), int(ceiling * whole) - prompt))


def recall_block(
    hits: Sequence[RecallHit],
    *,
    room: int,
    max_hits: int,
    counter: TokenCounter,
    terms: Sequence[str] = (),
    phrases: Sequence[str] = (),
) -> RecallBlock | None:
    """The best ``hits`` (at most ``max_hits``) whose block fits ``room`` tokens, shown oldest
    first; a long tool result (or any message longer than ``EXCERPT_SCAN_CHARS``) by its
    window of words that holds most of the query's ``terms`` and ``phrases``
    (``excerpt_window``), ``MAX_TOOL_RESULTS`` tool results at most;
    a hit too long for what is left shows its excerpt instead, if it has one, or is cut to
    fit. None when nothing fits.

    Counting is most of what this costs, so hits are taken on a bound: the heading's count
    plus each line's own count and one for its line break (the counters memoise a stored
    message's line, which comes back turn after turn; the encodings most models use count
    a text as the sum of its lines). The block is counted once at the end; should it count
    more than the bound said, its last hits leave it until it fits."""
    chosen: list[tuple[RecallHit, Recalled, str]] = []
    bound = _render([], counter).tokens
    tool_results = 0
    for hit in hits:
        left = room - bound
        if len(chosen) == max_hits or left <= _MIN_KEPT:
            break  # a full block: the candidates left would each be counted in vain
        if hit.role == "tool" and tool_results == MAX_TOOL_RESULTS:
            continue
        if hit.role == "tool" or len(hit.text) > EXCERPT_SCAN_CHARS:
            window = excerpt_window(hit.text, terms, phrases)
        else:
            window = None
        shown = Recalled(hit.message_id, window=window, offset=hit.offset or None)
        text = _text(hit, shown)
        if not text:
            continue
        line = _line_tokens(hit, text, counter)
        if line > left and hit.excerpt and hit.passage is not None and hit.excerpt.strip() != text:
            shown = Recalled(hit.message_id, passage=hit.passage)
            text = _text(hit, shown)
            line = _line_tokens(hit, text, counter)
        if line > left:
            kept = _kept(text, left - _line_tokens(hit, "", counter), counter)
            if kept is None:
                continue
            shown = replace(shown, kept=kept)
            text = _text(hit, shown)
            line = _line_tokens(hit, text, counter)
            if line > left:
                continue
        chosen.append((hit, shown, text))
        bound += line
        tool_results += hit.role == "tool"
    while chosen:
        block = _render(chosen, counter)
        if block.tokens <= room:
            return block
        chosen.pop()  # the bound was wrong (a counter whose lines do not add up)
    return None


def _line_tokens(hit: RecallHit, text: str, counter: TokenCounter) -> int:
    """What a hit's line showing ``text`` adds to a block, at most: its count and its break."""
    return counter.count_text(_line(hit, text)) + 1


def shown_again(
    shown: Sequence[Recalled], hits: Mapping[int, RecallHit], counter: TokenCounter
) -> RecallBlock | None:
    """The block that showed ``shown``, made again from the recalled messages (``hits``, by
    id, with the excerpts it showed) and counted with ``counter``; None if one is missing."""
    chosen = []
    for how in shown:
        hit = hits.get(how.message_id)
        if hit is None:
            return None
        chosen.append((hit, how, _text(hit, how)))
    return _render(chosen, counter)


def _text(hit: RecallHit, shown: Recalled) -> str:
    """What the block says of ``hit``, shown as ``shown`` says."""
    if shown.window is not None:
        words, more = _scanned_words(hit.text)
        end = shown.window + EXCERPT_WORDS
        text = " ".join(
            [
                *(["…"] if shown.window or shown.offset else []),
                *(_shown_word(word) for word in words[shown.window : end]),
                *(["…"] if more or end < len(words) else []),
            ]
        )
    elif shown.passage is None:
        # Never longer than this: a longer message is shown by its window (``recall_block``).
        text = ("… " if shown.offset else "") + " ".join(hit.text[:EXCERPT_SCAN_CHARS].split())
    else:
        text = "… " + " ".join((hit.excerpt or "").split()) + " …"
    return text if shown.kept is None else text[: shown.kept] + " …"


def _render(
    chosen: Sequence[tuple[RecallHit, Recalled, str]], counter: TokenCounter
) -> RecallBlock:
    """The block of ``chosen`` hits, each with how it is shown and the text that says."""
    shown = sorted(chosen, key=lambda item: item[0].seq)
    lines = [RECALL_HEADING, *(_line(hit, text) for hit, _, text in shown)]
    text = "\n".join(lines)
    return RecallBlock(
        text=text,
        tokens=count_message(counter, {"role": "user", "content": text}),
        shown=tuple(how for _, how, _ in shown),
    )


def _line(hit: RecallHit, text: str) -> str:
    """The block's line for ``hit``, showing ``text``."""
    role = "tool result" if hit.role == "tool" else hit.role
    return f"[message {hit.seq}, {role}] {text}"


#: Tool results a block shows at most. An agent's tool output is long and plentiful and
#: shares many a question's words; a question about a detail a tool returned needs one or
#: two of them, and the block's other places go to what was said (each result shown also
#: costs a search for its window).
MAX_TOOL_RESULTS = 5
#: The words a long tool result is shown by in a recall block: about 100 to 200 tokens, room
#: for the detail asked about and what surrounds it, where the whole result (a listing, a
#: log, a JSON document) could take the block's room alone.
EXCERPT_WORDS = 60
#: The characters a window shows of one of its words at most (the rest marked cut): a
#: "word" of a result with no white space (base64, minified JSON) can be megabytes long.
#: Room for a long URL or path; a window's line is at most ``EXCERPT_WORDS`` of them.
EXCERPT_WORD_CHARS = 200
#: A window's words before the place it shows: what leads up to the detail.
_EXCERPT_LEAD = EXCERPT_WORDS // 4
#: What a recall hit holds of a message, and a block reads, at most: its first characters,
#: or those from a little before the place that says most of the question (``locate``,
#: which reads no deeper than the search index). Choosing a window reads no more, and
#: ``_MAX_PLACES`` places of the question's words at most, so that what it costs does not
#: grow with the result's length; a longer message, of any role, is shown by its window.
EXCERPT_SCAN_CHARS = 50_000


def held_text(text: str, offset: int = 0) -> str:
    """What a recall hit holds of a message's ``text``: all that a block reads of it, and
    one character more, which says that it goes on."""
    return text[offset : offset + EXCERPT_SCAN_CHARS + 1]


def _scanned_words(text: str) -> tuple[list[str], bool]:
    """The words (split at white space) of the first ``EXCERPT_SCAN_CHARS`` of ``text``, and
    whether it goes on after them."""
    return text[:EXCERPT_SCAN_CHARS].split(), len(text) > EXCERPT_SCAN_CHARS


def _shown_word(word: str) -> str:
    return word if len(word) <= EXCERPT_WORD_CHARS else word[:EXCERPT_WORD_CHARS] + "…"


def excerpt_window(text: str, terms: Iterable[str], phrases: Iterable[str] = ()) -> int | None:
    """The first word of the ``EXCERPT_WORDS`` of ``text`` (split at white space) to show
    for the query's ``terms`` and ``phrases``: a little before the place that says most of
    them close together (``_best_place``), the earliest on a tie. Only the first
    ``EXCERPT_SCAN_CHARS`` of ``text`` are read. None when ``text`` is no longer than a
    window (shown whole), 0 when no word matches in what is read (its start)."""
    words, more = _scanned_words(text)
    total = len(words)
    if total <= EXCERPT_WORDS and not more:
        return None
    # Lower-casing keeps the text's words as they are, so positions hold in both.
    scanned = text[:EXCERPT_SCAN_CHARS].lower()
    place = _best_place(scanned, _wanted(terms, phrases))
    if place is None:
        return 0
    # The words before the place, counted by C's split (a word the place is inside of is
    # the place's own).
    before = scanned[:place]
    index = len(before.split()) - (bool(before) and not before[-1:].isspace())
    return max(0, min(index - _EXCERPT_LEAD, total - EXCERPT_WORDS))


def locate(text: str, terms: Iterable[str], phrases: Iterable[str] = ()) -> int:
    """Where a recall hit of a message longer than a block reads (``EXCERPT_SCAN_CHARS``)
    should hold its ``text`` from (``RecallHit.offset``): 0 when the place that says most
    of the query lies near its start, or none does; else the start of a line (or a word) a
    little before that place. Reads the first ``INDEXED_CHARS`` of ``text``: as deep as
    the search index, so that a detail the search found in a log at 200 kB is the one
    shown, not the log's start."""
    if len(text) <= EXCERPT_SCAN_CHARS:
        return 0
    # "İ" is the one character whose lower case is two ("i" and a combining dot): lowered
    # as "i" here, every place found in ``scanned`` is the same place in ``text``.
    scanned = text[:INDEXED_CHARS].replace("İ", "i").lower()
    place = _best_place(scanned, _wanted(terms, phrases))
    if place is None or place < EXCERPT_SCAN_CHARS - _LOCATE_LEAD_CHARS:
        return 0
    line = scanned.rfind("\n", place - _LOCATE_LEAD_CHARS, place)
    if line >= 0:
        return line + 1
    space = scanned.find(" ", place - _LOCATE_LEAD_CHARS, place)
    return space + 1 if space >= 0 else place


#: How deep a hit's window is looked for (``locate``): what the search index holds of a
#: message (migration 0009_search), so that a message found by a word is shown by it.
INDEXED_CHARS = 262_144
#: Characters before the chosen place that a located hit holds: what leads up to it.
_LOCATE_LEAD_CHARS = 2_000
#: Places (occurrences of a query's words) a window is chosen among at most: the rarest
#: words' first, so that what it costs stays bounded however often a word is said.
_MAX_PLACES = 1_000
#: Characters either side of a place whose words count as near it (a log line, a row, a
#: JSON record); words on the place's own line count twice as much.
_NEAR_CHARS = 240


#: What a phrase of the query (a URL, a path, an identifier: ``app.search.terms.compounds``)
#: weighs in a window, where a word weighs 1: the account or the host a question names
#: says where to look more than the words that name its columns (a CSV's header line says
#: "account" and "balance" as the question does; the row says "ACC-688919").
PHRASE_WEIGHT = 3.0


def _wanted(terms: Iterable[str], phrases: Iterable[str]) -> dict[str, float]:
    """What a window looks for, and its weight: a word (its plural and singular alike) 1,
    a phrase ``PHRASE_WEIGHT``."""
    wanted: dict[str, float] = {_singular(term): 1.0 for term in terms}
    wanted.update({phrase.lower(): PHRASE_WEIGHT for phrase in phrases})
    wanted.pop("", None)
    return wanted


def _best_place(scanned: str, wanted: Mapping[str, float]) -> int | None:
    """Where in ``scanned`` (lower-cased) the most of ``wanted`` is said close together: a
    place where one of them is said, scored by the weights of the distinct ones said on
    its line (in full) or near it (half); among places that say as much, the one whose
    words are rarer in the text (a word on every line of a log tells no line apart, the
    name or identifier the question asks about does; a word said once, in a title, says
    less than a line that says three of the question's). The rarest words' places are
    looked at first, ``_MAX_PLACES`` at most. None when none is said."""
    counts = {what: scanned.count(what) for what in wanted}
    lines = max(_MIN_LINES, scanned.count("\n") + 1, len(scanned) // _CHARS_A_LINE)
    rarity = {
        what: weight * math.log(1 + lines / counts[what])
        for what, weight in wanted.items()
        if counts[what]
    }
    places: list[tuple[int, str]] = []
    for what in sorted(rarity, key=lambda what: (counts[what], what)):
        places.extend(
            (at, what)
            for at in _occurrences(
                scanned, what, plural=wanted[what] == 1, most=_MAX_PLACES - len(places)
            )
        )
        if len(places) >= _MAX_PLACES:
            break
    best: int | None = None
    best_score = (0.0, 0.0, 0)
    for at, what in sorted(places):
        low, high = max(0, at - _NEAR_CHARS), at + len(what) + _NEAR_CHARS
        line_start = scanned.rfind("\n", low, at) + 1 or low
        line_end = scanned.find("\n", at, high)
        line_end = high if line_end < 0 else line_end
        said, rare = wanted[what], rarity[what]
        for other in rarity:
            if other == what:
                continue
            plural = wanted[other] == 1
            if _said(scanned, other, line_start, line_end, plural=plural):
                said, rare = said + wanted[other], rare + rarity[other]
            elif _said(scanned, other, low, high, plural=plural):
                said, rare = said + wanted[other] / 2, rare + rarity[other] / 2
        # How much of the query is said there first; then how rare what is said there is;
        # then the place of the rarer word.
        score = (said, rare, -counts[what])
        if score > best_score:
            best, best_score = at, score
    return best


#: A text's lines, for weighing its words, are at least this many, and one per this many
#: characters (minified JSON, an HTML page on one line).
_MIN_LINES = 50
_CHARS_A_LINE = 100


#: Matches inside longer words ``_occurrences`` looks past beyond four per place wanted.
_EXTRA_FINDS = 16


def _said(text: str, what: str, start: int, end: int, *, plural: bool) -> bool:
    """Whether ``what`` occurs as a whole word in ``text[start:end]``."""
    return (
        next(_occurrences(text, what, plural=plural, most=1, start=start, end=end), None)
        is not None
    )


def _occurrences(
    text: str,
    what: str,
    *,
    plural: bool,
    most: int,
    start: int = 0,
    end: int | None = None,
) -> Iterator[int]:
    """Where ``what`` occurs in ``text[start:end]`` as a whole word (or words), with an "s"
    after it too when ``plural``: found by ``str.find``, the fastest scan Python has, at
    most ``most`` times, after at most ``most * 4 + _EXTRA_FINDS`` matches inside longer
    words: a digit said inside every number of a 256 kB dump costs a bounded scan, not one
    Python step per number."""
    stop = len(text) if end is None else min(end, len(text))
    at, seen, finds = text.find(what, start, stop), 0, 0
    while at >= 0 and seen < most and finds < most * 4 + _EXTRA_FINDS:
        finds += 1
        after = at + len(what)
        if plural and text.startswith("s", after):
            after += 1 if not _is_word_char(text, after + 1) else 0
        if not _is_word_char(text, at - 1) and not _is_word_char(text, after):
            yield at
            seen += 1
        at = text.find(what, at + 1, stop)


def _is_word_char(text: str, at: int) -> bool:
    return 0 <= at < len(text) and text[at].isalnum()


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


#: The fewest tokens a cut message is shown in: below it, none.
_MIN_KEPT = 8


def _kept(text: str, tokens: int, counter: TokenCounter) -> int | None:
    """How many characters of ``text`` fit in about ``tokens`` tokens (whole words, the cut
    marked after them); None when there is no room to show any."""
    if tokens <= _MIN_KEPT:
        return None
    total = counter.count_text(text)
    keep = int(len(text) * tokens / max(total, 1) * _CUT_MARGIN)
    return len(text[:keep].rsplit(" ", 1)[0])


#: A candidate that holds details the question lacks gains ``DETAIL_BOOST``; one that holds
#: none and is a question (it asks about the item rather than saying it) keeps
#: ``QUESTION_WEIGHT`` of its score.
QUESTION_WEIGHT = 0.25
DETAIL_BOOST = 1.5
#: A tool result keeps this share of its score: it is what the agent looked up, long and
#: full of numbers and identifiers (each a "detail"), and a question about the conversation
#: more often means what was said; one that asks for what a tool returned still finds it
#: by its rare words.
TOOL_WEIGHT = 0.5
#: A detail held by this share of the candidates (and by three at least) is no detail.
COMMON_SHARE = 0.25

# Words that open a question even without its mark ("do you know what port it uses").
_ASKING = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "why",
        "how",
        "is",
        "are",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
        "any",
        "anyone",
        "anybody",
    ]
)
_EDGE = "\"'()[]{}<>,;:!?.*`"
_INNER_MARK = re.compile(r"\w[^\w\s]+\w")
_WORDS = re.compile(r"[^\W_]+")
_POSSESSIVE = re.compile(r"['\u2019]s$")


def detail_tokens(text: str) -> frozenset[str]:
    """The tokens of ``text`` that carry a detail: a number, a URL, a path, a version, an
    identifier (punctuation inside a word), or a capitalised word that does not open the
    text or a sentence (a name), lower-cased."""
    found = set()
    opens = True
    for raw in text.split():
        token = raw.strip(_EDGE)
        if not token.isalpha():
            token = _POSSESSIVE.sub("", token)
        if token.isalpha():
            # A lower-case word says nothing particular, nor the capital opening a sentence.
            if not opens and token[0].isupper():
                found.add(token.lower())
        elif token and (_INNER_MARK.search(token) or any(c.isdigit() for c in token)):
            found.add(token.lower())
        opens = raw.rstrip("\"')]*").endswith((".", "!", "?", ":"))
    return frozenset(found)


def is_question(text: str) -> bool:
    """Whether a message asks rather than tells: it ends with a question mark, or opens
    with a word that asks."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped.endswith("?"):
        return True
    first = _WORDS.search(stripped.lower())
    return first is not None and first[0] in _ASKING and len(stripped) < 200


def asks(hit: RecallHit) -> bool:
    """Whether a recall hit asks (``is_question`` of what ``rank`` reads of it)."""
    return _features(hit.text[:RANK_CHARS])[2]


def only_asks(hit: RecallHit, question: str) -> bool:
    """Whether a hit that asks holds nothing the recall question lacks but the words of
    what it asks about: no number or code of its own ("my booking ref is QX7P2L, can you
    check in?" states the reference it asks with; "did Ana give you the locker code?"
    only asks). Names do not count: in a dialogue every line names the other speaker."""
    details, _, asking = _features(hit.text[:RANK_CHARS])
    own = details - detail_tokens(question[:RANK_CHARS])
    return asking and not any(char.isdigit() for detail in own for char in detail)


@dataclass(frozen=True)
class Candidate:
    """A message that left the prompt, with its score in the fused ranking (higher is
    better; any scale)."""

    hit: RecallHit
    score: float


#: What ``rank`` reads of a message (and of the question) at most: its first characters.
#: The database ranked the whole text already; this tells a statement from a question and
#: finds its details, which the start of a long message holds as well as its rest, at a
#: bounded cost, remembered in a bounded entry (about 50 kB at most).
RANK_CHARS = 2_000


def rank(candidates: Iterable[Candidate], question: str) -> list[RecallHit]:
    """``candidates`` in the order the recall block takes them (see the module's docstring)."""
    asked = detail_tokens(question[:RANK_CHARS])
    words = frozenset(_WORDS.findall(question[:RANK_CHARS].lower()))
    listed = [(candidate, _features(candidate.hit.text[:RANK_CHARS])) for candidate in candidates]
    # A detail many candidates hold (in a dialogue, the name each speaker calls the other)
    # tells none of them apart: it is no detail here.
    seen: Counter[str] = Counter()
    for _, (details, _, _) in listed:
        seen.update(details)  # counted in C: a long tool result holds hundreds
    common = {
        detail for detail, count in seen.items() if count >= max(3, len(listed) * COMMON_SHARE)
    }
    ranked = []
    for candidate, (details, said, asks) in listed:
        weight = 1.0
        # A question that holds details of its own ("should the transfer leave at 11am or
        # later?") is an item too; one that holds none only asks about one.
        if details - asked - common:
            weight *= DETAIL_BOOST
        elif asks:
            weight *= QUESTION_WEIGHT
        if candidate.hit.role == "tool":
            weight *= TOOL_WEIGHT
        ranked.append((-candidate.score * weight, -len(words & said), candidate.hit.seq, candidate))
    ranked.sort(key=lambda item: item[:3])
    return [item[3].hit for item in ranked]


def with_replies(ranked: Sequence[RecallHit], replies: Mapping[int, RecallHit]) -> list[RecallHit]:
    """``ranked`` with each hit followed by its reply (``replies``, by the seq of the message
    it answers) unless that is ranked before it: a line that asks about an item shares its
    words, and the answer that follows it often shares none of them."""
    listed: dict[int, RecallHit] = {}
    for hit in ranked:
        listed.setdefault(hit.message_id, hit)
        reply = replies.get(hit.seq)
        if reply is not None:
            listed.setdefault(reply.message_id, reply)
    return list(listed.values())


@lru_cache(maxsize=2048)
def _features(text: str) -> tuple[frozenset[str], frozenset[str], bool]:
    """What ``rank`` reads of a message (its first ``RANK_CHARS``): its details, its words,
    whether it asks. Stored messages never change and the same ones are candidates turn
    after turn: remembered."""
    return detail_tokens(text), frozenset(_WORDS.findall(text.lower())), is_question(text)
