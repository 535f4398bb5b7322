"""OpenAI's counting rules written from the public documents, with tiktoken and nothing of
contextd, so that contextd's counts can be checked against them.

- Messages (openai-cookbook, "How to count tokens with tiktoken"): 3 tokens per message, the
  tokens of every value, 1 more for a name, 3 to prime the reply. A part list's text parts
  count as one text joined by newlines.
- Tool definitions (the same notebook, ``num_tokens_for_tools``): per function 7 (GPT-4o and
  later) or 10 (GPT-4, GPT-3.5) plus ``name:description`` without a final period; 3 when
  there are properties; per property 3 plus ``key:type:description``; per enum -3 once and
  3 plus the item's tokens per item; 12 at the end.
- Images (the vision guide, "Calculating costs"): tiles of 512 px after fitting 2048 px and
  bringing the short side down to 768 px, base + tile price each; ``low`` is the base; or
  32 px patches (at most 1536) times a multiplier.
- Assistant tool calls and tool results have no published rule; contextd documents its own
  (8 per call plus the id, name and arguments; the tool_call_id's tokens) and it is
  restated here.
"""

from __future__ import annotations

import base64
import math
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tiktoken


@dataclass(frozen=True)
class OpenAIModel:
    encoding: str
    function_init: int
    image_kind: str = "tiles"
    image_base: int = 85
    image_tile: int = 170
    patch_multiplier: float = 1.0


MODELS = {
    "gpt-4o": OpenAIModel("o200k_base", 7),
    "gpt-4o-mini": OpenAIModel("o200k_base", 7, image_base=2833, image_tile=5667),
    "gpt-4.1": OpenAIModel("o200k_base", 7),
    "gpt-4.1-mini": OpenAIModel("o200k_base", 7, image_kind="patches", patch_multiplier=1.62),
    "gpt-5": OpenAIModel("o200k_base", 7, image_base=70, image_tile=140),
    "o3": OpenAIModel("o200k_base", 7, image_base=75, image_tile=150),
    "gpt-4": OpenAIModel("cl100k_base", 10),
    "gpt-3.5-turbo": OpenAIModel("cl100k_base", 10),
}


def encoder(name: str) -> tiktoken.Encoding:
    return tiktoken.get_encoding(name)


def tile_image_tokens(model: OpenAIModel, width: int, height: int, detail: str | None) -> int:
    if detail == "low":
        return model.image_base
    if width > 2048 or height > 2048:
        ratio = 2048 / max(width, height)
        width, height = int(width * ratio), int(height * ratio)
    if min(width, height) > 768:
        ratio = 768 / min(width, height)
        width, height = int(width * ratio), int(height * ratio)
    tiles = ((width + 511) // 512) * ((height + 511) // 512)
    return model.image_base + model.image_tile * tiles


def patch_image_tokens(model: OpenAIModel, width: int, height: int) -> int:
    raw = math.ceil(width / 32) * math.ceil(height / 32)
    w, h = float(width), float(height)
    if raw > 1536:
        r = math.sqrt(32**2 * 1536 / (width * height))
        r = r * min(
            math.floor(width * r / 32) / (width * r / 32),
            math.floor(height * r / 32) / (height * r / 32),
        )
        w, h = width * r, height * r
    patches = min(1536, math.ceil(w / 32) * math.ceil(h / 32))
    return math.ceil(patches * model.patch_multiplier)


def image_tokens(model: OpenAIModel, width: int, height: int, detail: str | None) -> int:
    if model.image_kind == "patches":
        return patch_image_tokens(model, width, height)
    return tile_image_tokens(model, width, height, detail)


def message_tokens(
    model: OpenAIModel,
    message: Mapping[str, Any],
    image_sizes: Mapping[str, tuple[int, int]],
) -> int:
    enc = encoder(model.encoding)

    def n(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    total = 3
    for key, value in message.items():
        if value is None:
            continue
        if key == "content" and isinstance(value, list):
            text = "\n".join(p["text"] for p in value if p["type"] == "text")
            total += n(text) if text else 0
            for part in value:
                if part["type"] == "image_url":
                    image = part["image_url"]
                    width, height = image_sizes[image["url"]]
                    total += image_tokens(model, width, height, image.get("detail"))
        elif key == "tool_calls":
            for call in value:
                total += 8 + n(call["id"]) + n(call["function"]["name"])
                total += n(call["function"]["arguments"])
        else:
            total += n(str(value)) if value != "" else 0
            if key == "name":
                total += 1
    return total


def tools_tokens(model: OpenAIModel, tools: Sequence[Mapping[str, Any]]) -> int:
    if not tools:
        return 0
    enc = encoder(model.encoding)

    def n(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    total = 0
    for tool in tools:
        function = tool["function"]
        total += model.function_init
        description = function.get("description", "")
        if description.endswith("."):
            description = description[:-1]
        total += n(function["name"] + ":" + description)
        properties = function.get("parameters", {}).get("properties", {})
        if properties:
            total += 3
            for key, schema in properties.items():
                total += 3
                if "enum" in schema:
                    total += -3
                    for item in schema["enum"]:
                        total += 3 + n(item)
                p_description = schema.get("description", "")
                if p_description.endswith("."):
                    p_description = p_description[:-1]
                total += n(f"{key}:{schema['type']}:{p_description}")
    return total + 12


def prompt_tokens(
    model_name: str,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
    image_sizes: Mapping[str, tuple[int, int]] | None = None,
) -> int:
    """What OpenAI bills as prompt tokens for a chat request."""
    model = MODELS[model_name]
    sizes = image_sizes or {}
    return 3 + sum(message_tokens(model, m, sizes) for m in messages) + tools_tokens(model, tools)


def png_data_url(width: int, height: int) -> str:
    """A PNG's signature and header chunk: all that tells its size."""
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    chunk = b"IHDR" + header
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk
    data += struct.pack(">I", zlib.crc32(chunk))
    return "data:image/png;base64," + base64.b64encode(data).decode()


def jpeg_data_url(width: int, height: int) -> str:
    """A JPEG's start, an APP0 segment, and the frame header that tells its size."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x11\x00" * 3
    data = b"\xff\xd8" + app0 + sof0
    return "data:image/jpeg;base64," + base64.b64encode(data).decode()
