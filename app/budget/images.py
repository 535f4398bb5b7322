"""What an image part costs in a prompt, by the rules the providers publish.

OpenAI bills images in one of two ways (its vision guide, "Calculating costs"):

- *tiles* (GPT-4o, GPT-4.1, GPT-5, o1/o3, …): ``detail: low`` costs a flat base; otherwise the
  image is scaled to fit a 2048 x 2048 square, then scaled down so that its shorter side is at
  most 768 px, and every 512 px tile it spans costs the tile price on top of the base.
- *patches* (GPT-4.1-mini/nano, GPT-5-mini/nano, o4-mini): the number of 32 px patches that
  cover the image, shrunk to at most 1536 patches, times a per-model multiplier.

Anthropic publishes ``width * height / 750`` for an image scaled to fit 1568 px on its long
side (*pixels*). Families without a published rule are costed with the tile rule and are
marked approximate by the model registry.

The size of an image is known when the part is a ``data:`` URL (its PNG, GIF, WebP or JPEG
header is read); for a remote URL it is not, and the cost is the largest the rule can give
for any size, so that the count errs high. Everything here is pure: no network, no files.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

ImageRuleKind = Literal["tiles", "patches", "pixels"]

TILE_PX = 512
TILE_FIT_PX = 2048
TILE_SHORT_SIDE_PX = 768
PATCH_PX = 32
MAX_PATCHES = 1536
PIXELS_PER_TOKEN = 750
PIXELS_LONG_SIDE_PX = 1568
#: Anthropic's documented ceiling for one image (about 1.15 megapixels).
PIXELS_MAX_TOKENS = 1600


@dataclass(frozen=True)
class ImageRules:
    """How one model costs an image part."""

    kind: ImageRuleKind = "tiles"
    base_tokens: int = 85
    tile_tokens: int = 170
    patch_multiplier: float = 1.0

    @property
    def tag(self) -> str:
        """A short name for the rule, empty for the most common one (GPT-4o's)."""
        if self == DEFAULT_IMAGE_RULES:
            return ""
        if self.kind == "tiles":
            return f"img{self.base_tokens}/{self.tile_tokens}"
        if self.kind == "patches":
            return f"imgpatch*{self.patch_multiplier:g}"
        return "imgpx"


DEFAULT_IMAGE_RULES = ImageRules()


@dataclass(frozen=True)
class ImageCost:
    tokens: int
    #: The image's size could not be read, so the cost is the rule's upper bound.
    size_unknown: bool


def _tiles(width: int, height: int) -> int:
    if max(width, height) > TILE_FIT_PX:
        scale = TILE_FIT_PX / max(width, height)
        width, height = math.floor(width * scale), math.floor(height * scale)
    if min(width, height) > TILE_SHORT_SIDE_PX:
        scale = TILE_SHORT_SIDE_PX / min(width, height)
        width, height = math.floor(width * scale), math.floor(height * scale)
    return math.ceil(width / TILE_PX) * math.ceil(height / TILE_PX)


def _patches(width: int, height: int) -> int:
    if math.ceil(width / PATCH_PX) * math.ceil(height / PATCH_PX) > MAX_PATCHES:
        # Shrink to cover at most MAX_PATCHES, then again so one side fills whole patches.
        ratio = math.sqrt(PATCH_PX**2 * MAX_PATCHES / (width * height))
        ratio *= min(
            math.floor(width * ratio / PATCH_PX) / (width * ratio / PATCH_PX),
            math.floor(height * ratio / PATCH_PX) / (height * ratio / PATCH_PX),
        )
        scaled_width, scaled_height = width * ratio, height * ratio
    else:
        scaled_width, scaled_height = float(width), float(height)
    patches = math.ceil(scaled_width / PATCH_PX) * math.ceil(scaled_height / PATCH_PX)
    return min(patches, MAX_PATCHES)


def _pixels(width: int, height: int) -> int:
    if max(width, height) > PIXELS_LONG_SIDE_PX:
        scale = PIXELS_LONG_SIDE_PX / max(width, height)
        width, height = math.floor(width * scale), math.floor(height * scale)
    return min(PIXELS_MAX_TOKENS, math.ceil(width * height / PIXELS_PER_TOKEN))


#: The most tiles any size can give: the short side at most 768 px (2 tiles) and the long
#: side at most 2048 px (4 tiles).
MAX_TILES = math.ceil(TILE_SHORT_SIDE_PX / TILE_PX) * math.ceil(TILE_FIT_PX / TILE_PX)


def image_tokens(
    rules: ImageRules, *, detail: str | None, size: tuple[int, int] | None
) -> ImageCost:
    """Tokens of one image part; ``size`` is (width, height) in pixels when known."""
    if rules.kind == "tiles":
        if detail == "low":
            return ImageCost(rules.base_tokens, False)
        # "auto" lets the provider choose; "high" is the dearer choice, so count that.
        tiles = MAX_TILES if size is None else _tiles(*size)
        return ImageCost(rules.base_tokens + rules.tile_tokens * tiles, size is None)
    if rules.kind == "patches":
        patches = MAX_PATCHES if size is None else _patches(*size)
        return ImageCost(math.ceil(patches * rules.patch_multiplier), size is None)
    tokens = PIXELS_MAX_TOKENS if size is None else _pixels(*size)
    return ImageCost(tokens, size is None)


# -- reading an image's size from a data: URL ---------------------------------------------------

_JPEG_SIZE_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return None


def _gif_size(data: bytes) -> tuple[int, int] | None:
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    if data[:2] != b"\xff\xd8":
        return None
    index = 2
    while index + 4 <= len(data):
        if data[index] != 0xFF:
            return None
        marker = data[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            index += 2
            continue
        length = int.from_bytes(data[index + 2 : index + 4], "big")
        if marker in _JPEG_SIZE_MARKERS and index + 9 <= len(data):
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return int(width), int(height)
        index += 2 + length
    return None


def data_url_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a base64 ``data:image/…`` URL, or None when it cannot be read."""
    if not url.startswith("data:"):
        return None
    header, _, payload = url.partition(",")
    if not header.endswith(";base64"):
        return None
    try:
        data = base64.b64decode(payload, validate=False)
    except (binascii.Error, ValueError):
        return None
    for reader in (_png_size, _gif_size, _webp_size, _jpeg_size):
        size = reader(data)
        if size is not None:
            return size if size[0] > 0 and size[1] > 0 else None
    return None


def image_part_cost(rules: ImageRules, part: Mapping[str, Any]) -> ImageCost:
    """Tokens of an ``{"type": "image_url", "image_url": {"url", "detail"?}}`` part."""
    image = part.get("image_url")
    if isinstance(image, str):  # some clients send the URL bare
        image = {"url": image}
    if not isinstance(image, Mapping):
        image = {}
    detail = image.get("detail")
    size = data_url_size(str(image.get("url", "")))
    return image_tokens(rules, detail=str(detail) if detail else None, size=size)
