"""The LoCoMo replay reads the data set's shape: speaker A's lines are the user's turns, each
session led by its date, and every question keeps the lines its answer is in."""

from __future__ import annotations

import json
from pathlib import Path

from bench.heldout.locomo import load

CONVERSATION = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 2 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben!"},
            {"speaker": "Ana", "dia_id": "D1:2", "text": "I got a new bike."},
            {"speaker": "Ben", "dia_id": "D1:3", "text": "Nice, which one?"},
        ],
        "session_2_date_time": "9:30 am on 7 May, 2023",
        "session_2": [
            {
                "speaker": "Ben",
                "dia_id": "D2:1",
                "text": "Back from the lake.",
                "blip_caption": "a photo of a lake",
            },
        ],
    },
    "qa": [
        {"question": "What did Ana get?", "answer": "a bike", "evidence": ["D1:2"], "category": 4},
        {"question": "Unknown?", "evidence": ["D9:9; D1:3"], "category": 1},
    ],
}


def test_a_conversation_replays_as_user_turns_with_the_other_speaker_answering(
    tmp_path: Path,
) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([CONVERSATION]))
    (conversation,) = load(path)
    first, second = conversation.exchanges
    assert first.user == "[1:00 pm on 2 May, 2023]\nAna: Hi Ben!\nAna: I got a new bike."
    assert first.answer == "Ben: Nice, which one?"
    assert second.user == "[9:30 am on 7 May, 2023]"
    assert second.answer == "Ben: Back from the lake. [shares a photo: a photo of a lake]"
    assert conversation.questions == [
        ("What did Ana get?", 4, ["D1:2"]),
        ("Unknown?", 1, ["D9:9", "D1:3"]),
    ]
