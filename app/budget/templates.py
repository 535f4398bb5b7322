"""Chat templates of the open-weight families, as token counting needs them.

A model's server does not tokenise the bare messages: it renders them with the family's chat
template first (special tokens around each turn, tool definitions as a JSON schema in a
system or user turn, tool results wrapped in markup). Each template here says what one
message, the tool definitions and the reply priming render to, as a number of special tokens
plus the pieces of ordinary text the tokenizer sees. Counting the pieces one by one errs
high by at most a token per piece boundary (a merge across the boundary is lost), never low.

Pure: no I/O, no tokenizer. The counter of the model counts the pieces.

The renderings follow each family's published template: Llama 3.1's (``llama_models``'s
``ChatFormat`` and its tool prompt), Qwen 2.5/3's ChatML with ``<tools>``, Mistral's
(``mistral_common``'s instruct tokenizer, Tekken), DeepSeek V3's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

TemplateName = Literal["llama3", "qwen", "mistral", "mistral-any", "deepseek"]
TEMPLATES: tuple[TemplateName, ...] = ("llama3", "qwen", "mistral", "mistral-any", "deepseek")


@dataclass(frozen=True)
class Rendered:
    """What a part of a prompt renders to: special tokens (one token each) and text."""

    special_tokens: int
    texts: tuple[str, ...]


def _json(value: Any, *, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _arguments(function: Mapping[str, Any]) -> Any:
    arguments = function.get("arguments", "")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def _function(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    function = tool.get("function", tool)
    return function if isinstance(function, Mapping) else {}


# -- Llama 3.x --------------------------------------------------------------------------------

_LLAMA_TOOL_PROMPT = (
    "Given the following functions, please respond with a JSON for a function call with its "
    "proper arguments that best answers the given prompt.\n\nRespond in the format "
    '{"name": function name, "parameters": dictionary of argument name and its value}.'
    "Do not use variables.\n\n"
)


def _llama_message(role: str, text: str, message: Mapping[str, Any]) -> Rendered:
    # <|start_header_id|>role<|end_header_id|>\n\n content <|eot_id|>; tool results go to
    # the "ipython" role.
    header_role = "ipython" if role == "tool" else role
    texts = [header_role, "\n\n", text]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        texts.append(_json({"name": function.get("name", ""), "parameters": _arguments(function)}))
    return Rendered(3, tuple(texts))


def _llama_tools(tools: Sequence[Mapping[str, Any]]) -> Rendered:
    texts = [_LLAMA_TOOL_PROMPT]
    texts += [_json(dict(tool), indent=4) + "\n\n" for tool in tools]
    return Rendered(0, tuple(texts))


# -- Qwen 2.5 / 3 (ChatML) -------------------------------------------------------------------

_QWEN_TOOLS_HEAD = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_QWEN_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def _qwen_message(role: str, text: str, message: Mapping[str, Any]) -> Rendered:
    # <|im_start|>role\n content <|im_end|>\n; a tool result is a user turn wrapped in
    # <tool_response> tags, a tool call a <tool_call> block.
    if role == "tool":
        return Rendered(2, ("user", "\n", "<tool_response>\n", text, "\n</tool_response>", "\n"))
    texts = [role, "\n", text]
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        body = _json({"name": function.get("name", ""), "arguments": _arguments(function)})
        texts.append(f"\n<tool_call>\n{body}\n</tool_call>")
    texts.append("\n")
    return Rendered(2, tuple(texts))


def _qwen_tools(tools: Sequence[Mapping[str, Any]]) -> Rendered:
    # Rendered into the system turn (one is opened when the request has none: counted here,
    # as an upper bound, with its framing).
    texts = ["system", "\n", _QWEN_TOOLS_HEAD]
    texts += ["\n" + _json(dict(tool)) for tool in tools]
    texts += [_QWEN_TOOLS_TAIL, "\n"]
    return Rendered(2, tuple(texts))


# -- Mistral (mistral_common, Tekken) ---------------------------------------------------------


def _spaced_json(text: str) -> str:
    try:
        return _json(json.loads(text)) if text else "{}"
    except ValueError:
        return text


#: Mistral's first instruct format (v1: Mistral 7B, Mixtral 8x7B) writes ``[INST] `` and
#: `` [/INST]`` around a user turn as text, not control tokens: 7 SentencePiece tokens
#: (mistral_common's ``InstructTokenizerV1.encode_user_message``).
MISTRAL_V1_USER_TOKENS = 7


def _mistral_message(
    role: str, text: str, message: Mapping[str, Any], *, any_version: bool = False
) -> Rendered:
    if role == "tool":
        # [TOOL_RESULTS]{"content": ..., "call_id": ...}[/TOOL_RESULTS]; mistral_common's
        # request normaliser writes a result that is JSON again with its default separators
        # (", " and ": "), so compact JSON costs its spaced form.
        body = _json(
            {"content": _spaced_json(text), "call_id": str(message.get("tool_call_id", ""))}
        )
        return Rendered(2, (body,))
    if role == "assistant":
        # content </s>, tool calls as [TOOL_CALLS][{...}]
        texts = [text]
        calls = message.get("tool_calls") or ()
        if calls:
            rendered_calls = []
            for call in calls:
                function = call.get("function", {})
                rendered_calls.append(
                    {
                        "name": function.get("name", ""),
                        "arguments": _arguments(function),
                        "id": call.get("id", ""),
                    }
                )
            texts.append(_json(rendered_calls))
        return Rendered(1 + (1 if calls else 0), tuple(texts))
    # [INST] content [/INST]; a system prompt is either its own [SYSTEM_PROMPT] turn or joined
    # to the last user turn by a blank line: two tokens and the text cover both. A name that
    # spans every version (any_version) pays v1's markers written as text.
    markers = MISTRAL_V1_USER_TOKENS if any_version and role != "system" else 2
    return Rendered(markers, (text,) if role != "system" else (text, "\n\n"))


def _mistral_tools(tools: Sequence[Mapping[str, Any]]) -> Rendered:
    # [AVAILABLE_TOOLS][{"type": "function", "function": {...}}, ...][/AVAILABLE_TOOLS]
    rendered = [{"type": "function", "function": dict(_function(tool))} for tool in tools]
    return Rendered(2, (_json(rendered),))


# -- DeepSeek V3 / R1 -------------------------------------------------------------------------


def _ds(name: str) -> str:
    # DeepSeek's special tokens are written with a fullwidth bar and U+2581 for spaces.
    return "<\uff5c" + name.replace(" ", "\u2581") + "\uff5c>"


def _deepseek_message(role: str, text: str, message: Mapping[str, Any]) -> Rendered:
    # User and Assistant markers before each turn, end of sentence after the reply; tool
    # results inside the tool-outputs begin and end markers (with each output's own pair).
    if role == "tool":
        return Rendered(4, (text,))
    texts = [text]
    specials = 2
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = _json(arguments)
        texts.append(f"function\n{function.get('name', '')}\n```json\n{arguments}\n```")
        specials += 4
    return Rendered(specials, tuple(texts))


def _deepseek_tools(tools: Sequence[Mapping[str, Any]]) -> Rendered:
    texts = ["\n\n## Tools\n\nYou have access to the following tools:\n"]
    for tool in tools:
        function = _function(tool)
        texts.append(
            f"\n### {function.get('name', '')}\nDescription: {function.get('description', '')}"
            f"\n\nParameters: {_json(function.get('parameters') or {})}\n"
        )
    texts.append(
        "\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n"
        f"{_ds('tool calls begin')}{_ds('tool call begin')}tool_call_name{_ds('tool sep')}"
        f"tool_call_arguments{_ds('tool call end')}{{{{additional_tool_calls}}}}"
        f"{_ds('tool calls end')}\n\nWhere:\n\n- `tool_call_name` must be an exact match to one "
        "of the available tools\n- `tool_call_arguments` must be valid JSON that strictly "
        "follows the tool's Parameters Schema\n- For multiple tool calls, chain them "
        "directly without separators or spaces\n"
    )
    return Rendered(0, tuple(texts))


# -- entry points -----------------------------------------------------------------------------


def render_message(template: TemplateName, message: Mapping[str, Any], text: str) -> Rendered:
    """What one message renders to; ``text`` is its content's text."""
    role = str(message.get("role", ""))
    if template == "llama3":
        return _llama_message(role, text, message)
    if template == "qwen":
        return _qwen_message(role, text, message)
    if template in ("mistral", "mistral-any"):
        return _mistral_message(role, text, message, any_version=template == "mistral-any")
    return _deepseek_message(role, text, message)


def render_tools(template: TemplateName, tools: Sequence[Mapping[str, Any]]) -> Rendered:
    """What a request's tool definitions render to (nothing for none)."""
    if not tools:
        return Rendered(0, ())
    if template == "llama3":
        return _llama_tools(tools)
    if template == "qwen":
        return _qwen_tools(tools)
    if template in ("mistral", "mistral-any"):
        return _mistral_tools(tools)
    return _deepseek_tools(tools)


def reply_priming(template: TemplateName) -> Rendered:
    """What a prompt adds once: the start of the text and the opening of the reply."""
    if template == "llama3":
        # <|begin_of_text|> … <|start_header_id|>assistant<|end_header_id|>\n\n
        return Rendered(3, ("assistant", "\n\n"))
    if template == "qwen":
        # <|im_start|>assistant\n
        return Rendered(1, ("assistant", "\n"))
    if template in ("mistral", "mistral-any"):
        # <s>
        return Rendered(1, ())
    # Begin of sentence, and the Assistant marker opening the reply.
    return Rendered(2, ())
