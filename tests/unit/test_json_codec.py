"""The JSON columns' encoder: orjson's text once, ``json``'s where the two would store
something different, so that what a row holds is what it held when ``json`` wrote them all."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest

from app.db import dump_json, load_json

NAN = math.nan
INF = math.inf

#: Values that orjson would store otherwise (NaN and infinities as null) or refuses.
STORED_AS_JSON_WRITES_THEM: list[Any] = [
    NAN,
    {"ratio": NAN, "empty": None},
    [None, 1.5, INF],
    {"nested": [{"a": None}, {"b": [None, -INF]}]},
    {NAN: "a key", "other": None},
    {"k": tuple([None] * 10 + [NAN])},
    {str(i): None for i in range(12)} | {"last": INF},
    [*range(20), None, NAN],
    123456789012345678901234567890,
    {"limits": [None, -9223372036854775809, 18446744073709551616]},
]


@pytest.mark.parametrize("value", STORED_AS_JSON_WRITES_THEM)
def test_nan_infinities_and_long_integers_are_stored_as_json_writes_them(value: Any) -> None:
    assert dump_json(value) == json.dumps(value)


#: Values with a null that orjson stores as ``json`` would, to the value: orjson's text.
NULLS_WITHOUT_NAN: list[Any] = [
    None,
    {"content": None, "tool_calls": [{"id": "call_1", "arguments": '{"limit": null}'}]},
    [*range(500), None],
    {"ratio": 0.25, "cap": None, "floats": [1.5, -0.0, 1e300]},
    "a tool said null",
    {1.5: None, True: None, 7: [None]},
]


@pytest.mark.parametrize("value", NULLS_WITHOUT_NAN)
def test_a_null_without_nan_is_stored_once_as_orjson_writes_it(value: Any) -> None:
    text = dump_json(value)

    assert text == orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    assert json.loads(text) == json.loads(json.dumps(value))
    assert load_json(text) == json.loads(json.dumps(value))
