"""What a Claude agent sends beyond text and tool calls: Anthropic-shaped tool definitions,
images and documents in a user message, documents in a tool result, server-tool blocks
(web search, web fetch, code execution) in an answer, and Anthropic's usage. Each is taken,
stored as sent, counted, rendered back byte-exact in the Anthropic format and as its nearest
equivalent in the OpenAI one. Block shapes follow Anthropic's Messages API documentation."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import httpx
import pytest
from anthropic.types import MessageParam, TextBlockParam, ToolUnionParam
from openai.types.chat import ChatCompletionMessageParam
from pydantic import TypeAdapter

from app.budget.anthropic_blocks import PDF_PAGE_TOKENS, URL_DOCUMENT_PAGES
from app.budget.assembly import chat_problems
from tests.conftest import RunningApp
from tests.integration.test_anthropic_input import SCREENSHOT, post
from tests.integration.test_anthropic_input import valid_anthropic as without_problems
from tests.support import audit_rows, create_session, stored_messages, words

CLAUDE = "claude-sonnet-4-5"
SEARCH_ID = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE"
FETCH_ID = "srvtoolu_01Rk7Qf2cXyUuA9bN3mJ5wEe"
CODE_ID = "srvtoolu_01A2B3C4D5E6F7G8H9I0J1K2"

ANTHROPIC_TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_booking",
        "description": "Look up a train booking by its reference and the traveller's surname.",
        "input_schema": {
            "type": "object",
            "properties": {
                "reference": {"type": "string", "description": "Six letters, e.g. QXPRTA"},
                "surname": {"type": "string"},
                "include_seats": {"type": "boolean", "default": False},
            },
            "required": ["reference", "surname"],
        },
    },
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
    {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 3},
    {"type": "code_execution_20250825", "name": "code_execution"},
]

WEB_SEARCH = [
    {
        "type": "server_tool_use",
        "id": SEARCH_ID,
        "name": "web_search",
        "input": {"query": "Lyon Part-Dieu to Torino Porta Susa TGV timetable March 2026"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": SEARCH_ID,
        "content": [
            {
                "type": "web_search_result",
                "url": "https://www.sncf-connect.com/en-en/train/route/lyon/turin",
                "title": "Lyon to Turin by train | SNCF Connect",
                "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNj" * 6,
                "page_age": "March 2, 2026",
            },
            {
                "type": "web_search_result",
                "url": "https://www.trenitalia.com/en/frecciarossa/paris-milan.html",
                "title": "Frecciarossa Paris \u2013 Lyon \u2013 Torino \u2013 Milano",
                "encrypted_content": "Eo8BCioIARgBIiQ1ZjFlNmM4Yi04ZDQ1LTQ2YjItOWM2Ny1hMjE0" * 5,
                "page_age": None,
            },
        ],
    },
]
WEB_FETCH = [
    {
        "type": "server_tool_use",
        "id": FETCH_ID,
        "name": "web_fetch",
        "input": {"url": "https://www.trenitalia.com/en/frecciarossa/paris-milan.html"},
    },
    {
        "type": "web_fetch_tool_result",
        "tool_use_id": FETCH_ID,
        "content": {
            "type": "web_fetch_result",
            "url": "https://www.trenitalia.com/en/frecciarossa/paris-milan.html",
            "content": {
                "type": "document",
                "source": {
                    "type": "text",
                    "media_type": "text/plain",
                    "data": "Frecciarossa 9241 leaves Lyon Part-Dieu at 07:32 and reaches "
                    "Torino Porta Susa at 11:12. Second class from 29.90 EUR.",
                },
                "title": "Frecciarossa Paris - Milano",
                "citations": {"enabled": True},
            },
            "retrieved_at": "2026-03-02T10:30:00Z",
        },
    },
]
CODE_EXECUTION = [
    {
        "type": "server_tool_use",
        "id": CODE_ID,
        "name": "code_execution",
        "input": {"code": "fares = [29.9, 45.0, 61.5]\nprint(sum(fares) / len(fares))"},
    },
    {
        "type": "code_execution_tool_result",
        "tool_use_id": CODE_ID,
        "content": {
            "type": "code_execution_result",
            "stdout": "45.46666666666667\n",
            "stderr": "",
            "return_code": 0,
            "content": [],
        },
    },
]


def pdf(pages: int) -> str:
    """A small PDF with ``pages`` pages, as base64."""
    kids = " ".join(f"{3 + page} 0 R" for page in range(pages))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>",
        *["<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"] * pages,
    ]
    body = "%PDF-1.7\n" + "".join(
        f"{number} 0 obj\n{text}\nendobj\n" for number, text in enumerate(objects, start=1)
    )
    return base64.b64encode((body + "%%EOF\n").encode()).decode()


INVOICE_PDF = pdf(3)
PDF_INVOICE: dict[str, Any] = {
    "type": "document",
    "source": {"type": "base64", "media_type": "application/pdf", "data": INVOICE_PDF},
    "title": "Invoice 2026-0341",
}
PDF_AT_URL = {
    "type": "document",
    "source": {"type": "url", "url": "https://assets.example.org/timetables/lyon-torino.pdf"},
}


async def start(
    client: httpx.AsyncClient, session_id: str, content: Any, *, prompt_format: str
) -> dict[str, Any]:
    response = await client.post(
        f"/v1/sessions/{session_id}/turns",
        json={"message": {"role": "user", "content": content}, "format": prompt_format},
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


#: Kept for the module's life: the iterators they return read the adapter's definitions.
MESSAGE = TypeAdapter(MessageParam)
SYSTEM_BLOCKS = TypeAdapter(list[TextBlockParam])
TOOLS = TypeAdapter(list[ToolUnionParam])
CHAT_MESSAGE = TypeAdapter(ChatCompletionMessageParam)


def _every_item(value: Any) -> Any:
    # The SDK's params take iterables, which pydantic checks as they are read.
    if isinstance(value, dict):
        return {key: _every_item(item) for key, item in value.items()}
    if isinstance(value, list | tuple) or type(value).__name__ == "ValidatorIterator":
        return [_every_item(item) for item in value]
    return value


def valid_anthropic(prompt: dict[str, Any]) -> None:
    """Valid by contextd's own checks, and by the request types of Anthropic's SDK."""
    without_problems(prompt)
    for message in prompt["messages"]:
        _every_item(MESSAGE.validate_python(message))
    if isinstance(prompt["system"], list):
        _every_item(SYSTEM_BLOCKS.validate_python(prompt["system"]))


def valid_openai(prompt: dict[str, Any]) -> None:
    """Valid by contextd's own checks, and by the request types of OpenAI's SDK."""
    assert chat_problems(prompt["messages"]) == []
    for message in prompt["messages"]:
        _every_item(CHAT_MESSAGE.validate_python(message))


def bare(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in block.items() if k != "cache_control"} for block in blocks]


# -- tool definitions ----------------------------------------------------------------------------


async def test_anthropic_tool_definitions_are_stored_as_sent_and_counted(
    client: httpx.AsyncClient,
) -> None:
    _every_item(TOOLS.validate_python(ANTHROPIC_TOOLS))
    plain = await create_session(client, model=CLAUDE)
    with_tools = await create_session(client, model=CLAUDE, tools=ANTHROPIC_TOOLS)
    assert with_tools["tools"] == ANTHROPIC_TOOLS

    for session in (plain, with_tools):
        await start(client, session["id"], "Find me a train.", prompt_format="anthropic")
    bare_row, tools_row = [(await audit_rows(client, s["id"]))[0] for s in (plain, with_tools)]
    tools_tokens = tools_row["blocks"]["tools"]
    # Anthropic's tool-use system prompt (346) plus four definitions.
    assert tools_tokens > 346 + 60
    assert tools_row["estimated_input_tokens"] - bare_row["estimated_input_tokens"] == tools_tokens


async def test_an_anthropic_tool_whose_input_schema_is_not_an_object_is_refused(
    client: httpx.AsyncClient,
) -> None:
    tool = {"name": "lookup", "input_schema": {"type": "string"}}
    response = await client.post("/v1/sessions", json={"model": CLAUDE, "tools": [tool]})
    assert response.status_code == 422
    assert "input_schema" in response.text


# -- images and documents in a user message --------------------------------------------------


@pytest.mark.parametrize("prompt_format", ["anthropic", "openai"])
async def test_a_user_messages_image_blocks_are_taken_and_counted_by_anthropics_rule(
    client: httpx.AsyncClient, prompt_format: str
) -> None:
    session = await create_session(client, model=CLAUDE)
    remote = {"type": "image", "source": {"type": "url", "url": "https://example.com/seat.jpg"}}
    text = {"type": "text", "text": "Which of these seats is by the window?"}
    content = [text, SCREENSHOT, remote]

    prompt = await start(client, session["id"], content, prompt_format=prompt_format)

    if prompt_format == "anthropic":
        valid_anthropic(prompt)
        assert bare(prompt["messages"][-1]["content"]) == content
    else:
        valid_openai(prompt)
        parts = prompt["messages"][-1]["content"]
        assert [p["type"] for p in parts] == ["text", "image_url", "image_url"]
        assert parts[2]["image_url"] == {"url": "https://example.com/seat.jpg"}
    # 800 x 600 is width * height / 750 = 640 tokens; a URL image the rule's ceiling, 1,600.
    stored = (await stored_messages(client, session["id"]))[0]
    assert stored["token_count"] >= 640 + 1600
    assert stored["token_count"] < 640 + 1600 + 60


async def test_a_pdf_in_a_user_message_costs_its_pages_and_goes_out_as_a_file_for_openai(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    content = [PDF_INVOICE, {"type": "text", "text": "Is the fare on this invoice refundable?"}]

    anthropic = await start(client, session["id"], content, prompt_format="anthropic")
    valid_anthropic(anthropic)
    assert bare(anthropic["messages"][-1]["content"]) == content
    stored = (await stored_messages(client, session["id"]))[0]
    assert stored["content"] == content
    assert 3 * PDF_PAGE_TOKENS <= stored["token_count"] < 3 * PDF_PAGE_TOKENS + 100


async def test_openai_gets_a_pdf_as_a_file_part_and_a_pdf_url_as_a_named_text(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o")
    content = [
        {"type": "text", "text": "Compare the invoice with the timetable."},
        PDF_INVOICE,
        PDF_AT_URL,
    ]

    prompt = await start(client, session["id"], content, prompt_format="openai")

    valid_openai(prompt)
    text, invoice, timetable = prompt["messages"][-1]["content"]
    assert text == content[0]
    assert invoice == {
        "type": "file",
        "file": {
            "filename": "Invoice 2026-0341.pdf",
            "file_data": f"data:application/pdf;base64,{INVOICE_PDF}",
        },
    }
    assert timetable["type"] == "text"
    assert "https://assets.example.org/timetables/lyon-torino.pdf" in timetable["text"]
    assert "takes no document URL" in timetable["text"]


async def test_a_document_with_a_bad_source_is_refused_naming_it(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    document = {"type": "document", "source": {"type": "base64", "media_type": "text/csv"}}
    response = await client.post(
        f"/v1/sessions/{session['id']}/turns",
        json={"message": {"role": "user", "content": [document]}},
    )
    assert response.status_code == 422
    assert "media_type" in response.text


# -- documents in tool results ---------------------------------------------------------------


def step_with_document_result() -> dict[str, Any]:
    notice = {
        "type": "document",
        "source": {
            "type": "text",
            "media_type": "text/plain",
            "data": "Strike notice: no TGV between Lyon and Modane on 14 March 2026.",
        },
        "title": "SNCF traffic notice",
        "citations": {"enabled": True},
    }
    return {
        "assistant": {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_01NmV6vW3qGQ8ZHyE4kPj2Rc",
                    "name": "get_notice",
                    "input": {"line": "Lyon-Torino", "date": "2026-03-14"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_01Xh2Lq9Tb7sF3dKmW5yZcJu",
                    "name": "get_invoice",
                    "input": {"number": "2026-0341"},
                },
            ],
        },
        "tool_results": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01NmV6vW3qGQ8ZHyE4kPj2Rc",
                "content": [notice],
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01Xh2Lq9Tb7sF3dKmW5yZcJu",
                "content": [{"type": "text", "text": "Invoice attached."}, PDF_INVOICE],
            },
        ],
    }


async def test_documents_in_tool_results_come_back_as_sent_for_anthropic(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    turn = await start(client, session["id"], "Is my train affected?", prompt_format="anthropic")
    body = step_with_document_result()

    prompt = await post(client, session["id"], turn["turn_id"], body)

    valid_anthropic(prompt)
    assert bare(prompt["messages"][-1]["content"]) == body["tool_results"]
    stored = await stored_messages(client, session["id"])
    assert stored[-1]["token_count"] >= 3 * PDF_PAGE_TOKENS


async def test_documents_in_tool_results_follow_the_results_in_a_user_message_for_openai(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    turn = await start(client, session["id"], "Is my train affected?", prompt_format="openai")

    prompt = await post(
        client, session["id"], turn["turn_id"], step_with_document_result(), prompt_format="openai"
    )
    valid_openai(prompt)

    notice, invoice, carrier_notice, carrier_invoice = prompt["messages"][-4:]
    assert notice["role"] == invoice["role"] == "tool"
    assert "1 document of this result" in notice["content"]
    assert invoice["content"].startswith("Invoice attached.")
    assert carrier_notice["role"] == carrier_invoice["role"] == "user"
    assert carrier_notice["content"][1] == {
        "type": "text",
        "text": "SNCF traffic notice\n\nStrike notice: no TGV between Lyon and Modane on "
        "14 March 2026.",
    }
    assert carrier_invoice["content"][1]["type"] == "file"


# -- server tools -------------------------------------------------------------------------------


def server_tool_step() -> dict[str, Any]:
    return {
        "assistant": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me look up the timetable first."},
                *WEB_SEARCH,
                *WEB_FETCH,
                {"type": "text", "text": "The 07:32 Frecciarossa fits. Checking your booking."},
                {
                    "type": "tool_use",
                    "id": "toolu_01Fq8rUeXbN2aK7cLm4pWd9S",
                    "name": "get_booking",
                    "input": {"reference": "QXPRTA", "surname": "Lefèvre"},
                },
            ],
        },
        "tool_results": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_01Fq8rUeXbN2aK7cLm4pWd9S",
                "content": '{"reference":"QXPRTA","train":"9241","seat":"12A","class":2}',
            }
        ],
    }


async def test_server_tool_blocks_in_a_step_come_back_byte_exact_for_anthropic(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE, tools=ANTHROPIC_TOOLS)
    turn = await start(
        client, session["id"], "Can I go to Torino on the 14th?", prompt_format="anthropic"
    )
    body = server_tool_step()

    prompt = await post(client, session["id"], turn["turn_id"], body)

    valid_anthropic(prompt)
    assert bare(prompt["messages"][-2]["content"]) == body["assistant"]["content"]
    stored = await stored_messages(client, session["id"])
    assistant = stored[1]
    assert assistant["content"][1:5] == [*WEB_SEARCH, *WEB_FETCH]
    # The search results' text is counted, not left out.
    assert assistant["token_count"] > 400


async def test_server_tool_blocks_go_to_openai_as_text_that_names_what_was_found(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    turn = await start(
        client, session["id"], "Can I go to Torino on the 14th?", prompt_format="openai"
    )

    prompt = await post(
        client, session["id"], turn["turn_id"], server_tool_step(), prompt_format="openai"
    )
    valid_openai(prompt)

    assistant = prompt["messages"][-2]
    assert assistant["role"] == "assistant"
    assert all(part["type"] == "text" for part in assistant["content"])
    texts = "\n".join(part["text"] for part in assistant["content"])
    assert "https://www.sncf-connect.com/en-en/train/route/lyon/turin" in texts
    assert "Frecciarossa 9241 leaves Lyon Part-Dieu at 07:32" in texts
    assert "EqgfCioIARgB" not in texts  # encrypted content means nothing to another model
    assert assistant["tool_calls"][0]["id"] == "toolu_01Fq8rUeXbN2aK7cLm4pWd9S"


@pytest.mark.parametrize("prompt_format", ["anthropic", "openai"])
async def test_an_answer_with_code_execution_is_kept_and_rendered_back(
    client: httpx.AsyncClient, prompt_format: str
) -> None:
    session = await create_session(client, model=CLAUDE, tools=ANTHROPIC_TOOLS)
    first = await start(client, session["id"], "Average of the fares?", prompt_format="anthropic")
    answer = [*CODE_EXECUTION, {"type": "text", "text": "The average fare is 45.47 EUR."}]
    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{first['turn_id']}/complete",
        json={"assistant": {"role": "assistant", "content": answer}},
    )
    assert response.status_code == 200, response.text

    prompt = await start(client, session["id"], "And the cheapest?", prompt_format=prompt_format)

    if prompt_format == "anthropic":
        valid_anthropic(prompt)
        assert bare(prompt["messages"][-2]["content"]) == answer
    else:
        valid_openai(prompt)
        code, result, text = prompt["messages"][-2]["content"]
        assert code["text"].startswith("[code_execution {")
        assert "stdout: 45.46666666666667" in result["text"]
        assert text == answer[-1]


# -- usage --------------------------------------------------------------------------------------

REAL_TO_PROXY = 1.2
MODELS_FILE = """
[models."acme-claude"]
context_limit = 8192
encoding = "o200k_base"
safety_factor = 1.0
family = "acme"
"""


@pytest.fixture
async def acme(apps: RunningApp, tmp_path: Path) -> httpx.AsyncClient:
    models_file = tmp_path / "models.toml"
    models_file.write_text(MODELS_FILE, encoding="utf-8")
    _, client = await apps.start(models_file=models_file)
    return client


async def test_anthropic_usage_with_cache_reads_and_writes_calibrates(
    acme: httpx.AsyncClient,
) -> None:
    session = await create_session(acme, model="acme-claude")
    base = f"/v1/sessions/{session['id']}/turns"
    for turn in range(1, 4):
        response = await acme.post(base, json={"message": {"content": words(150, turn)}})
        assert response.status_code == 201, response.text
        prompt = response.json()
        for step in (1, 2):
            billed = math.ceil(REAL_TO_PROXY * prompt["budget"]["estimated_input_tokens"])
            cached = billed * 2 // 3
            body = {
                "assistant": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{turn}{step}Vb8Kx2QmT",
                            "name": "search",
                            "input": {"q": "fares"},
                        }
                    ],
                },
                "tool_results": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{turn}{step}Vb8Kx2QmT",
                        "content": words(400, turn * 10 + step),
                    }
                ],
                "usage": {
                    "input_tokens": billed - cached - 50,
                    "cache_read_input_tokens": cached,
                    "cache_creation_input_tokens": 50,
                    "output_tokens": 80,
                },
                "format": "anthropic",
            }
            response = await acme.post(f"{base}/{prompt['turn_id']}/steps", json=body)
            assert response.status_code == 200, response.text
            prompt = response.json()
        response = await acme.post(
            f"{base}/{prompt['turn_id']}/complete", json={"assistant": {"content": "Done."}}
        )
        assert response.status_code == 200, response.text

    model = (await acme.get("/v1/models/acme-claude")).json()
    assert model["calibration"]["samples"] == 6
    assert model["calibration"]["ratio"] == pytest.approx(REAL_TO_PROXY, abs=0.03)


# -- counting without a session --------------------------------------------------------------


async def test_the_count_endpoint_counts_anthropic_tools_like_the_functions_they_describe(
    client: httpx.AsyncClient,
) -> None:
    client_tool = ANTHROPIC_TOOLS[0]
    as_function = {
        "type": "function",
        "function": {
            "name": client_tool["name"],
            "description": client_tool["description"],
            "parameters": client_tool["input_schema"],
        },
    }
    messages = [{"role": "user", "content": "Where is my booking QXPRTA?"}]
    counts = []
    for tools in ([client_tool], [as_function]):
        response = await client.post(
            "/v1/tokens/count", json={"model": CLAUDE, "messages": messages, "tools": tools}
        )
        assert response.status_code == 200, response.text
        counts.append(response.json()["breakdown"]["tools"])
    assert counts[0] == counts[1] > 346


async def test_stateless_trim_takes_anthropic_tools_and_counts_them(
    client: httpx.AsyncClient,
) -> None:
    messages = [{"role": "user", "content": "Where is my booking QXPRTA?"}]
    estimates = []
    for tools in (None, ANTHROPIC_TOOLS):
        response = await client.post(
            "/v1/context/trim", json={"model": CLAUDE, "messages": messages, "tools": tools}
        )
        assert response.status_code == 200, response.text
        estimates.append(response.json()["estimated_tokens_before"])
    assert estimates[1] > estimates[0] + 346


async def test_a_document_in_a_count_request_costs_its_pages(client: httpx.AsyncClient) -> None:
    messages = [{"role": "user", "content": [PDF_INVOICE, PDF_AT_URL]}]
    response = await client.post("/v1/tokens/count", json={"model": CLAUDE, "messages": messages})
    assert response.status_code == 200, response.text
    counted = response.json()
    assert counted["input_tokens"] >= (3 + URL_DOCUMENT_PAGES) * PDF_PAGE_TOKENS
    notes = "\n".join(counted["notes"])
    assert "2 PDF document(s) counted at 4,600 tokens a page" in notes
    assert "1 PDF document(s) at a URL" in notes


async def test_a_server_tool_block_with_a_number_json_cannot_write_is_refused_naming_it(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model=CLAUDE)
    turn = await start(client, session["id"], "Average fare?", prompt_format="anthropic")
    body = server_tool_step()
    blocks = body["assistant"]["content"]
    blocks[1] = {**blocks[1], "input": {"query": "fares", "limit": "LIMIT"}}
    raw = json.dumps({**body, "format": "anthropic"}).replace('"LIMIT"', "1e999")

    response = await client.post(
        f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps",
        content=raw,
        headers={"content-type": "application/json"},
    )

    assert response.status_code == 422, response.text
    assert "assistant.content[1] (server_tool_use): server_tool_use.input.limit" in response.text
