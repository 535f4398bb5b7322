"""Short statements the user types with a date or a time in an odd format keep their place in
a crowded summary: a day and month written with their full stops stays one sentence with its
time."""

from __future__ import annotations

import httpx

from tests.integration.test_answers_and_lists import STATED, _session, _summary_lines


async def test_a_day_and_month_written_with_full_stops_stays_with_its_time(
    client: httpx.AsyncClient,
) -> None:
    prompt = await _session(client, {**STATED, 25: "MOT booked for 14.03. 8:00"}, turns=40)
    lines = _summary_lines(prompt)
    # One line, the date with its time: the date's own full stop ends no sentence.
    assert any(line.endswith("MOT booked for 14.03. 8:00") for line in lines), lines
