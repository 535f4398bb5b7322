"""Every full-text query: Postgres ranks with ``ts_rank`` over the generated
``messages.search_vector`` and cuts snippets with ``ts_headline``; SQLite ranks with FTS5's
``bm25`` over ``message_search`` and cuts them with ``snippet`` (migration 0009_search)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import TextualSelect, bindparam, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import JSON

from app.search.terms import fts5_match

#: Around each snippet's matched words; the marks a model reads as emphasis.
MATCH_MARK = "**"
SNIPPET_WORDS = 24

# A message's text on Postgres, as migration 0009_search indexes it (for ts_headline).
_POSTGRES_TEXT = "contextd_message_text(m.content)"
_HEADLINE_OPTIONS = (
    f"StartSel={MATCH_MARK}, StopSel={MATCH_MARK}, MaxWords={SNIPPET_WORDS}, MinWords=8, "
    "MaxFragments=1, FragmentDelimiter=…"
)
# Postgres parses the query text as it parsed the messages (so "FACT-01" finds what it
# indexed as "fact" and "-01"); plainto_tsquery reads no operator in it. Its answer is the
# lexemes joined by " & ": any of them, for recall, is the same with " | ". A materialised
# CTE makes the query once: inlined into a prepared statement's generic plan, it would be
# parsed again for every row filtered and ranked (ten times slower on a long session).
_POSTGRES_QUERY = {
    False: "plainto_tsquery('english', :query)",
    True: "replace(plainto_tsquery('english', :query)::text, ' & ', ' | ')::tsquery",
}
_COLUMNS = "m.id, m.seq, m.turn_id, m.turn_seq, m.role, m.state, m.content"
# A hit's row when its snippet is asked for instead of its content: a long tool result's
# content is most of what a search would otherwise read, send and parse.
_SNIPPET_COLUMNS = "m.id, m.seq, m.turn_id, m.turn_seq, m.role, m.state, NULL AS content"
# ts_headline parses all the text it is given: on long tool results, most of a search's
# time. It is given SNIPPET_WINDOW characters around the first place where the query's
# first lexeme ('hotel' of 'hotel' & 'book') starts, instead; a lexeme that is no prefix of
# its words as written ("happi" of "happy") gets the whole text, as before.
SNIPPET_WINDOW = 2_000
_POSTGRES_LOCATED = (
    f"CROSS JOIN LATERAL (SELECT {_POSTGRES_TEXT} AS body) AS b "
    "CROSS JOIN LATERAL (SELECT b.body, "
    "strpos(lower(b.body), split_part(hit.query::text, '''', 2)) AS at) AS t "
)
_POSTGRES_SNIPPET_TEXT = (
    f"CASE WHEN length(t.body) <= {SNIPPET_WINDOW} OR t.at = 0 THEN t.body "
    f"ELSE substr(t.body, greatest(1, t.at - {SNIPPET_WINDOW // 4}), {SNIPPET_WINDOW}) END"
)


def _filters(*, states: bool, roles: bool, also: bool = False) -> str:
    where = "m.tenant_id = :tenant_id AND m.session_id = :session_id"
    if states:
        where += " AND (m.state IN :states OR m.id IN :also)" if also else " AND m.state IN :states"
    if roles:
        where += " AND m.role IN :roles"
    return where


#: BM25's term-frequency saturation and length normalisation, at the values FTS5's bm25()
#: uses (and most engines default to).
BM25_K1 = 1.2
BM25_B = 0.75
#: The weight of a word that half the messages or more say, as FTS5's bm25() gives it:
#: ``ln((N - df + 0.5) / (df + 0.5))`` is 0 or less there, and such a word (in a
#: two-person dialogue, the speaker's name) tells no message apart.
BM25_MIN_IDF = 1e-6
#: Postgres: the messages that match any query word, at most, that BM25 scores (the best by
#: ts_rank, which counts how many of the words a message says and how often): what the
#: statement costs stays bounded on a long session whose messages share common words.
BM25_POOL = 100


@cache
def _recall_statement(dialect: str, *, also: bool) -> TextualSelect:
    """A recall query's candidates, best first by BM25 over the session's searchable
    messages: a word few of them say weighs more than one most of them say.

    SQLite: FTS5's bm25() (its statistics are the whole index's). Postgres has no BM25
    (ts_rank does not know how common a word is), so it is computed in the same statement:
    N is the number of the session's messages the filters let through; each query word's
    document frequency and the mean length are counted over the ``BM25_POOL`` best of
    those that say any query word; a word's IDF is FTS5's, ``BM25_MIN_IDF`` at least;
    a word counts once per message (messages are short: a
    repeated word says little more), and a message's length is its number of distinct
    lexemes."""
    where = _filters(states=True, roles=True, also=also)
    if dialect == "postgresql":
        sql = (
            "WITH w AS MATERIALIZED (SELECT t.i, t.query FROM ("
            "SELECT u.i, plainto_tsquery('english', u.word) AS query "
            "FROM unnest(CAST(:words AS text[])) WITH ORDINALITY AS u(word, i)) AS t "
            "WHERE numnode(t.query) > 0), "
            "q AS MATERIALIZED (SELECT string_agg('(' || w.query::text || ')', ' | ')::tsquery "
            "AS query FROM w), "
            "pool AS MATERIALIZED (SELECT m.id, m.search_vector AS v "
            f"FROM messages AS m, q WHERE {where} AND m.search_vector @@ q.query "
            f"ORDER BY ts_rank(m.search_vector, q.query) DESC LIMIT {BM25_POOL}), "
            "docs AS MATERIALIZED (SELECT pool.id, length(pool.v) AS dl, "
            "ARRAY(SELECT w.i FROM w WHERE pool.v @@ w.query) AS matched FROM pool), "
            f"n AS (SELECT count(*) AS total, (SELECT avg(dl) FROM docs) AS avgdl "
            f"FROM messages AS m WHERE {where}), "
            "df AS (SELECT u.i, count(*) AS df FROM docs, unnest(docs.matched) AS u(i) "
            "GROUP BY u.i), "
            "ranked AS (SELECT docs.id AS hit_id, "
            # float8 throughout: numeric's ln() is many times slower.
            "sum(greatest(ln((n.total - df.df + 0.5)::float8 / (df.df + 0.5)::float8), "
            f"{BM25_MIN_IDF}::float8)) "
            f"* {BM25_K1 + 1}::float8 / (1 + {BM25_K1}::float8 * "
            f"(1 - {BM25_B}::float8 + {BM25_B}::float8 * docs.dl::float8 "
            "/ greatest(n.avgdl::float8, 1))) AS score "
            "FROM docs CROSS JOIN n CROSS JOIN LATERAL unnest(docs.matched) AS u(i) "
            "JOIN df ON df.i = u.i GROUP BY docs.id, docs.dl, n.total, n.avgdl "
            "ORDER BY score DESC, docs.id LIMIT :limit) "
            f"SELECT {_COLUMNS}, ranked.score, '' AS snippet "
            "FROM ranked JOIN messages AS m ON m.id = ranked.hit_id "
            "ORDER BY ranked.score DESC, m.seq"
        )
    else:
        sql = (
            f"SELECT {_COLUMNS}, -bm25(message_search) AS score, '' AS snippet "
            "FROM message_search JOIN messages AS m ON m.id = message_search.rowid "
            f"WHERE message_search MATCH :query AND {where} "
            "ORDER BY bm25(message_search), m.seq LIMIT :limit"
        )
    statement = text(sql).bindparams(
        bindparam("states", expanding=True), bindparam("roles", expanding=True)
    )
    if also:
        statement = statement.bindparams(bindparam("also", expanding=True))
    return statement.columns(content=JSON(none_as_null=True))


@cache
def _statement(
    dialect: str, *, match_any: bool, states: bool, roles: bool, snippets: bool
) -> TextualSelect:
    """One statement per dialect and filter set, built once: each hit with its snippet
    (``snippets``) or with its content."""
    where = _filters(states=states, roles=roles)
    if dialect == "postgresql":
        # Ranked on the index column alone; only the best rows' text is read.
        ranked = (
            "SELECT m.id AS hit_id, ts_rank(m.search_vector, q.query) AS score, q.query "
            "FROM messages AS m, q "
            f"WHERE {where} AND m.search_vector @@ q.query "
            "ORDER BY score DESC, m.seq DESC LIMIT :limit"
        )
        query = f"WITH q (query) AS MATERIALIZED (SELECT {_POSTGRES_QUERY[match_any]}) "
        # The join back names the session too, so that it stays on one shard when the
        # messages are distributed by session (docs/scale-out.md).
        best = (
            f"FROM ({ranked}) AS hit JOIN messages AS m "
            "ON m.session_id = :session_id AND m.id = hit.hit_id "
        )
        order = "ORDER BY hit.score DESC, m.seq DESC"
        if snippets:
            snippet = (
                f"ts_headline('english', {_POSTGRES_SNIPPET_TEXT}, hit.query, "
                f"'{_HEADLINE_OPTIONS}')"
            )
            sql = (
                f"{query}SELECT {_SNIPPET_COLUMNS}, hit.score, {snippet} AS snippet "
                f"{best}{_POSTGRES_LOCATED}{order}"
            )
        else:
            sql = f"{query}SELECT {_COLUMNS}, hit.score, '' AS snippet {best}{order}"
    else:
        columns, snippet = (
            (
                _SNIPPET_COLUMNS,
                f"snippet(message_search, 0, '{MATCH_MARK}', '{MATCH_MARK}', '…', {SNIPPET_WORDS})",
            )
            if snippets
            else (_COLUMNS, "''")
        )
        sql = (
            f"SELECT {columns}, -bm25(message_search) AS score, {snippet} AS snippet "
            "FROM message_search JOIN messages AS m ON m.id = message_search.rowid "
            f"WHERE message_search MATCH :query AND {where} "
            "ORDER BY bm25(message_search), m.seq DESC LIMIT :limit"
        )
    statement = text(sql)
    for name, used in (("states", states), ("roles", roles)):
        if used:
            statement = statement.bindparams(bindparam(name, expanding=True))
    return statement.columns(content=JSON(none_as_null=True))


@dataclass(frozen=True)
class MessageHit:
    """A stored message a query matched, best first."""

    message_id: int
    seq: int
    turn_id: str
    turn_seq: int
    role: str
    state: str
    #: None in a search that asked for snippets (they stand in for it).
    content: Any
    score: float
    snippet: str
    #: With embeddings: the message's passage nearest in meaning to the query, and which of
    #: its passages it is.
    passage: str | None = None
    passage_index: int | None = None


class SearchRepository:
    """One tenant's full-text queries: every one filters on the tenant and the session."""

    def __init__(self, db: AsyncSession, *, tenant_id: str) -> None:
        self.db = db
        self.tenant_id = tenant_id

    async def forget_erased(self) -> None:
        """Leave no word of erased messages in the index. SQLite's FTS5 keeps a deleted row's
        words in its segments until they merge (its secure-delete needs SQLite 3.42), so the
        index is merged now; Postgres's column goes with its row."""
        if self.db.get_bind().dialect.name == "sqlite":
            await self.db.execute(
                text("INSERT INTO message_search (message_search) VALUES ('optimize')")
            )

    async def search(
        self,
        session_id: str,
        query: str,
        terms: tuple[str, ...],
        *,
        limit: int,
        match_any: bool = False,
        states: Sequence[str] | None = None,
        roles: Sequence[str] | None = None,
        snippets: bool = True,
    ) -> list[MessageHit]:
        """The session's messages that say every word of ``query`` (any word, with
        ``match_any``), best first; only those in ``states`` and of ``roles`` when given.
        ``terms`` are the query's words (``app.search.terms``): SQLite searches for them,
        Postgres parses ``query`` itself."""
        dialect = self.db.get_bind().dialect.name
        statement = _statement(
            dialect,
            match_any=match_any,
            states=bool(states),
            roles=bool(roles),
            snippets=snippets,
        )
        params: dict[str, Any] = {
            "tenant_id": self.tenant_id,
            "session_id": session_id,
            "limit": limit,
            "query": (query if dialect == "postgresql" else fts5_match(terms, match_any=match_any)),
        }
        if states:
            params["states"] = list(states)
        if roles:
            params["roles"] = list(roles)
        rows = (await self.db.execute(statement, params)).all()
        return [_hit(row, score=float(row[7]), snippet=row[8] or "") for row in rows]

    async def recall_candidates(
        self,
        session_id: str,
        terms: tuple[str, ...],
        phrases: tuple[str, ...],
        *,
        limit: int,
        states: Sequence[str],
        roles: Sequence[str],
        also: Sequence[int] = (),
    ) -> list[MessageHit]:
        """The session's messages in ``states`` (or of ids ``also``: those leaving the
        prompt now) and of ``roles`` that say any of ``terms`` or ``phrases``, best first
        by BM25 (``_recall_statement``), with their content."""
        dialect = self.db.get_bind().dialect.name
        params: dict[str, Any] = {
            "tenant_id": self.tenant_id,
            "session_id": session_id,
            "limit": limit,
            "states": list(states),
            "roles": list(roles),
        }
        if dialect == "postgresql":
            params["words"] = [*terms, *phrases]
        else:
            params["query"] = fts5_match(terms, match_any=True, phrases=phrases)
        if also:
            params["also"] = list(also)
        statement = _recall_statement(dialect, also=bool(also))
        rows = (await self.db.execute(statement, params)).all()
        return [_hit(row, score=float(row[7]), snippet="") for row in rows]

    async def at_seqs(
        self,
        session_id: str,
        seqs: Sequence[int],
        *,
        states: Sequence[str],
        roles: Sequence[str],
        also: Sequence[int] = (),
    ) -> dict[int, MessageHit]:
        """The session's messages at ``seqs`` that are in ``states`` (or of ids ``also``) and
        of ``roles``, by seq, with no score and no snippet: the replies of recall's hits."""
        if not seqs:
            return {}
        params: dict[str, Any] = {
            "tenant_id": self.tenant_id,
            "session_id": session_id,
            "seqs": list(seqs),
            "states": list(states),
            "roles": list(roles),
        }
        if also:
            params["also"] = list(also)
        rows = (await self.db.execute(_by_seq_statement(also=bool(also)), params)).all()
        return {row[1]: _hit(row, score=0.0, snippet="") for row in rows}

    async def messages(self, session_id: str, ids: Sequence[int]) -> dict[int, MessageHit]:
        """The session's messages of ``ids`` (those that are the session's), by id, with no
        score and no snippet: the hits that semantic ranking found and full text did not, and
        the messages a turn's recall block showed, made again at its steps."""
        if not ids:
            return {}
        params = {"tenant_id": self.tenant_id, "session_id": session_id, "ids": list(ids)}
        rows = (await self.db.execute(_by_id_statement(), params)).all()
        return {row[0]: _hit(row, score=0.0, snippet="") for row in rows}


@cache
def _by_id_statement() -> TextualSelect:
    return (
        text(
            f"SELECT {_COLUMNS} FROM messages AS m "
            f"WHERE {_filters(states=False, roles=False)} AND m.id IN :ids"
        )
        .bindparams(bindparam("ids", expanding=True))
        .columns(content=JSON(none_as_null=True))
    )


@cache
def _by_seq_statement(*, also: bool) -> TextualSelect:
    statement = text(
        f"SELECT {_COLUMNS} FROM messages AS m "
        f"WHERE {_filters(states=True, roles=True, also=also)} AND m.seq IN :seqs"
    ).bindparams(
        bindparam("seqs", expanding=True),
        bindparam("states", expanding=True),
        bindparam("roles", expanding=True),
    )
    if also:
        statement = statement.bindparams(bindparam("also", expanding=True))
    return statement.columns(content=JSON(none_as_null=True))


def _hit(row: Any, *, score: float, snippet: str) -> MessageHit:
    """A hit from a row that starts with the columns of ``_COLUMNS``."""
    return MessageHit(
        message_id=row[0],
        seq=row[1],
        turn_id=row[2],
        turn_seq=row[3],
        role=row[4],
        state=row[5],
        content=row[6],
        score=score,
        snippet=snippet,
    )
