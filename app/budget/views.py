"""What the prompt shows of a message when it does not show the whole of it.

Two rules, both read-time shapes of the prompt that change nothing stored:

- **Oversized tool results are capped at entry.** A tool result over its cap (a share of the
  input budget) shows its head and its tail around a marker that says how many tokens were
  left out and where the whole result is read (``GET /v1/sessions/{id}/messages`` at its
  seq). The cut depends only on the text, the cap and the counter, so a capped result reads
  the same in every prompt and the prefix stays cacheable.
- **Reasoning of completed turns is cleared first when room is needed.** Once the prompt is
  over the summary trigger, thinking parts and ``reasoning_content`` of completed turns leave
  the prompt (what Anthropic's ``clear_thinking`` does), and stay out of later prompts (the
  fingerprint remembers them), so the prefix does not flip back; the open turn's reasoning
  always stays, unchanged, as the providers require for a turn that uses tools.

- **Long turns set older tool results aside.** Before a step of the open turn is rejected,
  the turn's older tool results give up their content, oldest first, for a placeholder that
  names the stored original; the calls, their ids, the user's message and the latest step
  stay whole. What was set aside stays so for the rest of the turn (the prompt's fingerprint
  remembers it), so the boundary only moves forward and the prefix stays cacheable.

- **Images of completed turns give way first.** When room is needed, the images in
  completed turns' tool results beyond the newest few (``tool_images_kept``) are shown as a
  placeholder that names the stored message; what was set aside stays so (the fingerprint
  remembers it), so that boundary too only moves forward.

Reasoning is never edited: a thinking part is shown whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from app.budget.assembly import marked_entries
from app.budget.policy import HistoryMessage
from app.budget.tokens import TokenCounter, content_text, count_message, is_reasoning_part
from app.budget.tool_images import image_count, is_image_part, without_images

#: Attempts at a head and tail that fit before settling for a shorter one.
_FIT_ATTEMPTS = 8


class Viewed(Protocol):
    """A conversation message as :mod:`app.budget.decision` holds it."""

    @property
    def seq(self) -> int: ...

    @property
    def turn_seq(self) -> int: ...

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> Any: ...

    @property
    def reasoning_content(self) -> str | None: ...

    @property
    def tool_calls(self) -> Sequence[Mapping[str, Any]] | None: ...

    def chat(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=Viewed)


@dataclass(frozen=True)
class ViewReport:
    """What the views did to one prompt, for the audit row."""

    tool_results_capped: int = 0
    tool_result_tokens_left_out: int = 0
    #: Tool results earlier prompts set aside, shown as their placeholders from the start.
    tool_results_kept_aside: int = 0
    tool_result_tokens_kept_aside: int = 0
    reasoning_messages_cleared: int = 0
    reasoning_parts_cleared: int = 0
    reasoning_tokens_cleared: int = 0
    #: Completed turns' reasoning shown but not counted: the provider strips it first.
    reasoning_tokens_not_counted: int = 0
    #: The messages shown without their reasoning.
    reasoning_cleared_seqs: frozenset[int] = frozenset()
    #: Images of completed turns' tool results shown as placeholders, and their tokens.
    images_set_aside: int = 0
    image_tokens_set_aside: int = 0
    images_set_aside_seqs: frozenset[int] = frozenset()

    def as_telemetry(self) -> dict[str, dict[str, int]]:
        return {
            "tool_results": {
                "capped": self.tool_results_capped,
                "tokens_left_out": self.tool_result_tokens_left_out,
            },
            "reasoning": {
                "messages_cleared": self.reasoning_messages_cleared,
                "parts_cleared": self.reasoning_parts_cleared,
                "tokens_cleared": self.reasoning_tokens_cleared,
                "tokens_not_counted": self.reasoning_tokens_not_counted,
            },
            "tool_images": {
                "images_set_aside": self.images_set_aside,
                "results": len(self.images_set_aside_seqs),
                "tokens_set_aside": self.image_tokens_set_aside,
            },
        }


def original_location(session_id: str, seq: int) -> str:
    """Where the whole of a stored message is read."""
    return f"GET /v1/sessions/{session_id}/messages?after_seq={seq - 1}&limit=1"


def capped_marker(left_out_tokens: int, *, session_id: str, seq: int) -> str:
    return (
        f"\n\n[... {left_out_tokens} tokens of this tool result are left out here; the whole "
        f"result is stored as message seq {seq}: {original_location(session_id, seq)} ...]\n\n"
    )


def cap_tool_text(
    text: str,
    cap_tokens: int,
    counter: TokenCounter,
    *,
    session_id: str,
    seq: int,
    total: int | None = None,
) -> tuple[str, int]:
    """``text`` cut to its head and tail around a marker so that it costs at most about
    ``cap_tokens``; returns the text shown and the tokens left out (0: shown whole).
    ``total``, the text's tokens when known, saves counting the whole of a long text."""
    if total is None:
        total = counter.count_text(text)
    if total <= cap_tokens:
        return text, 0
    # The marker is costed with the largest number it could carry.
    marker_tokens = counter.count_text(capped_marker(total, session_id=session_id, seq=seq))
    keep = max(0, cap_tokens - marker_tokens)
    chars = int(len(text) * keep / total)
    head = tail = ""
    kept = 0
    for _ in range(_FIT_ATTEMPTS):
        head, tail = _ends(text, chars)
        kept = counter.count_text(head) + counter.count_text(tail)
        if kept <= keep or chars == 0:
            break
        # Shrink in proportion, and a little more, so the next attempt is likely the last.
        chars = int(chars * keep / kept * 0.95)
    else:
        head, tail = _ends(text, 0)
        kept = 0
    left_out = max(0, total - kept)
    return head + capped_marker(left_out, session_id=session_id, seq=seq) + tail, left_out


def _ends(text: str, chars: int) -> tuple[str, str]:
    head_chars = chars // 2
    tail_chars = chars - head_chars
    return text[:head_chars], (text[len(text) - tail_chars :] if tail_chars else "")


class CapMemo(Protocol):
    """Capped tool results already cut: what the prompt shows of one (its content), its
    tokens there and the tokens left out, by everything the cut depends on. A capped
    result is in every prompt until it leaves, and cutting it counts about ``cap_tokens`` of
    text twice: 10 ms a prompt for one result of 700,000 characters at a 128k window."""

    def get(self, key: Hashable) -> tuple[Any, int, int] | None: ...

    def put(self, key: Hashable, value: tuple[Any, int, int]) -> None: ...


def _content_digest(content: Any) -> bytes:
    """A digest of a message's content: a memo's key must not take a message of an erased
    session for the new one that has its session id and seq."""
    raw = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return hashlib.blake2b(raw.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def capped_tool_result(
    message: M,
    tokens: int,
    *,
    cap_tokens: int,
    counter: TokenCounter,
    session_id: str,
    memo: CapMemo | None = None,
) -> tuple[M, int, int]:
    """A tool message as the prompt shows it, its tokens there, and the tokens left out.
    Messages within the cap (by their stored count) are returned as they are, uncounted;
    with ``memo``, a result cut once is not cut again."""
    if message.role != "tool" or tokens <= cap_tokens:
        return message, tokens, 0
    if memo is None:
        return _cut_tool_result(
            message, tokens, cap_tokens=cap_tokens, counter=counter, session_id=session_id
        )
    key = (
        counter.name,
        cap_tokens,
        session_id,
        message.seq,
        tokens,
        _content_digest(message.content),
    )
    known = memo.get(key)
    if known is not None:
        content, view_tokens, left_out = known
        if not left_out:
            return message, tokens, 0
        return replace(message, content=content), view_tokens, left_out  # type: ignore[type-var]
    view, view_tokens, left_out = _cut_tool_result(
        message, tokens, cap_tokens=cap_tokens, counter=counter, session_id=session_id
    )
    memo.put(key, (view.content, view_tokens, left_out))
    return view, view_tokens, left_out


def _cut_tool_result(
    message: M, tokens: int, *, cap_tokens: int, counter: TokenCounter, session_id: str
) -> tuple[M, int, int]:
    if image_count(message.content):
        return _capped_with_images(
            message, tokens, cap_tokens=cap_tokens, counter=counter, session_id=session_id
        )
    shown, left_out = cap_tool_text(
        content_text(message.content),
        cap_tokens,
        counter,
        session_id=session_id,
        seq=message.seq,
        # The stored count (the message's overhead included): counting a long result once
        # per prompt would cost more than the rest of the assembly.
        total=tokens,
    )
    if not left_out:
        return message, tokens, 0
    view = replace(message, content=shown)  # type: ignore[type-var]
    return view, count_message(counter, view.chat()), left_out


def _capped_with_images(
    message: M, tokens: int, *, cap_tokens: int, counter: TokenCounter, session_id: str
) -> tuple[M, int, int]:
    """A tool result with images: its text capped to what the cap leaves beside the images,
    which stay whole (placeholders take them when room is needed)."""
    text = content_text(message.content)
    text_view = replace(message, content=text)  # type: ignore[type-var]
    image_tokens = tokens - count_message(counter, text_view.chat())
    shown, left_out = cap_tool_text(
        text, max(1, cap_tokens - image_tokens), counter, session_id=session_id, seq=message.seq
    )
    if not left_out:
        return message, tokens, 0
    images = [part for part in message.content if is_image_part(part)]
    view = replace(message, content=[{"type": "text", "text": shown}, *images])  # type: ignore[type-var]
    return view, count_message(counter, view.chat()), left_out


#: What an answer that was only reasoning shows once its reasoning is cleared.
REASONING_CLEARED_TEXT = "[reasoning only; cleared for room]"


def without_reasoning(message: M) -> tuple[M, int]:
    """The message with its reasoning left out, and how many parts that was (0: it had none,
    and the message is returned as it is)."""
    content = message.content
    parts = 0
    if isinstance(content, list):
        kept = [part for part in content if not is_reasoning_part(part)]
        parts = len(content) - len(kept)
        if parts:
            content = kept or None
    if message.reasoning_content is not None:
        parts += 1
    if not parts:
        return message, 0
    if not content and not message.tool_calls:
        # An answer that was reasoning alone: an assistant message needs content or tool
        # calls in the OpenAI shape, so it says what was there.
        content = REASONING_CLEARED_TEXT
    return replace(message, content=content, reasoning_content=None), parts  # type: ignore[type-var]


def has_reasoning(message: Viewed) -> bool:
    content = message.content
    return message.reasoning_content is not None or (
        isinstance(content, list) and any(is_reasoning_part(part) for part in content)
    )


# -- long turns ----------------------------------------------------------------------------------

#: The share of the room a long turn's setting aside leaves free for the steps that follow.
SET_ASIDE_HEADROOM = 0.4
#: A fingerprint entry of a message shown as a set-aside placeholder ("q:<seq>" when whole).
SET_ASIDE_PREFIX = "p:"
#: A fingerprint entry of a message shown without its reasoning.
REASONING_CLEARED_PREFIX = "r:"
#: A fingerprint entry of a tool result shown with placeholders for its images.
IMAGES_SET_ASIDE_PREFIX = "i:"


def set_aside_placeholder(seq: int) -> str:
    """Short on purpose: a long turn may show dozens of these, one per older result."""
    return f"[tool result set aside for room; stored whole as message seq {seq}]"


def previously_set_aside(fingerprint: Sequence[str] | None) -> frozenset[int]:
    """The seqs the previous prompt showed as set-aside placeholders."""
    return frozenset(
        int(item[len(SET_ASIDE_PREFIX) :]) for item in marked_entries(fingerprint, SET_ASIDE_PREFIX)
    )


def previously_cleared(fingerprint: Sequence[str] | None) -> frozenset[int]:
    """The seqs the previous prompt showed without their reasoning."""
    return frozenset(
        int(item[len(REASONING_CLEARED_PREFIX) :])
        for item in marked_entries(fingerprint, REASONING_CLEARED_PREFIX)
    )


def previously_without_images(fingerprint: Sequence[str] | None) -> frozenset[int]:
    """The seqs the previous prompt showed with placeholders for their images."""
    return frozenset(
        int(item[len(IMAGES_SET_ASIDE_PREFIX) :])
        for item in marked_entries(fingerprint, IMAGES_SET_ASIDE_PREFIX)
    )


def mark_views(
    fingerprint: Sequence[str],
    set_aside: frozenset[int],
    cleared: frozenset[int] = frozenset(),
    without_images: frozenset[int] = frozenset(),
) -> list[str]:
    """The fingerprint with set-aside messages, messages without their reasoning, and tool
    results without their images told apart from whole ones: the next prompt keeps them so."""
    if not set_aside and not cleared and not without_images:
        return list(fingerprint)
    marked = []
    for item in fingerprint:
        seq = int(item[2:]) if item.startswith("q:") else None
        if seq in set_aside:
            item = f"{SET_ASIDE_PREFIX}{seq}"
        elif seq in cleared:
            item = f"{REASONING_CLEARED_PREFIX}{seq}"
        elif seq in without_images:
            item = f"{IMAGES_SET_ASIDE_PREFIX}{seq}"
        marked.append(item)
    return marked


def _placeholder_view(message: M, counter: TokenCounter) -> tuple[M, int]:
    view = replace(message, content=set_aside_placeholder(message.seq))  # type: ignore[type-var]
    return view, count_message(counter, view.chat())


def kept_aside(message: M, tokens: int, counter: TokenCounter) -> tuple[M, int] | None:
    """A tool result an earlier prompt set aside, as its placeholder with its tokens; None
    when it is shorter than its placeholder (then it was never set aside)."""
    if message.role != "tool":
        return None
    view, view_tokens = _placeholder_view(message, counter)
    return (view, view_tokens) if view_tokens < tokens else None


@dataclass(frozen=True)
class SetAside:
    """The open turn as a prompt shows it after setting older tool results aside."""

    history: list[HistoryMessage]
    shown: dict[int, Any]
    seqs: frozenset[int]
    tokens_freed: int


def set_aside_older_results(
    history: Sequence[HistoryMessage],
    shown: Mapping[int, M],
    *,
    current_turn_seq: int,
    latest_seqs: frozenset[int],
    already: frozenset[int],
    room: int,
    counter: TokenCounter,
) -> SetAside:
    """Set aside what the previous prompt set aside (a completed turn's too), then the open
    turn's older tool results, oldest first: every one up to the furthest the previous prompt
    set aside, then, when the history exceeds ``room``, more until a quarter of it is free
    (in batches, so the boundary moves rarely). The latest step
    (``latest_seqs``) and everything not a tool result stay whole."""
    boundary = max(already, default=0)
    total = sum(m.tokens for m in history)
    # Once results must give way, they do so until a quarter of the room is free, so that
    # the next steps fit without moving the boundary again (each move rewrites the prompt
    # from there on, and the provider's prefix cache with it).
    target = room if total <= room else int(room * (1 - SET_ASIDE_HEADROOM))
    result = list(history)
    views: dict[int, Any] = dict(shown)
    seqs: set[int] = set()
    freed = 0
    for index, message in enumerate(history):
        if message.role != "tool" or message.seq in latest_seqs:
            continue
        if message.seq not in already and (
            message.turn_seq != current_turn_seq or (message.seq > boundary and total <= target)
        ):
            continue
        original = shown[message.seq]
        if original.content == set_aside_placeholder(message.seq):
            seqs.add(message.seq)  # set aside already (``kept_aside``)
            continue
        view, tokens = _placeholder_view(original, counter)
        if tokens >= message.tokens:
            continue  # shorter than its placeholder: shown whole, in every prompt alike
        views[message.seq] = view
        result[index] = replace(message, tokens=tokens)
        seqs.add(message.seq)
        freed += message.tokens - tokens
        total -= message.tokens - tokens
    return SetAside(result, views, frozenset(seqs), freed)


# -- images of completed turns ----------------------------------------------------------------


@dataclass(frozen=True)
class ImagesAside:
    """The prompt's messages after older tool-result images gave way to placeholders."""

    shown: list[tuple[Any, int]]
    images: int
    tokens_freed: int
    seqs: frozenset[int]


def images_set_aside(
    shown: Sequence[tuple[M, int]],
    *,
    turn_seq: int,
    keep: int,
    excess: int,
    already: frozenset[int],
    counter: TokenCounter,
) -> ImagesAside:
    """What an earlier prompt set aside, and every result before it, stays aside: the
    boundary only moves forward. Then, if the prompt is still over the summary trigger
    (``excess``: by how much with every image shown), completed turns' tool results, newest
    first, keep their images while they hold at most ``keep`` together, and every older one
    shows placeholders instead. The open turn's images always stay."""
    boundary = max(already, default=0)
    result: list[tuple[Any, int]] = list(shown)
    newest_first = [
        index
        for index in range(len(result) - 1, -1, -1)
        if result[index][0].role == "tool"
        and result[index][0].turn_seq < turn_seq
        and image_count(result[index][0].content)
    ]
    seqs: set[int] = set()
    images = freed = 0

    def set_aside(index: int) -> None:
        nonlocal images, freed
        message, tokens = result[index]
        view = replace(message, content=without_images(message.content, message.seq))
        view_tokens = count_message(counter, view.chat())
        result[index] = (view, view_tokens)
        seqs.add(message.seq)
        images += image_count(message.content)
        freed += tokens - view_tokens

    for index in newest_first:
        if result[index][0].seq <= boundary:
            set_aside(index)
    if excess > freed:
        kept_images = 0
        for index in newest_first:
            if result[index][0].seq <= boundary:
                continue
            kept_images += image_count(result[index][0].content)
            if kept_images > keep:
                set_aside(index)
    return ImagesAside(result, images, freed, frozenset(seqs))
