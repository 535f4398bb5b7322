"""The five agents of the sixth set: a coding agent, a travel-booking assistant, a DevOps
on-call agent, a personal-finance helper and a research assistant reading papers. Their
tools answer as real ones do: Python and TypeScript stack traces, unified diffs, JSON API
responses (pretty and minified), Kubernetes YAML, Prometheus alerts, CSV bank exports,
fare searches, BibTeX and abstracts. Call ids come in OpenAI's (``call_…``) and Anthropic's
(``toolu_…``) shapes, as an agent that switched providers mid-project posts them.

Tool output names many people, places, sums and codes; none of them is a value the user
states (the generator checks that for every session).
"""

from __future__ import annotations

import json
import random
import string

from bench.heldout.sets import Agent, Detail, Output, Tool
from bench.heldout.sets import pick as _pick

_ALNUM = string.ascii_letters + string.digits


def call_id(rng: random.Random) -> str:
    """OpenAI's ``call_`` + 24, or Anthropic's ``toolu_01`` + 22 characters."""
    if rng.random() < 0.5:
        return "call_" + "".join(rng.choices(_ALNUM, k=24))
    return "toolu_01" + "".join(rng.choices(_ALNUM, k=22))


def _hex(rng: random.Random, size: int = 12) -> str:
    return "".join(rng.choices("0123456789abcdef", k=size))


def _rows(rng: random.Random, low: int = 1, high: int = 60) -> int:
    """Row counts as real outputs have them: mostly short, sometimes long."""
    return max(low, min(high, int(rng.lognormvariate(1.6, 1.0))))


def _function(name: str, description: str, **properties: str) -> dict[str, object]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(properties)[:1],
            },
        },
    }


MODULES = ("billing", "ingest", "auth", "search", "export", "scheduler", "webhooks", "cli")
FUNCS = ("parse_row", "apply_discount", "refresh_token", "build_query", "flush", "retry")
DEVS = ("mkowalczyk", "tanaka-r", "oluwadamilare", "s.varga", "pbernier", "jlindgren")
SERVICES = ("checkout-api", "ledger-worker", "edge-proxy", "search-indexer", "notifier")
CLUSTERS = ("prod-eu-1", "prod-us-2", "staging-ap")
CITIES = ("Lyon", "Tallinn", "Valencia", "Krakow", "Bergen", "Split", "Graz", "Aarhus")
AIRLINES = ("KL", "LH", "AY", "SK", "OS", "LX", "TP")
MERCHANTS = ("TESCO STORES 3012", "AMZN Mktp", "SHELL 0451", "Spotify P1A2", "UBER *TRIP")
JOURNALS = ("Nature Climate Change", "PNAS", "J. Hydrology", "Ecol. Letters", "GRL")
AUTHORS = ("Haverkamp", "Oyelaran", "Sundqvist", "Ferrante", "Whitcombe", "Nakamura-Ellis")


# -- coding agent ---------------------------------------------------------------------


_SOURCE_LINES = ("return fn(*a)", "row = next(it)", "x = cfg[k]")


def _py_trace(rng: random.Random) -> str:
    module = rng.choice(MODULES)
    frames = "\n".join(
        f'  File "/app/src/{module}/{rng.choice(FUNCS)}.py", line {rng.randint(12, 480)}, '
        f"in {rng.choice(FUNCS)}\n    {rng.choice(_SOURCE_LINES)}"
        for _ in range(rng.randint(2, 9))
    )
    error = rng.choice(
        (
            "KeyError: 'currency'",
            "TypeError: unsupported operand type(s) for +: 'Decimal' and 'float'",
            "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint",
            "ValueError: time data '31/02/2025' does not match format '%d/%m/%Y'",
        )
    )
    return f"Traceback (most recent call last):\n{frames}\n{error}"


def _ts_trace(rng: random.Random) -> str:
    lines = "\n".join(
        f"    at {rng.choice(('resolve', 'handler', 'Object.<anonymous>', 'processTicks'))} "
        f"(/srv/web/dist/{rng.choice(MODULES)}.js:{rng.randint(1, 900)}:{rng.randint(1, 80)})"
        for _ in range(rng.randint(3, 10))
    )
    return f"TypeError: Cannot read properties of undefined (reading 'items')\n{lines}"


def _diff(rng: random.Random) -> str:
    module = rng.choice(MODULES)
    hunks = []
    for _ in range(rng.randint(1, 4)):
        line = rng.randint(10, 300)
        hunks.append(
            f"@@ -{line},6 +{line},7 @@ def {rng.choice(FUNCS)}(self, row):\n"
            f"     value = row.get('amount')\n"
            f"-    if value is None:\n"
            f"+    if value is None or value == '':\n"
            f"+        log.debug('empty amount in %s', row.get('id'))\n"
            f"         return None\n"
            f"     return Decimal(value)"
        )
    return (
        f"diff --git a/src/{module}/core.py b/src/{module}/core.py\n"
        f"index {_hex(rng, 7)}..{_hex(rng, 7)} 100644\n"
        f"--- a/src/{module}/core.py\n+++ b/src/{module}/core.py\n" + "\n".join(hunks)
    )


def _pytest_out(rng: random.Random) -> str:
    passed, failed = rng.randint(40, 900), rng.choice((0, 0, 1, 2, 5))
    head = f"collected {passed + failed} items\n\n"
    body = "".join(
        f"FAILED tests/test_{rng.choice(MODULES)}.py::test_{rng.choice(FUNCS)} - AssertionError\n"
        for _ in range(failed)
    )
    return f"{head}{body}==== {failed} failed, {passed} passed in {rng.uniform(3, 90):.2f}s ===="


def _gh_pr(rng: random.Random) -> str:
    return json.dumps(
        {
            "number": rng.randint(100, 4000),
            "state": rng.choice(("open", "closed")),
            "user": {"login": rng.choice(DEVS)},
            "mergeable_state": rng.choice(("clean", "blocked", "unstable")),
            "requested_reviewers": [{"login": d} for d in rng.sample(DEVS, 2)],
            "head": {"sha": _hex(rng, 40)},
            "labels": [{"name": rng.choice(("bug", "chore", "needs-review"))}],
        },
        indent=rng.choice((None, 2)),
    )


CODING_TOOLS = (
    Tool(
        _function("run_tests", "Run the test suite or a subset.", path="string", k="string"),
        lambda rng: {"path": f"tests/test_{rng.choice(MODULES)}.py", "k": rng.choice(FUNCS)},
        (_pytest_out, _py_trace, _pytest_out),
    ),
    Tool(
        _function("git_diff", "Show the working-tree diff.", path="string"),
        lambda rng: {"path": f"src/{rng.choice(MODULES)}/"},
        (_diff,),
    ),
    Tool(
        _function("github_api", "Call the GitHub REST API.", method="string", route="string"),
        lambda rng: {
            "method": "GET",
            "route": f"/repos/acme/monolith/pulls/{rng.randint(1, 3999)}",
        },
        (_gh_pr, _ts_trace),
    ),
)
CODING = Agent(
    "coding",
    "You are a coding agent working in the user's repository. Run tools, show diffs, "
    "never push without being asked.",
    "Get the billing refactor merged without breaking the nightly export.",
    CODING_TOOLS,
    (
        "run the tests for {module} again",
        "why is test_{func} flaky",
        "show me the diff",
        "can u check PR {num}",
        "fix the lint errors pls",
        "rerun with -x",
        "what does the trace say",
        "ok try that and run it",
        "grep for {func} in src",
        "bump the version and regenerate the lockfile",
    ),
    (
        "The failure is in the fixture, not the code under test.",
        "I changed the guard so an empty string is treated like a missing amount.",
        "Three tests fail on a fresh database because they depend on test order.",
        "The type checker is happy now; the remaining warning is from a vendored module.",
        "This PR is blocked only on a review; CI is green.",
        "I reverted the last change because it broke the CSV export.",
        "The stack trace points at the retry wrapper swallowing the original exception.",
        "Running the focused subset first so we get feedback in seconds, not minutes.",
    ),
    (
        Detail(
            _pick("pin_decimal_context", "freeze_locale_in_fixture", "reset_sequence_per_test"),
            "Which fix did you say stops the flaky currency test?",
            "What was the trick for the test that failed only sometimes?",
            sentence="The flaky one is fixed by {v}: the tests no longer share state.",
        ),
        Detail(
            _pick("sha 9f3c1e7a", "sha 4b81d0c2", "sha e07a55f9"),
            "Which sha was the last green build of the export job?",
            "The last time everything passed — what commit was that?",
            tool="run_tests",
            record="== nightly export ==\nlast green build: {v}\nduration 14m02s\nartifacts: 3",
        ),
        Detail(
            _pick("src/billing/rounding_rules.py", "src/export/encoding_shim.py"),
            "Which file did the rounding regression come from?",
            "Where in the repo did that money bug start?",
            sentence="I traced the regression to {v}, which changed in last week's merge.",
        ),
    ),
)


# -- travel ---------------------------------------------------------------------------


def _fares(rng: random.Random) -> str:
    offers = [
        {
            "carrier": rng.choice(AIRLINES),
            "flight": f"{rng.choice(AIRLINES)}{rng.randint(100, 1999)}",
            "from": rng.choice(CITIES),
            "to": rng.choice(CITIES),
            "dep": f"2026-0{rng.randint(1, 9)}-{rng.randint(10, 28)}T{rng.randint(6, 21):02}:"
            f"{rng.choice((0, 15, 30, 45)):02}",
            "price": {"total": f"{rng.randint(60, 900)}.{rng.randint(0, 99):02}", "cur": "EUR"},
            "seats_left": rng.randint(1, 9),
        }
        for _ in range(_rows(rng, 1, 12))
    ]
    return json.dumps({"data": offers, "meta": {"count": len(offers)}})


def _hotel(rng: random.Random) -> str:
    return json.dumps(
        {
            "hotel": f"Hotel {rng.choice(('Mirabell', 'Alder', 'Kestrel', 'Lumen'))}",
            "city": rng.choice(CITIES),
            "rooms": [
                {"type": rng.choice(("double", "twin", "suite")), "rate": rng.randint(70, 320)}
                for _ in range(rng.randint(1, 4))
            ],
            "cancellation": rng.choice(("free until 48h", "non-refundable")),
        },
        indent=2,
    )


def _booking_error(rng: random.Random) -> str:
    return json.dumps(
        {
            "errors": [
                {
                    "status": rng.choice((400, 409, 429)),
                    "code": rng.choice(("FARE_EXPIRED", "SEAT_TAKEN", "RATE_LIMITED")),
                    "detail": "The offer is no longer available, search again.",
                    "trace": _hex(rng, 16),
                }
            ]
        }
    )


TRAVEL_TOOLS = (
    Tool(
        _function("search_flights", "Search fares.", origin="string", destination="string"),
        lambda rng: {"origin": rng.choice(CITIES), "destination": rng.choice(CITIES)},
        (_fares, _fares, _booking_error),
    ),
    Tool(
        _function("search_hotels", "Search hotels.", city="string", nights="integer"),
        lambda rng: {"city": rng.choice(CITIES), "nights": rng.randint(1, 6)},
        (_hotel,),
    ),
    Tool(
        _function("hold_booking", "Hold an offer for 20 minutes.", offer_id="string"),
        lambda rng: {"offer_id": _hex(rng, 10)},
        (_booking_error, lambda rng: json.dumps({"held": True, "expires_in": 1200})),
    ),
)
TRAVEL = Agent(
    "travel",
    "You are a travel-booking assistant. Search, compare and hold offers; book only on an "
    "explicit yes.",
    "Plan the spring trip: flights, two hotels, and the rail leg in between.",
    TRAVEL_TOOLS,
    (
        "any cheaper flights to {city}",
        "search hotels in {city} again",
        "what about the morning ones",
        "hold that one",
        "compare with the train",
        "is there anything with free cancellation",
        "check {city} for next weekend instead",
        "refresh the fares",
        "show me only direct flights",
    ),
    (
        "Fares moved a little since this morning; the cheapest is still the early departure.",
        "Both hotels allow free cancellation up to two days before arrival.",
        "The train is slower but lands you in the centre, so door to door it's close.",
        "I held the offer; it expires in twenty minutes unless you confirm.",
        "That flight has a tight connection, under fifty minutes.",
        "There are no direct options that day, only via a hub.",
        "Prices include taxes but not checked bags.",
    ),
    (
        Detail(
            _pick("PNR QXT4LM", "PNR ZRW8KD", "PNR HJP2VN"),
            "What was the PNR of the held Bergen flight?",
            "The reference for the plane seats we put on hold — what was it?",
            tool="hold_booking",
            record='{{"held": true, "record_locator": "{v}", "route": "Bergen-Graz"}}',
        ),
        Detail(
            _pick("Gate B-Vorplatz", "Ausgang Süd", "Südtiroler Platz"),
            "Where did you say the hotel shuttle pick-up point is?",
            "Where do I wait to be collected from the station?",
            sentence="The shuttle collects guests at {v}, every half hour.",
        ),
        Detail(
            _pick("rate code FLEXSAVER", "rate code NONREF-EARLY", "rate code STAYLONGER"),
            "Which rate code did the cheap hotel offer use?",
            "Under what tariff was the cheapest room listed?",
            tool="search_hotels",
            record='{{"hotel": "Hotel Kestrel", "city": "Graz", "{v}": 118}}',
        ),
    ),
)


# -- DevOps on-call -------------------------------------------------------------------


def _alert(rng: random.Random) -> str:
    return json.dumps(
        {
            "status": rng.choice(("firing", "resolved")),
            "labels": {
                "alertname": rng.choice(("HighErrorRate", "PodCrashLooping", "DiskFillingUp")),
                "service": rng.choice(SERVICES),
                "cluster": rng.choice(CLUSTERS),
                "severity": rng.choice(("page", "ticket")),
            },
            "startsAt": f"2026-03-{rng.randint(10, 28)}T0{rng.randint(0, 9)}:"
            f"{rng.randint(10, 59)}:00Z",
            "fingerprint": _hex(rng, 16),
        }
    )


def _pods(rng: random.Random) -> str:
    head = "NAME                                READY   STATUS             RESTARTS   AGE"
    rows = [
        f"{rng.choice(SERVICES)}-{_hex(rng, 10)}-{_hex(rng, 5)}   1/1     "
        f"{rng.choice(('Running', 'Running', 'CrashLoopBackOff', 'Pending')):<18} "
        f"{rng.randint(0, 40):<10} {rng.randint(1, 90)}m"
        for _ in range(_rows(rng, 1, 30))
    ]
    return "\n".join([head, *rows])


def _manifest(rng: random.Random) -> str:
    service = rng.choice(SERVICES)
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {service}\n"
        f"  namespace: {rng.choice(('payments', 'core', 'edge'))}\nspec:\n"
        f"  replicas: {rng.randint(2, 12)}\n  template:\n    spec:\n      containers:\n"
        f"      - name: {service}\n        image: registry.local/{service}:{rng.randint(1, 9)}."
        f"{rng.randint(0, 30)}.{rng.randint(0, 9)}\n        resources:\n          limits:\n"
        f"            memory: {rng.choice(('512Mi', '1Gi', '2Gi'))}"
    )


def _logs(rng: random.Random) -> str:
    return "\n".join(
        f"2026-03-{rng.randint(10, 28)}T{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:"
        f"{rng.randint(0, 59):02}Z {rng.choice(('INFO', 'WARN', 'ERROR'))} "
        f"{rng.choice(SERVICES)} trace_id={_hex(rng, 16)} "
        f"{rng.choice(('upstream timeout', 'retrying', 'conn reset by peer', 'ok'))}"
        for _ in range(_rows(rng, 2, 50))
    )


ONCALL_TOOLS = (
    Tool(
        _function("alerts", "List Alertmanager alerts.", cluster="string"),
        lambda rng: {"cluster": rng.choice(CLUSTERS)},
        (_alert,),
    ),
    Tool(
        _function("kubectl", "Run a read-only kubectl command.", args="string"),
        lambda rng: {"args": f"get pods -n {rng.choice(('payments', 'core', 'edge'))}"},
        (_pods, _manifest),
    ),
    Tool(
        _function("logs_query", "Query logs.", query="string", since="string"),
        lambda rng: {"query": f"service:{rng.choice(SERVICES)} level:error", "since": "30m"},
        (_logs,),
    ),
)
ONCALL = Agent(
    "oncall",
    "You are an on-call assistant. Read-only access to the clusters; propose, never apply.",
    "Get through this week's on-call shift with every incident written up.",
    ONCALL_TOOLS,
    (
        "whats firing",
        "check {service} pods",
        "logs for {service} last 30m",
        "is it still flapping",
        "grep that trace id",
        "rerun the health check",
        "anything new on {cluster}",
        "ack it",
        "summarise the incident so far",
    ),
    (
        "The error rate is back under the threshold; the alert should resolve in five minutes.",
        "Two pods restarted, both on the same node, which points at the node not the app.",
        "Nothing new firing since the last check.",
        "The upstream timeouts line up with the database failover window.",
        "I would not scale up yet; CPU is fine, the queue is what's backed up.",
        "The deploy at the top of the hour is the only change in that window.",
        "I drafted the incident timeline; it needs your read before it goes out.",
    ),
    (
        Detail(
            _pick("node ip-10-4-7-19", "node ip-10-4-9-202", "node ip-10-4-3-88"),
            "Which node were the crashing pods scheduled on?",
            "Where did the restarts all happen, machine-wise?",
            sentence="Every restart was on {v}; I've cordoned nothing, just noting it.",
        ),
        Detail(
            _pick("INC-20931", "INC-20977", "INC-21004"),
            "What incident number did the pager open for the checkout outage?",
            "The ticket for when people couldn't pay — its reference?",
            tool="alerts",
            record='{{"status": "firing", "incident": "{v}", "service": "checkout-api"}}',
        ),
        Detail(
            _pick("max_connections 400", "pool_size 64", "statement_timeout 15s"),
            "Which database setting did you say was saturated?",
            "What limit on the DB side did we hit?",
            sentence="The root cause looks like {v} being exhausted during the failover.",
        ),
    ),
)


# -- personal finance -----------------------------------------------------------------


def _bank_csv(rng: random.Random) -> str:
    rows = [
        f"2026-02-{rng.randint(10, 28)},{rng.choice(MERCHANTS)},"
        f"-{rng.randint(2, 240)}.{rng.randint(0, 99):02},GBP"
        for _ in range(_rows(rng, 2, 60))
    ]
    return "date,description,amount,currency\n" + "\n".join(rows)


def _budget(rng: random.Random) -> str:
    return json.dumps(
        {
            "month": "2026-02",
            "categories": {
                c: {"planned": rng.randint(50, 600), "spent": rng.randint(20, 700)}
                for c in rng.sample(("groceries", "transport", "eating out", "utilities", "fun"), 3)
            },
        },
        indent=2,
    )


def _fx(rng: random.Random) -> str:
    return f"GBP/EUR {rng.uniform(1.1, 1.2):.4f} · GBP/USD {rng.uniform(1.2, 1.3):.4f} (mid)"


FINANCE_TOOLS = (
    Tool(
        _function("bank_export", "Export transactions as CSV.", account="string", month="string"),
        lambda rng: {"account": "current", "month": "2026-02"},
        (_bank_csv,),
    ),
    Tool(
        _function("budget_status", "Budget by category.", month="string"),
        lambda rng: {"month": "2026-02"},
        (_budget,),
    ),
    Tool(
        _function("fx_rate", "Mid-market rate.", pair="string"), lambda rng: {"pair": "GBP"}, (_fx,)
    ),
)
FINANCE = Agent(
    "finance",
    "You are a personal-finance helper. Read-only bank access; no advice on specific investments.",
    "Get the household budget under control before the tax return is due.",
    FINANCE_TOOLS,
    (
        "how much did we spend on eating out",
        "pull last month's transactions",
        "whats left in the groceries budget",
        "categorise the uber ones",
        "any subscriptions I forgot about",
        "rate for euros today?",
        "same for the joint account",
        "compare with january",
    ),
    (
        "Eating out is over plan again, mostly weekend lunches.",
        "Two subscriptions renewed this month that you didn't mention using.",
        "Groceries are on track; transport is over because of the train strikes.",
        "I put the Uber rides under transport, not eating out.",
        "The rate moved less than half a percent this week.",
        "The joint account looks the same as last month apart from the insurance renewal.",
    ),
    (
        Detail(
            _pick("Spotify P1A2 duplicate", "iCloud+ 2TB twice", "Audible annual"),
            "Which subscription did the export show charged twice?",
            "Was there something we paid for two times?",
            tool="bank_export",
            record="date,description,amount\n2026-02-03,{v},-11.99\n2026-02-03,{v} (2),-11.99",
        ),
        Detail(
            _pick("the 50/30/20 split", "envelope budgeting", "a zero-based budget"),
            "Which budgeting method did you suggest?",
            "What approach did you recommend for splitting the money each month?",
            sentence="Given the irregular income, I'd suggest {v} for now.",
        ),
    ),
)


# -- research assistant ---------------------------------------------------------------


def _bibtex(rng: random.Random) -> str:
    author = rng.choice(AUTHORS)
    year = rng.randint(2008, 2025)
    return (
        f"@article{{{author.lower()}{year},\n  author = {{{author} and {rng.choice(AUTHORS)}}},\n"
        f"  title = {{Drought propagation in {rng.choice(('karst', 'alpine', 'boreal'))} "
        f"catchments}},\n  journal = {{{rng.choice(JOURNALS)}}},\n  year = {{{year}}},\n"
        f"  doi = {{10.{rng.randint(1000, 9999)}/{_hex(rng, 8)}}}\n}}"
    )


def _abstract(rng: random.Random) -> str:
    return (
        f"Abstract. We analyse {rng.randint(40, 900)} catchments across "
        f"{rng.choice(('Europe', 'the Alps', 'Scandinavia'))} and find that groundwater "
        f"buffering delays streamflow drought by {rng.randint(2, 9)} months on median. "
        "Results are robust to the choice of threshold. " * rng.randint(1, 4)
    )


def _search(rng: random.Random) -> str:
    return json.dumps(
        {
            "total": rng.randint(10, 2000),
            "results": [
                {
                    "title": f"{rng.choice(('On', 'Towards', 'Revisiting'))} drought indices",
                    "year": rng.randint(2000, 2025),
                    "cites": rng.randint(0, 800),
                }
                for _ in range(_rows(rng, 1, 10))
            ],
        }
    )


RESEARCH_TOOLS = (
    Tool(
        _function("paper_search", "Search the literature.", query="string"),
        lambda rng: {"query": rng.choice(("drought propagation", "baseflow index", "SPI SPEI"))},
        (_search,),
    ),
    Tool(
        _function("fetch_paper", "Fetch a paper's metadata and abstract.", doi="string"),
        lambda rng: {"doi": f"10.{rng.randint(1000, 9999)}/{_hex(rng, 8)}"},
        (_bibtex, _abstract),
    ),
)
RESEARCH = Agent(
    "research",
    "You are a research assistant for a hydrology PhD student. Cite DOIs; say when unsure.",
    "Draft the related-work section of the second thesis chapter.",
    RESEARCH_TOOLS,
    (
        "find more on baseflow",
        "get the bibtex for that",
        "what does the abstract say",
        "anything newer than 2020",
        "summarise these three",
        "is that one peer reviewed",
        "search again with SPEI",
    ),
    (
        "Most of the recent work uses SPEI rather than SPI because it accounts for evaporation.",
        "That paper is a preprint; the published version changed the main figure.",
        "The three studies agree on the direction but not on the size of the lag.",
        "I'd cite the review rather than the original for the index definition.",
        "The sample there is small, fewer than fifty catchments.",
    ),
    (
        Detail(
            _pick("a 4.7-month lag", "a 6.2-month lag", "a 3.9-month lag"),
            "What lag did the karst paper's abstract report?",
            "How long before rivers feel a dry spell, according to that study on limestone?",
            tool="fetch_paper",
            record="Abstract. In karst catchments we find {v} between meteorological and "
            "streamflow drought.",
        ),
        Detail(
            _pick("Hisdal and Tallaksen", "Van Loon's typology", "Tallaksen and Van Lanen"),
            "Whose drought classification did you say to use as the frame?",
            "Which framework for sorting dry-spell types did you recommend?",
            sentence="For the framing I'd build on {v}; everyone in the field cites it.",
        ),
    ),
)

AGENTS = (CODING, TRAVEL, ONCALL, FINANCE, RESEARCH)

_FILL = {
    "module": MODULES,
    "func": FUNCS,
    "num": tuple(str(n) for n in range(1200, 1260)),
    "city": CITIES,
    "service": SERVICES,
    "cluster": CLUSTERS,
}


def request(rng: random.Random, agent: Agent) -> str:
    text = rng.choice(agent.requests)
    return text.format(**{key: rng.choice(values) for key, values in _FILL.items()})


def tool_call(rng: random.Random, agent: Agent) -> tuple[str, dict[str, object], Output]:
    tool = rng.choice(agent.tools)
    return tool.name, tool.arguments(rng), rng.choice(tool.outputs)


STATUS = ("done", "✓", "Done — nothing new.", "ok, ran it.", "Same as before.", "Updated.")
STEP_TEXTS = (None, None, None, "Checking.", "Let me look.", "Running that now.", "On it —")


def prose(rng: random.Random, agent: Agent) -> str:
    """An answer of one of the shapes real ones take: a status, a line, bullets, paragraphs,
    a table, a code block."""
    sentences = agent.sentences

    def some(count: int) -> list[str]:
        return rng.sample(sentences, min(count, len(sentences)))

    shape = rng.randrange(8)
    if shape == 0:
        return rng.choice(STATUS)
    if shape == 1:
        return some(1)[0]
    if shape == 2:
        return "Here's where things stand:\n" + "\n".join(f"- {s}" for s in some(rng.randint(2, 4)))
    if shape == 3:
        return "\n\n".join(" ".join(some(rng.randint(2, 3))) for _ in range(rng.randint(2, 3)))
    if shape == 4:
        rows = "\n".join(f"| {i} | {s} |" for i, s in enumerate(some(3), 1))
        return f"| # | note |\n|---|---|\n{rows}"
    if shape == 5:
        return (
            f"{some(1)[0]}\n\n```\n$ {rng.choice(('make check', 'kubectl get ev', 'ls -la'))}\n"
            f"exit 0\n```"
        )
    if shape == 6:
        return f"**Short version:** {some(1)[0]}\n\n**Longer:** {' '.join(some(3))}"
    return f"{some(1)[0]} Want me to keep going?"
