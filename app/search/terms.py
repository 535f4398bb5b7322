"""What a search query asks for: its words, and the FTS5 query they make. Pure: user text
never reaches a query language unescaped (Postgres reads it with plainto_tsquery, which has
no operators)."""

from __future__ import annotations

import re

from app.errors import InvalidRequestError

#: Longer queries are refused; a recall query is cut to its first ``MAX_TERMS`` words.
MAX_QUERY_CHARS = 500
MAX_TERMS = 32
#: The words a recall looks for at most: a turn's user message may be long, and every word
#: widens the set of messages the ranking scores (on Postgres, each word is checked against
#: each of the best matches). A question says what it asks about in fewer words: on the
#: recall bench, whose turns say up to 32, twelve found every planted item and cost less
#: than the 32 did (docs/benchmarks.md, "Recall: what tools returned, and what it costs").
MAX_RECALL_TERMS = 12

# Letters and digits only: every full-text operator and quote character falls outside it.
_WORD = re.compile(r"[^\W_]+")


#: Words too common to say what a message is about (Postgres' english configuration drops
#: the same ones; FTS5 does not, so a recall query leaves them out itself).
_STOP_WORDS = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
also
s t d ll m re ve don didn doesn hadn hasn haven isn wasn weren won wouldn couldn shouldn aren
"""
#: The last line: what an apostrophe leaves of a possessive or a contraction ("Caroline's",
#: "hadn't", "I'd", "we'll"), which says nothing of what a message is about.
STOP_WORDS = frozenset(_STOP_WORDS.split())


class InvalidSearchQueryError(InvalidRequestError):
    """A search query that is empty, too long, or has no word to look for."""

    code = "invalid_search_query"


def search_terms(query: str) -> tuple[str, ...]:
    """The words of a query a person (or a model) typed; 422 when there is none to search
    for or the query is too long."""
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidSearchQueryError(
            f"the search query is longer than {MAX_QUERY_CHARS} characters"
        )
    terms = recall_terms(query)
    if not terms:
        raise InvalidSearchQueryError("the search query has no word to look for")
    return terms


def recall_terms(
    text: str, *, drop_stop_words: bool = False, most: int = MAX_TERMS
) -> tuple[str, ...]:
    """The distinct words of a text (lower-cased, the first ``most``), to look up what was
    said about them; with ``drop_stop_words``, only the words that say what it is about."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if drop_stop_words and word in STOP_WORDS:
            continue
        seen.setdefault(word, None)
        if len(seen) == most:
            break
    return tuple(seen)


#: Compounds (see ``compounds``) of a recall query at most.
MAX_COMPOUNDS = 8
# Words joined by punctuation: a URL, a path, a version, a dotted or hyphenated identifier.
# (An apostrophe joins no compound: "staging's" is the word "staging".)
_COMPOUND = re.compile(r"[^\W_]+(?:[^\w\s'\u2019]+[^\W_]+)+")


def compounds(text: str) -> tuple[str, ...]:
    """The URLs, paths, versions and identifiers of a text, lower-cased (first
    ``MAX_COMPOUNDS``): looked up as one phrase each, beside their parts, so that "3.11.2"
    finds "3.11.2" before it finds any "3" or "11"."""
    seen: dict[str, None] = {}
    for found in _COMPOUND.findall(text.lower()):
        seen.setdefault(found, None)
        if len(seen) == MAX_COMPOUNDS:
            break
    return tuple(seen)


def recall_query(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What a recall looks for in ``text``: its first ``MAX_RECALL_TERMS`` words that say
    what it is about, outside its compounds, and its compounds (``compounds``). A
    compound's parts are not looked up on their own: "15.4.2" is one detail, and "15", "4"
    and "2" would find every message with any of those numbers in it."""
    found = compounds(text)
    terms = recall_terms(_COMPOUND.sub(" ", text), drop_stop_words=True, most=MAX_RECALL_TERMS)
    return terms, found


def fts5_match(terms: tuple[str, ...], *, match_any: bool, phrases: tuple[str, ...] = ()) -> str:
    """The SQLite FTS5 ``MATCH`` text: each word quoted, so that none is read as an operator
    (AND, OR, NOT, NEAR); each of ``phrases`` (any of them, with ``match_any``) quoted
    whole, which FTS5 reads as the phrase of its parts ("3.11.2": "3" then "11" then "2",
    side by side)."""
    quoted = [f'"{term}"' for term in terms]
    quoted += ['"' + phrase.replace('"', '""') + '"' for phrase in phrases]
    return (" OR " if match_any else " ").join(quoted)
