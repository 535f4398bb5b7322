"""What ``bench.loop_blocks`` makes of a py-spy timeline: idle ticks, held stretches, labels."""

from __future__ import annotations

import json
from pathlib import Path

from bench import loop_blocks

FRAMES = [
    {"name": "Runner.run", "file": "asyncio/runners.py", "line": 118},
    {"name": "post_step", "file": "/src/app/turns/service.py", "line": 240},
    {"name": "BaseModel.model_dump", "file": "pydantic/main.py", "line": 520},
    {"name": "_send", "file": "/src/app/db.py", "line": 422},
    {"name": "Connection.execute", "file": "asyncpg/connection.py", "line": 380},
]
IDLE = [0]  # outermost first, as py-spy writes a sample
DUMP = [0, 1, 2]
SEND = [0, 1, 3, 4]


def timeline(tmp_path: Path, samples: list[list[int]]) -> Path:
    document = {
        "shared": {"frames": FRAMES},
        "profiles": [
            {"name": 'Thread 1 "MainThread"', "samples": samples},
            {"name": 'Thread 2 "AnyIO worker thread"', "samples": [IDLE] * len(samples)},
        ],
    }
    path = tmp_path / "samples.json"
    path.write_text(json.dumps(document))
    return path


def test_held_stretches_are_runs_of_ticks_outside_the_loops_wait(tmp_path: Path) -> None:
    # 10 ms per tick: a 60 ms stretch, a free tick, a 20 ms one, two free ticks.
    samples = [DUMP] * 4 + [SEND] * 2 + [IDLE] + [SEND] * 2 + [IDLE] * 2

    figures = loop_blocks.analyse(timeline(tmp_path, samples), rate=100)

    assert figures["held_share"] == 8 / 11
    assert figures["longest_ms"] == [60, 20]
    assert figures["stretches_over_50ms"] == 1
    assert figures["stretches_over_100ms"] == 0


def test_a_held_tick_goes_under_its_first_matching_label_and_its_place(
    tmp_path: Path,
) -> None:
    samples = [DUMP] * 3 + [IDLE] + [SEND]

    figures = loop_blocks.analyse(timeline(tmp_path, samples), rate=100)

    assert figures["held_ms_by_label"] == {
        "answer serialisation": 30,
        "driver (asyncpg/sqlite)": 10,
    }
    assert figures["held_ms_in_50ms_stretches_by_label"] == {}
    assert figures["held_ms_by_place"] == {
        "post_step > BaseModel.model_dump": 30,
        "_send > Connection.execute": 10,
    }
