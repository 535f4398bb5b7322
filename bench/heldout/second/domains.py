"""Five agents the second set's sessions come from (travel booking, personal finance, customer
support, research, coding): each with its tools, the requests its user makes, the output its
tools give, and the details it states that the user asks about later.

Tool output and prose are full of names, places, amounts, dates and codes of the same sorts
as the user's facts (a hotel in another town, a nearby flight number, an amount a few euros
off): distractors a matcher or a summary could take for the fact. None is a fact's value; the
generator checks that.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass

# What the generators call as this module's own words.
from bench.heldout.material import call_id as call_id
from bench.heldout.material import code as code

Output = Callable[[random.Random], str]

CITIES = (
    "Lisbon",
    "Porto",
    "Seville",
    "Bologna",
    "Vienna",
    "Zagreb",
    "Krakow",
    "Tallinn",
    "Nairobi",
    "Accra",
    "Lima",
    "Montevideo",
    "Osaka Namba",
    "Busan",
    "Hanoi",
    "Perth",
    "Calgary",
    "Halifax",
    "Marseille",
    "Rotterdam",
    "Gothenburg",
    "Bergen",
    "Edinburgh",
    "Cork",
    "Dubrovnik",
    "Thessaloniki",
    "Izmir",
    "Casablanca",
    "Tbilisi",
    "Almaty",
)
PEOPLE = (
    "Maria Costa",
    "John Miller",
    "Ana Ruiz",
    "Peter Novak",
    "Sofia Rossi",
    "Liam Walsh",
    "Chen Wei",
    "Olga Ivanova",
    "Lars Berg",
    "Fatima Zahra",
    "Daniel Kim",
    "Amara Obi",
    "Julien Moreau",
    "Eva Horvath",
    "Rahul Mehta",
    "Nina Petrova",
    "Tom Becker",
    "Grace Lee",
)
AIRLINES = ("TP", "LH", "KL", "AF", "IB", "SK", "AY", "OS", "LX", "BA")
HOTELS = (
    "Hotel Miramar",
    "Casa do Rio",
    "The Harbour Inn",
    "Pension Alpenblick",
    "Grand Hotel Central",
    "Hostal La Plaza",
    "Riverside Suites",
    "Albergo Sole",
)
MERCHANTS = (
    "Tesco",
    "Lidl",
    "Spotify",
    "Netflix",
    "Shell",
    "IKEA",
    "Amazon",
    "Uber",
    "Deliveroo",
    "Vodafone",
    "Decathlon",
    "Zara",
    "Apple.com/bill",
    "Bolt",
    "Airbnb",
)
PRODUCTS = (
    "Aero Kettle 2",
    "Nimbus Router X",
    "Flexi Desk Pro",
    "Quiet Fan 300",
    "SoundBar Mini",
    "Pulse Watch S",
    "Vista Monitor 27",
)
TOPICS = (
    "sleep and memory consolidation",
    "urban heat islands",
    "microplastics in rivers",
    "remote work and productivity",
    "battery recycling",
    "coral bleaching",
    "language acquisition in adults",
    "carbon pricing",
)
AUTHORS = (
    "Smith et al.",
    "Okafor and Lindgren",
    "Tanaka et al.",
    "Müller & Schmidt",
    "García et al.",
    "Novak and Brown",
    "Ahmed et al.",
)
JOURNALS = ("Nature", "PNAS", "The Lancet", "PLOS ONE", "Science Advances", "Cell Reports")
REPOS = ("web-shop", "mobile-app", "billing", "api-gateway", "design-system", "data-pipeline")
FILES = (
    "src/cart/checkout.ts",
    "src/auth/session.py",
    "lib/pricing/rules.rb",
    "app/models/user.go",
    "src/components/Modal.tsx",
    "pipeline/transform.py",
    "cmd/server/main.go",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "April", "June", "July", "September", "October", "November")


def _count(rng: random.Random, low: int = 2, high: int = 160) -> int:
    # Mostly short, now and then long: the heavy tail real tool output has.
    return max(low, min(high, int(rng.lognormvariate(2.3, 1.0))))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _money(rng: random.Random) -> str:
    return f"{rng.randint(3, 2400)}.{rng.randint(0, 99):02d}"


def _tool(tool: str, description: str, **properties: str) -> dict[str, object]:
    required = list(properties)[:1]
    return {
        "type": "function",
        "function": {
            "name": tool,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": text} for key, text in properties.items()
                },
                "required": required,
            },
        },
    }


# ---- travel -----------------------------------------------------------------------------


def flight_search(rng: random.Random) -> str:
    offers = []
    for _ in range(_count(rng, 2, 40)):
        offers.append(
            {
                "flight": f"{rng.choice(AIRLINES)} {rng.randint(100, 9999)}",
                "from": rng.choice(CITIES),
                "to": rng.choice(CITIES),
                "departs": f"{_date(rng)}T{rng.randint(5, 23):02d}:"
                f"{rng.choice((0, 15, 35, 50)):02d}",
                "stops": rng.choice((0, 0, 1, 2)),
                "fare": {"amount": _money(rng), "currency": rng.choice(("EUR", "USD", "GBP"))},
                "seats_left": rng.randint(1, 9),
            }
        )
    return json.dumps({"offers": offers, "search_id": code(rng, 12)}, indent=rng.choice((None, 2)))


def hotel_search(rng: random.Random) -> str:
    rows = ["name | city | nightly | rating | free cancellation"]
    for _ in range(_count(rng, 2, 30)):
        rows.append(
            f"{rng.choice(HOTELS)} | {rng.choice(CITIES)} | {rng.randint(45, 620)} EUR | "
            f"{rng.randint(60, 98) / 10} | {rng.choice(('yes', 'no', 'until 48h before'))}"
        )
    return "\n".join(rows)


def booking_record(rng: random.Random) -> str:
    return (
        f"PNR {code(rng)}\n"
        f"  1. {rng.choice(PEOPLE).upper().replace(' ', '/')} MR\n"
        f"  2  {rng.choice(AIRLINES)}{rng.randint(100, 9999)} Y {rng.randint(1, 28):02d}"
        f"{rng.choice(('JAN', 'MAR', 'JUN', 'SEP', 'NOV'))} {code(rng, 3)}{code(rng, 3)} HK1 "
        f"{rng.randint(5, 23):02d}{rng.randint(0, 59):02d} {rng.randint(5, 23):02d}"
        f"{rng.randint(0, 59):02d}\n"
        f"  3 SSR {rng.choice(('VGML', 'WCHR', 'BSCT', 'DOCS'))} HK1\n"
        f"  TKT/TIME LIMIT {_date(rng)}\n"
        f"  RMKS-{rng.choice(('PAX REQ AISLE', 'CORP RATE', 'LATE CHECKIN'))}"
    )


def weather(rng: random.Random) -> str:
    days = [
        f"{rng.choice(WEEKDAYS)}: {rng.choice(('sunny', 'showers', 'overcast', 'windy'))}, "
        f"{rng.randint(-5, 34)}°C, rain {rng.randint(0, 100)}%"
        for _ in range(rng.randint(3, 7))
    ]
    return f"Forecast for {rng.choice(CITIES)}\n" + "\n".join(days)


# ---- finance ----------------------------------------------------------------------------


def transactions(rng: random.Random) -> str:
    rows = ["date,description,amount,balance,category"]
    balance = rng.randint(200, 9000)
    for _ in range(_count(rng, 3, 120)):
        amount = -rng.randint(2, 400) if rng.random() < 0.85 else rng.randint(50, 3200)
        balance += amount
        rows.append(
            f"{_date(rng)},{rng.choice(MERCHANTS)} {code(rng, 4)},{amount}."
            f"{rng.randint(0, 99):02d},{balance},"
            f"{rng.choice(('groceries', 'transport', 'subscriptions', 'income', 'eating out'))}"
        )
    return "\n".join(rows)


def budget_report(rng: random.Random) -> str:
    lines = ["category        budget   spent   left"]
    for category in rng.sample(
        ("groceries", "rent", "transport", "fun", "subscriptions", "kids", "gifts", "health"), 5
    ):
        budget = rng.randint(50, 1500)
        spent = rng.randint(0, budget + 200)
        lines.append(f"{category:<15} {budget:>6}  {spent:>6}  {budget - spent:>5}")
    return "\n".join(lines)


def portfolio(rng: random.Random) -> str:
    holdings = [
        {
            "ticker": code(rng, rng.choice((3, 4))),
            "units": round(rng.uniform(0.5, 400), 3),
            "price": _money(rng),
            "change_pct": round(rng.uniform(-8, 8), 2),
        }
        for _ in range(_count(rng, 3, 25))
    ]
    return json.dumps({"account": f"ISA-{rng.randint(10000, 99999)}", "holdings": holdings})


def fx_rates(rng: random.Random) -> str:
    pairs = ("EUR/USD", "GBP/EUR", "USD/JPY", "EUR/PLN", "USD/TRY", "EUR/SEK", "USD/INR")
    return "\n".join(f"{p} {rng.uniform(0.5, 160):.4f}" for p in rng.sample(pairs, 4))


# ---- support ----------------------------------------------------------------------------


def ticket(rng: random.Random) -> str:
    thread = []
    for _ in range(rng.randint(1, 6)):
        thread.append(
            f"--- {rng.choice(PEOPLE)} ({_date(rng)} {rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d})\n"
            + rng.choice(
                (
                    f"My {rng.choice(PRODUCTS)} stopped working after the update.",
                    f"Order #{rng.randint(100000, 999999)} never arrived, tracking says "
                    f"delivered in {rng.choice(CITIES)}.",
                    "Hi, I was charged twice, please refund one of them.",
                    f"We replaced the unit under warranty; new serial SN-{code(rng, 8)}.",
                    "Can you send me a return label? The box is already taped.",
                    "Escalating to tier 2, customer has called three times.",
                )
            )
        )
    return (
        f"Ticket #{rng.randint(10000, 99999)} [{rng.choice(('open', 'pending', 'solved'))}] "
        f"priority {rng.choice(('low', 'normal', 'high', 'urgent'))}\n" + "\n".join(thread)
    )


def order_lookup(rng: random.Random) -> str:
    return json.dumps(
        {
            "order": rng.randint(100000, 999999),
            "customer": rng.choice(PEOPLE),
            "items": [
                {"sku": code(rng, 8), "name": rng.choice(PRODUCTS), "qty": rng.randint(1, 3)}
                for _ in range(rng.randint(1, 5))
            ],
            "ship_to": rng.choice(CITIES),
            "status": rng.choice(("shipped", "processing", "returned", "lost_in_transit")),
            "carrier": rng.choice(("DHL", "UPS", "GLS", "PostNL", "Royal Mail")),
            "tracking": f"{code(rng, 2)}{rng.randint(100000000, 999999999)}{code(rng, 2)}",
        },
        indent=2,
    )


def kb_article(rng: random.Random) -> str:
    steps = "\n".join(
        f"{i}. "
        + rng.choice(
            (
                "Unplug the device for thirty seconds.",
                "Hold the reset button until the light blinks amber.",
                "Open the app and choose Settings > Device > Firmware.",
                "If the error persists, collect the log bundle from the diagnostics page.",
                "Offer a replacement if the unit is under two years old.",
                "Check the serial number against the recall list first.",
            )
        )
        for i in range(1, rng.randint(3, 8))
    )
    return f"KB-{rng.randint(1000, 9999)}: {rng.choice(PRODUCTS)} troubleshooting\n\n{steps}"


# ---- research ---------------------------------------------------------------------------


def paper_search(rng: random.Random) -> str:
    hits = []
    for i in range(1, _count(rng, 2, 25)):
        hits.append(
            f"[{i}] {rng.choice(AUTHORS)} ({rng.randint(1998, 2025)}). "
            f"{rng.choice(('Effects of', 'A survey of', 'Revisiting', 'Measuring'))} "
            f"{rng.choice(TOPICS)}. {rng.choice(JOURNALS)}, {rng.randint(1, 90)}"
            f"({rng.randint(1, 12)}), {rng.randint(1, 900)}-{rng.randint(901, 1800)}. "
            f"doi:10.{rng.randint(1000, 9999)}/{code(rng, 7).lower()}"
        )
    return "\n".join(hits)


def abstract(rng: random.Random) -> str:
    n = rng.randint(40, 9000)
    return (
        f"Abstract. We study {rng.choice(TOPICS)} in a cohort of {n} participants recruited in "
        f"{rng.choice(CITIES)} between {rng.randint(2005, 2015)} and {rng.randint(2016, 2024)}. "
        f"The effect size was {rng.uniform(0.05, 0.9):.2f} (95% CI "
        f"{rng.uniform(0.01, 0.2):.2f}-{rng.uniform(0.3, 1.2):.2f}), "
        f"p = {rng.uniform(0, 0.05):.3f}. "
        + " ".join(
            rng.sample(
                (
                    "Results held after adjusting for age and income.",
                    "The association weakened in the replication sample.",
                    "We discuss limitations of self-reported measures.",
                    "Data and code are available on request.",
                    "Heterogeneity across sites was moderate.",
                ),
                rng.randint(1, 4),
            )
        )
    )


def dataset_stats(rng: random.Random) -> str:
    columns = rng.sample(("age", "income", "score", "hours", "rainfall", "pm25", "rent"), 4)
    lines = ["variable   n      mean     sd      min    max"]
    for column in columns:
        lines.append(
            f"{column:<10} {rng.randint(50, 9000):<6} {rng.uniform(0, 500):<8.2f} "
            f"{rng.uniform(0, 90):<7.2f} {rng.uniform(0, 10):<6.1f} {rng.uniform(100, 900):.1f}"
        )
    return "\n".join(lines)


# ---- coding -----------------------------------------------------------------------------


def diff_output(rng: random.Random) -> str:
    path = rng.choice(FILES)
    hunks = []
    for _ in range(rng.randint(1, 4)):
        start = rng.randint(1, 400)
        body = "\n".join(
            rng.choice("+- ")
            + rng.choice(
                (
                    "  const total = items.reduce((a, b) => a + b.price, 0);",
                    "  if (!user) return null;",
                    "    session.expires_at = now() + timedelta(minutes=30)",
                    '  return fmt.Errorf("lookup %s: %w", id, err)',
                    "  def apply(self, rule):",
                    '  <Button variant="primary" onClick={close}>Done</Button>',
                )
            )
            for _ in range(rng.randint(3, 14))
        )
        hunks.append(f"@@ -{start},7 +{start},8 @@\n{body}")
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + "\n".join(hunks)


def ci_log(rng: random.Random) -> str:
    lines = [f"Run #{rng.randint(1000, 99999)} on {rng.choice(REPOS)} ({code(rng, 7).lower()})"]
    for _ in range(_count(rng, 4, 150)):
        lines.append(
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
            + rng.choice(
                (
                    f"npm ci ({rng.randint(200, 1800)} packages)",
                    f"PASS src/{rng.choice(('cart', 'auth', 'ui'))}/{code(rng, 4).lower()}.test.ts",
                    f"ok   github.com/acme/{rng.choice(REPOS)}/internal/{code(rng, 3).lower()}"
                    f"  {rng.uniform(0.01, 9):.3f}s",
                    "warning: unused import",
                    f"FAIL tests/test_{code(rng, 5).lower()}.py::test_roundtrip",
                    f"Uploading artifact ({rng.randint(1, 900)} MB)",
                )
            )
        )
    return "\n".join(lines)


def grep_output(rng: random.Random) -> str:
    return "\n".join(
        f"{rng.choice(FILES)}:{rng.randint(1, 900)}:    "
        + rng.choice(("TODO: handle timeout", "retries = 3", "import { api } from '../api'"))
        for _ in range(_count(rng, 1, 60))
    )


@dataclass(frozen=True)
class Detail:
    """Something the assistant states while working, asked about much later."""

    sentence: str
    value: Callable[[random.Random], str]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Tool:
    definition: dict[str, object]
    arguments: Callable[[random.Random], dict[str, object]]
    outputs: tuple[Output, ...]


@dataclass(frozen=True)
class Domain:
    name: str
    system: str
    goal: str
    tools: tuple[Tool, ...]
    requests: tuple[str, ...]
    sentences: tuple[str, ...]
    details: tuple[Detail, ...]


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        city=rng.choice(CITIES),
        other=rng.choice(CITIES),
        person=rng.choice(PEOPLE),
        hotel=rng.choice(HOTELS),
        merchant=rng.choice(MERCHANTS),
        product=rng.choice(PRODUCTS),
        topic=rng.choice(TOPICS),
        repo=rng.choice(REPOS),
        file=rng.choice(FILES),
        day=rng.choice(WEEKDAYS),
        month=rng.choice(MONTHS),
        n=rng.randint(2, 40),
        amount=rng.randint(12, 3000),
        order=rng.randint(100000, 999999),
        ticket=rng.randint(10000, 99999),
    )


def _pick(*words: str) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(words)


TRAVEL = Domain(
    "travel",
    "You are a travel-booking assistant. You search, hold and book; you never pay without a yes.",
    "Plan and book the user's trips and keep their bookings straight.",
    (
        Tool(
            _tool(
                "search_flights",
                "Search flight offers.",
                origin="IATA code or city",
                destination="IATA code or city",
                date="Departure date",
            ),
            lambda rng: {
                "origin": rng.choice(CITIES),
                "destination": rng.choice(CITIES),
                "date": _date(rng),
            },
            (flight_search,),
        ),
        Tool(
            _tool(
                "search_hotels",
                "Search hotels.",
                city="City",
                check_in="Date",
                nights="How many nights",
            ),
            lambda rng: {
                "city": rng.choice(CITIES),
                "check_in": _date(rng),
                "nights": str(rng.randint(1, 9)),
            },
            (hotel_search,),
        ),
        Tool(
            _tool("get_booking", "Read a booking record.", pnr="The record locator"),
            lambda rng: {"pnr": code(rng)},
            (booking_record,),
        ),
        Tool(
            _tool("weather", "A weather forecast.", city="City"),
            lambda rng: {"city": rng.choice(CITIES)},
            (weather,),
        ),
    ),
    (
        "find me flights from {city} to {other} sometime in {month}",
        "any cheaper hotels in {city}? max {amount} for the stay",
        "what's the weather going to be in {city} next {day}",
        "can u check if {hotel} in {city} has free cancellation",
        "Could you compare the morning and evening flights to {other}?",
        "look up my booking, the one for {person}",
        "is there a train instead of flying from {city} to {other}?",
        "¿hay vuelos directos a {other} el {day}?",
        "hotel near the old town in {city} pls, nothing fancy",
        "kannst du nach Flügen nach {other} suchen?",
        "how long is the layover if I go via {city}",
    ),
    (
        "The direct flight is pricier but saves almost four hours.",
        "Prices on that route tend to jump about three weeks out.",
        "That hotel's cancellation policy is strict, so I'd hold off booking it.",
        "The evening departure lands after the last train into town.",
        "I'd keep a longer layover there; the terminal change is slow.",
        "Weekday fares are noticeably lower on this route.",
        "Breakfast is included at the second option, not at the first.",
        "The fare class you picked doesn't include a checked bag.",
        "There is a festival that week, so rooms are filling up fast.",
    ),
    (
        Detail(
            "I've put a hold on seat {v} for you on the outbound leg.",
            _pick("14C", "23F", "31A", "9D", "17K"),
            "Which seat did you hold for me?",
            "Where am I sitting on the plane?",
        ),
        Detail(
            "The hold reference is {v}; it expires in twenty-four hours.",
            lambda rng: "HLD-" + code(rng, 5),
            "What was the hold reference?",
            "What code do I quote to keep the reservation?",
        ),
        Detail(
            "I found the shuttle from the airport: it's the {v} line, every twenty minutes.",
            _pick("Aerobus Verde", "Skylink Orange", "Flybussen Nord", "Airlink Teal"),
            "Which shuttle line goes from the airport?",
            "How do I get into town after landing?",
        ),
        Detail(
            "The travel insurance quote came to {v} for the whole trip.",
            _pick("sixty-one euros forty", "eighty-four pounds", "forty-seven dollars ninety"),
            "How much was the travel insurance quote?",
            "What would covering the trip against mishaps cost?",
        ),
        Detail(
            "Your loyalty number ending {v} is attached to the booking now.",
            lambda rng: f"{rng.randint(1000, 9999)}-{code(rng, 2)}",
            "What loyalty number ending did you attach?",
            "Which frequent-flyer account is on the reservation?",
        ),
    ),
)

FINANCE = Domain(
    "finance",
    "You are a personal-finance assistant with read access to the user's accounts.",
    "Help the user understand and plan their money; never move money without a yes.",
    (
        Tool(
            _tool(
                "list_transactions",
                "Transactions of an account.",
                account="Account",
                since="Start date",
            ),
            lambda rng: {
                "account": rng.choice(("current", "joint", "savings")),
                "since": _date(rng),
            },
            (transactions,),
        ),
        Tool(
            _tool("budget_status", "This month's budget by category.", month="Month"),
            lambda rng: {"month": rng.choice(MONTHS)},
            (budget_report,),
        ),
        Tool(
            _tool("portfolio", "Holdings of an investment account.", account="Account"),
            lambda rng: {"account": "ISA"},
            (portfolio,),
        ),
        Tool(
            _tool("fx_rates", "Current exchange rates.", base="Base currency"),
            lambda rng: {"base": rng.choice(("EUR", "USD", "GBP"))},
            (fx_rates,),
        ),
    ),
    (
        "how much did I spend on groceries last month",
        "what's this {merchant} charge for {amount}?",
        "are we over budget on anything this month",
        "show me my subscriptions, i think i'm paying for stuff i dont use",
        "how's the ISA doing",
        "Can you categorise the last {n} transactions properly?",
        "what's the euro worth in dollars today",
        "quanto ho speso da {merchant} quest'anno?",
        "combien on a dépensé en transport ce mois-ci ?",
        "is it smart to overpay the mortgage or invest the {amount} instead?",
        "find every payment to {person}",
    ),
    (
        "Most of the increase comes from eating out, not groceries.",
        "Two of those subscriptions overlap in what they offer.",
        "An emergency fund of three to six months of spending is the usual rule of thumb.",
        "Overpaying saves the interest rate for sure; investing may earn more but may not.",
        "The charge looks like an annual renewal rather than a new subscription.",
        "Your spending dips every month the week before payday.",
        "Fees on that fund are about twice the index tracker's.",
        "Rounding up purchases into savings adds up to more than it sounds.",
        "This category has been over budget three months running.",
    ),
    (
        Detail(
            "I've tagged the recurring payment as {v} so it stops showing as uncategorised.",
            _pick("household-utilities", "kids-activities", "car-running-costs"),
            "What tag did you give the recurring payment?",
            "How did you label that monthly debit?",
        ),
        Detail(
            "I set the savings rule to move {v} every payday.",
            _pick(
                "one hundred and fifteen pounds",
                "two hundred and forty euros",
                "ninety-five dollars",
            ),
            "How much does the savings rule move every payday?",
            "What amount gets put aside automatically?",
        ),
        Detail(
            "The duplicate charge was on {v}; I've flagged it for the bank.",
            _pick("the twelfth of the month", "the nineteenth", "the second Saturday"),
            "When was the duplicate charge?",
            "Which day was I billed twice?",
        ),
        Detail(
            "I created the goal '{v}' with the target you gave.",
            _pick("Kitchen Refit Fund", "Sabbatical Pot", "New Bike Kitty"),
            "What's the goal you created called?",
            "Under what name is my big saving target?",
        ),
        Detail(
            "Dispute case {v} is open with the card issuer.",
            lambda rng: f"DSP-{rng.randint(100000, 999999)}",
            "What's the dispute case number with the card issuer?",
            "Which reference tracks my chargeback?",
        ),
    ),
)

SUPPORT = Domain(
    "support",
    "You are a customer-support agent for a home-electronics shop, working the ticket queue.",
    "Resolve the customers' tickets and keep the user (a support lead) informed.",
    (
        Tool(
            _tool("get_ticket", "Read a support ticket.", ticket_id="Ticket number"),
            lambda rng: {"ticket_id": str(rng.randint(10000, 99999))},
            (ticket,),
        ),
        Tool(
            _tool("lookup_order", "Look up an order.", order_id="Order number"),
            lambda rng: {"order_id": str(rng.randint(100000, 999999))},
            (order_lookup,),
        ),
        Tool(
            _tool("search_kb", "Search the knowledge base.", query="Words"),
            lambda rng: {"query": rng.choice(PRODUCTS) + " reset"},
            (kb_article,),
        ),
    ),
    (
        "whats next in the queue",
        "can you check ticket {ticket}",
        "customer says order {order} never came, look it up?",
        "Draft a reply to {person} about the refund, keep it warm but short",
        "how many urgent tickets do we have open",
        "is there a KB article for the {product} blinking red",
        "merge the two tickets from {person}",
        "¿puedes contestar al cliente de {city} en español?",
        "pls summarise the thread on {ticket} for the handover",
        "what's our refund window again for opened boxes",
        "escalate {ticket}, they've waited too long",
    ),
    (
        "The customer has written three times; a personal reply will help more than a macro.",
        "That fault matches a known firmware issue; the fix is in the latest update.",
        "A replacement ships faster than a repair here.",
        "The tracking shows it stuck at the depot for six days.",
        "I'd offer store credit as well as the refund, given the delay.",
        "Their warranty is still valid, so no charge applies.",
        "I kept the reply short and gave them one clear next step.",
        "This looks like a carrier problem rather than ours.",
        "Two tickets describe the same order; merging keeps the history in one place.",
    ),
    (
        Detail(
            "I issued a return label with tracking {v}.",
            lambda rng: f"RL{rng.randint(10000000, 99999999)}GB",
            "What's the tracking on the return label you issued?",
            "How can we follow the parcel coming back to us?",
        ),
        Detail(
            "I used the macro '{v}' and personalised the first line.",
            _pick("Apology - Late Delivery v3", "Warranty Swap EU", "Refund Confirmed Soft"),
            "Which macro did you use?",
            "What canned response went out?",
        ),
        Detail(
            "The replacement unit's serial is {v}.",
            lambda rng: "SN-" + code(rng, 8),
            "What's the replacement unit's serial?",
            "Which device number did we send out as the swap?",
        ),
        Detail(
            "I gave them a goodwill voucher of {v}.",
            _pick("fifteen euros", "twenty-five pounds", "thirty dollars"),
            "How big was the goodwill voucher?",
            "What did we offer to make up for the hassle?",
        ),
        Detail(
            "I escalated it to the {v} queue.",
            _pick("Tier-2 Logistics", "Warranty Desk", "Payments Escalations"),
            "Which queue did you escalate it to?",
            "Who's handling that case now?",
        ),
    ),
)

RESEARCH = Domain(
    "research",
    "You are a research assistant: you search the literature and datasets and keep notes.",
    "Help the user write their review and keep their sources straight.",
    (
        Tool(
            _tool("search_papers", "Search the literature.", query="Words", year_from="Year"),
            lambda rng: {"query": rng.choice(TOPICS), "year_from": str(rng.randint(2000, 2020))},
            (paper_search,),
        ),
        Tool(
            _tool("get_abstract", "Fetch a paper's abstract.", doi="A DOI"),
            lambda rng: {"doi": f"10.{rng.randint(1000, 9999)}/{code(rng, 7).lower()}"},
            (abstract,),
        ),
        Tool(
            _tool("describe_dataset", "Summary statistics of a dataset.", name="Dataset"),
            lambda rng: {"name": rng.choice(("survey_w3", "panel_2019", "sensors_eu"))},
            (dataset_stats,),
        ),
    ),
    (
        "find recent papers on {topic}",
        "what does {person}'s group say about {topic}?",
        "give me the abstract of the third one",
        "Can you summarise the main disagreement in the {topic} literature?",
        "describe the survey dataset, just the basics",
        "is the effect size in that paper big or small?",
        "any meta-analyses on {topic} since {n}?",
        "cerca articoli su {topic}, per favore",
        "how do I cite a preprint in APA",
        "rewrite this paragraph so it sounds less like a robot wrote it",
    ),
    (
        "The newer studies use larger samples, which is why the effect looks smaller.",
        "Most of the disagreement is about measurement, not about the effect itself.",
        "That journal is solid, but the paper is a conference abstract, not a full study.",
        "I'd cite the meta-analysis rather than the individual trials here.",
        "The confidence interval is wide, so I'd phrase the finding cautiously.",
        "Two of these papers share authors and data, so they are not independent.",
        "The replication attempt found a smaller effect in the same direction.",
        "Self-reported measures tend to inflate this kind of association.",
    ),
    (
        Detail(
            "I saved the search as '{v}' in your library.",
            _pick("heat-review-core-set", "sleep-memory-shortlist", "plastics-rivers-v2"),
            "What name did you save the search under in my library?",
            "How do I find that list of sources again?",
        ),
        Detail(
            "The strongest study is {v}; I put it first in the notes.",
            _pick("Halvorsen and Quist (2019)", "Ebrahimi et al. (2021)", "Nakagawa (2017)"),
            "Which study did you say was the strongest?",
            "What's the best-quality source, in your view?",
        ),
        Detail(
            "I excluded {v} studies for using student samples only.",
            _pick("thirteen", "fourteen", "twenty-two"),
            "How many studies did you exclude for student samples?",
            "How many sources got dropped from the review, and why?",
        ),
        Detail(
            "The dataset's codebook is at {v}.",
            lambda rng: f"https://data.example.org/codebooks/{code(rng, 6).lower()}.pdf",
            "Where's the dataset's codebook?",
            "Link to the variable documentation?",
        ),
        Detail(
            "I used the search string {v} for the database query.",
            _pick(
                '"urban heat" AND mitigation',
                '"sleep spindles" AND recall',
                '"nanoplastic" AND freshwater',
            ),
            "What search string did you use for the database query?",
            "What exactly did you type into the bibliographic database?",
        ),
    ),
)

CODING = Domain(
    "coding",
    "You are a coding agent in the user's repositories; you run commands and edit files.",
    "Help the user ship their features and keep the build green.",
    (
        Tool(
            _tool("run", "Run a shell command.", command="Command line"),
            lambda rng: {
                "command": rng.choice(
                    ("npm test", "go test ./...", "git status", f"git log -n {rng.randint(5, 40)}")
                )
            },
            (ci_log, grep_output),
        ),
        Tool(
            _tool("show_diff", "Show the working-tree diff.", path="A path"),
            lambda rng: {"path": rng.choice(FILES)},
            (diff_output,),
        ),
        Tool(
            _tool("search_code", "Search the repository.", pattern="A regex"),
            lambda rng: {"pattern": rng.choice(("TODO", "retries", "api"))},
            (grep_output,),
        ),
    ),
    (
        "the build on {repo} is red again, can you look",
        "rename the prop in {file} and fix the call sites",
        "why does the checkout test fail only in CI",
        "show me what changed in {file}",
        "add a retry around the payment call, 3 tries max",
        "write tests for the pricing rules",
        "Can you bump the node version in the CI config?",
        "peux-tu corriger le lint sur {repo} ?",
        "what's this error even mean: cannot read properties of undefined",
        "clean up the TODOs in {file} if they're trivial",
    ),
    (
        "The test depends on the system clock, which is why it fails at midnight UTC.",
        "I kept the change small so it's easy to review.",
        "The type error comes from an optional field that the API sometimes omits.",
        "Running the suite locally passes; CI uses a different Node version.",
        "I'd rather fix the root cause than add another retry.",
        "That helper is used in four places, so I updated them all.",
        "The lint rule is new; only the files touched this week break it.",
    ),
    (
        Detail(
            "I pushed the fix to the branch {v}.",
            lambda rng: f"fix/{rng.choice(('cart', 'auth', 'ci'))}-{code(rng, 4).lower()}",
            "Which branch did you push the fix to?",
            "Where can I find your change to review it?",
        ),
        Detail(
            "The flaky test was `{v}`; I pinned its clock.",
            lambda rng: f"test_{code(rng, 4).lower()}_rounds_totals",
            "Which test was flaky?",
            "What was the unreliable check you stabilised?",
        ),
        Detail(
            "I set the request timeout to {v} milliseconds.",
            _pick("seventeen hundred", "twenty-five hundred", "three thousand five hundred"),
            "What did you set the request timeout to?",
            "How long does a call wait now before giving up?",
        ),
        Detail(
            "The new environment variable is {v}.",
            lambda rng: f"CHECKOUT_{code(rng, 4)}_MODE",
            "What's the new environment variable called?",
            "What setting do I have to add on the server?",
        ),
        Detail(
            "I opened pull request {v} for it.",
            lambda rng: f"#{rng.randint(1000, 9999)}",
            "What's the pull request number?",
            "Which PR should I review?",
        ),
    ),
)

DOMAINS: tuple[Domain, ...] = (TRAVEL, FINANCE, SUPPORT, RESEARCH, CODING)


def request(rng: random.Random, domain: Domain) -> str:
    return _fill(rng, rng.choice(domain.requests))


def tool_call(rng: random.Random, domain: Domain) -> tuple[str, dict[str, object], Output]:
    tool = rng.choice(domain.tools)
    name = str(tool.definition["function"]["name"])  # type: ignore[index]
    return name, tool.arguments(rng), rng.choice(tool.outputs)


def prose(rng: random.Random, domain: Domain) -> str:
    """An answer in one of the shapes real ones take, naming other places, people and sums."""
    sentences = domain.sentences

    def pick(count: int) -> list[str]:
        return rng.sample(sentences, min(count, len(sentences)))

    shape = rng.randrange(8)
    if shape == 0:
        return pick(1)[0]
    if shape == 1:
        return "Here's what I found:\n\n" + "\n".join(f"- {s}" for s in pick(rng.randint(3, 5)))
    if shape == 2:
        steps = pick(rng.randint(3, 5))
        return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n\nShall I go ahead?"
    if shape == 3:
        rows = "\n".join(
            f"| {_fill(rng, '{city}')} | {rng.randint(20, 900)} | {s} |" for s in pick(3)
        )
        return f"| option | cost | note |\n|---|---:|---|\n{rows}"
    if shape == 4:
        return (
            f"Draft:\n\n> Hi {rng.choice(PEOPLE).split()[0]},\n>\n> {' '.join(pick(2))}\n>\n"
            f"> Best,\n> the team\n\nWant me to send it?"
        )
    if shape == 5:
        return _fill(
            rng,
            "I compared {n} options. The one in {city} is {amount} all in; the one in {other} "
            "is cheaper but {person} mentioned it had issues last {month}. " + " ".join(pick(2)),
        )
    if shape == 6:
        return "\n\n".join(" ".join(pick(rng.randint(2, 3))) for _ in range(rng.randint(2, 4)))
    return f"**Short answer:** {pick(1)[0]}\n\n**Details:** {' '.join(pick(3))}"


STEP_TEXTS = (
    None,
    None,
    None,
    "Let me look that up.",
    "Checking two things at once.",
    "I'll pull the details first.",
    "One moment, searching.",
)
