"""bench/wrk/agent_turns.lua under a real wrk against the real service: each connection loops
turn start + completion on its own sessions, and every answer that is not the expected 2xx is
counted, so a run with errors cannot pass for a figure."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from bench.wrk_load import run_wrk, write_script_data
from tests.conftest import make_settings
from tests.servers import serve_in_thread

pytestmark = pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)"
)


def sessions(url: str, connections: int, each: int) -> list[list[str]]:
    with httpx.Client(base_url=url) as client:
        return [
            [
                client.post("/v1/sessions", json={"model": "gpt-4o"}).json()["id"]
                for _ in range(each)
            ]
            for _ in range(connections)
        ]


def stored(url: str, session_ids: list[str], role: str) -> int:
    with httpx.Client(base_url=url) as client:
        return sum(
            sum(
                message["role"] == role
                for message in client.get(
                    f"/v1/sessions/{session_id}/messages", params={"limit": 1000}
                ).json()["messages"]
            )
            for session_id in session_ids
        )


def test_every_connection_completes_turns_on_its_own_sessions(
    database_url: str, tmp_path: Path
) -> None:
    with serve_in_thread(create_app(make_settings(database_url)), lifespan="auto") as url:
        made = sessions(url, connections=2, each=2)
        write_script_data(tmp_path, made)

        run = run_wrk(url, tmp_path, connections=2, seconds=3, cpus=None)
        answers = [stored(url, ids, "assistant") for ids in made]

    figures = run.figures
    assert figures["non2xx"] == 0
    assert figures["turns"] > 0
    # A completion the server stored as wrk stopped may not have been read back: at most one
    # a connection.
    assert figures["turns"] <= sum(answers) <= figures["turns"] + 2
    assert all(answers), "each connection drove its own sessions"


def test_answers_that_are_not_2xx_are_counted_and_shown(database_url: str, tmp_path: Path) -> None:
    with serve_in_thread(create_app(make_settings(database_url)), lifespan="auto") as url:
        write_script_data(tmp_path, [["no-such-session"]])

        figures = run_wrk(url, tmp_path, connections=1, seconds=3, cpus=None).figures

    assert figures["turns"] == 0
    assert figures["non2xx"] > 0
    assert figures["failures"][0].startswith("start 404")
