"""search: full-text indexes over what a session's messages say, and a session's recall setting

Postgres: a generated ``search_vector`` column (english text search configuration) over the
text of each message, and a GIN index on it. SQLite: an FTS5 table whose content is a view of
the same text, kept up to date by triggers on ``messages`` (a message's content never changes
once written, but an update trigger keeps the index right if it ever does). A message's
content is a string or a list of parts; only the text parts are indexed. Deleting a message
(erasing a session cascades to its messages) deletes its index entries.

Revision ID: 0009_search
Revises: 0008_reasoning
Create Date: 2026-11-24 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_search"
down_revision: str | None = "0008_reasoning"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The text of a message's content: the string, or its text parts joined. Only its first
# INDEXED_CHARS characters are indexed: Postgres refuses a tsvector whose words pass 1 MB
# (a tool result of hashes can), and a turn must never fail on its index; at four bytes a
# character at most, this many never do. SQLite indexes the same, so both find the same.
INDEXED_CHARS = 262_144
# On Postgres a function, so that the generated column and the snippets read the same text:
# a part list's texts joined (real text, not the JSON of a list of strings, in which a word
# after a line break reads as "\nword"); and text Postgres cannot hold (JSON's "\u0000",
# which a tool reading a binary file returns) left out instead of failing the row's write.
_POSTGRES_FUNCTION = f"""
CREATE FUNCTION contextd_message_text(content json) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $body$
BEGIN
    RETURN left(coalesce(CASE json_typeof(content)
        WHEN 'string' THEN content #>> '{{}}'
        WHEN 'array' THEN (
            SELECT string_agg(part ->> 'text', ' ') FROM json_array_elements(content) AS part
            WHERE json_typeof(part) = 'object' AND part ->> 'type' = 'text'
        )
    END, ''), {INDEXED_CHARS});
EXCEPTION WHEN untranslatable_character OR character_not_in_repertoire THEN
    BEGIN
        RETURN contextd_message_text(regexp_replace(content::text, '\\\\u0000', '', 'g')::json);
    EXCEPTION WHEN OTHERS THEN
        RETURN '';
    END;
END
$body$
"""


def _sqlite_text(row: str) -> str:
    text = (
        f"CASE json_type({row}.content) WHEN 'text' THEN json_extract({row}.content, '$') "
        f"WHEN 'array' THEN (SELECT group_concat(json_extract(part.value, '$.text'), ' ') "
        f"FROM json_each({row}.content) AS part "
        f"WHERE json_extract(part.value, '$.type') = 'text') END"
    )
    return f"substr({text}, 1, {INDEXED_CHARS})"


def upgrade() -> None:
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.add_column(sa.Column("recall", sa.JSON(none_as_null=True), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_POSTGRES_FUNCTION)
        op.execute(
            "ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS "
            "(to_tsvector('english', contextd_message_text(content))) STORED"
        )
        op.execute("CREATE INDEX ix_messages_search_vector ON messages USING gin (search_vector)")
        return
    op.execute(
        f"CREATE VIEW message_search_text AS SELECT id, {_sqlite_text('messages')} AS body "
        "FROM messages"
    )
    op.execute(
        "CREATE VIRTUAL TABLE message_search USING fts5(body, content='message_search_text', "
        "content_rowid='id', tokenize='porter unicode61')"
    )
    op.execute(
        "CREATE TRIGGER message_search_insert AFTER INSERT ON messages BEGIN "
        "INSERT INTO message_search (rowid, body) "
        "SELECT id, body FROM message_search_text WHERE id = new.id; END"
    )
    delete_old = (
        "INSERT INTO message_search (message_search, rowid, body) "
        f"VALUES ('delete', old.id, {_sqlite_text('old')});"
    )
    op.execute(
        f"CREATE TRIGGER message_search_delete AFTER DELETE ON messages BEGIN {delete_old} END"
    )
    op.execute(
        "CREATE TRIGGER message_search_update AFTER UPDATE OF content ON messages BEGIN "
        f"{delete_old} INSERT INTO message_search (rowid, body) "
        "SELECT id, body FROM message_search_text WHERE id = new.id; END"
    )
    # The messages stored before this revision (FTS5's own 'rebuild' cannot read a view
    # with a correlated subquery).
    op.execute("INSERT INTO message_search (rowid, body) SELECT id, body FROM message_search_text")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX ix_messages_search_vector")
        op.execute("ALTER TABLE messages DROP COLUMN search_vector")
        op.execute("DROP FUNCTION contextd_message_text(json)")
    else:
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER message_search_{trigger}")
        op.execute("DROP TABLE message_search")
        op.execute("DROP VIEW message_search_text")
    with op.batch_alter_table("sessions") as batch_op:
        batch_op.drop_column("recall")
