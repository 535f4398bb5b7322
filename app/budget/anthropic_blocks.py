"""Anthropic content blocks the chat shape has no field for: documents and server tools.

Stored as content parts exactly as the agent sent them, rendered back byte-exact in the
Anthropic format (:mod:`app.budget.anthropic`), and in the OpenAI format as their nearest
equivalent (:func:`openai_part`).

- ``document`` (Messages API, "PDF support" and "Citations"): a PDF as base64 or a URL, or
  plain text (``source.type`` ``text``), with an optional ``title``, ``context`` and
  ``citations`` setting. Anthropic publishes no exact rule for a PDF's tokens: each page is
  sent as its extracted text and as an image of the page; its PDF guide puts the text at
  1,500 to 3,000 tokens a page, and the image rule caps an image at about 1,600 tokens. A
  page is counted at both ceilings, 4,600 tokens. The pages are counted in the PDF itself
  (its ``/Type /Page`` objects, else its page tree's ``/Count``, else one page per 10 kB); a
  PDF at a URL cannot be read, and counts as :data:`URL_DOCUMENT_PAGES` pages (an assumption,
  stated in docs/provider-shapes.md: calibration from usage corrects what it misses).
- server tools (web search, web fetch, code execution): the model's ``server_tool_use`` and
  the results Anthropic put in the same answer (``web_search_tool_result``,
  ``web_fetch_tool_result``, ``code_execution_tool_result`` and the bash and text-editor
  code-execution results). Results are billed as input tokens; they are counted as their
  compact JSON text, which errs high (the JSON keys, and encrypted content as base64).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

DOCUMENT = "document"
SERVER_TOOL_USE = "server_tool_use"
SERVER_TOOL_RESULTS = frozenset(
    {
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
    }
)
SERVER_TOOL_BLOCKS = frozenset({SERVER_TOOL_USE, *SERVER_TOOL_RESULTS})

#: The top of Anthropic's published range for a PDF page's text.
PDF_PAGE_TEXT_TOKENS = 3_000
#: A page's image, at the image rule's ceiling (app.budget.images.PIXELS_MAX_TOKENS).
PDF_PAGE_IMAGE_TOKENS = 1_600
PDF_PAGE_TOKENS = PDF_PAGE_TEXT_TOKENS + PDF_PAGE_IMAGE_TOKENS
#: The pages a PDF at a URL is assumed to have.
URL_DOCUMENT_PAGES = 10
#: Anthropic's limit on a request's PDF pages.
MAX_PDF_PAGES = 100
#: A PDF whose page objects cannot be found (compressed object streams): a page per this
#: many bytes.
BYTES_PER_UNKNOWN_PAGE = 10_000
#: The framing of a document block (its source, title and context fields).
DOCUMENT_FRAMING_TOKENS = 16

_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![A-Za-z])")
_PAGE_TREE_COUNT = re.compile(
    rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b"
)


def is_document(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") == DOCUMENT


def is_server_tool_block(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") in SERVER_TOOL_BLOCKS


def pdf_pages(data: bytes) -> int:
    """How many pages a PDF has, read from its objects (at least 1)."""
    pages = len(_PAGE_OBJECT.findall(data))
    if pages:
        return pages
    counts = [int(a or b) for a, b in _PAGE_TREE_COUNT.findall(data)]
    if counts:
        return max(1, max(counts))
    return max(1, math.ceil(len(data) / BYTES_PER_UNKNOWN_PAGE))


def document_pages(source: Mapping[str, Any]) -> int | None:
    """The pages of a PDF source, or None when it is not a PDF (plain text)."""
    kind = source.get("type")
    if kind == "url":
        return URL_DOCUMENT_PAGES
    if kind != "base64":
        return None
    try:
        data = base64.b64decode(str(source.get("data", "")), validate=False)
    except (binascii.Error, ValueError):
        return URL_DOCUMENT_PAGES
    return min(MAX_PDF_PAGES, pdf_pages(data))


def document_tokens(part: Mapping[str, Any], count_text: Callable[[str], int]) -> int:
    """What a document block costs: its pages by the rule above, or its text."""
    source = part.get("source")
    source = source if isinstance(source, Mapping) else {}
    extra = " ".join(str(part.get(key) or "") for key in ("title", "context")).strip()
    tokens = DOCUMENT_FRAMING_TOKENS + (count_text(extra) if extra else 0)
    pages = document_pages(source)
    if pages is not None:
        return tokens + pages * PDF_PAGE_TOKENS
    return tokens + count_text(str(source.get("data", "")))


def document_notes(contents: Iterable[Any]) -> list[str]:
    """What a count says about the PDFs among these contents: the rule that priced them,
    and the assumption a PDF at a URL was counted with."""
    pdfs = at_url = 0
    for content in contents:
        for part in content if isinstance(content, list) else ():
            source = part.get("source") if is_document(part) else None
            if isinstance(source, Mapping) and source.get("type") in ("base64", "url"):
                pdfs += 1
                at_url += source.get("type") == "url"
    notes = []
    if pdfs:
        notes.append(
            f"{pdfs} PDF document(s) counted at {PDF_PAGE_TOKENS:,} tokens a page (the top of "
            "Anthropic's published text range plus a page image at the image rule's ceiling)"
        )
    if at_url:
        notes.append(
            f"{at_url} PDF document(s) at a URL, whose pages cannot be read, counted as "
            f"{URL_DOCUMENT_PAGES} pages: an assumption, not a bound"
        )
    return notes


def server_block_text(part: Mapping[str, Any]) -> str:
    """The text a server-tool block is counted as: its compact JSON."""
    return json.dumps(part, ensure_ascii=False, separators=(",", ":"), default=str)


def special_parts_tokens(content: Any, count_text: Callable[[str], int]) -> int:
    """Tokens of a content list's documents and server-tool blocks (0 when it has none)."""
    if not isinstance(content, list):
        return 0
    tokens = 0
    for part in content:
        if is_document(part):
            tokens += document_tokens(part, count_text)
        elif is_server_tool_block(part):
            tokens += count_text(server_block_text(part))
    return tokens


# -- the OpenAI format ------------------------------------------------------------------------


def _document_openai(part: Mapping[str, Any]) -> dict[str, Any]:
    source = part.get("source")
    source = source if isinstance(source, Mapping) else {}
    title = str(part.get("title") or "")
    kind = source.get("type")
    if kind == "base64":
        # Chat completions take a PDF as a file part with its bytes as a data: URL.
        return {
            "type": "file",
            "file": {
                "filename": f"{title or 'document'}.pdf",
                "file_data": f"data:{source.get('media_type')};base64,{source.get('data')}",
            },
        }
    if kind == "url":
        # A file part takes bytes or an uploaded file's id, never a URL.
        return {
            "type": "text",
            "text": f"[PDF document{f' {title!r}' if title else ''} at {source.get('url')}; "
            "the chat format takes no document URL]",
        }
    heading = f"{title}\n\n" if title else ""
    return {"type": "text", "text": f"{heading}{source.get('data', '')}"}


def _server_block_openai(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == SERVER_TOOL_USE:
        arguments = json.dumps(part.get("input", {}), ensure_ascii=False)
        return {"type": "text", "text": f"[{part.get('name')} {arguments}]"}
    content = part.get("content")
    lines = [f"[{kind}]"]
    if isinstance(content, list):  # web search results
        for result in content:
            if isinstance(result, Mapping):
                lines.append(f"- {result.get('title', '')} {result.get('url', '')}".rstrip())
    elif isinstance(content, Mapping):
        if content.get("type") == "web_fetch_result":
            fetched = content.get("content")
            lines.append(str(content.get("url", "")))
            if isinstance(fetched, Mapping) and is_document(fetched):
                lines.append(str(_document_openai(fetched).get("text", "")))
        elif "error_code" in content:
            lines.append(f"error: {content['error_code']}")
        else:
            for key in ("stdout", "stderr", "return_code", "content"):
                if content.get(key) not in (None, "", []):
                    lines.append(f"{key}: {content[key]}")
    return {"type": "text", "text": "\n".join(lines)}


def openai_part(part: Any) -> Any:
    """A part in the OpenAI format: a document as a file or text part, a server-tool block
    as text; any other part as it is."""
    if is_document(part):
        return _document_openai(part)
    if is_server_tool_block(part):
        return _server_block_openai(part)
    return part
