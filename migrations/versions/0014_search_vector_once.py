"""search vector once: a message's text is parsed once, and only its compounds again

0013_search_parts parsed the whole text twice, once as written and once with its
punctuation read as spaces, though the second pass only adds lexemes for the words in
which Postgres's parser keeps punctuation (URLs, hosts, paths, versions, emails, signed
numbers, dotted identifiers). It was most of the database's CPU on a write. The text is
now parsed once, and then only its words where punctuation comes before a letter or a
digit ("grafana.acme.io/d/12", "15.4.2", "/metrics", "-5"), joined in their order, their
punctuation read as spaces; a text with no such word is parsed once only. A word whose
punctuation only trails ("end.", "x/", "100%") is left out: the parser keeps no trailing
punctuation in a lexeme ("end", "x", "100"), so the first pass already holds its parts.
The vector holds the same lexemes as 0013's; a word's positions are no longer repeated by
the second pass, which ``ts_rank`` reads (the search API's order among hits, recall's pool
of 100).

The column is generated, so the stored vectors are rewritten: dropping and adding it
rewrites ``messages`` under an ACCESS EXCLUSIVE lock (no reads or writes of messages until
the migration commits), computing every message's vector again, then builds the GIN index
anew, as 0013 did. On 100,000 messages of agents' turns and tool results (114 MB) on a
loaded 2-core machine this took 31 s, and the downgrade to 0013's function 44 s
(docs/benchmarks.md, "The search vector parses each text once"): plan it for a quiet
hour on a large table. The 1 MB limit of a tsvector is kept as 0013 kept it: a text whose
vector would pass it with its parts keeps the vector of the text alone. SQLite is unchanged.

Revision ID: 0014_search_vector_once
Revises: 0013_search_parts
Create Date: 2026-11-27 22:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014_search_vector_once"
down_revision: str | None = "0013_search_parts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Punctuation before a letter or a digit: inside a word ("acme.io", "v1.2") or leading it
# ("/metrics", "~/.bashrc", "-5"), where the parser may keep the punctuation in one lexeme.
_COMPOUND = "[^[:alnum:][:space:]][[:alnum:]]"
# PARALLEL UNSAFE for the reason of 0012_message_text_serial: its EXCEPTION block starts a
# subtransaction. The variables keep their values in the handler: the fallback does not
# parse the text again.
ONCE = f"""
CREATE OR REPLACE FUNCTION contextd_search_vector(content json) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS $body$
DECLARE
    body text := contextd_message_text(content);
    words tsvector := to_tsvector('english', body);
    compounds text;
BEGIN
    IF body !~ '{_COMPOUND}' THEN
        RETURN words;
    END IF;
    SELECT string_agg(word[1], ' ') INTO compounds
        FROM regexp_matches(body, '[^[:space:]]*{_COMPOUND}[^[:space:]]*', 'g') AS word;
    RETURN words
        || to_tsvector('english', regexp_replace(compounds, '[^[:alnum:][:space:]]+', ' ', 'g'));
EXCEPTION WHEN program_limit_exceeded THEN
    RETURN words;
END
$body$
"""
# 0013_search_parts's function, for the downgrade (and for measuring the two side by side).
TWICE = """
CREATE OR REPLACE FUNCTION contextd_search_vector(content json) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS $body$
DECLARE
    body text := contextd_message_text(content);
BEGIN
    RETURN to_tsvector('english', body)
        || to_tsvector('english', regexp_replace(body, '[^[:alnum:][:space:]]+', ' ', 'g'));
EXCEPTION WHEN program_limit_exceeded THEN
    RETURN to_tsvector('english', body);
END
$body$
"""


def _recompute_search_vector() -> None:
    # Replacing the function leaves the stored vectors as the old one made them: the column
    # is made again so that every message's vector is the new function's.
    op.execute("DROP INDEX ix_messages_search_vector")
    op.execute("ALTER TABLE messages DROP COLUMN search_vector")
    op.execute(
        "ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
        "(contextd_search_vector(content)) STORED"
    )
    op.execute("CREATE INDEX ix_messages_search_vector ON messages USING gin (search_vector)")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(ONCE)
    _recompute_search_vector()


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(TWICE)
    _recompute_search_vector()
