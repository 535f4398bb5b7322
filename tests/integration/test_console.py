"""The ops console in a real browser (Debian's Chromium driven by Playwright) against a real
``contextd serve``: the page loads, lists sessions, draws a session's timeline and budget
plot, shows what the model received, and says why a turn was refused."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright, expect

from tests.conftest import issue_key
from tests.processes import ServerProcess
from tests.support import complete_turn, create_session, post_step, start_turn, words

pytestmark = pytest.mark.browser

#: Where Debian's ``chromium`` package puts the browser; CONTEXTD_TEST_CHROMIUM names another.
CHROMIUM = os.environ.get("CONTEXTD_TEST_CHROMIUM", "/usr/bin/chromium")
#: A refused turn's guidance starts so (app/budget/decision.py, OVERFLOW_GUIDANCE).
REFUSAL = "Shorten"


@pytest.fixture(scope="module")
async def chromium() -> AsyncIterator[Browser]:
    """One Chromium for the module's tests: starting it is about a second of CPU a test."""
    if shutil.which(CHROMIUM) is None:
        pytest.fail(
            f"the console's browser tests need Chromium at {CHROMIUM} (Debian: apt-get install "
            'chromium; or set CONTEXTD_TEST_CHROMIUM), or leave them out with -m "not browser"',
            pytrace=False,
        )
    async with async_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def browser(chromium: Browser) -> AsyncIterator[Browser]:
    """The module's Chromium, and the pages a test opened closed after it: each page is a
    browser context of its own, so no test sees another's cookies, storage or cache."""
    try:
        yield chromium
    finally:
        for context in chromium.contexts:
            await context.close()


@pytest.fixture
async def server(database_url: str, tmp_path: Path) -> AsyncIterator[str]:
    process = ServerProcess(database_url, tmp_path / "server.log")
    try:
        yield await asyncio.to_thread(process.ready)
    finally:
        process.stop()


async def a_session_with_history(url: str, headers: dict[str, str] | None = None) -> str:
    """A gpt-4 session (5,530 input tokens) whose turns fill the budget until a summary
    folds them, with a tool step, and whose last turn is refused."""
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        session: dict[str, Any] = await create_session(client, id="trip-42")
        sid = session["id"]
        summarised = False
        for index in range(12):
            prompt = await start_turn(client, sid, f"Part {index}: {words(450, index)}")
            if index == 1:
                await post_step(client, sid, prompt["turn_id"], ["call_1"], ["Hotel Lumiere"])
            await complete_turn(client, sid, prompt["turn_id"], f"Noted part {index}.")
            summarised = summarised or prompt["actions"]["summary_triggered"]
            if summarised and index >= 6:
                break
        assert summarised, "no turn triggered a summary"
        await start_turn(client, sid, words(6000), expect=422)
        return str(sid)


async def open_console(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1400, "height": 1000})
    failures: list[str] = []
    page.on("pageerror", lambda error: failures.append(str(error)))
    page.on("requestfailed", lambda request: failures.append(request.url))
    await page.goto(f"{url}/console")
    page.set_default_timeout(15_000)
    assert failures == []
    return page


async def test_the_console_lists_the_sessions_that_have_assemblies(
    server: str, browser: Browser
) -> None:
    sid = await a_session_with_history(server)

    page = await open_console(browser, server)

    row = page.locator(f'#sessions tr[data-session="{sid}"]')
    await expect(row).to_be_visible()
    await expect(row.locator("td").nth(1)).to_have_text("gpt-4")
    await expect(row.locator(".badge.rejected")).to_have_text("1")


async def test_a_sessions_timeline_draws_every_assembly_with_its_policy_events(
    server: str, browser: Browser
) -> None:
    sid = await a_session_with_history(server)
    async with httpx.AsyncClient(base_url=server) as client:
        rows = (await client.get("/v1/audit", params={"session_id": sid, "limit": 500})).json()
    audited = rows["items"]

    page = await open_console(browser, server)
    await page.locator(f'#sessions tr[data-session="{sid}"] a').click()

    await expect(page.locator("h1")).to_have_text(f"Session {sid}")
    await expect(page.locator("#timeline tbody tr")).to_have_count(len(audited))
    await expect(page.locator("#fill-plot g.bar")).to_have_count(len(audited))
    summaries = sum(1 for row in audited if row["summary_triggered"])
    await expect(page.locator("#timeline .badge.summary")).to_have_count(summaries)
    # The tool step's turn shows the call and its result as the model received them.
    stepped = next(row for row in audited if row["step"] == 1)
    await page.locator(f'#timeline tr[data-audit="{stepped["id"]}"]').click()
    await expect(page.locator("#prompt h2")).to_have_text("Prompt of turn 2, step 1")
    await expect(page.locator("#prompt")).to_contain_text("→ search(")
    await expect(page.locator("#prompt")).to_contain_text("Hotel Lumiere")


async def test_a_refused_turn_shows_why_and_what_to_do(server: str, browser: Browser) -> None:
    sid = await a_session_with_history(server)

    page = await open_console(browser, server)
    await page.goto(f"{server}/console#/session/{sid}")

    refused = page.locator("#timeline tr:has(.badge.rejected)")
    await expect(refused).to_have_count(1)
    await expect(refused.locator(".reason")).to_contain_text(REFUSAL)
    # The console opens on the newest refusal, with its figures.
    await expect(page.locator("#rejection-reason")).to_contain_text(REFUSAL)
    await expect(page.locator("#prompt")).to_contain_text("the model received nothing")


async def test_the_console_asks_for_a_key_and_reads_with_an_ops_key(
    database_url: str, tmp_path: Path, browser: Browser
) -> None:
    agent = await issue_key(database_url, "acme", "agent")
    ops = await issue_key(database_url, "acme", "ops")
    process = ServerProcess(database_url, tmp_path / "server.log")
    try:
        url = await asyncio.to_thread(process.ready)
        sid = await a_session_with_history(url, {"Authorization": f"Bearer {agent}"})

        page = await open_console(browser, url)
        await expect(page.locator("#notice")).to_contain_text("Give an API key with the ops scope")
        await page.fill("#api-key", ops)
        await page.click("#key-form button")
        await page.locator(f'#sessions tr[data-session="{sid}"] a').click()

        await expect(page.locator("#timeline .badge.rejected")).to_have_count(1)
        # Without the agent scope the figures show, the messages' text does not.
        await expect(page.locator("#prompt")).to_contain_text("this key lacks the agent scope")
    finally:
        process.stop()


async def test_the_console_takes_nothing_from_another_origin(server: str) -> None:
    async with httpx.AsyncClient(base_url=server) as client:
        page = await client.get("/console")
        script = await client.get("/console/console.js")

    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert script.status_code == 200
    assert "http://" not in page.text + script.text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page.text + script.text
