"""search parts: URLs, paths, versions and identifiers are indexed by their parts too

Postgres's parser keeps "https://grafana.acme.io/d/12/billing-latency" as a url, a host and a
path lexeme, "/srv/ingest/limits.yaml" as one file lexeme and "15.4.2" as one version
lexeme: a question that says "grafana", "billing" or "limits" never matched them. The
search vector now also holds the lexemes of the message's text with its punctuation read
as spaces, so their parts match, while the whole URL, path or version still matches itself.
A text whose vector would pass Postgres's 1 MB tsvector limit with its parts keeps the
vector it had. SQLite is unchanged: FTS5's unicode61 tokenizer already splits on
punctuation (a version in a question is looked up there as the phrase of its parts).

Revision ID: 0013_search_parts
Revises: 0012_message_text_serial
Create Date: 2026-11-25 22:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013_search_parts"
down_revision: str | None = "0012_message_text_serial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# PARALLEL UNSAFE for the reason of 0012_message_text_serial: its EXCEPTION block starts a
# subtransaction.
_FUNCTION = """
CREATE FUNCTION contextd_search_vector(content json) RETURNS tsvector
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


def _search_vector(expression: str) -> None:
    op.execute("DROP INDEX ix_messages_search_vector")
    op.execute("ALTER TABLE messages DROP COLUMN search_vector")
    op.execute(
        "ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
        f"({expression}) STORED"
    )
    op.execute("CREATE INDEX ix_messages_search_vector ON messages USING gin (search_vector)")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_FUNCTION)
    _search_vector("contextd_search_vector(content)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _search_vector("to_tsvector('english', contextd_message_text(content))")
    op.execute("DROP FUNCTION contextd_search_vector(json)")
