"""What a sentence the user wrote is worth keeping as, and which later statement revises it.

A user's sentence is one of three tiers:

- a **statement** (kept first): anything that carries something the agent could not look up
  again — a name (in any script), a place, a person, an owner, a time or an amount in words,
  a preference, a rule, a fact inside a question or a request ("can you remind the team that
  …"), a sentence in another language. Recognition does not rest on English capitalisation or
  a list of keywords alone: a capitalised or non-Latin word that is not at the start of the
  sentence, a non-ASCII letter, a number written out, a subordinate clause that states
  something, or a sentence that is neither a request nor a question all count;
- a **plain** statement, with no marker or only a common word of time ("before", "week"):
  kept, but it gives way before the marked ones;
- a **routine** request or question about the work in hand (grep this trace, rerun that job,
  why did that test fail): it says what to do next, and what was done is in the record;
- **small talk**: courtesy and chatter.

A **correction** ("actually, not X — Y", "scratch that, …", "update: …") supersedes the
earlier statement on the same subject (the one sharing most of its content words).
"""

from __future__ import annotations

import re
from enum import IntEnum
from functools import lru_cache


class Tier(IntEnum):
    """How much a user's sentence is worth keeping, most first."""

    STATEMENT = 0
    #: A statement with no marker at all, or only a common word of time ("week", "before"):
    #: kept as a statement, but it gives way before the marked ones.
    PLAIN = 1
    ROUTINE = 2
    SMALL_TALK = 3


_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
#: Courtesy and chatter, whatever the language.
_SMALL_TALK = re.compile(
    r"^(?:thanks|thank you|thx|ty|ok(?:ay)?|k|great|cool|perfect|nice|awesome|sure|got it|hi|"
    r"hello|hey|morning|good (?:morning|night|evening|afternoon)|no worries|no problem|"
    r"sounds|that sounds|yep|yes|yeah|nope|no|lol|haha|hah|hmm+|ugh|brb|sorry|appreciate|"
    r"how['\u2019]?s|how are|merci|danke|gracias|obrigad[oa]|grazie|dzięki|bedankt|"
    r"that['\u2019]s (?:fine|great|good|perfect|all|what)|that took|interesting|wow|oops)\b",
    re.IGNORECASE,
)
#: The start of a request or question about the work in hand.
_REQUEST = re.compile(
    # A label first ("Turn 12:", "step 3 -") does not hide the request after it.
    r"^(?:[^\W_]{1,12}(?:\s\S{1,12})?\s?[:\-]\s+)?"
    r"(?:(?:ok(?:ay)?|so|now|and|then|also|pls|please|quick(?:ly)?|hey|right|next)[,:]?\s+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|please\s+|pls\s+|go ahead and\s+|"
    r"let['\u2019]s\s+)?"
    r"(?:grep|rerun|re-run|run|check|show|list|tail|bump|open|restart|kill|start|stop|search|"
    r"find|compare|look|retry|try|summari[sz]e|explain|fix|add|remove|delete|update|deploy|"
    r"roll ?back|revert|merge|print|paste|give|tell|send|fetch|get|pull|push|build|test|"
    r"clean|scale|drain|query|count|diff|what|what['\u2019]s|why|how|is|are|does|did|do|"
    r"where|which|when|who)\b",
    re.IGNORECASE,
)
#: What turns a request into one that states something: a clause saying that something is
#: so, a reason given, or a rule ("remind the team that …", "since X approves …").
_STATES = re.compile(
    r"\b(?:remind|tell|telling|say|saying|note|noting|mention|know|confirm|aware|sure|means?|"
    r"draft|write|warn)\b[^.?!]{0,40}\bthat\b\s+\S+\s+\S+"
    r"|\b(?:since|given|because|as long as|unless|so that|in case)\b\s+\S+\s+\S+"
    r"|\b(?:never|always|don['\u2019]t|do not|must|mustn['\u2019]t|only|has to|have to)\b"
    # What the user marks as worth keeping, and a prohibition ("Rule: no layovers").
    r"|\b(?:keep (?:this|that|it) in mind|keep in mind|remember|for the record|fyi|heads up|"
    r"note that|bear in mind|from now on)\b|(?:^|[:;,\u2014-]\s*)no\s+[^\W\d_]{3,}",
    re.IGNORECASE,
)
#: A clause of its own after a request or a question, that states something: a subject
#: and a verb after a comma, a dash or the question mark ("…, she wrote the scheduler",
#: "…? that's where the customer is", "…, they maintain it").
_STATED_CLAUSE = re.compile(
    r"[,;:?!\u2014\u2013]\s+(?:and\s+|but\s+|since\s+)?"
    r"(?:she|he|they|it|that|this|those|everyone|all|our|my|his|her|their|the\s+\w+)"
    r"(?:['\u2019](?:s|re)\b|\s+(?:\w+\s+){0,3}?(?:is|are|was|were|has|have|had|wrote|owns?|"
    r"maintains?|sits?|lives?|works?|runs?|built|set|told|said|knows?|needs?|wants?|"
    r"signs?|approves?|handles?|looks?|waits?|waiting|based|promised)\b)",
    re.IGNORECASE,
)
#: A standing instruction inside a request: how to work from now on, not what to do next.
_STANDING = re.compile(
    r"\b(?:stick to|from now on|going forward|in future|whenever|every time|by default|"
    r"each time|all the time)\b",
    re.IGNORECASE,
)
#: A question that weighs a choice is still open, not a request of the work in hand.
_DELIBERATION = re.compile(r"\b(?:should|shall|whether|or later|or not)\b", re.IGNORECASE)
#: What the user says of themselves, their people and who owns what.
_ABOUT = re.compile(
    r"\b(?:owns?|owned|belongs?|responsib\w*|handles?|in charge|approves?|signs? off|"
    r"reports? to|goes through|escalation|contact|due|deadline|budget|prefer\w*|rather|"
    r"like|love|hate|rule|allerg\w*|name['\u2019]?s?|call me|based|live|office|manager|boss|"
    r"lead|sister|brother|wife|husband|partner|mentor|colleague|contractor|designer|hire|"
    r"customer|vendor|legal|security)\b",
    re.IGNORECASE,
)
#: The speaker and their people ("us" in lower case only: "the US").
_PRONOUN = re.compile(
    r"(?i:\b(?:i|i['\u2019](?:m|ve|d|ll)|me|my|mine|we|we['\u2019](?:re|ve|d|ll)|our|ours)\b)|\bus\b"
)
#: A declarative sentence at least this long states something even without any marker.
_PLAIN_STATEMENT_WORDS = 4
#: A sentence in the first person is a statement about the speaker when this short (a long
#: one is narrative: "we walked along the river and looked at …").
_PRONOUN_STATEMENT_WORDS = 25
_NUMBER_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand|million|billion|dozen|half|twice|first|second|third|"
    r"twentieth|thirtieth)\b",
    re.IGNORECASE,
)
_TIME_WORDS = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|quarter|tomorrow|"
    r"christmas|easter|new year|holiday|deadline|until|by the end|end of)\b",
    re.IGNORECASE,
)
#: Words of time too common to mark a statement alone.
_COMMON_TIME = re.compile(
    r"\b(?:year|month|week|weekend|tonight|summer|winter|spring|autumn|before|after)\b",
    re.IGNORECASE,
)
#: Capitalised words that do not name anybody or anything of the user's.
_NOT_NAMES_TEXT = (
    "I I'm I've I'd I'll OK Ok PR CI CD API SQL JSON HTTP URL ID UI UX DB QA EOD ETA FYI "
    "BTW TODO Can Could Would Please Also Then Now So And But Thanks Hi Hey Yes No"
)
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
#: What marks a sentence as revising something said before, in the languages users write
#: in most: an opening ("actually", "scratch that", "forget what I said about …", "make that
#: …"), a change ("moved to", "got cut to", "took over", "pushed back to"), a value that is
#: now so ("… is now …", "instead"), or a negated value ("not X —"). Not "from now on": it
#: sets a standing rule as often as it revises one ("please call me Tamsin from now on").
_CORRECTION = re.compile(
    r"\b(?:actually|correction|scratch (?:that|what|my|the)|i meant?|i was wrong|"
    r"i got (?:that|it) wrong|my mistake|my bad|oops|wait|update(?=\s*:)|no longer|instead|"
    r"not anymore|rather than|make (?:that|it)|forget (?:what|that|about|my|the)|"
    r"ignore (?:what|that|my|the)|change of plans?|turns out|is now|are now|now is|"
    r"took over|takes over|taking over|"
    r"(?:moved?|changed?|cut|raised|bumped|pushed(?: back| out)?|switched|shifted|reduced|"
    r"increased|dropped|brought forward)(?:\s+[\w'\u2019-]+){0,4}?\s+to\b|"
    r"en fait|plutôt|finalement|eigentlich|korrektur|stattdessen|doch|de hecho|"
    r"en realidad|corrección|perdón|na verdade|correção|aliás|in realtà|correzione|"
    r"właściwie|poprawka|jednak|eigenlijk|на самом деле|вернее)\b"
    r"|\bnot\s+[^\W\d_][^,;.\u2014\u2013-]*(?:[,;.\u2014\u2013-]|$)"
    # "… is Gustavo's now": a value that holds now, said last.
    r"|\bnow\s*[.!]?\s*$"
    r"|(?:実は|やっぱり|訂正|其实|更正|改成|改为|정정|사실은)",
    re.IGNORECASE,
)
#: Words too common to tell two subjects apart.
_COMMON_TEXT = (
    "the a an and or but so of to in on at for from with by is are was were be been it its "
    "it's this that these those there here now not no yes actually correction scratch "
    "update wait sorry mistake my our we i me you your they them their he she his her is "
    "isn't it's what who which when where how why new now then than just also really all "
    "any some moved move changed change instead rather anymore longer meant wrong got bad "
    "due one this year month week next last first thing name make forget ignore said say "
    "earlier before mean oops turns out going doing plans plan works better sure got cut took "
    "over takes taking pushed back fine ok okay yeah hey guess think should would could can "
    "will has have had does did please pls thanks btw fyi still end early late mid past "
    "beginning start middle every each day days daily weekly monthly today"
)
_COMMON = frozenset(_COMMON_TEXT.split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _named(text: str) -> bool:
    """Whether a word after the first names somebody or something: capitalised (in any
    alphabet with case), or written in a script without case (Chinese, Japanese, Arabic…)."""
    words = _words(text)
    for index, word in enumerate(words):
        # A letter with no case (Chinese, Japanese, Arabic, Hebrew, Thai…).
        if any(c.isalpha() and not c.isupper() and not c.islower() for c in word):
            return True
        if (
            index > 0
            and word[0].isupper()
            and any(c.islower() for c in word[1:])
            and word not in _NOT_NAMES
        ):
            return True
    return False


def _foreign(text: str) -> bool:
    """Letters outside ASCII: an accented name, a city, a sentence in another language."""
    return any(ord(c) > 127 and c.isalpha() for c in text)


def refers_back(sentence: str) -> bool:
    """Whether ``sentence`` opens as a clause about what was just named ("that's where the
    customer is", "they maintain it"): said after a question, it needs the question."""
    return _STATED_CLAUSE.match(", " + sentence.strip()) is not None


def is_request(text: str) -> bool:
    """Whether ``text`` starts as a request or a question about the work in hand."""
    return _REQUEST.match(text.strip()) is not None


def tier(sentence: str) -> Tier:
    """How much a sentence the user wrote is worth keeping (see the module's docstring)."""
    text = sentence.strip().lstrip("-*>•").strip()
    words = _words(text)
    if not words:
        return Tier.SMALL_TALK
    marked = (
        _foreign(text)
        or bool(_NUMBER_WORDS.search(text))
        or bool(_TIME_WORDS.search(text))
        or bool(_STATES.search(text))
        or bool(_ABOUT.search(text))
        or bool(_STANDING.search(text))
        or (text.endswith("?") and bool(_DELIBERATION.search(text)))
    )
    if marked:
        return Tier.STATEMENT
    named = _named(text)
    if (_SMALL_TALK.match(text) and len(words) <= 8 and not named) or len(words) <= 2:
        return Tier.SMALL_TALK
    if _REQUEST.match(text) or text.rstrip().endswith("?"):
        # A request of the work in hand, unless a clause of its own states something
        # ("…, she wrote the original scheduler", "…? that's where the customer is"): a
        # name in a request ("find flights to Bergen") is what the agent was asked to work
        # on, not something the user told it.
        if _STATED_CLAUSE.search(text):
            return Tier.STATEMENT
        return Tier.ROUTINE
    # A name (in any script) is what the agent cannot look up again: a sentence naming
    # somebody or something is never courtesy.
    if named:
        return Tier.STATEMENT
    if _PRONOUN.search(text) and len(words) <= _PRONOUN_STATEMENT_WORDS:
        return Tier.STATEMENT
    if _COMMON_TIME.search(text) or len(words) >= _PLAIN_STATEMENT_WORDS:
        return Tier.PLAIN
    return Tier.ROUTINE


@lru_cache(maxsize=4096)
def is_correction(sentence: str) -> bool:
    """Whether a sentence revises something said before ("actually, not X — Y")."""
    return _CORRECTION.search(sentence) is not None


def subject_words(text: str) -> set[str]:
    """The words that say what a statement is about (common words aside)."""
    found = set()
    for word in _words(text.lower()):
        # "the offsite's" and, in French or Italian, "l'offsite", "dell'ufficio" are about
        # the offsite and the office.
        word = re.sub(r"['\u2019]s$", "", word)
        word = re.sub(r"^\w{1,4}['\u2019]", "", word)
        if len(word) >= 3 and word not in _COMMON:
            found.add(word)
    return found


def supersedes(correction: str, earlier: str) -> int:
    """How strongly ``correction`` revises ``earlier`` (0: not at all), when the later one
    reads as a correction: the content words they share, and twice more when it negates a
    value the earlier one holds ("not Lisbon"). One shared word is enough only when it is at
    least half of what the earlier statement is about, values aside ("offsite" of "the
    offsite is in X", "retro" of "the retro is on Tuesday this sprint")."""
    if not is_correction(correction):
        return 0
    about = subject_key(earlier)
    shared = subject_words(correction) & subject_words(earlier)
    strength = len(shared)
    for negated in _NEGATED.findall(correction):
        if negated.strip().lower() in earlier.lower():
            strength += 2
    if strength == 1 and 2 * len(shared & about) < len(about):
        return 0
    return strength


#: A value negated ("not Lisbon", and in French, German, Spanish, Portuguese, Polish: "pas à
#: Lyon", "nicht in Köln", "no en Lima", "não em Braga", "nie w Łodzi").
_NEGATED = re.compile(
    r"\b(?:not|pas|nicht|no|não|nie)\s+(?:(?:à|a|au|en|in|im|em|no|na|w|we|el|la|le|the)\s+)?"
    r"([^\W\d_][\w'\u2019 ]{1,40}?)\s*(?:[,;.\u2014\u2013-]|$)",
    re.IGNORECASE,
)


#: Values a statement holds, by slot: a time (a day, a month, an hour), an amount (a number
#: in digits or words), a name (a capitalised word after the first, or one in a script
#: without case). What a statement is about is what is left of its content words.
_WHEN_VALUE = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
    r"christmas|easter|eve|noon|midnight|morning|afternoon|evening|o['\u2019]clock|sharp|"
    r"half past|quarter (?:past|to)|\d{1,2}(?::\d\d)?\s*(?:am|pm|h)\b|\d{1,2}:\d\d)",
    re.IGNORECASE,
)
_AMOUNT_VALUE = re.compile(r"\d|" + _NUMBER_WORDS.pattern, re.IGNORECASE)
#: A revision that does not say what it revises ("make that Thursday instead", "no wait —
#: Bergen") is this short, and revises the statement said just before it.
BARE_REVISION_WORDS = 8


@lru_cache(maxsize=4096)
def _value_words(text: str) -> set[str]:
    """The words of ``text`` that are values (names, numbers, days, hours), lower-cased."""
    words = _words(text)
    found = set()
    for index, word in enumerate(words):
        lower = word.lower()
        if (
            _WHEN_VALUE.fullmatch(lower)
            or _NUMBER_WORDS.fullmatch(lower)
            or any(c.isdigit() for c in word)
            or any(c.isalpha() and not c.isupper() and not c.islower() for c in word)
            or (
                word[0].isupper()
                and word not in _NOT_NAMES
                and (index > 0 or lower not in _COMMON)
                and any(c.islower() for c in word[1:])
            )
        ):
            found.add(re.sub(r"['\u2019]s$", "", lower))
    return found


@lru_cache(maxsize=4096)
def slots(text: str) -> frozenset[str]:
    """The kinds of value ``text`` holds: "when", "amount", "name"."""
    found = set()
    if _WHEN_VALUE.search(text):
        found.add("when")
    if _AMOUNT_VALUE.search(text):
        found.add("amount")
    if any(
        not _WHEN_VALUE.fullmatch(word) and not _AMOUNT_VALUE.search(word)
        for word in _value_words(text)
    ):
        found.add("name")
    return frozenset(found)


@lru_cache(maxsize=4096)
def subject_key(text: str) -> frozenset[str]:
    """What a statement is about, without its values: "the offsite is in Lyon" and "the
    offsite moved to Porto" share {"offsite"}; "the retro is on Tuesday" is {"retro"}."""
    return frozenset(subject_words(text) - _value_words(text))


@lru_cache(maxsize=4096)
def is_bare_revision(text: str) -> bool:
    """A short correction that names a value but not what it revises ("make that Thursday
    instead", "sorry, i meant the end of June", "no wait — Bergen")."""
    return (
        is_correction(text)
        and len(_words(text)) <= BARE_REVISION_WORDS
        and not subject_key(text)
        and bool(slots(text))
    )


def revises(later: str, earlier: str, *, just_before: bool = False) -> int:
    """How strongly ``later`` revises ``earlier`` (0: not at all):

    - a correction on the same subject (:func:`supersedes`);
    - a bare correction ("make that Thursday instead") of the statement said ``just_before``
      it, when that one holds a value of the same kind.

    A statement with no mark of correction revises nothing, even on the same subject with
    another value: "I prefer seat 37" and "I prefer seat 38" may both hold, as may two
    people on the same team.
    """
    strength = supersedes(later, earlier)
    if strength:
        return strength
    if just_before and is_bare_revision(later) and slots(later) & slots(earlier):
        return 1
    return 0
