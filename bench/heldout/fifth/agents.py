"""The five agents of the fifth set: an insurance claims handler, a school office
administrator, a restaurant's stock-and-ordering assistant, an analytics (SQL) agent and a
grant-writing assistant. Their tools answer in shapes the earlier sets lack: HTML snippets,
CSV with quoted commas and embedded quotes, JSON lines, unified diffs, iCalendar (ICS)
events, raw e-mail headers, markdown tables, and stack dumps from Java, Go, Node.js, .NET and
Rust.

Tool output names many people, places, sums and codes; none of them is a value the user
states (the generator checks that for every session).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

# What the generators call as this module's own words.
from bench.heldout.material import call_id as call_id
from bench.heldout.material import code as code
from bench.heldout.sets import Agent, Detail, Output, Tool
from bench.heldout.sets import pick as _pick

PEOPLE = (
    "Abebe Girma",
    "Ana Paula Ribeiro",
    "Barış Aydın",  # noqa: RUF001
    "Chiamaka Eze",
    "Dagny Lindqvist",
    "Emeka Nwosu",
    "Fatuma Njeri",
    "Gergely Tóth",
    "Hana Novotná",
    "Ioana Dumitrescu",
    "Jomo Kariuki",
    "Kalani Akana",
    "Lucía Ferreyra",
    "Marek Zieliński",
    "Nanami Ishikawa",
    "Oluwaseun Adeyemi",
    "Priya Raghunathan",
    "Quang Vũ",
    "Rosa Mbatha",
    "Szymon Kowal",
    "Tiihu Ahonen",
    "Uzma Chaudhry",
    "Vusi Khumalo",
    "Wen Jiahui",
)
PLACES = (
    "Porto",
    "Cluj",
    "Izmir",
    "Mombasa",
    "Debrecen",
    "Brno",
    "Kumasi",
    "Tampere",
    "Curitiba",
    "Gdańsk",
    "Arusha",
    "Kochi",
)


def _count(rng: random.Random, low: int = 2, high: int = 90) -> int:
    # Mostly short, now and then long: the heavy tail real tool output has.
    return max(low, min(high, int(rng.lognormvariate(2.0, 1.0))))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _stamp(rng: random.Random) -> str:
    return f"{_date(rng)}T{rng.randint(6, 21):02d}:{rng.randint(0, 59):02d}:00Z"


def _money(rng: random.Random) -> str:
    return f"{rng.randint(3, 9000)}.{rng.randint(0, 99):02d}"


def _tool(tool: str, description: str, **properties: str) -> dict[str, object]:
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
                "required": list(properties)[:1],
            },
        },
    }


def _csv_cell(text: str) -> str:
    """A CSV cell as a spreadsheet writes it: quoted when it holds a comma or a quote."""
    if any(c in text for c in ',"\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [",".join(headers)]
    lines.extend(",".join(_csv_cell(c) for c in row) for row in rows)
    return "\r\n".join(lines)


def _md(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return "\n".join(lines)


def _email(rng: random.Random, subject: str, body: str) -> str:
    sender = rng.choice(PEOPLE)
    user = sender.split()[0].lower().encode("ascii", "ignore").decode() or "office"
    return (
        f"Return-Path: <{user}@mail.example.org>\n"
        f"Received: from mx{rng.randint(1, 9)}.example.org (mx.example.org [192.0.2."
        f"{rng.randint(1, 254)}])\n\tby inbound.example.net with ESMTPS id {code(rng, 10)}\n"
        f"DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=sel{rng.randint(1, 3)}; "
        f"bh={code(rng, 22)}=\n"
        f"Message-ID: <{code(rng, 12).lower()}@example.org>\n"
        f"Date: {rng.choice(('Mon', 'Tue', 'Wed', 'Thu', 'Fri'))}, {rng.randint(1, 28)} "
        f"{rng.choice(('Mar', 'Apr', 'May', 'Jun', 'Sep', 'Oct'))} 2026 "
        f"{rng.randint(7, 19):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
        f"+0{rng.randint(0, 3)}00\n"
        f"From: {sender} <{user}@example.org>\n"
        f"Subject: {subject}\n"
        "Content-Type: text/plain; charset=utf-8\n\n"
        f"{body}"
    )


def _ics(rng: random.Random, summaries: tuple[str, ...]) -> str:
    events = []
    for _ in range(_count(rng, 1, 12)):
        day = _date(rng).replace("-", "")
        hour = rng.randint(7, 18)
        events.append(
            "BEGIN:VEVENT\n"
            f"UID:{code(rng, 16).lower()}@calendar.example.org\n"
            f"DTSTAMP:{day}T000000Z\n"
            f"DTSTART;TZID=Europe/Lisbon:{day}T{hour:02d}0000\n"
            f"DTEND;TZID=Europe/Lisbon:{day}T{hour + 1:02d}3000\n"
            f"SUMMARY:{rng.choice(summaries)}\n"
            f"LOCATION:{rng.choice(PLACES)}\\, room {rng.randint(1, 40)}\n"
            f"ORGANIZER;CN={rng.choice(PEOPLE)}:mailto:office@example.org\n"
            "END:VEVENT"
        )
    return (
        "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//Example//Calendar 4.2//EN\n"
        + "\n".join(events)
        + "\nEND:VCALENDAR"
    )


def _diff(rng: random.Random, path: str, lines: tuple[str, ...]) -> str:
    chosen = rng.sample(lines, min(len(lines), rng.randint(3, 6)))
    start = rng.randint(3, 300)
    body = []
    for line in chosen:
        mark = rng.choice(" -+")
        body.append(f"{mark}{line}")
    removed = sum(1 for b in body if b[0] != "+")
    added = sum(1 for b in body if b[0] != "-")
    return (
        f"diff --git a/{path} b/{path}\nindex {code(rng, 7).lower()}..{code(rng, 7).lower()} "
        f"100644\n--- a/{path}\n+++ b/{path}\n@@ -{start},{removed} +{start},{added} @@\n"
        + "\n".join(body)
    )


def _java(rng: random.Random, package: str) -> str:
    frames = "\n".join(
        f"\tat {package}.{rng.choice(('Repo', 'Service', 'Mapper', 'Job'))}"
        f"{rng.randint(1, 9)}.{rng.choice(('load', 'apply', 'run', 'lambda$0'))}"
        f"({rng.choice(('Repo', 'Service', 'Mapper'))}.java:{rng.randint(20, 900)})"
        for _ in range(_count(rng, 4, 30))
    )
    return (
        f'Exception in thread "worker-{rng.randint(1, 16)}" java.lang.IllegalStateException: '
        f"row {rng.randint(1, 9999)} has no key\n{frames}\nCaused by: "
        "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, "
        f"request timed out after {rng.randint(1000, 30000)}ms.\n\t... {rng.randint(3, 40)} more"
    )


def _go(rng: random.Random) -> str:
    frames = "\n".join(
        f"main.{rng.choice(('syncRows', 'flush', 'parseLine', 'handle'))}"
        f"(0xc000{code(rng, 6).lower()}"
        f", 0x{rng.randint(1, 255):x})\n\t/src/app/{rng.choice(('sync', 'io', 'rows'))}.go:"
        f"{rng.randint(10, 400)} +0x{rng.randint(16, 4000):x}"
        for _ in range(_count(rng, 2, 14))
    )
    return (
        "panic: runtime error: index out of range [" + str(rng.randint(1, 99)) + "] with length "
        f"{rng.randint(0, 9)}\n\ngoroutine {rng.randint(1, 400)} [running]:\n{frames}\n"
        "exit status 2"
    )


def _node(rng: random.Random) -> str:
    frames = "\n".join(
        f"    at {rng.choice(('Object.render', 'async Promise.all', 'exports.submit', 'next'))}"
        f" (/srv/portal/{rng.choice(('lib', 'routes', 'node_modules/form-kit'))}/"
        f"{rng.choice(('index', 'submit', 'upload'))}.js:"
        f"{rng.randint(3, 700)}:{rng.randint(1, 60)})"
        for _ in range(_count(rng, 3, 16))
    )
    return (
        "TypeError: Cannot read properties of undefined (reading "
        f"'{rng.choice(('budgetLines', 'attachments', 'applicantId'))}')\n{frames}"
    )


def _dotnet(rng: random.Random) -> str:
    frames = "\n".join(
        f"   at Claims.Core.{rng.choice(('Ledger', 'Reserve', 'Payment'))}Service."
        f"{rng.choice(('Post', 'Validate', 'Settle'))}Async(Int32 id) in "
        f"C:\\build\\src\\Claims.Core\\Services.cs:line {rng.randint(10, 600)}"
        for _ in range(_count(rng, 3, 18))
    )
    return (
        "System.InvalidOperationException: Sequence contains no matching element\n"
        f"{frames}\n--- End of stack trace from previous location ---"
    )


def _rust(rng: random.Random) -> str:
    return (
        f"thread 'main' panicked at src/ingest.rs:{rng.randint(10, 500)}:{rng.randint(5, 40)}:\n"
        "called `Result::unwrap()` on an `Err` value: ParseIntError { kind: InvalidDigit }\n"
        "stack backtrace:\n"
        + "\n".join(
            f"  {i}: "
            + rng.choice(("core::panicking::panic_fmt", "ingest::read_row", "ingest::main"))
            for i in range(_count(rng, 3, 20))
        )
        + "\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose "
        "backtrace."
    )


# ---- insurance claims ---------------------------------------------------------------------

PERILS = ("escape of water", "storm", "theft", "accidental damage", "subsidence", "fire")


def claim_lines(rng: random.Random) -> str:
    return "\n".join(
        json.dumps(
            {
                "claim": f"CLM-{rng.randint(100000, 999999)}",
                "insured": rng.choice(PEOPLE),
                "peril": rng.choice(PERILS),
                "reserve": _money(rng),
                "status": rng.choice(("open", "open", "referred", "settled", "declined")),
                "updated": _stamp(rng),
            },
            ensure_ascii=False,
        )
        for _ in range(_count(rng, 1, 40))
    )


def policy_csv(rng: random.Random) -> str:
    rows = [
        (
            f"POL-{rng.randint(10000, 99999)}",
            rng.choice(PEOPLE),
            f"{rng.randint(1, 200)} {rng.choice(('Rua Direita', 'Main St', 'Kossuth Lajos u.'))}, "
            f"{rng.choice(PLACES)}",
            rng.choice(("Home, contents only", "Home, buildings and contents", 'Motor "comp"')),
            _money(rng),
        )
        for _ in range(_count(rng, 1, 35))
    ]
    return _csv(("policy", "holder", "address", "cover", "excess"), rows)


def adjuster_mail(rng: random.Random) -> str:
    return _email(
        rng,
        f"RE: CLM-{rng.randint(100000, 999999)} site visit",
        "Hi,\n\nVisited this morning. "
        + rng.choice(
            (
                "Damage consistent with the notified cause; moisture readings high in two rooms.",
                "Policyholder was not home, neighbour let me in. Photos attached.",
                "I'd recommend a drying company before any strip-out.",
            )
        )
        + f"\n\nInitial estimate {_money(rng)} EUR.\n\nRegards,\n{rng.choice(PEOPLE)}\n"
        "-- \nSent from my phone",
    )


def ledger_error(rng: random.Random) -> str:
    return _dotnet(rng)


def ledger_ok(rng: random.Random) -> str:
    return json.dumps(
        {"posted": True, "payment_id": f"PAY-{code(rng, 8)}", "amount": _money(rng)},
    )


CLAIMS = Agent(
    name="insurance claims",
    system=(
        "You help a household insurer's claims handler work their caseload: look up claims and "
        "policies, read adjusters' e-mails, post payments after the handler confirms."
    ),
    goal="Keep the handler's claims moving without losing anything they tell you.",
    tools=(
        Tool(
            _tool("search_claims", "Claims as JSON lines.", query="free text or a claim number"),
            lambda rng: {"query": rng.choice(PERILS)},
            (claim_lines,),
        ),
        Tool(
            _tool("policy_export", "Policies as CSV.", filter="holder name or postcode"),
            lambda rng: {"filter": rng.choice(PLACES)},
            (policy_csv,),
        ),
        Tool(
            _tool("read_mailbox", "The newest e-mail in a claim's mailbox.", claim="claim id"),
            lambda rng: {"claim": f"CLM-{rng.randint(100000, 999999)}"},
            (adjuster_mail,),
        ),
        Tool(
            _tool("post_payment", "Post a payment to the ledger.", claim="claim id", amount="EUR"),
            lambda rng: {"claim": f"CLM-{rng.randint(100000, 999999)}", "amount": _money(rng)},
            (ledger_ok, ledger_ok, ledger_error),
        ),
    ),
    requests=(
        "any new claims overnight?",
        "pull the {peril} claims from last week",
        "what did the adjuster say on the {place} one",
        "check the policy for {person}",
        "post the interim payment we agreed",
        "same again for the next claim in the queue",
        "which claims are still referred?",
        "status",
        "list open claims over 5k",
        "has {person} sent the photos yet?",
        "draft a holding letter for the {peril} claim, short",
        "next",
    ),
    sentences=(
        "Two claims came in overnight, both escape of water.",
        "The reserve looks low against the adjuster's estimate.",
        "I have not posted anything yet; waiting for your go-ahead.",
        "The policy covers contents only, so the ceiling repair is outside it.",
        "The excess is deducted before any payment.",
        "Three claims are still referred to underwriting.",
        "The photos have not arrived; I can chase by e-mail.",
        "The ledger rejected the last posting; nothing was paid twice.",
        "No fraud indicators flagged on this one.",
        "The drying company can start on Monday if approved.",
        "The loss date falls inside the policy period.",
        "I've drafted the holding letter below; it promises an update within ten working days.",
    ),
    details=(
        Detail(
            lambda rng: f"{rng.choice(('forty-one', 'sixty-three', 'eighty-seven'))} days",
            "How many days had the oldest referred claim been waiting, you said?",
            "How long has the longest-stuck file been sitting with underwriting?",
            sentence="The oldest referred claim has now waited {v} for underwriting.",
        ),
        Detail(
            lambda rng: f"DRY-{rng.randint(2000, 8999)}-{rng.choice('KLMNP')}",
            "What was the drying company's job reference you gave me?",
            "Which booking code did the dehumidifier contractor issue?",
            sentence="The drying company confirmed the booking as job {v}.",
        ),
        Detail(
            lambda rng: f"PAY-ZX{rng.randint(10000, 99999)}",
            "Which payment_id did the ledger give the interim payment?",
            "What reference came back when the money was released?",
            tool="post_payment",
            record='{{"posted": true, "payment_id": "{v}", "amount": "1250.00", '
            '"note": "interim"}}',
        ),
        Detail(
            _pick("Kandiyohi Roofing", "Ōtautahi Roofing", "Skagerrak Roofing"),
            "Which roofing firm did the adjuster's e-mail recommend?",
            "Who did the site inspector suggest for fixing the top of the house?",
            tool="read_mailbox",
            record=(
                "From: Loss Adjusting <desk@adjusters.example.org>\nSubject: RE: storm damage\n\n"
                "Tiles lifted on the rear slope. I recommend {v} for the repair; they can "
                "scaffold this week.\n"
            ),
        ),
    ),
)

# ---- school office ------------------------------------------------------------------------

CLASSES = ("7B", "8A", "9C", "10D", "11F", "12E", "5M", "6R")


def attendance_csv(rng: random.Random) -> str:
    rows = [
        (
            rng.choice(PEOPLE),
            rng.choice(CLASSES),
            rng.choice(("present", "present", "present", "late", "absent")),
            rng.choice(("", "", 'parent rang, "dentist"', "bus late, route 4", "ill, d&v")),
        )
        for _ in range(_count(rng, 3, 60))
    ]
    return _csv(("pupil", "class", "mark", "note"), rows)


def school_calendar(rng: random.Random) -> str:
    return _ics(
        rng,
        ("Parents' evening", "Year 9 options talk", "INSET day", "Sports day", "Fire drill"),
    )


def parent_mail(rng: random.Random) -> str:
    return _email(
        rng,
        rng.choice(("Absence", "Re: trip letter", "Lunch account", "uniform")),
        rng.choice(
            (
                "Hello, my son will be off tomorrow with a temperature. Thanks.",
                "Dear office, the trip form went missing in the bag again, can you resend?",
                "Hi — the lunch account shows a negative balance but I topped it up on Friday.",
            )
        )
        + "\n\nKind regards\n",
    )


def timetable(rng: random.Random) -> str:
    rows = [
        (
            f"P{period}",
            rng.choice(("Maths", "English", "Science", "History", "PE", "Art", "French")),
            f"R{rng.randint(1, 40)}",
            rng.choice(PEOPLE),
        )
        for period in range(1, rng.randint(3, 7))
    ]
    return _md(("period", "subject", "room", "teacher"), rows)


def mis_export_error(rng: random.Random) -> str:
    return _java(rng, "uk.school.mis")


SCHOOL = Agent(
    name="school office",
    system=(
        "You are the office assistant of a secondary school: attendance, parents' e-mails, the "
        "calendar, trips and cover. Never share a pupil's details outside the school."
    ),
    goal="Help the office manager get through the day's admin and remember what they decide.",
    tools=(
        Tool(
            _tool("attendance_export", "Today's marks as CSV.", group="class or year"),
            lambda rng: {"group": rng.choice(CLASSES)},
            (attendance_csv, attendance_csv, mis_export_error),
        ),
        Tool(
            _tool("school_calendar", "Events as iCalendar.", month="YYYY-MM"),
            lambda rng: {"month": _date(rng)[:7]},
            (school_calendar,),
        ),
        Tool(
            _tool("office_inbox", "The next unread parent e-mail.", folder="inbox folder"),
            lambda rng: {"folder": rng.choice(("parents", "absence", "trips"))},
            (parent_mail,),
        ),
        Tool(
            _tool("timetable", "A class's day as a markdown table.", group="class"),
            lambda rng: {"group": rng.choice(CLASSES)},
            (timetable,),
        ),
    ),
    requests=(
        "who's absent in {cls} today",
        "any parent emails?",
        "next one",
        "what's on the calendar next week",
        "print the {cls} timetable",
        "chase the missing trip forms",
        "register check",
        "did {person} reply about the lunch account",
        "ok same for {cls}",
        "draft the newsletter bit about sports day, two lines",
        "anything urgent?",
        "late list please",
    ),
    sentences=(
        "Four pupils are absent in that class, two with a parent's call logged.",
        "The calendar shows the options talk moved to the hall.",
        "There are six unread parent e-mails; none looks urgent.",
        "I have drafted a reply but not sent it.",
        "The trip is short of eleven consent forms.",
        "The lunch account top-up went through on Friday afternoon.",
        "Cover is arranged for period three.",
        "The MIS export failed once and worked on the retry.",
        "Sports day is pencilled for the last week of term.",
        "The late list has three repeat names this week.",
        "I've flagged the safeguarding note to the DSL only.",
        "Here's the newsletter paragraph — short and cheerful.",
    ),
    details=(
        Detail(
            lambda rng: f"{rng.choice(('twenty-six', 'thirty-four', 'nineteen'))} consent forms",
            "How many consent forms were still missing, you said?",
            "How many parents still hadn't signed the slip for the outing?",
            sentence="Update on the trip: {v} are still outstanding.",
        ),
        Detail(
            lambda rng: f"room {rng.choice(('G14', 'S2.07', 'B-basement 3'))}",
            "Which room did you book for the exam resits?",
            "Where will the kids sit their retakes?",
            sentence="I have booked {v} for the exam resits.",
        ),
        Detail(
            _pick("Orienteering at Kaszuby", "Planetarium Chorzów", "Mtwapa Creek field study"),
            "What was the SUMMARY of the trip event in the calendar?",
            "What outing did the diary show for the end of the month?",
            tool="school_calendar",
            record=(
                "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:trip-77@calendar.example.org\n"
                "DTSTART:20260619T083000\nSUMMARY:{v}\nEND:VEVENT\nEND:VCALENDAR"
            ),
        ),
        Detail(
            lambda rng: f"Mrs {rng.choice(('Oyelaran', 'Kiplagat', 'Hovhannisyan'))}",
            "Which parent's e-mail in the inbox asked about the lunch account refund?",
            "Whose mum wanted her money back for school dinners?",
            tool="office_inbox",
            record=(
                "From: {v} <parent@example.org>\nSubject: lunch account refund\n\nHello, we "
                "are leaving at half term, could the balance be refunded please?\n"
            ),
        ),
    ),
)

# ---- restaurant stock ---------------------------------------------------------------------

ITEMS = (
    "san marzano tomatoes",
    "00 flour",
    "double cream",
    "basmati rice",
    "ghee",
    "fish sauce",
    "tahini",
    "chickpeas",
    "limes",
    "coriander",
)


def stock_csv(rng: random.Random) -> str:
    rows = [
        (
            rng.choice(ITEMS),
            rng.choice(("case, 6 x 2.5kg", "tub 5L", "sack, 25kg", "bunch", 'box "large"')),
            str(rng.randint(0, 40)),
            str(rng.randint(2, 12)),
            rng.choice(("walk-in", "dry store", "bar fridge", "freezer 2")),
        )
        for _ in range(_count(rng, 3, 50))
    ]
    return _csv(("item", "pack", "on_hand", "par", "location"), rows)


def pos_lines(rng: random.Random) -> str:
    return "\n".join(
        json.dumps(
            {
                "ticket": rng.randint(10000, 99999),
                "table": rng.randint(1, 30),
                "item": rng.choice(("dal makhani", "cacio e pepe", "mezze board", "pho bo")),
                "qty": rng.randint(1, 4),
                "ts": _stamp(rng),
                "void": rng.random() < 0.05,
            }
        )
        for _ in range(_count(rng, 2, 60))
    )


def supplier_invoice(rng: random.Random) -> str:
    rows = "".join(
        f'\n    <tr><td>{rng.choice(ITEMS)}</td><td class="qty">{rng.randint(1, 20)}</td>'
        f'<td class="amt">&euro;{_money(rng)}</td></tr>'
        for _ in range(_count(rng, 1, 20))
    )
    return (
        f'<div class="invoice" data-supplier="{rng.choice(PLACES)} Wholesale">\n  <h2>Invoice '
        f"INV-{rng.randint(10000, 99999)}</h2>\n  <table>\n    <tr><th>Item</th><th>Qty</th>"
        f'<th>Amount</th></tr>{rows}\n  </table>\n  <p class="terms">Payment due in 30 days'
        "&nbsp;&mdash; thank you!</p>\n</div>"
    )


def recipe_diff(rng: random.Random) -> str:
    return _diff(
        rng,
        f"recipes/{rng.choice(('dal', 'focaccia', 'mezze', 'pho'))}.md",
        (
            "- 2 kg chickpeas, soaked overnight",
            "- 400 ml double cream",
            "- salt to taste",
            "Simmer for 40 minutes, stirring.",
            "- 1 bunch coriander, chopped",
            "Rest the dough 2 hours.",
            "- 150 g ghee",
        ),
    )


def order_error(rng: random.Random) -> str:
    return _go(rng)


def order_ok(rng: random.Random) -> str:
    return json.dumps({"order": f"PO-{code(rng, 6)}", "lines": rng.randint(1, 14), "ok": True})


KITCHEN = Agent(
    name="restaurant stock",
    system=(
        "You run stock and ordering for a restaurant group's kitchen: counts, par levels, "
        "supplier invoices and orders. Confirm with the head chef before placing an order."
    ),
    goal="Keep the kitchen stocked without waste and remember what the chef decides.",
    tools=(
        Tool(
            _tool("stock_count", "The latest count as CSV.", store="walk-in, dry store ..."),
            lambda rng: {"store": rng.choice(("walk-in", "dry store", "all"))},
            (stock_csv,),
        ),
        Tool(
            _tool("pos_sales", "Tills' sales as JSON lines.", since="ISO time"),
            lambda rng: {"since": _stamp(rng)},
            (pos_lines,),
        ),
        Tool(
            _tool("supplier_invoice", "An invoice's HTML.", supplier="supplier name"),
            lambda rng: {"supplier": rng.choice(PLACES)},
            (supplier_invoice,),
        ),
        Tool(
            _tool("recipe_history", "The last change to a recipe card.", dish="dish"),
            lambda rng: {"dish": rng.choice(("dal", "focaccia", "pho"))},
            (recipe_diff,),
        ),
        Tool(
            _tool("place_order", "Send an order.", supplier="supplier", lines="JSON lines"),
            lambda rng: {"supplier": rng.choice(PLACES), "lines": "[]"},
            (order_ok, order_ok, order_error),
        ),
    ),
    requests=(
        "count the walk-in",
        "what's below par",
        "how many {dish} did we sell last night",
        "check the invoice from {place}",
        "order the usual",
        "same as yesterday",
        "did the recipe card for {dish} change?",
        "stock?",
        "we're out of {item}??",
        "place it",
        "what's the waste looking like this week",
        "reorder {item}",
    ),
    sentences=(
        "Five items are below par, mostly dairy.",
        "Last night's tills show the dal outselling everything else.",
        "The invoice matches the order except for one short-delivered line.",
        "I have not placed the order; it needs your OK.",
        "The walk-in count is done; two items were not found.",
        "The recipe card changed last week: less cream, more stock.",
        "Waste is down on last week, mainly on herbs.",
        "The order went through; delivery is tomorrow before ten.",
        "The supplier's price for ghee went up again.",
        "Freezer 2 is nearly full.",
        "The order service errored once; nothing was sent twice.",
        "Chickpeas need soaking tonight for tomorrow's prep.",
    ),
    details=(
        Detail(
            lambda rng: f"{rng.choice(('nine', 'fourteen', 'seventeen'))} litres of double cream",
            "How much double cream did you say we wasted?",
            "What did we bin from the dairy last week?",
            sentence="Biggest waste this week: {v}, past its date in the bar fridge.",
        ),
        Detail(
            lambda rng: f"{rng.choice(('Zanzibar', 'Kerala', 'Sri Lankan'))} black pepper",
            "Which pepper did you suggest switching to?",
            "What cheaper spice swap did you propose?",
            sentence="To save money, I suggest switching to {v}, which is a third cheaper.",
        ),
        Detail(
            lambda rng: f"PO-QX{rng.randint(1000, 9999)}",
            "What order number came back when you placed the order?",
            "Which reference did the wholesaler's system give us for the delivery?",
            tool="place_order",
            record='{{"order": "{v}", "lines": 9, "ok": true, "delivery": "tomorrow 08:00"}}',
        ),
        Detail(
            lambda rng: f"€{rng.choice(('318.40', '1,092.15', '77.90'))}",
            "What was the total on the supplier invoice HTML?",
            "How much did the last wholesaler bill come to?",
            tool="supplier_invoice",
            record=(
                '<div class="invoice">\n  <table>\n    <tr class="total"><td>Total due</td>'
                '<td class="amt">{v}</td></tr>\n  </table>\n</div>'
            ),
        ),
    ),
)

# ---- analytics / SQL ----------------------------------------------------------------------

METRICS = ("weekly actives", "churn", "ARPU", "signups", "conversion", "refund rate")


def query_table(rng: random.Random) -> str:
    rows = [
        (
            _date(rng),
            rng.choice(("web", "ios", "android")),
            rng.choice(("PT", "TR", "KE", "NG", "HU", "PL", "BR")),
            str(rng.randint(10, 90000)),
            f"{rng.random():.4f}",
        )
        for _ in range(_count(rng, 2, 60))
    ]
    return _md(("day", "platform", "country", "users", "rate"), rows)


def event_lines(rng: random.Random) -> str:
    return "\n".join(
        json.dumps(
            {
                "event": rng.choice(("page_view", "signup", "checkout", "refund")),
                "user_id": rng.randint(10**6, 10**7),
                "props": {"utm": rng.choice(("email", "paid", "organic")), "v": rng.randint(1, 9)},
                "at": _stamp(rng),
            }
        )
        for _ in range(_count(rng, 2, 50))
    )


def sql_diff(rng: random.Random) -> str:
    return _diff(
        rng,
        f"models/{rng.choice(('fct_orders', 'dim_users', 'mart_churn'))}.sql",
        (
            "select user_id, min(created_at) as first_seen",
            "from {{ ref('stg_events') }}",
            "where event <> 'test'",
            "  and country is not null",
            "group by 1",
            "left join refunds r using (order_id)",
            "qualify row_number() over (partition by user_id order by at desc) = 1",
        ),
    )


def job_failure(rng: random.Random) -> str:
    return rng.choice((_rust, _java_sql, _node))(rng)


def _java_sql(rng: random.Random) -> str:
    return _java(rng, "com.example.warehouse")


def job_ok(rng: random.Random) -> str:
    return (
        f"{rng.randint(2, 40)} models OK, 0 errors, {rng.randint(0, 5)} warnings in "
        f"{rng.randint(20, 900)}s"
    )


ANALYTICS = Agent(
    name="analytics SQL",
    system=(
        "You are an analytics engineer's assistant: write and run SQL against the warehouse, "
        "read model diffs, explain metrics. Never run DELETE or DROP."
    ),
    goal="Answer the analyst's metric questions and keep their definitions straight.",
    tools=(
        Tool(
            _tool("run_sql", "Run a query; rows as a markdown table.", sql="the query"),
            lambda rng: {"sql": f"select * from mart_{rng.choice(('churn', 'orders'))} limit 50"},
            (query_table,),
        ),
        Tool(
            _tool("sample_events", "Raw events as JSON lines.", event="event name"),
            lambda rng: {"event": rng.choice(("signup", "checkout", "refund"))},
            (event_lines,),
        ),
        Tool(
            _tool("model_diff", "The last change to a model.", model="model name"),
            lambda rng: {"model": rng.choice(("fct_orders", "dim_users"))},
            (sql_diff,),
        ),
        Tool(
            _tool("run_job", "Run the warehouse build.", selector="model selector"),
            lambda rng: {"selector": rng.choice(("+mart_churn", "tag:daily"))},
            (job_ok, job_ok, job_failure),
        ),
    ),
    requests=(
        "{metric} by country last 7 days",
        "rerun that for android only",
        "why did {metric} jump on tuesday",
        "show me raw signup events",
        "what changed in fct_orders",
        "run the daily build",
        "same query, last month",
        "did the build pass",
        "explain {metric} like I'm the CEO",
        "split by platform",
        "again",
        "export that to the sheet",
    ),
    sentences=(
        "Weekly actives are flat; the jump on Tuesday is one country.",
        "The spike lines up with an e-mail campaign.",
        "The build passed with two warnings about null countries.",
        "I excluded test accounts, as before.",
        "The diff adds a refunds join; that explains the lower revenue.",
        "Android churn is higher than iOS, but the sample is small.",
        "The query scanned about 3 GB.",
        "Signups from paid traffic doubled week on week.",
        "The model failed once on a connection timeout and passed on retry.",
        "Here is the query; it groups by day and platform.",
        "Conversion is defined on sessions, not users.",
        "I'd rather not compare months of different length without normalising.",
    ),
    details=(
        Detail(
            lambda rng: f"{rng.choice(('4.7', '6.2', '3.9'))} percentage points",
            "By how many percentage points did churn move after the refunds join?",
            "How big was the drop once the returns table was added to the model?",
            sentence="With the refunds join, churn moves by {v} in March.",
        ),
        Detail(
            _pick("is_internal_tester", "is_staff_seed", "qa_cohort_flag"),
            "Which column did you filter the test accounts out with?",
            "How do we tell our own QA users apart in the data?",
            sentence="I filter test accounts out with the `{v}` column.",
        ),
        Detail(
            lambda rng: f"mart_{rng.choice(('ltv', 'cohort', 'funnel'))}_v{rng.randint(2, 9)}",
            "Which model did the failed build stop at?",
            "Where in the pipeline did last night's run fall over?",
            tool="run_job",
            record=(
                "1 of 12 START sql table model {v} ..... [RUN]\n"
                "1 of 12 ERROR creating sql table model {v} ..... [ERROR in 3.2s]\n"
                "Database Error: division by zero"
            ),
        ),
        Detail(
            lambda rng: f"{rng.choice(('0.0731', '0.1184', '0.0526'))}",
            "What rate did the query show for Kenya on web?",
            "What was the KE web figure in the last table?",
            tool="run_sql",
            record="| day | platform | country | users | rate |\n|---|---|---|---|---|\n"
            "| 2026-03-02 | web | KE | 4410 | {v} |",
        ),
    ),
)

# ---- grant writing ------------------------------------------------------------------------

FUNDERS = ("Lumen Trust", "Baobab Fund", "Nordlys Stiftelse", "Ceiba Foundation")


def budget_csv(rng: random.Random) -> str:
    rows = [
        (
            rng.choice(
                (
                    "Coordinator, 0.5 FTE",
                    'Venue hire, "community hall"',
                    "Travel, local",
                    "Evaluation, external",
                    "Laptops, 4 units",
                )
            ),
            rng.choice(("staff", "running", "capital")),
            _money(rng),
            rng.choice(("", "match-funded", "in kind, from partner")),
        )
        for _ in range(_count(rng, 3, 30))
    ]
    return _csv(("line", "category", "amount", "note"), rows)


def funder_page(rng: random.Random) -> str:
    return (
        f'<section class="call">\n  <h1>{rng.choice(FUNDERS)} — open call</h1>\n  <ul>\n'
        f"    <li>Grants from &pound;{rng.randint(5, 20)}k to &pound;{rng.randint(30, 150)}k</li>"
        "\n    <li>Registered charities &amp; CICs only</li>\n    <li>Deadline: "
        f'{_date(rng)} at noon</li>\n  </ul>\n  <p>Read the <a href="/guidance.pdf">guidance'
        "</a> before applying.</p>\n</section>"
    )


def draft_diff(rng: random.Random) -> str:
    return _diff(
        rng,
        "proposal/needs_statement.md",
        (
            "Young carers in the borough miss on average a day of school a week.",
            "We will reach 120 families in the first year.",
            "Our partners include the library service and two GP surgeries.",
            "Outcomes will be measured with the WEMWBS scale.",
            "The project builds on a 2024 pilot.",
            "Sessions run after school, twice a week.",
        ),
    )


def portal_error(rng: random.Random) -> str:
    return _node(rng)


def portal_ok(rng: random.Random) -> str:
    return json.dumps({"saved": True, "section": rng.choice(("budget", "outcomes", "summary"))})


GRANTS = Agent(
    name="grant writing",
    system=(
        "You help a small charity's fundraiser write and submit grant applications: funders' "
        "calls, the budget sheet, drafts and the submission portal. Submit only when told."
    ),
    goal="Get the applications in on time and keep the figures consistent.",
    tools=(
        Tool(
            _tool("budget_sheet", "The project budget as CSV.", tab="sheet tab"),
            lambda rng: {"tab": rng.choice(("year 1", "year 2", "summary"))},
            (budget_csv,),
        ),
        Tool(
            _tool("funder_call", "A funder's call page (HTML).", funder="funder name"),
            lambda rng: {"funder": rng.choice(FUNDERS)},
            (funder_page,),
        ),
        Tool(
            _tool("draft_history", "The last edit to a section of the draft.", section="name"),
            lambda rng: {"section": "needs statement"},
            (draft_diff,),
        ),
        Tool(
            _tool("portal_save", "Save a section to the funder's portal.", section="name"),
            lambda rng: {"section": rng.choice(("budget", "outcomes"))},
            (portal_ok, portal_ok, portal_error),
        ),
    ),
    requests=(
        "what does {funder} fund",
        "tighten the needs statement",
        "check the budget adds up",
        "save the outcomes section",
        "what changed in the draft",
        "word count?",
        "same for the year 2 tab",
        "is the evaluation line too high",
        "draft the summary, 150 words",
        "save again",
        "any deadlines this month",
        "ok",
    ),
    sentences=(
        "The budget adds up; the staff lines are sixty per cent of the total.",
        "The funder wants outcomes, not activities, in that section.",
        "The needs statement is 40 words over the limit.",
        "The portal saved the section.",
        "The portal threw an error; I saved a copy locally.",
        "The evaluation line is high for a grant this size.",
        "They fund registered charities only, so the CIC partner cannot lead.",
        "I cut the passive voice and the jargon.",
        "Two deadlines fall this month.",
        "Here is the summary at 148 words.",
        "The match funding must be confirmed in writing.",
        "The draft now cites the 2024 pilot.",
    ),
    details=(
        Detail(
            lambda rng: f"{rng.choice(('312', '287', '455'))} words",
            "How long was the summary, in words, when you last counted?",
            "How long did you say the overview came to?",
            sentence="The project summary is now {v}, under the funder's limit.",
        ),
        Detail(
            _pick("Social Return on Investment", "Most Significant Change", "Outcomes Star"),
            "Which evaluation method did you recommend?",
            "How did you suggest we show the project worked?",
            sentence="For the evaluation, I'd recommend the {v} approach.",
        ),
        Detail(
            lambda rng: f"£{rng.choice(('18,400', '23,750', '9,980'))}",
            "What was the largest amount in the budget sheet?",
            "What's the biggest line we're asking for?",
            tool="budget_sheet",
            record='line,category,amount,note\r\n"Coordinator, 0.5 FTE",staff,{v},largest line',
        ),
        Detail(
            _pick("Thandiwe Mokoena", "Paulo Tuilagi", "Meseret Bekele"),
            "Who was named as programme officer on the funder's call page?",
            "Who at the funder should we ring with questions?",
            tool="funder_call",
            record=(
                '<section class="call">\n  <p>Questions? Contact the programme officer, '
                "<strong>{v}</strong>, before applying.</p>\n</section>"
            ),
        ),
    ),
)

AGENTS: tuple[Agent, ...] = (CLAIMS, SCHOOL, KITCHEN, ANALYTICS, GRANTS)

_FILL = {
    "peril": PERILS,
    "place": PLACES,
    "person": PEOPLE,
    "cls": CLASSES,
    "dish": ("dal", "focaccia", "mezze", "pho"),
    "item": ITEMS,
    "metric": METRICS,
    "funder": FUNDERS,
}


def request(rng: random.Random, agent: Agent) -> str:
    text = rng.choice(agent.requests)
    return text.format(**{key: rng.choice(values) for key, values in _FILL.items()})


def tool_call(rng: random.Random, agent: Agent) -> tuple[str, dict[str, object], Output]:
    tool = rng.choice(agent.tools)
    return tool.name, tool.arguments(rng), rng.choice(tool.outputs)


#: One-line status answers an assistant gives to routine requests.
STATUS = (
    "✓ done",
    "Done, nothing new.",
    "No changes since last time.",
    "All clear.",
    "Updated.",
    "Still waiting on that one.",
    "OK — same as before.",
)


def prose(rng: random.Random, agent: Agent) -> str:
    """An answer of one of the lengths and shapes real ones take."""
    sentences = agent.sentences

    def pick(count: int) -> list[str]:
        return rng.sample(sentences, min(count, len(sentences)))

    shape = rng.randrange(9)
    if shape == 0:
        return rng.choice(STATUS)
    if shape == 1:
        return pick(1)[0]
    if shape == 2:
        return "\n".join(f"* {s}" for s in pick(rng.randint(2, 5)))
    if shape == 3:
        return "**Summary**\n\n" + " ".join(pick(3)) + "\n\n**Next**\n\n" + pick(1)[0]
    if shape == 4:
        rows = [(str(i), s) for i, s in enumerate(pick(rng.randint(2, 4)), 1)]
        return _md(("#", "note"), rows)
    if shape == 5:
        return " ".join(pick(rng.randint(4, 8)))
    if shape == 6:
        return f"{pick(1)[0]} Want me to go ahead?"
    if shape == 7:
        return "\n\n".join(" ".join(pick(2)) for _ in range(rng.randint(2, 4)))
    return f"{rng.choice(STATUS)} {pick(1)[0]}"


STEP_TEXTS = (
    None,
    None,
    None,
    "Checking.",
    "Pulling that now.",
    "Let me look at two things.",
)
