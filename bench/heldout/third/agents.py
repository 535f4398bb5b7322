"""The five agents of the third set: a clinic's scheduling desk, a renovation contractor's
office, a recruiting team, a wedding and event planner, and an on-call engineer. Each has its
own tools and tool output (calendars, patient and candidate records, quotes, guest lists,
logs, alerts, e-mails), its own requests, and the sentences its answers are made of.

Tool output names many people, places, sums and codes; none of them is a value the user
states (the generator checks that for every session), though some come close to one.
"""

from __future__ import annotations

import json
import random

# What the generators call as this module's own words.
from bench.heldout.material import call_id as call_id
from bench.heldout.material import code as code
from bench.heldout.sets import Agent, Detail, Output, Tool
from bench.heldout.sets import pick as _pick

PEOPLE = (
    "Amara Nwachukwu",
    "Bruno Tavares",
    "Céline Marchand",
    "Dewi Lestari",
    "Eero Salonen",
    "Fatuma Achieng",
    "Gheorghe Popa",
    "Hana Dvořáková",
    "Iwan Setiawan",
    "Joana Ribeiro",
    "Kaveh Rostami",
    "Liesl Brandt",
    "Marisol Quiroga",
    "Nnamdi Okoro",
    "Oskar Lindqvist",
    "Priyanka Sen",
    "Quentin Laforge",
    "Rahim Chowdhury",
    "Siosaia Taufa",
    "Tereza Horáková",
    "Uchenna Obi",
    "Valentina Rossi",
    "Wanjiru Kamau",
    "Ximena Paredes",
    "Yuki Tanabe",
    "Zsófia Kertész",
)
DOCTORS = ("Dr. Okoro", "Dr. Lindqvist", "Dr. Marchand", "Dr. Setiawan", "Dr. Brandt", "Dr. Sen")
CITIES = (
    "Lisbon",
    "Lyon",
    "Leipzig",
    "Bandung",
    "Mombasa",
    "Tampere",
    "Brno",
    "Cluj-Napoca",
    "Dhaka",
    "Cebu",
    "Porto",
    "Graz",
    "Tartu",
    "Kisumu",
    "Surabaya",
    "Iași",
)
STREETS = (
    "Rua das Flores",
    "Avenue Jean Jaurès",
    "Lindenstraße",
    "Jalan Braga",
    "Moi Avenue",
    "Hämeenkatu",
    "Masarykova",
    "Strada Memorandumului",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "May", "June", "July", "October", "November")


def _count(rng: random.Random, low: int = 2, high: int = 120) -> int:
    # Mostly short, now and then long: the heavy tail real tool output has.
    return max(low, min(high, int(rng.lognormvariate(2.2, 1.0))))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(7, 18):02d}:{rng.choice((0, 15, 30, 45)):02d}"


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


# ---- clinic -------------------------------------------------------------------------------

VISITS = ("follow-up", "new patient", "vaccination", "blood draw", "telehealth", "physio")


def clinic_calendar(rng: random.Random) -> str:
    lines = [f"SCHEDULE {rng.choice(DOCTORS)} — {_date(rng)}", "time  | patient | type | room"]
    for _ in range(_count(rng, 3, 40)):
        lines.append(
            f"{_clock(rng)} | {rng.choice(PEOPLE)} | {rng.choice(VISITS)} | "
            f"{rng.choice(('A1', 'A2', 'B4', 'tele'))}"
        )
    return "\n".join(lines)


def patient_record(rng: random.Random) -> str:
    return json.dumps(
        {
            "mrn": f"MRN{rng.randint(100000, 999999)}",
            "name": rng.choice(PEOPLE),
            "dob": f"19{rng.randint(40, 99)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "phone": f"+{rng.randint(30, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
            "insurer": rng.choice(("Allianz Care", "AXA", "Medicover", "NHIF", "PhilHealth")),
            "last_visit": _date(rng),
            "flags": rng.sample(["interpreter", "wheelchair", "late-prone", "minor"], 2),
        },
        indent=rng.choice((None, 2)),
        ensure_ascii=False,
    )


def eligibility(rng: random.Random) -> str:
    return json.dumps(
        {
            "status": rng.choice(("active", "active", "pending", "lapsed")),
            "copay": f"{rng.randint(0, 60)}.00",
            "prior_auth_required": rng.choice((True, False)),
            "checked_at": f"{_date(rng)}T{_clock(rng)}:00Z",
        }
    )


def reminder_log(rng: random.Random) -> str:
    return "\n".join(
        f"{_date(rng)} {_clock(rng)} SMS to {rng.choice(PEOPLE)}: "
        f"{rng.choice(('delivered', 'delivered', 'failed: unreachable', 'replied C'))}"
        for _ in range(_count(rng, 2, 30))
    )


# ---- renovation ---------------------------------------------------------------------------

MATERIALS = (
    "plasterboard 12.5mm",
    "porcelain tile 60x60",
    "oak flooring",
    "copper pipe 15mm",
    "primer 10L",
    "grout (grey)",
    "insulation roll",
    "LED downlight",
    "vapour barrier",
)


def materials_quote(rng: random.Random) -> str:
    rows = ["item | qty | unit | unit price | line"]
    for _ in range(_count(rng, 2, 30)):
        qty, price = rng.randint(1, 80), rng.randint(2, 240)
        rows.append(
            f"{rng.choice(MATERIALS)} | {qty} | {rng.choice(('pcs', 'm2', 'box'))} | {price}.00 | "
            f"{qty * price}.00"
        )
    return "\n".join(rows) + f"\nquote ref Q-{code(rng, 5)}, valid 14 days"


def crew_schedule(rng: random.Random) -> str:
    return json.dumps(
        [
            {
                "date": _date(rng),
                "crew": rng.choice(("tiling", "electrics", "plumbing", "joinery", "painting")),
                "lead": rng.choice(PEOPLE),
                "site": f"{rng.randint(2, 90)} {rng.choice(STREETS)}, {rng.choice(CITIES)}",
            }
            for _ in range(_count(rng, 1, 25))
        ],
        ensure_ascii=False,
    )


def permit_status(rng: random.Random) -> str:
    return (
        f"Application {rng.choice(CITIES).upper()}-{rng.randint(2025, 2026)}-"
        f"{rng.randint(1000, 9999)}\n"
        f"Status: {rng.choice(('received', 'under review', 'approved with conditions'))}\n"
        f"Officer: {rng.choice(PEOPLE)}\nNext step: "
        + rng.choice(("site inspection", "structural calculations", "neighbour consultation"))
    )


def supplier_stock(rng: random.Random) -> str:
    return json.dumps(
        {
            "supplier": rng.choice(("BuildMart", "Ferro Norte", "Bauhaus", "Mitra10")),
            "items": [
                {
                    "sku": code(rng, 8),
                    "name": rng.choice(MATERIALS),
                    "in_stock": rng.randint(0, 400),
                    "lead_days": rng.randint(0, 21),
                }
                for _ in range(_count(rng, 1, 20))
            ],
        }
    )


# ---- recruiting ---------------------------------------------------------------------------

ROLES = (
    "Backend Engineer",
    "Data Analyst",
    "Account Executive",
    "Product Designer",
    "Nurse Practitioner",
    "Warehouse Lead",
)


def candidate_search(rng: random.Random) -> str:
    return json.dumps(
        {
            "total": rng.randint(3, 400),
            "results": [
                {
                    "id": f"cand_{code(rng, 7).lower()}",
                    "name": rng.choice(PEOPLE),
                    "title": rng.choice(ROLES),
                    "location": rng.choice(CITIES),
                    "years": rng.randint(0, 22),
                    "stage": rng.choice(("applied", "screen", "onsite", "offer", "rejected")),
                }
                for _ in range(_count(rng, 1, 25))
            ],
        },
        indent=rng.choice((None, 2)),
        ensure_ascii=False,
    )


def interview_slots(rng: random.Random) -> str:
    return "\n".join(
        f"BEGIN:VEVENT\nSUMMARY:Interview – {rng.choice(ROLES)} – {rng.choice(PEOPLE)}\n"  # noqa: RUF001
        f"DTSTART:{_date(rng).replace('-', '')}T{rng.randint(8, 17):02d}0000Z\n"
        f"ATTENDEE:{rng.choice(PEOPLE).split()[0].lower()}@example.org\nEND:VEVENT"
        for _ in range(_count(rng, 1, 12))
    )


def resume_text(rng: random.Random) -> str:
    person = rng.choice(PEOPLE)
    jobs = "\n".join(
        f"- {rng.randint(2010, 2025)}–{rng.choice(('now', '2024', '2022'))}: "  # noqa: RUF001
        f"{rng.choice(ROLES)} at {rng.choice(('Globex', 'Initech', 'Umbrella', 'Hooli'))}, "
        f"{rng.choice(CITIES)}"
        for _ in range(rng.randint(2, 6))
    )
    return f"{person}\n{rng.choice(CITIES)} · {person.split()[0].lower()}@mail.example\n\n{jobs}"


def email_thread(rng: random.Random) -> str:
    return (
        f"From: {rng.choice(PEOPLE)} <{code(rng, 5).lower()}@example.org>\n"
        f"Subject: Re: {rng.choice(ROLES)} — next steps\n\n"
        + rng.choice(
            (
                "Thanks for the call today. I'm still interested, but my notice period is long.",
                "Could we move the panel? I have a conflict that afternoon.",
                "Attached are my references. Let me know if you need anything else.",
            )
        )
    )


# ---- events -------------------------------------------------------------------------------

VENDORS = (
    "Bloom & Twig",
    "Sonido Vivo",
    "Pâtisserie Lumière",
    "Studio Kilimanjaro",
    "Fotografia Azul",
    "Kapé Cebu Catering",
)


def vendor_search(rng: random.Random) -> str:
    return json.dumps(
        [
            {
                "vendor": rng.choice(VENDORS),
                "category": rng.choice(("florist", "band", "cake", "photo", "catering", "DJ")),
                "city": rng.choice(CITIES),
                "from_price": rng.randint(200, 9000),
                "rating": rng.randint(30, 50) / 10,
            }
            for _ in range(_count(rng, 2, 25))
        ],
        ensure_ascii=False,
    )


def guest_list(rng: random.Random) -> str:
    rows = ["name,side,rsvp,meal,table"]
    for _ in range(_count(rng, 4, 80)):
        rows.append(
            f"{rng.choice(PEOPLE)},{rng.choice(('bride', 'groom', 'both'))},"
            f"{rng.choice(('yes', 'yes', 'no', 'pending'))},"
            f"{rng.choice(('fish', 'beef', 'veg', 'kids'))},{rng.randint(1, 24)}"
        )
    return "\n".join(rows)


def venue_calendar(rng: random.Random) -> str:
    return "\n".join(
        f"{_date(rng)} {rng.choice(('Orangery', 'Garden Terrace', 'Great Hall'))}: "
        f"{rng.choice(('free', 'held', 'booked', 'free'))}"
        for _ in range(_count(rng, 3, 30))
    )


def event_budget(rng: random.Random) -> str:
    rows = ["| line | estimate | paid |", "|---|---:|---:|"]
    for line in rng.sample(("venue", "catering", "flowers", "music", "photo", "attire"), 4):
        rows.append(f"| {line} | {rng.randint(300, 12000)} | {rng.randint(0, 3000)} |")
    return "\n".join(rows)


# ---- on-call ------------------------------------------------------------------------------

SERVICES = ("checkout-api", "auth-svc", "search-indexer", "payments-worker", "edge-proxy")


def log_lines(rng: random.Random) -> str:
    return "\n".join(
        f"{_date(rng)}T{_clock(rng)}:{rng.randint(0, 59):02d}Z "
        f"{rng.choice(('ERROR', 'WARN', 'INFO', 'INFO'))} {rng.choice(SERVICES)} "
        + rng.choice(
            (
                "upstream connect error or disconnect/reset before headers",
                f"request took {rng.randint(900, 9000)}ms path=/v2/orders",
                "pool exhausted: 0 of 50 connections free",
                "retrying in 250ms",
                "healthcheck ok",
            )
        )
        for _ in range(_count(rng, 3, 80))
    )


def alerts(rng: random.Random) -> str:
    return json.dumps(
        {
            "alerts": [
                {
                    "name": rng.choice(("HighErrorRate", "LatencyP99", "DiskFull", "PodCrashLoop")),
                    "service": rng.choice(SERVICES),
                    "severity": rng.choice(("page", "ticket")),
                    "since": f"{_date(rng)}T{_clock(rng)}Z",
                }
                for _ in range(_count(rng, 1, 15))
            ]
        },
        indent=rng.choice((None, 2)),
    )


def metrics_table(rng: random.Random) -> str:
    rows = ["service            p50_ms  p99_ms  err_rate"]
    for service in rng.sample(SERVICES, 3):
        rows.append(
            f"{service:<18} {rng.randint(5, 90):>6}  {rng.randint(100, 4000):>6}  "
            f"{rng.randint(0, 900) / 100:.2f}%"
        )
    return "\n".join(rows)


def deploy_history(rng: random.Random) -> str:
    return "\n".join(
        f"{_date(rng)} {_clock(rng)} {rng.choice(SERVICES)} v{rng.randint(1, 9)}."
        f"{rng.randint(0, 40)}.{rng.randint(0, 9)} by {rng.choice(PEOPLE).split()[0].lower()} "
        f"({rng.choice(('success', 'success', 'rolled back'))})"
        for _ in range(_count(rng, 2, 30))
    )


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        person=rng.choice(PEOPLE),
        doctor=rng.choice(DOCTORS),
        city=rng.choice(CITIES),
        street=rng.choice(STREETS),
        day=rng.choice(WEEKDAYS),
        month=rng.choice(MONTHS),
        role=rng.choice(ROLES),
        vendor=rng.choice(VENDORS),
        service=rng.choice(SERVICES),
        material=rng.choice(MATERIALS),
        n=rng.randint(2, 40),
        amount=rng.randint(40, 9000),
        clock=_clock(rng),
    )


CLINIC = Agent(
    "clinic scheduling",
    "You are the scheduling assistant of a small outpatient clinic. You book, move and cancel "
    "appointments and send reminders; you never give medical advice.",
    "Keep the clinic's calendar full and right, and the front desk's day easy.",
    (
        Tool(
            _tool("get_schedule", "A clinician's day.", clinician="Who", date="Which day"),
            lambda rng: {"clinician": rng.choice(DOCTORS), "date": _date(rng)},
            (clinic_calendar,),
        ),
        Tool(
            _tool("find_patient", "Look a patient up.", query="Name, phone or MRN"),
            lambda rng: {"query": rng.choice(PEOPLE)},
            (patient_record,),
        ),
        Tool(
            _tool("check_eligibility", "Insurance eligibility.", mrn="Patient MRN"),
            lambda rng: {"mrn": f"MRN{rng.randint(100000, 999999)}"},
            (eligibility,),
        ),
        Tool(
            _tool("reminder_log", "SMS reminders sent.", date="From which day"),
            lambda rng: {"date": _date(rng)},
            (reminder_log,),
        ),
    ),
    (
        "can you squeeze {person} in with {doctor} sometime {day}?",
        "who's on {doctor}'s list tomorrow morning",
        "move {person}'s follow-up to the afternoon pls",
        "Did the reminder go out to {person}? She says she never got it.",
        "check if {person}'s insurance is still active before {day}",
        "how many no-shows did we have last week?",
        "any gaps on {day}? need a {n} minute slot",
        "pode remarcar a consulta da {person} para {day}?",
        "{person} rang, running {n} min late, is that ok or do we rebook",
        "kuna nafasi ya {doctor} siku ya {day}?",
        "cancel {person}'s {clock}, she's sick",
    ),
    (
        "The morning list is full; the first gap is after lunch.",
        "Two patients share that slot, so one of them has to move.",
        "The reminder bounced; the number on file looks incomplete.",
        "Eligibility came back active, with a copay on specialist visits.",
        "Telehealth slots are shorter, twenty minutes each.",
        "That clinician blocks the last hour for paperwork.",
        "Rebooking within the week keeps the patient's referral valid.",
        "The room is free, but the interpreter is not until later.",
        "Three patients on that day were flagged as needing a wheelchair-accessible room.",
    ),
    (
        Detail(
            _pick("B7", "C12", "D3", "A9"),
            "Which room did you put the vaccination clinic in?",
            "Where will the jabs be given?",
            sentence="I've moved the vaccination clinic to room {v} for the afternoon.",
        ),
        Detail(
            lambda rng: f"REF-{code(rng, 6)}",
            "What was the referral number you got?",
            "What code do we give the consultant's office?",
            sentence="The specialist accepted the referral; their number for it is {v}.",
        ),
        Detail(
            _pick("twenty-two", "seventeen", "thirty-one"),
            "How many patients did you say are overdue for recall?",
            "How big is the backlog of people we still need to call back?",
            sentence="I counted {v} patients overdue for their annual recall.",
        ),
        Detail(
            _pick("Kliniken Süd", "Policlínica Norte", "Centre Médical Bellevue"),
            "Which lab did you say handles the blood work now?",
            "Where do the samples get sent for analysis?",
            sentence="Blood work goes to {v} from this month, pickup at four.",
        ),
        Detail(
            lambda rng: f"INT-{rng.randint(1000, 9999)}",
            "What booking number did the interpreter service give?",
            "How do I confirm the translator's appointment?",
            tool="find_patient",
            record='{{"interpreter_booking": "{v}", "language": "Tagalog", "status": "confirmed"}}',
        ),
        Detail(
            _pick("Chiamaka Adebayo", "Rosalind Ferreira-Ngata", "Bartholomew Achterberg"),
            "Who is the covering clinician in the schedule?",
            "Which doctor stands in when ours is away?",
            tool="get_schedule",
            record="SCHEDULE locum\ncover: {v} (locum)\n09:00 | open | follow-up | A2",
        ),
    ),
)

RENOVATION = Agent(
    "renovation contractor",
    "You are the office assistant of a small renovation contractor: quotes, materials, crew "
    "schedules and permits. You never order or pay without the owner's yes.",
    "Keep the owner's jobs quoted, supplied, scheduled and legal.",
    (
        Tool(
            _tool("price_materials", "A materials quote.", items="What, how much"),
            lambda rng: {"items": f"{rng.choice(MATERIALS)} x{rng.randint(1, 60)}"},
            (materials_quote,),
        ),
        Tool(
            _tool("crew_schedule", "Who works where.", week="ISO week"),
            lambda rng: {"week": f"2026-W{rng.randint(1, 52):02d}"},
            (crew_schedule,),
        ),
        Tool(
            _tool("permit_status", "Building permit status.", application="Reference"),
            lambda rng: {"application": code(rng, 8)},
            (permit_status,),
        ),
        Tool(
            _tool("supplier_stock", "What a supplier has.", supplier="Which supplier"),
            lambda rng: {"supplier": rng.choice(("BuildMart", "Ferro Norte", "Mitra10"))},
            (supplier_stock,),
        ),
    ),
    (
        "price up {n} m2 of {material} for the {street} job",
        "who's free to do tiling {day}?",
        "has the permit for the {city} extension moved at all",
        "do we have {material} in stock or do i need to order",
        "write the client at {street} that we're a day behind, nicely",
        "what did we quote {person} for the loft?",
        "Kannst du {material} bei Bauhaus anfragen? {n} Stück",
        "cek stok {material} di Mitra10 dong",
        "how much is left on the {city} job after the last invoice",
        "crew for next week pls, I think {person} is off",
    ),
    (
        "The tile adhesive needs twenty-four hours before grouting.",
        "The supplier can deliver on the day but charges for the crane.",
        "The permit office usually asks for structural drawings at this stage.",
        "Labour is the bigger line; materials are about a third of the quote.",
        "The crew lead prefers an early start when the site has no parking.",
        "That wall is likely load-bearing; I'd get the engineer in before quoting.",
        "Prices on copper went up again this month.",
        "The client asked for a fixed price, so I added a contingency line.",
        "Two of the rooms share a circuit, which the electrician flagged.",
    ),
    (
        Detail(
            _pick("Helvig Structural", "Ferreira & Oduya Engenharia", "Kowalczyk Statik"),
            "Which structural engineer did you book?",
            "Who's checking whether the partition can come out?",
            sentence="I booked {v} to look at the wall on site before we quote.",
        ),
        Detail(
            lambda rng: f"DLV-{rng.randint(10000, 99999)}",
            "What was the delivery number for the tiles?",
            "How do I track the order that's coming to the site?",
            sentence="The tiles are on the lorry; the delivery number is {v}.",
        ),
        Detail(
            _pick("four thousand three hundred", "six thousand one hundred", "nine thousand"),
            "How much did you estimate for the kitchen?",
            "What's the ballpark figure for doing the cooking area?",
            sentence="My estimate for the kitchen comes to {v} all in, before any surprises.",
        ),
        Detail(
            _pick("skip bay 4", "the side gate", "the back lane"),
            "Where did you say the skip goes?",
            "Where will the rubbish container be parked?",
            sentence="The council allows the skip at {v} only, for up to ten days.",
        ),
        Detail(
            lambda rng: f"BC-{rng.randint(100, 999)}-{code(rng, 3)}",
            "What is the building control inspection reference?",
            "Which number do we give the inspector when they come?",
            tool="permit_status",
            record="Inspection booked\nReference: {v}\nOfficer: to be assigned\nWindow: AM",
        ),
        Detail(
            _pick("Mateus Albuquerque", "Ingrid Solberg-Haugen", "Thandiwe Mokoena"),
            "Who leads the plumbing crew on the schedule?",
            "Which person is in charge of the pipes team?",
            tool="crew_schedule",
            record='[{{"crew": "plumbing", "lead": "{v}", "site": "main job"}}]',
        ),
    ),
)

RECRUITING = Agent(
    "recruiting",
    "You are a recruiting coordinator's assistant: you search candidates, schedule interviews "
    "and draft messages. You never send an offer or a rejection without a yes.",
    "Fill the open roles with good people, and keep every candidate informed.",
    (
        Tool(
            _tool("search_candidates", "Search the ATS.", query="Skills, title, place"),
            lambda rng: {"query": f"{rng.choice(ROLES)} {rng.choice(CITIES)}"},
            (candidate_search,),
        ),
        Tool(
            _tool("get_resume", "A candidate's CV.", candidate="Candidate id"),
            lambda rng: {"candidate": f"cand_{code(rng, 7).lower()}"},
            (resume_text,),
        ),
        Tool(
            _tool("interview_calendar", "Interview slots.", role="Which role"),
            lambda rng: {"role": rng.choice(ROLES)},
            (interview_slots,),
        ),
        Tool(
            _tool("read_inbox", "Recent candidate e-mails.", candidate="Who"),
            lambda rng: {"candidate": rng.choice(PEOPLE)},
            (email_thread,),
        ),
    ),
    (
        "find me {role}s in {city} with {n}+ years",
        "set up a screen with {person} {day} afternoon",
        "did {person} answer about the panel?",
        "draft a polite no for {person}, she was close",
        "what's in {person}'s CV about team lead stuff",
        "pipeline for the {role} role pls, by stage",
        "peux-tu relancer {person} pour ses références ?",
        "hanapan mo ako ng {role} sa {city}",
        "how long has {person} been sitting in onsite",
        "move {person}'s interview, the panel can't do {day}",
    ),
    (
        "The pipeline is thin at the onsite stage; most drop out after the screen.",
        "Two candidates asked about remote work in their last e-mails.",
        "The panel has only one free afternoon that week.",
        "Her CV shows a gap, but she explained it in the cover letter.",
        "Offers here usually go out within five days of the onsite.",
        "The salary band for that level tops out below what he asked.",
        "References came back positive, one of them glowing.",
        "The role's posting has been up long enough to need a refresh.",
        "Candidates from that school tend to accept quickly.",
    ),
    (
        Detail(
            _pick("the Kestrel room", "the Heron room", "the Osprey room"),
            "Which room did you book for the onsite panel?",
            "Where are the candidates meeting the interviewers?",
            sentence="The onsite panel is in {v}, it has the screen we need.",
        ),
        Detail(
            lambda rng: f"REQ-{rng.randint(1000, 9999)}",
            "What's the requisition number for the new role?",
            "Which code goes on the hiring approval?",
            sentence="Finance opened the headcount; the requisition is {v}.",
        ),
        Detail(
            _pick("forty-one", "fifty-eight", "thirty-six"),
            "How many applicants did you say came in through the job board?",
            "How big was the response to the posting?",
            sentence="The job board brought in {v} applicants since Monday.",
        ),
        Detail(
            _pick("a Thursday in week two", "the second Friday", "the morning after the offsite"),
            "When did you say the hiring committee meets?",
            "When do the people who approve job proposals get together?",
            sentence="The hiring committee meets {v}, so offers wait until then.",
        ),
        Detail(
            lambda rng: f"BGC-{code(rng, 7)}",
            "What is the background check reference?",
            "Which number tracks the vetting of the new hire's history?",
            tool="read_inbox",
            record="From: screening@checks.example\nSubject: Check started\n\nCase {v} opened.",
        ),
        Detail(
            _pick("Anneliese Warszawska", "Olúwaségun Adéyemí", "Marguerite Thibodeaux"),
            "Who is the hiring manager on the interview invite?",
            "Whose team will the new person join?",
            tool="interview_calendar",
            record="BEGIN:VEVENT\nSUMMARY:Debrief\nORGANIZER:{v} (hiring manager)\nEND:VEVENT",
        ),
    ),
)

EVENTS = Agent(
    "event planning",
    "You are a wedding and event planner's assistant: venues, vendors, guests and budget. "
    "You never sign a contract or pay a deposit without a yes.",
    "Get the couple's day planned, booked and on budget, with no one forgotten.",
    (
        Tool(
            _tool("search_vendors", "Find vendors.", category="florist, band…", city="Where"),
            lambda rng: {"category": rng.choice(("florist", "band", "cake")), "city": "any"},
            (vendor_search,),
        ),
        Tool(
            _tool("guest_list", "The guest list.", filter="Optional filter"),
            lambda rng: {"filter": rng.choice(("rsvp=pending", "all", "side=bride"))},
            (guest_list,),
        ),
        Tool(
            _tool("venue_calendar", "A venue's availability.", venue="Which venue"),
            lambda rng: {"venue": rng.choice(("Quinta", "Château", "Schloss"))},
            (venue_calendar,),
        ),
        Tool(
            _tool("budget_sheet", "The event budget.", event="Which event"),
            lambda rng: {"event": "wedding"},
            (event_budget,),
        ),
    ),
    (
        "who hasn't RSVP'd yet?",
        "find florists near {city}, nothing over {amount}",
        "is the Orangery free in {month}?",
        "how are we on budget for music",
        "write to {vendor} asking for the tasting date",
        "how many veg meals so far",
        "add {person} to the list, groom's side, plus one",
        "bisa cari fotografer di {city}?",
        "was kostet die Band von {vendor} ungefähr?",
        "seat {person} away from the speakers pls lol",
        "quanto custa o bolo da {vendor}?",
    ),
    (
        "Most venues ask for a third of the fee as a deposit.",
        "The florist can do peonies only in late spring.",
        "The band needs a separate power line for their setup.",
        "A buffet costs less than plated service, but needs more space.",
        "The guest count drives the catering more than anything else.",
        "That venue has a noise curfew at eleven.",
        "Photographers book out a year ahead for summer Saturdays.",
        "A rain plan for the ceremony is worth agreeing now.",
        "The tasting usually happens about two months before.",
    ),
    (
        Detail(
            _pick("Ferme des Tilleuls", "Quinta do Vale Escuro", "Gut Sonnenhof"),
            "Which venue did you put a hold on?",
            "Where is the party after the ceremony provisionally reserved?",
            sentence="I've put a soft hold on {v} for the reception, for ten days.",
        ),
        Detail(
            lambda rng: f"TAST-{rng.randint(100, 999)}",
            "What was the confirmation for the cake tasting?",
            "How do we prove our slot when we go to try the desserts?",
            sentence="Cake tasting is confirmed; quote {v} at the door.",
        ),
        Detail(
            _pick("one hundred and forty-two", "ninety-six", "one hundred and eighteen"),
            "How many guests did you count as confirmed?",
            "How many people are definitely coming?",
            sentence="With today's replies I count {v} confirmed guests.",
        ),
        Detail(
            _pick("navy and blush", "sage and terracotta", "ivory and gold"),
            "What colours did you suggest for the flowers?",
            "Which palette did we land on for decorating?",
            sentence="For the flowers I'd go with {v}, it suits the venue's walls.",
        ),
        Detail(
            lambda rng: f"INV-{code(rng, 6)}",
            "What's the invoice number on the band's deposit?",
            "Which reference is on the musicians' bill?",
            tool="budget_sheet",
            record="| line | estimate | paid |\n|---|---:|---:|\n| music ({v}) | 2400 | 800 |",
        ),
        Detail(
            _pick("Wairimu Gathoni", "Evangelina Cortázar", "Radek Procházka"),
            "Who on the guest list needs the wheelchair access?",
            "Which guest can't manage stairs?",
            tool="guest_list",
            record="name,side,rsvp,meal,table,notes\n{v},both,yes,veg,3,wheelchair access",
        ),
    ),
)

ONCALL = Agent(
    "on-call incident",
    "You are the on-call engineer's assistant during and between incidents: you read logs, "
    "alerts, metrics and deploys, and draft updates. You never roll back or page without a yes.",
    "Get incidents understood and resolved fast, and keep the status updates honest.",
    (
        Tool(
            _tool("query_logs", "Search logs.", service="Which service", query="Filter"),
            lambda rng: {"service": rng.choice(SERVICES), "query": "level>=WARN"},
            (log_lines,),
        ),
        Tool(
            _tool("list_alerts", "Firing alerts.", team="Team"),
            lambda rng: {"team": "platform"},
            (alerts,),
        ),
        Tool(
            _tool("query_metrics", "Latency and errors.", window="e.g. 30m"),
            lambda rng: {"window": f"{rng.choice((15, 30, 60))}m"},
            (metrics_table,),
        ),
        Tool(
            _tool("deploy_history", "Recent deploys.", service="Which service"),
            lambda rng: {"service": rng.choice(SERVICES)},
            (deploy_history,),
        ),
    ),
    (
        "what's firing right now",
        "logs for {service} last 30 min, errors only",
        "did anyone deploy {service} today?",
        "p99 on {service} vs yesterday?",
        "draft a status update, we're still investigating",
        "is the error rate on {service} going down or not",
        "kuka deployasi {service}:n viimeksi?",
        "zkontroluj prosím logy {service}, něco tam hoří",
        "should we roll back {service} or wait",
        "grep for pool exhausted in {service}",
    ),
    (
        "Errors started two minutes after the last deploy.",
        "The p99 doubled but the median barely moved.",
        "The connection pool is saturated on two of the three pods.",
        "It looks like retries are amplifying the load.",
        "The alert is flapping; it cleared and fired again twice.",
        "Only the EU region shows the errors so far.",
        "Rolling back is safe: the last release had no migrations.",
        "The dashboards lag by about a minute.",
        "Disk on the indexer is at ninety percent and climbing.",
    ),
    (
        Detail(
            lambda rng: f"INC-{rng.randint(1000, 9999)}",
            "What's the incident number you opened?",
            "Which ticket tracks this outage?",
            sentence="I opened {v} and linked the alerts to it.",
        ),
        Detail(
            _pick("pgbouncer-eu-2", "redis-sessions-b", "kafka-broker-5"),
            "Which host did you say was the bottleneck?",
            "What machine turned out to be choking?",
            sentence="The saturation traces back to {v}; every slow request goes through it.",
        ),
        Detail(
            _pick("v14.2.7", "v11.0.3", "v12.9.1"),
            "Which version did you say is the last good release?",
            "What would we be going back to if we undo the deploy?",
            sentence="The last good release is {v}; everything after it shows the errors.",
        ),
        Detail(
            _pick("fourteen minutes", "thirty-three minutes", "an hour and ten minutes"),
            "How long did you say the outage lasted?",
            "How much downtime did customers see?",
            sentence="From first error to recovery it was {v} of customer impact.",
        ),
        Detail(
            lambda rng: f"sha256:{code(rng, 12).lower()}",
            "What was the image digest in the rollback log?",
            "Which exact build is running after we reverted?",
            tool="deploy_history",
            record="rollback complete\nimage {v}\nreplicas 6/6 ready",
        ),
        Detail(
            _pick("ErlangSchedulerStall", "OutboxLagCritical", "CertExpirySoon"),
            "Which alert name was in the paging list?",
            "What was the thing that woke people up at night?",
            tool="list_alerts",
            record='{{"alerts": [{{"name": "{v}", "severity": "page", "service": "core"}}]}}',
        ),
    ),
)

AGENTS: tuple[Agent, ...] = (CLINIC, RENOVATION, RECRUITING, EVENTS, ONCALL)


def request(rng: random.Random, agent: Agent) -> str:
    return _fill(rng, rng.choice(agent.requests))


def tool_call(rng: random.Random, agent: Agent) -> tuple[str, dict[str, object], Output]:
    tool = rng.choice(agent.tools)
    return tool.name, tool.arguments(rng), rng.choice(tool.outputs)


def prose(rng: random.Random, agent: Agent) -> str:
    """An answer in one of the shapes real ones take."""
    sentences = agent.sentences

    def pick(count: int) -> list[str]:
        return rng.sample(sentences, min(count, len(sentences)))

    shape = rng.randrange(9)
    if shape == 0:
        return pick(1)[0]
    if shape == 1:
        return "Quick summary:\n" + "\n".join(f"* {s}" for s in pick(rng.randint(2, 5)))
    if shape == 2:
        steps = pick(rng.randint(3, 4))
        return "\n".join(f"{i}) {s}" for i, s in enumerate(steps, 1)) + "\n\nOK to proceed?"
    if shape == 3:
        rows = "\n".join(f"| {rng.choice(PEOPLE)} | {rng.randint(1, 99)} | {s} |" for s in pick(3))
        return f"| who | # | note |\n|---|---:|---|\n{rows}"
    if shape == 4:
        return (
            f"Here's a draft:\n\n---\nDear {rng.choice(PEOPLE).split()[0]},\n\n"
            f"{' '.join(pick(2))}\n\nKind regards\n---\n\nSend as is?"
        )
    if shape == 5:
        return _fill(
            rng,
            "Looked at {n} entries. {person} in {city} is the closest fit; the {day} option "
            "costs {amount} more. " + " ".join(pick(2)),
        )
    if shape == 6:
        return "\n\n".join(" ".join(pick(rng.randint(1, 3))) for _ in range(rng.randint(2, 3)))
    if shape == 7:
        return f"Done. {pick(1)[0]} Anything else on this?"
    return f"**TL;DR** {pick(1)[0]}\n\n**More:** {' '.join(pick(3))}"


STEP_TEXTS = (
    None,
    None,
    None,
    "Checking.",
    "Pulling that up now.",
    "Two lookups, one moment.",
    "Let me verify before I change anything.",
)
