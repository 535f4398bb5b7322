"""What a user pastes or dictates, read apart from what they write: a config, a file of
settings or rows (YAML, JSON, TOML, ``.env``, CSV, ``key: value`` lines), a chat thread of
other people's messages, and a message dictated with its punctuation spoken.

A pasted block is not a list of statements: most of its lines are structure (``spec:``,
``{``), the keys every such file has (``apiVersion``, ``kind``) or flags left at their
defaults. The lines that hold a value are kept, each with the path of keys that gives it its
meaning (``spec.replicas: 3``), the most specific first and at most :data:`PASTED_LINES` of
one block, so that one large paste cannot fill the summary's user block; of those, the first
few hold their place among the user's statements and the rest give way to every sentence the
user typed (``PASTE_LEAD_LINES`` in :mod:`app.summarize.extractive`). The rest stays in the
stored message, where recall finds it.

A pasted chat thread ("Priya Nair  10:42 AM" and what she said) is other people's words:
kept as "Priya Nair: what she said", below what the user said, never dropped. The line the
user adds above or below it is theirs and is read as any sentence of theirs.

When a rule is unsure, the user's words stay as they wrote them: a "Label: value" line in
natural language is their statement, not a config's line; a message is read as dictated only
on marks no sentence says otherwise.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from app.budget.statements import is_config_line

#: At most this many lines of one pasted block are kept in the summary.
PASTED_LINES = 6
#: Lines whose value is a single word or a number of one or two digits ("replicas: 3",
#: "logLevel: info") are kept only while the paste has fewer specific lines than this.
PLAIN_LINES = 3
#: At most this many rows of one pasted CSV are kept.
CSV_ROWS = 3
#: A run of this many structured lines (``key: value``, ``key = value``, ``KEY=value``, CSV
#: rows) is a paste; a fenced block (```` ``` ````) is one whatever its length. Lines whose
#: label is in natural language ("Hotel: Adler") are not counted: they are the user's note.
BLOCK_LINES = 5

_CSV_ROW = re.compile(r"^[^,:]+: [^,]*(?:, [^,:]+: [^,]*)+$")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_YAML_KEY = re.compile(
    r"^(?P<indent>\s*(?:-\s+)*)(?P<key>[\w$@./-]+(?: [\w$@./-]+){0,3}|\"[^\"]+\"|'[^']+'):"
    r"(?:\s+(?P<value>.*?))?\s*$"
)
_ASSIGN = re.compile(r"^(?P<indent>\s*)(?:export\s+)?(?P<key>[\w$.\"'-]+)\s*=\s*(?P<value>.*?)\s*$")
_SECTION = re.compile(r"^\s*\[\[?(?P<section>[\w.\"' -]+)\]\]?\s*$")
_BRACKET = re.compile(r"^\s*[\]\[{}(),]+\s*$")
_COMMENT = re.compile(r"^\s*(?:#|//|;)")
#: A Slack-, Teams- or Discord-style header of a pasted message: a person's name (each word
#: capitalised), then a time set apart as chat apps set it: two spaces, a dash or a comma
#: before it, or "AM"/"PM" after it. "Dentist at 9:30", "Standup 9:15" and "Lunch with
#: Marta 12:30" are lines of the user's own schedule.
_CHAT_HEADER = re.compile(
    r"^\s*[^\W\d_a-z][\w.'\u2019-]*(?: [^\W\d_a-z][\w.'\u2019-]*){0,3}"
    r"(?:(?:\s{2,}|\s+[-\u2014\u2013\u00b7]\s+|,\s+)\[?\d{1,2}:\d{2}(?:\s?[AaPp]\.?[Mm]\.?)?\]?"
    r"|\s+\[?\d{1,2}:\d{2}\s?[AaPp]\.?[Mm]\.?\]?)\s*$"
)
#: Values that say nothing of their own: a flag, an empty value, an opening bracket.
_EMPTY_VALUES = frozenset(
    [
        "",
        "true",
        "false",
        "null",
        "none",
        "nil",
        "yes",
        "no",
        "on",
        "off",
        "~",
        "{",
        "[",
        "{}",
        "[]",
        "|",
        ">",
    ]
)
#: Keys every file of its kind has: what kind of document it is, not what it says.
_STRUCTURE_KEYS = frozenset(["apiversion", "kind", "$schema", "schema", "edition"])


@dataclass(frozen=True)
class Read:
    """A user's message read apart: ``prose`` is what they wrote (sentences, as before),
    ``lines`` the kept lines of what they pasted, ``dropped`` how many value lines of a
    paste were over its bound."""

    prose: str
    lines: tuple[str, ...]
    dropped: int
    #: What other people said in a pasted chat thread, as "Name: what they said": their
    #: words, not the user's statements; kept below everything the user said.
    thread: tuple[str, ...] = ()


def _unquote(text: str) -> str:
    text = text.strip().rstrip(",").strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


#: A label as people write one ("Hotel", "On call this week", "QA"), not a key as a file
#: has one ("replicas", "imagePullPolicy", "DB_HOST", "metadata"): a line under it is a note.
_NATURAL_KEY = re.compile(r"^(?:[A-Z][a-z]+|[A-Z]{1,4}|\S+(?: \S+)+)$")


def _natural(line: str) -> bool:
    """A "Label: value" line of the user's own note ("Hotel: Adler", "On call this week:
    Priya"): read as their statement, wherever it stands."""
    key = _YAML_KEY.match(line)
    return bool(key and key.group("value") and _NATURAL_KEY.match(_unquote(key.group("key"))))


def _structured(line: str) -> bool:
    if not line.strip():
        return False
    return bool(
        _YAML_KEY.match(line)
        or _ASSIGN.match(line)
        or _SECTION.match(line)
        or _BRACKET.match(line)
        or _COMMENT.match(line)
        or line.count(",") >= 2
    )


#: At most this many value lines of one pasted block are weighed for the summary.
READ_LINES = 400

#: The last keys of a path that a kept line shows: "containers.resources.memory", not
#: "spec.template.spec.containers.resources.memory".
PATH_KEYS = 3


def _specificity(value: str) -> int:
    """How much a value is the user's own rather than a default: digits with letters (a
    size, a version, a host), long numbers, names, joined identifiers, addresses. A flag, a
    single word ("Always", "info") and a number of one or two digits score nothing."""
    if re.fullmatch(r"\d{1,2}|[^\W\d_]+|/[\w/]*", value) and not re.search(r"[^\x00-\x7f]", value):
        return 0
    score = 0
    digits = sum(c.isdigit() for c in value)
    if digits:
        score += 1
    if digits >= 3 or (digits and any(c.isalpha() for c in value)):
        score += 1
    if re.search(r"[A-Z][^\W\d_]+\s+[A-Z]", value) or any(
        ord(c) > 127 and c.isalpha() for c in value
    ):
        score += 2
    if "@" in value or re.search(r"\w[-.]\w+[-.]\w", value):
        score += 1
    return score


def _csv_lines(lines: list[str]) -> list[str]:
    cells = [[cell.strip() for cell in line.split(",")] for line in lines]
    header = cells[0]
    if any(re.search(r"\d", cell) for cell in header):
        return [", ".join(cell for cell in row if cell) for row in cells]
    return [
        ", ".join(f"{name}: {cell}" for name, cell in zip(header, row, strict=False) if cell)
        for row in cells[1:]
    ]


def _values(lines: list[str]) -> list[str]:
    """Each line of a block that holds a value, as ``path.of.keys: value``."""
    body = [
        line
        for line in lines
        if line.strip() and not _COMMENT.match(line) and not _FENCE.match(line)
    ]
    rows = [
        line
        for line in body
        if line.count(",") >= 1 and not _YAML_KEY.match(line) and not _ASSIGN.match(line)
    ]
    if len(rows) >= 2 and len(rows) >= len(body) - 1:  # a line of its own above the rows
        return _csv_lines(rows)
    found: list[str] = []
    stack: list[tuple[int, str]] = []
    section = ""
    for line in body:
        if heading := _SECTION.match(line):
            section = _unquote(heading.group("section"))
            stack = []
            continue
        match = _YAML_KEY.match(line)
        if match is None:
            match = _ASSIGN.match(line)
        if match is None:
            continue
        indent = len(match.group("indent").replace("-", " "))
        key = _unquote(match.group("key"))
        value = _unquote(match.group("value") or "")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if value in ("{", "[", "") or value.lower() in ("|", ">"):
            stack.append((indent, key))
            continue
        if key.lower() in _STRUCTURE_KEYS or value.lower() in _EMPTY_VALUES:
            continue
        path = [section] if section else []
        path += [name for _, name in stack] + [key]
        found.append(f"{'.'.join(path[-PATH_KEYS:])}: {value}")
    name = _document_name(body)
    return [f"[{name}] {line}" for line in found] if name else found


def _document_name(body: list[str]) -> str:
    """The name a document gives itself (``metadata.name`` of a Kubernetes object, a
    top-level ``name``), or "" when it gives none: two pastes revise each other's values
    only when they are the same document."""
    under_metadata = False
    for line in body:
        match = _YAML_KEY.match(line)
        if match is None:
            continue
        indent = len(match.group("indent").replace("-", " "))
        key = _unquote(match.group("key"))
        value = _unquote(match.group("value") or "")
        if indent == 0:
            under_metadata = key == "metadata"
            if key == "name" and value:
                return value
        elif under_metadata and key == "name" and value:
            return value
    return ""


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Where the pasted blocks are: (first line, line after the last)."""
    blocks: list[tuple[int, int]] = []
    index = 0
    while index < len(lines):
        if _FENCE.match(lines[index]):
            end = index + 1
            while end < len(lines) and not _FENCE.match(lines[end]):
                end += 1
            blocks.append((index, min(end + 1, len(lines))))
            index = end + 1
            continue
        end = index
        while end < len(lines) and (
            _structured(lines[end])
            or (not lines[end].strip() and end + 1 < len(lines) and _structured(lines[end + 1]))
        ):
            end += 1
        # A note's "Label: value" lines do not make a paste; they do not break one either.
        run = [line for line in lines[index:end] if line.strip() and not _natural(line)]
        # Rows of as many commas each, brackets, sections, assignments: a file, not a note.
        rows = {line.count(",") for line in run}
        syntax = any(
            _ASSIGN.match(line) or _SECTION.match(line) or _BRACKET.match(line) for line in run
        ) or (len(rows) == 1 and min(rows) >= 2)
        # A short config under a sentence of the user's that ends in a colon ("the port
        # changed:"): the sentence stays theirs, the lines under it are the paste.
        lead = index
        while lead < end and _said_before(lines[lead]):
            lead += 1
        short = [line for line in lines[lead:end] if line.strip() and not _natural(line)]
        if len(run) >= BLOCK_LINES or (syntax and len(run) >= 3):
            blocks.append((index, end))
            index = end
        elif len(short) >= 2 and _headed(short):
            blocks.append((lead, end))
            index = end
        else:
            index = max(end, index + 1)
    return blocks


def _headed(run: list[str]) -> bool:
    """Whether a short run of lines is a config by its structure alone: an INI or TOML
    section over its keys, or a YAML key with no value over keys indented under it
    (``server:`` then ``  port: 8080``). Such a paste of two to four lines keeps its
    section or its parent key in the path of each value."""
    if any(_SECTION.match(line) for line in run):
        return True
    for line, below in pairwise(run):
        parent, child = _YAML_KEY.match(line), _YAML_KEY.match(below)
        if (
            parent
            and child
            and not parent.group("value")
            and " " not in parent.group("key")
            and len(child.group("indent")) > len(parent.group("indent"))
        ):
            return True
    return False


def _said_before(line: str) -> bool:
    """A sentence of the user's that ends in a colon ("the port changed:"), not a key."""
    key = _YAML_KEY.match(line)
    return bool(key and not key.group("value") and " " in key.group("key").strip())


def _chat_thread(lines: list[str]) -> dict[int, str]:
    """The lines of a pasted chat thread, each with who said it: a header and what follows
    it up to a blank line. The last message, when no blank line closes it, is its header and
    the line under it: what the user writes right under the thread is theirs."""
    thread: dict[int, str] = {}
    speaker = ""
    last = -1
    for index, line in enumerate(lines):
        if _CHAT_HEADER.match(line):
            speaker = re.split(r"\s{2,}|\s+[-\u2014\u2013\u00b7]\s+|,\s+|\s+\[?\d", line.strip())[0]
            last = index
        elif not line.strip():
            speaker = ""
        if speaker:
            thread[index] = speaker
    headers = sum(1 for index in thread if _CHAT_HEADER.match(lines[index]))
    if headers < 2:
        return {}
    if last >= 0 and len(lines) - 1 in thread:  # the last message runs to the end
        for index in range(last + 2, len(lines)):
            thread.pop(index, None)
    return thread


#: Punctuation said aloud, as dictation leaves it when it does not type it. Only marks no
#: sentence says otherwise: "period" (the trial period), "colon" (a colon exam) and "new
#: line" (a new line of credit) are words, and are left as they are.
_SPOKEN = re.compile(
    r"(?<!\ba )(?<!\bthe )(?<!\bany )(?<!\bone )(?<!\bno )"
    r"\s*\b(?P<mark>comma|full stop|question mark|exclamation (?:mark|point)|new paragraph)\b",
    re.IGNORECASE,
)
#: A dictated message ends on a spoken full stop, question mark or exclamation mark, or says
#: two of them.
_SPOKEN_END = re.compile(
    r"(?<!\ba )(?<!\bthe )\b(?:full stop|question mark|exclamation (?:mark|point))\b",
    re.IGNORECASE,
)
_WRITTEN = {
    "comma": ",",
    "full stop": ".",
    "question mark": "?",
    "exclamation mark": "!",
    "exclamation point": "!",
    "new paragraph": "\n",
}


def written_punctuation(text: str) -> str:
    """A dictated message with its punctuation spoken ("the plumber comma his name is Marek
    full stop") as it would have been typed; any other message as it is. Dictated means:
    no punctuation typed, and the message ends on a spoken full stop, question mark or
    exclamation mark, or says two of them. Then only those marks, "comma" and "new
    paragraph" are written, and none said after "a" or "the" ("a full stop at grandma's"):
    when unsure, the user's words stay as they are."""
    if re.search(r"[.,!?;:]", text):
        return text
    ends = list(_SPOKEN_END.finditer(text))
    if not ends or (len(ends) < 2 and text[ends[-1].end() :].strip()):
        return text

    def written(match: re.Match[str]) -> str:
        return _WRITTEN[" ".join(match.group("mark").lower().split())]

    return _SPOKEN.sub(written, text)


def _cell_values(line: str) -> list[str]:
    return [cell.split(": ", 1)[-1] for cell in line.split(", ")]


def _line_scores(lines: list[str]) -> list[int]:
    """Each kept line's worth: its values' (a row's cells added up); a value the block says
    on more than one line (the service's own name on every level) is its structure. One
    pass over the lines: a paste of thousands of lines costs what reading it does."""
    seen: Counter[str] = Counter()
    for line in lines:
        seen.update(set(_cell_values(line)))
    return [
        sum(-1 if seen[value] > 1 else _specificity(value) for value in _cell_values(line))
        for line in lines
    ]


def is_pasted_line(line: str) -> bool:
    """Whether ``line`` is shaped as a kept line of a paste: a path of keys and a value, or
    a CSV row as "name: cell, name: cell"."""
    return is_config_line(line) or _CSV_ROW.match(line) is not None


@lru_cache(maxsize=4096)
def read(text: str) -> Read:
    """``text``, a user's message, read apart (see :class:`Read`)."""
    lines = text.splitlines()
    thread = _chat_thread(lines)
    kept: list[str] = []
    dropped = 0
    in_block: set[int] = set()
    for start, end in _blocks(lines):
        # A "Label: value" line of the user's own inside a paste is read as their statement.
        inside = [index for index in range(start, end) if not _natural(lines[index])]
        in_block.update(inside)
        values = _values([lines[index] for index in inside])
        # Only the first lines of a very large paste are weighed; the rest stay in the
        # stored message, where recall finds them.
        dropped += max(0, len(values) - READ_LINES)
        values = values[:READ_LINES]
        scores = _line_scores(values)
        ranked = sorted(range(len(values)), key=lambda i: -scores[i])
        scored = sum(1 for score in scores if score > 0)
        # A flag, a word or a small number ("replicas: 3") is kept only beside few lines more
        # specific: in a large paste it is mostly a default.
        room = min(PASTED_LINES, scored + max(0, PLAIN_LINES - scored))
        if values and _CSV_ROW.match(values[0]):
            room = min(room, CSV_ROWS)  # a row costs what three lines of a config do
        # The most specific first (the document's order among equals): when room is short,
        # a paste's first lines are the ones that stay.
        chosen = ranked[:room]
        dropped += len(values) - len(chosen)
        kept.extend(values[i] for i in chosen)
    prose = "\n".join(
        line for index, line in enumerate(lines) if index not in in_block and index not in thread
    )
    if not in_block and not thread:
        prose = text
    said = tuple(
        f"{speaker}: {lines[index].strip()}"
        for index, speaker in thread.items()
        if index not in in_block and lines[index].strip() and not _CHAT_HEADER.match(lines[index])
    )
    return Read(written_punctuation(prose), tuple(kept), dropped, said)
