"""Facts the user pastes or dictates, seen through the app on an 8k model: a line of a pasted
config (YAML, JSON, TOML, .env, key: value) or a row of pasted CSV is kept with the path of
keys that gives it meaning, the boilerplate and structure left out, a large paste bounded; a
number in an odd format is a value, so a statement holding it is kept and a correction of it
replaces it; a dictated message is read with its punctuation said aloud; a pasted chat
thread gives way to the line the user added to it."""

from __future__ import annotations

import httpx
import pytest

from app.summarize.pasted import PASTED_LINES, read
from bench.quality import text_of
from tests.integration.test_answers_and_lists import (
    ROUTINE,
    STATED,
    _session,
    _summary_lines,
)
from tests.support import (
    audit_rows,
    complete_turn,
    create_session,
    post_step,
    start_turn,
    stored_messages,
    words,
)

MANIFEST = """here's what prod runs:
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ledger-api
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: ledger-api
          imagePullPolicy: IfNotPresent
          resources:
            limits:
              memory: 1536Mi"""


async def test_a_pasted_manifest_keeps_its_values_with_their_paths(
    client: httpx.AsyncClient,
) -> None:
    prompt = await _session(client, {**STATED, 25: MANIFEST}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith("spec.replicas: 3") for line in lines), lines
    assert any(line.endswith("resources.limits.memory: 1536Mi") for line in lines), lines
    # What kind of document it is, and the lines that are only structure, say nothing.
    assert not any("apiVersion" in line or "Deployment" in line for line in lines), lines
    assert not any(line.rstrip().endswith(("spec:", "metadata:", "limits:")) for line in lines)


@pytest.mark.parametrize(
    ("pasted", "kept"),
    [
        (
            '{\n  "name": "notify-gateway",\n  "settings": {\n    "logLevel": "info",\n'
            '    "retentionDays": 563,\n    "debug": false\n  }\n}',
            "settings.retentionDays: 563",
        ),
        (
            '[server]\nformat = "json"\nregion = "ap-southeast-4"\nworkers = 4\ndebug = false',
            "server.region: ap-southeast-4",
        ),
        (
            "```env\nNODE_ENV=production\nWORKERS=4\nDB_HOST=pg-quartz-12.internal\n"
            "DEBUG=false\n```",
            "DB_HOST: pg-quartz-12.internal",
        ),
        (
            "timezone: UTC\nprotocol: TCP\nsmtp port: 2587\nlogLevel: info\nworkers: 4",
            "smtp port: 2587",
        ),
        (
            "sku,item,qty,warehouse\nST-001,tote bins,30,Tilbury\nRX-990,memory limit,2816Mi,\n"
            "ST-003,tape guns,20,Immingham",
            "sku: RX-990, item: memory limit, qty: 2816Mi",
        ),
    ],
    ids=["json", "toml", "env", "key-value", "csv"],
)
async def test_a_pasted_value_is_kept_with_its_key(
    client: httpx.AsyncClient, pasted: str, kept: str
) -> None:
    prompt = await _session(client, {**STATED, 25: pasted}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith(kept) for line in lines), lines
    # A flag left at its default is no fact.
    assert not any(line.endswith(("debug: false", "DEBUG: false")) for line in lines), lines


async def test_a_large_paste_takes_a_bounded_share_of_the_block(
    client: httpx.AsyncClient,
) -> None:
    pasted = "\n".join(f"SETTING_{n}=value-{n}-{n * 37}" for n in range(40))
    said = {**STATED, 25: pasted}
    sid = str((await create_session(client))["id"])
    for n in range(40):
        prompt = await start_turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)))
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done in {n}s, exit code 0.")
    prompt = await start_turn(client, sid, "what's next?")
    lines = _summary_lines(prompt)
    kept = [line for line in lines if "SETTING_" in line]
    assert 0 < len(kept) <= PASTED_LINES, lines
    # The statements said before it are still there: the paste did not push them out.
    assert any("Person 24 is" in line for line in lines), lines
    # The paste itself stays whole in the history, where recall finds the rest.
    stored = await stored_messages(client, sid)
    assert any("SETTING_39=value-39-1443" in str(m["content"]) for m in stored)


@pytest.mark.parametrize(
    "said",
    [
        "la TVA sur ce service est de 12,5 %",
        "their ARR is roughly USD 1.2M going by the deck",
        "we expect ~40k signups after the launch email",
    ],
)
async def test_a_statement_with_a_number_in_an_odd_format_is_kept(
    client: httpx.AsyncClient, said: str
) -> None:
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith(said) for line in lines), lines


async def test_a_correction_of_a_sum_in_an_odd_format_replaces_it(
    client: httpx.AsyncClient,
) -> None:
    said = {
        **STATED,
        24: "the rent for the Leipzig office is €2.340,50 a month",
        27: "the rent for the Leipzig office is €2.410,75 a month now",
    }
    prompt = await _session(client, said, turns=40)
    lines = _summary_lines(prompt)
    assert any("€2.410,75" in line for line in lines), lines
    # The old sum is not shown as current: only beside the new one, if at all.
    assert not any("€2.340,50" in line and "€2.410,75" not in line for line in lines), lines


async def test_a_dictated_message_is_read_with_its_spoken_punctuation(
    client: httpx.AsyncClient,
) -> None:
    dictated = (
        "um so the plumber comma his name is Marek Nowicki comma he's coming on thursday "
        "full stop he needs the side gate open full stop"
    )
    prompt = await _session(client, {**STATED, 25: dictated}, turns=40)
    lines = _summary_lines(prompt)
    assert any(
        line.endswith("um so the plumber, his name is Marek Nowicki, he's coming on thursday.")
        for line in lines
    ), lines


async def test_a_pasted_chat_thread_gives_way_to_the_users_own_line(
    client: httpx.AsyncClient,
) -> None:
    thread = (
        "Priya Nair  10:42 AM\ncan someone check the staging deploy?\n"
        "Tom Becker  10:44 AM\nlooks like the migration timed out again\n"
        "Lena Vogt  10:47 AM\nanyone know who owns the alerts channel?\n\n"
        "context for you — Beatriz Calloway owns the alerts channel now"
    )
    prompt = await _session(client, {**STATED, 25: thread}, turns=40)
    lines = _summary_lines(prompt)
    assert any("Beatriz Calloway owns the alerts channel now" in line for line in lines), lines
    # Other people's words in the thread are not the user's statements: where they are kept
    # at all, it is under the name of who said them, and the headers are not lines.
    for line in lines:
        if "migration timed out" in line:
            assert line.endswith("Tom Becker: looks like the migration timed out again"), line
    assert not any("10:42 AM" in line for line in lines), lines


async def test_a_later_paste_with_another_value_replaces_the_earlier_line(
    client: httpx.AsyncClient,
) -> None:
    later = MANIFEST.replace("replicas: 3", "replicas: 5").replace("1536Mi", "2816Mi")
    prompt = await _session(client, {**STATED, 24: MANIFEST, 27: later}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith("spec.replicas: 5") for line in lines), lines
    assert any(line.endswith("resources.limits.memory: 2816Mi") for line in lines), lines
    # The earlier values are not shown as current.
    assert not any(line.endswith(("spec.replicas: 3", "memory: 1536Mi")) for line in lines), lines


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "My schedule for Thursday:\nDentist at 9:30\nDr Okafor is my dentist\n"
            "Lunch with Marta 12:30\nMarta is my sister-in-law and she is vegetarian.",
            ["Dentist at 9:30", "Dr Okafor is my dentist", "Lunch with Marta 12:30", "vegetarian"],
        ),
        (
            "Standup 9:15\nwe agreed the launch date is March 3\nReview 14:00\n"
            "my manager is Tomasz Wójcik",
            ["launch date is March 3", "my manager is Tomasz Wójcik"],
        ),
        (
            "Priya Nair  10:42 AM\ncan we move the launch to March 3?\nTom Berg  10:45 AM\n"
            "sure, March 3 works for marketing\n"
            "my call: the launch stays on March 10, our board meets on the 9th",
            ["my call: the launch stays on March 10, our board meets on the 9th"],
        ),
    ],
    ids=["schedule", "times", "line-under-a-thread"],
)
async def test_the_users_own_lines_with_times_are_not_a_chat_thread(
    client: httpx.AsyncClient, said: str, kept: list[str]
) -> None:
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    for words_said in kept:
        assert any(words_said in line for line in lines), (words_said, lines)


@pytest.mark.parametrize(
    "said",
    [
        "the trial period ends on june 3 and the notice period is 14 days",
        "we need a new line of credit from Barclays by june",
        "my daughter has a colon exam at St Marys on friday and then a full stop at grandma's",
    ],
)
async def test_an_unpunctuated_message_is_not_rewritten_as_dictated(
    client: httpx.AsyncClient, said: str
) -> None:
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    assert any(line.endswith(said) for line in lines), lines


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "Here is the team:\nLead: Priya\nBackend: Tomasz\nFrontend: Ines\nDesign: Marek\n"
            "QA: Olu\nOn call this week: Priya",
            ["Lead: Priya", "Backend: Tomasz", "Frontend: Ines", "Design: Marek", "QA: Olu"],
        ),
        (
            "Details for the trip:\nName: Anna Kowalska\nFlight: LO 281\nHotel: Adler\n"
            "Budget: €1,200\nDiet: vegetarian\nAllergy: penicillin",
            ["Hotel: Adler", "Flight: LO 281", "Name: Anna Kowalska"],
        ),
    ],
    ids=["team", "trip"],
)
async def test_a_note_of_labels_is_the_users_statements_not_a_config(
    client: httpx.AsyncClient, said: str, kept: list[str]
) -> None:
    prompt = await _session(client, {**STATED, 25: said}, turns=40)
    lines = _summary_lines(prompt)
    for line_said in kept:
        assert any(line.endswith(line_said) for line in lines), (line_said, lines)


DEPLOYMENT = """Here's the {name} deployment:
```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: {name}
          image: registry.acme.io/{name}:4.12.0
          resources:
            limits:
              memory: {memory}
```"""


async def test_two_different_configs_do_not_revise_each_other(
    client: httpx.AsyncClient,
) -> None:
    api = DEPLOYMENT.format(name="api", replicas=6, memory="2816Mi")
    worker = DEPLOYMENT.format(name="worker", replicas=2, memory="512Mi")
    prod = (
        "prod .env:\nDB_HOST=pg-prod.internal\nDB_PORT=5432\nREDIS_URL=redis://cache-prod:6379\n"
        "API_KEY_ID=AK-7731\nLOG_LEVEL=warn"
    )
    staging = (
        "staging .env:\nDB_HOST=pg-staging.internal\nDB_PORT=6432\n"
        "REDIS_URL=redis://cache-stg:6379\nAPI_KEY_ID=AK-2290\nLOG_LEVEL=debug"
    )
    prompt = await _session(client, {**STATED, 22: api, 24: worker, 26: prod, 28: staging}, 40)
    lines = _summary_lines(prompt)
    # The most specific lines of each paste (within the bound), none replacing the other's.
    for value in ("memory: 2816Mi", "memory: 512Mi", "api:4.12.0", "worker:4.12.0"):
        assert any(line.endswith(value) for line in lines), (value, lines)
    for value in ("DB_PORT: 5432", "DB_PORT: 6432", "AK-7731", "AK-2290"):
        assert any(line.endswith(value) for line in lines), (value, lines)


async def test_a_paste_of_thousands_of_lines_is_read_in_linear_time(
    client: httpx.AsyncClient,
) -> None:
    yaml = "config:\n" + "\n".join(f"  key{i}: value-{i}.host-{i}.internal" for i in range(2000))
    rows = "\n".join(f"{i},svc{i},h{i}.x.internal,{8000 + i}" for i in range(3000))
    csv = "here's the inventory export, the Leeds warehouse is ours\nid,name,host,port\n" + rows
    read.cache_clear()  # each backend's run reads the pastes afresh
    sid = str((await create_session(client, model="gpt-4o", context_limit=64_000))["id"])
    for n, said in enumerate(
        [yaml, csv, *(ROUTINE[k % len(ROUTINE)].format(n=k) for k in range(20))]
    ):
        prompt = await start_turn(client, sid, said)
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done.")
    lines = _summary_lines(await start_turn(client, sid, "what's next?"))
    # Both pastes were folded into the summary, each a bounded share of it. (What reading
    # them costs is measured, not asserted here: weighing each line against every other took
    # seconds a paste, the one counting pass milliseconds; see docs/benchmarks.md.)
    assert any("Leeds warehouse" in line for line in lines), lines
    assert 0 < sum("config.key" in line for line in lines) <= PASTED_LINES, lines


#: Short statements of dates and times in odd formats, said before the pastes below.
DATED = {
    1: "plumber comes 02/03 at 9:15",
    2: "visa expires 2027-04-17",
    3: "payday is the 27th",
    4: "parents' evening is the 3rd of Feb, 14h30",
    5: "Wiebke Sørensen signs off the ledger migration",
}


def _env_paste(n: int) -> str:
    """An .env file of eight settings, each specific (a host with digits): a paste whose
    lines all look worth keeping."""
    lines = (f"SVC{n}_SHARD_{j}_HOST=pg-{n}-{j}7.ledger.internal" for j in range(8))
    return "```env\n" + "\n".join(lines) + "\n```"


async def test_pastes_give_way_to_the_users_short_dated_statements_visibly(
    client: httpx.AsyncClient,
) -> None:
    pastes = {n: _env_paste(n) for n in range(6, 18)}
    said = {**DATED, **pastes}
    sid = str((await create_session(client))["id"])
    for n in range(22):
        prompt = await start_turn(client, sid, said.get(n, ROUTINE[n % len(ROUTINE)].format(n=n)))
        await post_step(client, sid, prompt["turn_id"], [f"call_{n}"], [words(900, n)])
        await complete_turn(client, sid, prompt["turn_id"], f"Job {n} done in {n}s, exit code 0.")
    prompt = await start_turn(client, sid, "what's next?")
    lines = _summary_lines(prompt)
    # What the user typed in their own sentences is kept, older than every paste.
    for statement in DATED.values():
        assert any(line.endswith(statement) for line in lines), (statement, lines)
    # Each paste keeps its most specific lines (in the summary, or the newest whole); the
    # rest left the block, and the summary says so with the pastes' message ids.
    everything = text_of(prompt["messages"])
    assert all(f"SVC{n}_SHARD_0_HOST" in everything for n in pastes)
    assert sum("_SHARD_" in line for line in lines) < 6 * len(pastes)
    stored = await stored_messages(client, sid)
    paste_ids = {m["id"] for m in stored if "_SHARD_" in str(m["content"])}
    rows = await audit_rows(client, sid)
    left_ids = {
        i
        for row in rows
        for i in (row["block_telemetry"] or {}).get("summary_left_out", {}).get("message_ids", [])
    }
    assert left_ids
    assert left_ids <= paste_ids
    notice = text_of(prompt["messages"][:1])
    assert "user statement(s) left out for room (messages #" in notice
    assert any(f"#{i}" in notice for i in paste_ids)


@pytest.mark.parametrize(
    ("pasted", "kept"),
    [
        (
            "the port changed:\nserver:\n  port: 8081\n  host: db-3.internal",
            ["server.port: 8081", "server.host: db-3.internal"],
        ),
        ("[database]\nport = 5433", ["database.port: 5433"]),
    ],
    ids=["yaml", "ini"],
)
async def test_a_short_paste_keeps_its_section_or_parent_key(
    client: httpx.AsyncClient, pasted: str, kept: list[str]
) -> None:
    prompt = await _session(client, {**STATED, 25: pasted}, turns=40)
    lines = _summary_lines(prompt)
    for line in kept:
        assert any(shown.endswith(f"- {line}") for shown in lines), lines
