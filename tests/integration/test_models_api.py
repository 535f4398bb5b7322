"""Counting without a session, the model table and the operator's models file, through the
API; and a turn's estimate, which must be the same count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from app.main import create_app
from app.tokens.models_file import ModelsFileError
from tests.conftest import REPO, RunningApp, make_settings
from tests.openai_counting import jpeg_data_url, png_data_url, prompt_tokens
from tests.support import create_session

CODE = """def merge(a: list[int], b: list[int]) -> list[int]:
\tout = []
    while a and b:
        out.append((a if a[0] <= b[0] else b).pop(0))
    return out + a + b  # O(n + m)
"""
JSON_DOC = json.dumps(
    {"order": {"id": "A-1029", "lines": [{"sku": "X1", "qty": 3, "price": 19.99}] * 3}},
    indent=2,
)
LONG_LINE = "x" * 30_000 + " " + "0123456789abcdef" * 2_000
IMAGES = {
    png_data_url(1024, 1024): (1024, 1024),
    png_data_url(2048, 4096): (2048, 4096),
    jpeg_data_url(4000, 3000): (4000, 3000),
    png_data_url(300, 200): (300, 200),
}
URLS = list(IMAGES)

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful assistant. <|endoftext|> is plain text."},
    {"role": "developer", "content": "Answer in the user's language."},
    {"role": "user", "name": "ana_42", "content": "Review this:\n" + CODE},
    {"role": "assistant", "content": "Here is the order as JSON:\n" + JSON_DOC},
    {"role": "user", "content": "Ship it 🚀🚀 — 👍🏽 👨‍👩‍👧 🇵🇹 ✅"},
    {"role": "user", "content": "请总结这份文件。東京の天気はどうですか\uff1f한국어도 돼요."},
    {"role": "user", "content": LONG_LINE},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Compare these pictures."},
            {"type": "image_url", "image_url": {"url": URLS[0], "detail": "high"}},
            {"type": "image_url", "image_url": {"url": URLS[1], "detail": "auto"}},
            {"type": "image_url", "image_url": {"url": URLS[2]}},
            {"type": "text", "text": "And this small one:"},
            {"type": "image_url", "image_url": {"url": URLS[3], "detail": "low"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_Xy12",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Lisboa", "unit": "c"}'},
            },
            {
                "id": "call_Zq34",
                "type": "function",
                "function": {"name": "search_hotels", "arguments": '{"q": "東京 ホテル 🏨"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_Xy12", "content": '{"temp": 21, "sky": "clear"}'},
    {"role": "tool", "tool_call_id": "call_Zq34", "content": JSON_DOC},
]

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather in a given location.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Lisboa."},
                    "unit": {
                        "type": "string",
                        "description": "Temperature unit",
                        "enum": ["c", "f", "kelvin"],
                    },
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_hotels",
            "description": "Search hotels — 検索 (any language)",
            "parameters": {
                "type": "object",
                "properties": {
                    "q": {"type": "string", "description": "Free text."},
                    "max_price": {"type": "number", "description": "EUR per night"},
                },
            },
        },
    },
    {"type": "function", "function": {"name": "now", "description": "The time."}},
]

OPENAI_MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-5", "o3", "gpt-4"]


async def _count(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await client.post("/v1/tokens/count", json=body)
    assert response.status_code == 200, response.text
    counted: dict[str, Any] = response.json()
    return counted


@pytest.mark.parametrize("model", OPENAI_MODELS)
async def test_count_equals_the_published_rules_on_a_varied_corpus(
    client: httpx.AsyncClient, model: str
) -> None:
    counted = await _count(client, model=model, messages=MESSAGES, tools=TOOLS)

    assert counted["input_tokens"] == prompt_tokens(model, MESSAGES, TOOLS, IMAGES)
    assert counted["method"] == "exact"
    assert counted["notes"] == []


WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_current_weather",
            "description": "Get the current weather in a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "The city and state, e.g. San Francisco, CA",
                    },
                    "unit": {
                        "type": "string",
                        "description": "The unit of temperature to return",
                        "enum": ["celsius", "fahrenheit"],
                    },
                },
                "required": ["location"],
            },
        },
    }
]
WEATHER_MESSAGES = [
    {
        "role": "system",
        "content": "You are a helpful assistant that can answer to questions about the weather.",
    },
    {"role": "user", "content": "What's the weather like in San Francisco?"},
]


@pytest.mark.parametrize(
    ("model", "billed"), [("gpt-4o", 101), ("gpt-4o-mini", 101), ("gpt-4", 105)]
)
async def test_count_with_tools_equals_what_the_provider_billed_in_the_cookbook(
    client: httpx.AsyncClient, model: str, billed: int
) -> None:
    counted = await _count(client, model=model, messages=WEATHER_MESSAGES, tools=WEATHER_TOOLS)

    assert counted["input_tokens"] == billed


async def test_image_of_unknown_size_is_counted_at_its_largest_and_said_so(
    client: httpx.AsyncClient,
) -> None:
    remote = {"type": "image_url", "image_url": {"url": "https://example.com/scan.png"}}
    message = {"role": "user", "content": [{"type": "text", "text": "Read it."}, remote]}

    counted = await _count(client, model="gpt-4o", messages=[message])

    largest = max(
        prompt_tokens("gpt-4o", [{**message, "content": [message["content"][0], sized]}], (), sizes)
        for sizes, sized in (
            (
                {png_data_url(w, h): (w, h)},
                {"type": "image_url", "image_url": {"url": png_data_url(w, h)}},
            )
            for w, h in ((768, 2048), (2048, 768), (1024, 1024), (4000, 3000))
        )
    )
    assert counted["input_tokens"] >= largest
    assert "unknown size" in counted["notes"][0]


async def test_other_families_count_by_proxy_and_err_high(client: httpx.AsyncClient) -> None:
    messages = MESSAGES[:7]

    counted = await _count(client, model="anthropic/claude-sonnet-4-5-20250929", messages=messages)

    assert counted["method"] == "proxy"
    assert counted["encoding"].startswith("tiktoken:o200k_base*1.25")
    assert counted["input_tokens"] >= 1.2 * prompt_tokens("gpt-4o", messages)


async def test_a_turn_estimates_its_prompt_as_the_count_endpoint_does(
    client: httpx.AsyncClient,
) -> None:
    session = await create_session(client, model="gpt-4o", tools=TOOLS)
    user = MESSAGES[7]
    turn = (
        await client.post(
            f"/v1/sessions/{session['id']}/turns", json={"message": {"content": user["content"]}}
        )
    ).json()
    step = {
        "assistant": {"content": None, "tool_calls": MESSAGES[8]["tool_calls"]},
        "tool_results": [
            {"tool_call_id": m["tool_call_id"], "content": m["content"]} for m in MESSAGES[9:]
        ],
    }

    prompt = (
        await client.post(f"/v1/sessions/{session['id']}/turns/{turn['turn_id']}/steps", json=step)
    ).json()
    counted = await _count(client, model="gpt-4o", messages=prompt["messages"], tools=TOOLS)

    assert prompt["budget"]["estimated_input_tokens"] == counted["input_tokens"]
    assert counted["input_tokens"] == prompt_tokens("gpt-4o", prompt["messages"], TOOLS, IMAGES)
    assert prompt["budget"]["blocks"]["tools"] == counted["breakdown"]["tools"] > 0


async def test_models_lists_every_family_with_its_counting(client: httpx.AsyncClient) -> None:
    listed = (await client.get("/v1/models")).json()["models"]
    by_name = {model["name"]: model for model in listed}

    assert {"openai", "anthropic", "llama", "qwen", "mistral", "gemini", "deepseek"} <= {
        model["family"] for model in listed
    }
    assert by_name["gpt-5"]["method"] == "exact"
    assert by_name["gpt-4.1"]["context_limit"] == 1_047_576
    assert by_name["claude-opus-4-1"]["method"] == "proxy"
    assert by_name["claude-opus-4-1"]["safety_factor"] > 1
    # The test extra installs Qwen's tokenizer: counted with it and its chat template.
    assert by_name["qwen3"]["method"] == "tokenizer"
    assert by_name["qwen3"]["encoding"] == "tiktoken:qwen+t:qwen"
    assert by_name["gemini-2.5-pro"]["encoding"] == "tiktoken:o200k_base*1.15"
    assert by_name["gpt-4o"]["calibration"] == {
        "ratio": 1.0,
        "learnt_ratio": None,
        "samples": 0,
        "rejected": 0,
        "updated_at": None,
    }


async def test_a_model_alias_resolves_to_its_entry(client: httpx.AsyncClient) -> None:
    model = (await client.get("/v1/models/openrouter/meta-llama/llama-3.1-70b-instruct")).json()

    assert model["name"] == "openrouter/meta-llama/llama-3.1-70b-instruct"
    assert model["family"] == "llama"
    assert model["context_limit"] == 128_000


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


async def test_models_file_adds_a_model_and_overrides_a_builtin(
    apps: RunningApp, tmp_path: Path
) -> None:
    models_file = _write(
        tmp_path,
        "models.toml",
        """
[models."house-llm"]
context_limit = 32000
max_output_tokens = 1000
encoding = "cl100k_base"
safety_factor = 1.1
family = "house"

[models."gpt-4o"]
context_limit = 64000
""",
    )
    _, client = await apps.start(models_file=models_file)

    by_name = {m["name"]: m for m in (await client.get("/v1/models")).json()["models"]}
    session = await create_session(client, model="house-llm-v2")

    assert by_name["house-llm"]["source"] == "operator"
    assert by_name["house-llm"]["encoding"] == "tiktoken:cl100k_base*1.1"
    assert by_name["gpt-4o"]["context_limit"] == 64_000
    assert by_name["gpt-4o"]["method"] == "exact"
    assert session["budget"]["model_context_limit"] == 32_000


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('context_limit = 8000\nencoding = "o200k_base"\ncontext_limt = 9', "context_limt"),
        ('context_limit = 8000\nencoding = "o200k_base"\nsafety_factor = 0.9', "safety_factor"),
        ('context_limit = 8000\nencoding = "o300k_base"', "o300k_base"),
        ('encoding = "o200k_base"', "needs context_limit"),
        ('context_limit = 8000\ntokenizer_file = "missing.json"', "does not exist"),
    ],
)
def test_a_bad_models_file_stops_start_up_with_the_reason(
    tmp_path: Path, entry: str, problem: str
) -> None:
    models_file = _write(tmp_path, "models.toml", f'[models."house-llm"]\n{entry}\n')
    settings = make_settings(f"sqlite+aiosqlite:///{tmp_path}/x.db", models_file=models_file)

    with pytest.raises(ModelsFileError, match=problem):
        create_app(settings)


def _word_tokenizer(path: Path) -> Tokenizer:
    """A tiny word-level tokenizer: every known word one token, anything else [UNK]."""
    words = ["[UNK]", "alpha", "beta", "gamma", "delta", "user", "assistant", "system"]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(path))
    return tokenizer


async def test_a_model_with_a_tokenizer_file_is_counted_by_it(
    apps: RunningApp, tmp_path: Path
) -> None:
    tokenizer = _word_tokenizer(tmp_path / "tokenizer.json")
    models_file = _write(
        tmp_path,
        "models.json",
        json.dumps(
            {"models": {"house-llama": {"context_limit": 8192, "tokenizer_file": "tokenizer.json"}}}
        ),
    )
    _, client = await apps.start(models_file=models_file)
    messages = [
        {"role": "system", "content": "alpha beta"},
        {"role": "user", "content": "gamma delta alpha, beta! 東京"},
    ]

    counted = await _count(client, model="house-llama", messages=messages)

    own = sum(
        len(tokenizer.encode(text, add_special_tokens=False).ids)
        for m in messages
        for text in (m["role"], m["content"])
    )
    # The chat template's framing: 4 per message beside the role, 5 to prime the reply.
    assert counted["input_tokens"] == own + 4 * len(messages) + 5
    assert counted["method"] == "tokenizer"
    assert counted["encoding"].startswith("hf:house-llama@")


def _tokenizers_command(cache_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "tokenizers"],
        env={**os.environ, "TIKTOKEN_CACHE_DIR": str(cache_dir)},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_tokenizers_command_lists_the_encodings_available_offline() -> None:
    listed = _tokenizers_command(Path(os.environ["TIKTOKEN_CACHE_DIR"]))

    assert listed.returncode == 0, listed.stderr
    assert "tiktoken:o200k_base" in listed.stdout
    assert "tiktoken:cl100k_base" in listed.stdout
    assert "MISSING" not in listed.stdout


def test_tokenizers_command_fails_when_an_encoding_is_missing(tmp_path: Path) -> None:
    listed = _tokenizers_command(tmp_path)

    assert listed.returncode == 1
    assert "MISSING" in listed.stdout
    assert "TIKTOKEN_CACHE_DIR" in listed.stdout
