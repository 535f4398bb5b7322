"""What each provider does with an earlier turn's reasoning, and so what the prompt does.

A rule per model family (``ModelSpec.family``), each from the provider's own documentation.
Two kinds of turn are told apart, because DeepSeek tells them apart: one in which the model
called a tool (every assistant message of it, the final answer included), and one in which it
only answered. The open turn's reasoning is never touched: every provider requires it back
whole while the turn uses tools.

What a completed turn's reasoning gets:

- ``keep``: shown and counted in every prompt; it never leaves (the provider refuses a
  request without it).
- ``clear_for_room``: shown and counted until the prompt passes the summary trigger; then
  every completed turn's reasoning leaves at once, and stays out (the fingerprint remembers).
- ``uncounted``: shown as it came but counted as nothing: the provider strips it before it
  counts the context window, so clearing it would free no room and only break the cache.
- ``drop``: never shown: the provider ignores it, so it would only cost bytes.

The table (docs/reasoning.md has it with the quotes):

========== ===================== ================= ============================================
family     calls' reasoning      answers' reasoning source
========== ===================== ================= ============================================
anthropic  uncounted             uncounted         Anthropic, "Context windows", extended thinking
 (kept)    keep                  keep              Anthropic, "Extended thinking": later models
deepseek   keep                  drop              DeepSeek, "Thinking Mode", tool calls
openai     clear_for_room        clear_for_room    OpenAI, "Reasoning models", managing context
other      clear_for_room        clear_for_room    no rule published: the safe default
========== ===================== ================= ============================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Treatment = Literal["keep", "clear_for_room", "uncounted", "drop"]

ANTHROPIC_SOURCE = (
    "https://docs.anthropic.com/en/docs/build-with-claude/context-windows "
    "(extended thinking: previous turns' thinking and redacted_thinking blocks are stripped "
    "from the context window calculation; the current tool-use turn's must be sent back)"
)
ANTHROPIC_KEPT_SOURCE = (
    "https://platform.claude.com/docs/en/build-with-claude/extended-thinking (thinking block "
    "preservation: Claude Opus 4.5 and later Opus models, and Claude Sonnet 4.6 and later "
    "Sonnet models, keep all prior thinking blocks in the model's context, so they count; on "
    "models with preserved thinking, changing what was sent can make later thinking invalid)"
)
#: A Claude model's tier and version in either naming scheme: ``claude-sonnet-4-5-20250929``,
#: ``claude-opus-4-20250514`` (no minor: what follows is a date), ``claude-3-7-sonnet-latest``.
_CLAUDE_VERSION = re.compile(
    r"claude-(?:(?P<tier>opus|sonnet|haiku)-(?P<major>\d+)(?:-(?P<minor>\d)(?!\d))?"
    r"|(?P<old_major>\d+)(?:-(?P<old_minor>\d)(?!\d))?-(?P<old_tier>opus|sonnet|haiku))"
)
#: The newest version of each tier whose earlier thinking the API strips before it counts
#: the window; later versions keep it (Anthropic, "Extended thinking", thinking block
#: preservation).
_LAST_STRIPPING = {"opus": (4, 1), "sonnet": (4, 5), "haiku": (4, 5)}


def claude_strips_earlier_thinking(model: str) -> bool:
    """Whether the API strips this Claude model's earlier thinking from the window. A name
    that is not understood (a newer naming scheme) is taken as keeping it: counting thinking
    that is stripped costs room, not counting thinking that is kept overflows the window."""
    found = _CLAUDE_VERSION.search(model.lower())
    if found is None:
        return False
    if found["tier"]:
        tier, version = found["tier"], (int(found["major"]), int(found["minor"] or 0))
    else:
        tier = found["old_tier"]
        version = (int(found["old_major"]), int(found["old_minor"] or 0))
    return version <= _LAST_STRIPPING[tier]


DEEPSEEK_SOURCE = (
    "https://api-docs.deepseek.com/guides/thinking_mode (between two user messages, an "
    "assistant that made tool calls must have its reasoning_content passed back in all "
    "later requests, else 400; without tool calls it is ignored)"
)
OPENAI_SOURCE = (
    "https://platform.openai.com/docs/guides/reasoning (reasoning tokens are discarded "
    "from the context after each turn; reasoning items must be sent back only between a "
    "function call and the last user message)"
)


@dataclass(frozen=True)
class ReasoningRule:
    """What a completed turn's reasoning gets in a prompt, by kind of assistant message."""

    family: str
    calls: Treatment
    answers: Treatment
    source: str

    def treatment(self, *, made_tool_calls: bool) -> Treatment:
        return self.calls if made_tool_calls else self.answers


DEFAULT_RULE = ReasoningRule(
    "other", "clear_for_room", "clear_for_room", "no provider rule known; cleared for room"
)
RULES: dict[str, ReasoningRule] = {
    "anthropic": ReasoningRule("anthropic", "uncounted", "uncounted", ANTHROPIC_SOURCE),
    "anthropic-kept": ReasoningRule("anthropic", "keep", "keep", ANTHROPIC_KEPT_SOURCE),
    "deepseek": ReasoningRule("deepseek", "keep", "drop", DEEPSEEK_SOURCE),
    "openai": ReasoningRule("openai", "clear_for_room", "clear_for_room", OPENAI_SOURCE),
}


def reasoning_rule(family: str, model: str = "") -> ReasoningRule:
    """The rule of a model family (the model's name picks between a family's generations);
    families with no published rule get the default."""
    if family == "anthropic" and not claude_strips_earlier_thinking(model):
        return RULES["anthropic-kept"]
    return RULES.get(family, DEFAULT_RULE)
