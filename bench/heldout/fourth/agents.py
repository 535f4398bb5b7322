"""The five agents of the fourth set: a law firm's intake paralegal, a home-automation agent,
a language tutor, a freight dispatcher and a laboratory's sample-tracking assistant. Each has
its own tools, and their output comes in shapes the earlier sets do not use: XML, YAML, SQL
result grids, key=value logs, Python stack traces, base64 attachments, signed URLs with long
query strings, plate maps and markdown tables.

Tool output names many people, places, sums and codes; none of them is a value the user
states (the generator checks that for every session), though some come close to one.
"""

from __future__ import annotations

import base64
import json
import random

# What the generators call as this module's own words.
from bench.heldout.material import call_id as call_id
from bench.heldout.material import code as code
from bench.heldout.sets import Agent, Detail, Output, Tool
from bench.heldout.sets import pick as _pick

PEOPLE = (
    "Adaeze Okafor",
    "Bjørn Haugland",
    "Carles Puigvert",
    "Darius Rahimi",
    "Elin Kask",
    "Farida Siddiqui",
    "Goran Marić",
    "Hiroshi Kondo",
    "Ingrid Vos",
    "Jurgita Petrauskienė",
    "Kwame Mensah",
    "Lwazi Dlamini",
    "Mirela Novak",
    "Nilufar Karimova",
    "Owain Pritchard",
    "Petra Hudáková",
    "Rangi Parata",
    "Sipho Ndlovu",
    "Tamar Gvaramia",
    "Ugo Bianchini",
    "Viivi Rantanen",
    "Wiremu Tane",
    "Xabier Etxeberria",
    "Yaw Boateng",
    "Zainab Bello",
)
TOWNS = (
    "Girona",
    "Bergen",
    "Stellenbosch",
    "Kaunas",
    "Split",
    "Tallinn",
    "Košice",
    "Ipoh",
    "Shiraz",
    "Swansea",
    "Durban",
    "Tbilisi",
    "Aarhus",
    "Akureyri",
    "Bilbo",
    "Plzeň",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _count(rng: random.Random, low: int = 2, high: int = 120) -> int:
    # Mostly short, now and then long: the heavy tail real tool output has.
    return max(low, min(high, int(rng.lognormvariate(2.1, 1.0))))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _clock(rng: random.Random) -> str:
    return f"{rng.randint(6, 21):02d}:{rng.randint(0, 59):02d}"


def _stamp(rng: random.Random) -> str:
    return f"{_date(rng)}T{_clock(rng)}:{rng.randint(0, 59):02d}Z"


def _blob(rng: random.Random, size: int) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def _grid(headers: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    """A result grid as psql prints one."""
    cells = [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    line = " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    rule = "-+-".join("-" * w for w in widths)
    body = [" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join([f" {line}", f"-{rule}-", *(f" {b}" for b in body), f"({len(rows)} rows)"])


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


# ---- legal intake -------------------------------------------------------------------------

MATTERS = ("tenancy deposit", "unfair dismissal", "boundary dispute", "unpaid invoice", "probate")


def conflict_check(rng: random.Random) -> str:
    hits = "".join(
        f'\n  <hit party="{rng.choice(PEOPLE)}" matter="M-{rng.randint(10000, 99999)}" '
        f'role="{rng.choice(("client", "opponent", "witness"))}" '
        f'closed="{rng.choice(("true", "false"))}"/>'
        for _ in range(_count(rng, 0, 15))
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<conflictCheck run="{_stamp(rng)}" '
        f'result="{rng.choice(("clear", "clear", "review"))}">{hits}\n</conflictCheck>'
    )


def court_calendar(rng: random.Random) -> str:
    rows = ["| date | court | matter | listing |", "|---|---|---|---|"]
    for _ in range(_count(rng, 2, 30)):
        rows.append(
            f"| {_date(rng)} | {rng.choice(TOWNS)} County Court | {rng.choice(MATTERS)} | "
            f"{rng.choice(('directions', 'final hearing', 'mention', 'adjourned'))} |"
        )
    return "\n".join(rows)


def matter_search(rng: random.Random) -> str:
    rows: list[tuple[object, ...]] = [
        (
            f"M-{rng.randint(10000, 99999)}",
            rng.choice(PEOPLE),
            rng.choice(MATTERS),
            rng.choice(("open", "open", "closed", "on hold")),
            _date(rng),
        )
        for _ in range(_count(rng, 1, 40))
    ]
    return _grid(("matter_id", "client", "type", "status", "opened"), rows)


def document_ocr(rng: random.Random) -> str:
    return json.dumps(
        {
            "file": f"scan_{code(rng, 8).lower()}.pdf",
            "pages": rng.randint(1, 40),
            "text_excerpt": rng.choice(
                (
                    "THIS AGREEMENT is made on the date below between the Landlord and the Tenant",
                    "Dear Sir or Madam, we write on behalf of our client regarding the sum due",
                    "WITHOUT PREJUDICE SAVE AS TO COSTS",
                )
            ),
            "attachment_b64": _blob(rng, rng.randint(24, 240)),
        },
        ensure_ascii=False,
    )


# ---- home automation ----------------------------------------------------------------------

ROOMS = ("hallway", "kitchen", "attic", "garage", "nursery", "porch", "cellar", "studio")
DEVICES = ("thermostat", "smart plug", "motion sensor", "blind motor", "door lock", "leak sensor")


def device_states(rng: random.Random) -> str:
    lines = ["devices:"]
    for _ in range(_count(rng, 2, 30)):
        lines.extend(
            (
                f"  - id: {rng.choice(DEVICES).replace(' ', '_')}."
                f"{rng.choice(ROOMS)}_{rng.randint(1, 9)}",
                f"    state: {rng.choice(('on', 'off', 'unavailable', 'idle', '21.5'))}",
                f"    battery: {rng.randint(3, 100)}",
                f"    last_changed: '{_stamp(rng)}'",
            )
        )
    return "\n".join(lines)


def automation_log(rng: random.Random) -> str:
    return "\n".join(
        f"ts={_stamp(rng)} level={rng.choice(('info', 'info', 'warn', 'error'))} "
        f"automation={rng.choice(ROOMS)}_{rng.choice(('lights', 'heating', 'blinds', 'alarm'))} "
        f"trigger={rng.choice(('sunset', 'motion', 'time', 'presence'))} "
        f"result={rng.choice(('ok', 'ok', 'skipped', 'timeout'))} ms={rng.randint(3, 4000)}"
        for _ in range(_count(rng, 3, 80))
    )


def energy_report(rng: random.Random) -> str:
    rows = ["| circuit | kWh | cost |", "|---|---:|---:|"]
    for room in rng.sample(ROOMS, 4):
        rows.append(f"| {room} | {rng.randint(1, 400) / 10} | {rng.randint(10, 900) / 100} |")
    return "\n".join(rows)


def scene_failure(rng: random.Random) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/src/hub/scenes/runner.py", line 214, in activate\n'
        "    await device.set_state(target)\n"
        f'  File "/usr/src/hub/drivers/zigbee.py", line {rng.randint(40, 900)}, in set_state\n'
        "    raise DeviceTimeout(self.ieee)\n"
        f"hub.errors.DeviceTimeout: {':'.join(code(rng, 2).lower() for _ in range(8))} did "
        f"not answer within {rng.randint(2, 30)}s"
    )


def scene_ok(rng: random.Random) -> str:
    return json.dumps(
        {"scene": f"{rng.choice(ROOMS)}_{rng.choice(('evening', 'away', 'night'))}", "ok": True}
    )


# ---- language tutoring --------------------------------------------------------------------

TOPICS = ("subjunctive", "past tense", "word order", "numbers", "ordering food", "directions")


def lesson_plan(rng: random.Random) -> str:
    lines = [f"lesson: {rng.choice(TOPICS)}", f"level: {rng.choice(('A2', 'B1', 'B2'))}", "blocks:"]
    for _ in range(_count(rng, 2, 12)):
        lines.extend(
            (
                f"  - kind: {rng.choice(('drill', 'dialogue', 'listening', 'free talk'))}",
                f"    minutes: {rng.choice((5, 10, 15, 20))}",
                f"    focus: {rng.choice(TOPICS)}",
            )
        )
    return "\n".join(lines)


def grade_exercise(rng: random.Random) -> str:
    items = "".join(
        f'\n  <item n="{n}" correct="{rng.choice(("yes", "yes", "no"))}">'
        f"{rng.choice(('article', 'ending', 'spelling', 'tense', 'ok'))}</item>"
        for n in range(1, _count(rng, 3, 25))
    )
    return f'<feedback score="{rng.randint(30, 100)}" max="100">{items}\n</feedback>'


def dictionary_lookup(rng: random.Random) -> str:
    word = rng.choice(("huis", "kuća", "maison", "namas", "talo", "ház", "hus"))
    return json.dumps(
        {
            "word": word,
            "senses": rng.randint(1, 9),
            "url": f"https://dict.example.org/lookup?q={word}&src=auto&tgt=en&ctx="
            f"{_blob(rng, 18).rstrip('=')}&sig={code(rng, 32).lower()}"
            f"&ts={rng.randint(10**9, 2 * 10**9)}",
        },
        ensure_ascii=False,
    )


def vocab_deck(rng: random.Random) -> str:
    rows = ["front\tback\tdue\tease"]
    for _ in range(_count(rng, 3, 60)):
        rows.append(
            f"{rng.choice(('la mà', 'el gos', 'hiša', 'kirja', 'ruka', 'tafel'))}\t"
            f"{rng.choice(('hand', 'dog', 'house', 'book', 'arm', 'table'))}\t{_date(rng)}\t"
            f"{rng.randint(130, 300) / 100}"
        )
    return "\n".join(rows)


# ---- freight dispatch ---------------------------------------------------------------------

LANES = ("Rotterdam→Lyon", "Gdynia→Kaunas", "Durban→Gaborone", "Koper→Graz", "Valencia→Bordeaux")


def load_board(rng: random.Random) -> str:
    rows: list[tuple[object, ...]] = [
        (
            f"LD{rng.randint(100000, 999999)}",
            rng.choice(LANES),
            f"{rng.randint(2, 24)}.{rng.randint(0, 9)}t",
            rng.choice(("reefer", "curtainsider", "flatbed", "box")),
            f"{rng.randint(400, 4200)} EUR",
        )
        for _ in range(_count(rng, 1, 40))
    ]
    return _grid(("load_id", "lane", "weight", "trailer", "rate"), rows)


def track_shipment(rng: random.Random) -> str:
    return "\n".join(
        f"event={rng.choice(('pickup', 'gate_in', 'border', 'delay', 'eta_update', 'pod'))} "
        f"at={_stamp(rng)} place={rng.choice(TOWNS).lower()} truck={code(rng, 7)} "
        f"note={rng.choice(('-', 'queue', 'driver_break', 'docs_ok'))}"
        for _ in range(_count(rng, 2, 50))
    )


def rate_quote(rng: random.Random) -> str:
    return (
        f'<Quote id="Q{rng.randint(10000, 99999)}" currency="EUR">\n'
        f"  <Lane>{rng.choice(LANES)}</Lane>\n"
        f"  <Linehaul>{rng.randint(500, 4000)}.00</Linehaul>\n"
        f"  <Fuel>{rng.randint(40, 600)}.00</Fuel>\n"
        f"  <Tolls>{rng.randint(0, 300)}.00</Tolls>\n"
        f"  <ValidUntil>{_date(rng)}</ValidUntil>\n</Quote>"
    )


def driver_hours(rng: random.Random) -> str:
    rows = ["| driver | driven today | left this week | rest due |", "|---|---:|---:|---|"]
    for person in rng.sample(PEOPLE, rng.randint(3, 8)):
        rows.append(
            f"| {person} | {rng.randint(0, 9)}h{rng.randint(0, 59):02d} | "
            f"{rng.randint(0, 56)}h | {_clock(rng)} |"
        )
    return "\n".join(rows)


def customs_docs(rng: random.Random) -> str:
    return json.dumps(
        {
            "mrn": f"26{code(rng, 16)}",
            "status": rng.choice(("released", "held", "lodged")),
            "cmr_pdf_base64": _blob(rng, rng.randint(40, 300)),
        }
    )


# ---- lab samples --------------------------------------------------------------------------

ASSAYS = ("ELISA", "qPCR", "HPLC", "Karl Fischer", "ICP-MS", "Bradford")


def sample_query(rng: random.Random) -> str:
    rows: list[tuple[object, ...]] = [
        (
            f"S{rng.randint(2026000, 2026999)}",
            rng.choice(ASSAYS),
            rng.choice(("received", "in progress", "done", "on hold")),
            f"-{rng.choice((20, 80))}C rack {rng.randint(1, 30)}",
            _date(rng),
        )
        for _ in range(_count(rng, 1, 50))
    ]
    return _grid(("sample_id", "assay", "status", "location", "received"), rows)


def instrument_log(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return (
            "Traceback (most recent call last):\n"
            '  File "/opt/lims/drivers/plate_reader.py", line 88, in read_plate\n'
            "    frame = self.port.read_frame()\n"
            '  File "/opt/lims/drivers/serial.py", line 131, in read_frame\n'
            "    raise SerialTimeout(self.device)\n"
            f"lims.drivers.SerialTimeout: /dev/ttyUSB{rng.randint(0, 3)} silent for "
            f"{rng.randint(2, 60)}s"
        )
    return "\n".join(
        f"{_stamp(rng)} instrument="
        f"{rng.choice(ASSAYS).lower().replace(' ', '_')}-{rng.randint(1, 4)} "
        f"run={code(rng, 6)} status={rng.choice(('ok', 'ok', 'qc_fail', 'aborted'))} "
        f"temp_c={rng.randint(180, 390) / 10}"
        for _ in range(_count(rng, 2, 60))
    )


def plate_map(rng: random.Random) -> str:
    rows = ["    " + " ".join(f"{c:>4}" for c in range(1, 13))]
    for letter in "ABCDEFGH":
        cells = " ".join(f"{rng.choice(('STD', 'BLK', 'QC', 'S', '-')):>4}" for _ in range(12))
        rows.append(f"{letter}   {cells}")
    return "\n".join(rows)


def export_link(rng: random.Random) -> str:
    return (
        f"https://lims.example.net/export/run_{code(rng, 6).lower()}.csv?X-Amz-Algorithm="
        f"AWS4-HMAC-SHA256&X-Amz-Credential={code(rng, 20)}%2F{_date(rng).replace('-', '')}"
        f"%2Feu-central-1%2Fs3%2Faws4_request&X-Amz-Date={_date(rng).replace('-', '')}T"
        f"{rng.randint(100000, 235959)}Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&"
        f"X-Amz-Signature={''.join(rng.choices('0123456789abcdef', k=64))}"
    )


def _fill(rng: random.Random, template: str) -> str:
    return template.format(
        person=rng.choice(PEOPLE),
        town=rng.choice(TOWNS),
        day=rng.choice(WEEKDAYS),
        matter=rng.choice(MATTERS),
        room=rng.choice(ROOMS),
        device=rng.choice(DEVICES),
        topic=rng.choice(TOPICS),
        lane=rng.choice(LANES),
        assay=rng.choice(ASSAYS),
        n=rng.randint(2, 40),
        amount=rng.randint(40, 9000),
        clock=_clock(rng),
    )


LEGAL = Agent(
    "legal intake",
    "You are the intake paralegal of a small law firm: new enquiries, conflict checks, court "
    "dates and documents. You never give legal advice; a solicitor signs everything off.",
    "Get each new matter opened cleanly and keep the solicitors' diaries right.",
    (
        Tool(
            _tool("conflict_check", "Check parties against past matters.", parties="Names"),
            lambda rng: {"parties": f"{rng.choice(PEOPLE)}; {rng.choice(PEOPLE)}"},
            (conflict_check,),
        ),
        Tool(
            _tool("court_calendar", "Listings for the firm's matters.", court="Which court"),
            lambda rng: {"court": f"{rng.choice(TOWNS)} County Court"},
            (court_calendar,),
        ),
        Tool(
            _tool("matter_search", "SQL search over matters.", query="SQL WHERE clause"),
            lambda rng: {"query": f"type = '{rng.choice(MATTERS)}' AND status = 'open'"},
            (matter_search,),
        ),
        Tool(
            _tool("ocr_document", "Read a scanned document.", file="Upload id"),
            lambda rng: {"file": f"upl_{code(rng, 10).lower()}"},
            (document_ocr,),
        ),
    ),
    (
        "run a conflict check on {person} pls",
        "new enquiry from {person}, {matter}, can you open an intake?",
        "what's listed at {town} County Court on {day}?",
        "scan came in from {person}, can you read it and tell me what it is",
        "how many open {matter} matters have we got",
        "send {person} the client care letter",
        "Obre un expedient nou per a {person}, és un cas de {matter}.",
        "kan du sjekke om {person} er en tidligere klient?",
        "is {person} on the other side of anything we have open?",
        "remind the fee earner about the {clock} call with {person}",
    ),
    (
        "The conflict check came back clear for both parties.",
        "That listing was adjourned; the new date is not out yet.",
        "The scan is a tenancy agreement, twelve pages, signed on the last page only.",
        "Two open matters have the same opponent, so a solicitor should look first.",
        "The client care letter is drafted and waiting for sign-off.",
        "The limitation date is close, so I flagged the matter as urgent.",
        "The ID documents are in, but the proof of address is older than three months.",
        "Nothing is listed for that court this week.",
        "The enquiry form left the opponent's address blank.",
    ),
    (
        Detail(
            lambda rng: f"M-{rng.randint(10000, 99999)}-{code(rng, 2)}",
            "What matter number did you open for the new enquiry?",
            "Which reference goes on the client's file?",
            sentence="I opened the new file as {v} and sent the client care letter.",
        ),
        Detail(
            _pick("Rhiannon Cadwaladr", "Aurelio Santamaría", "Maksymilian Zieliński"),
            "Which solicitor did you say the matter was allocated to?",
            "Who is handling the case for us?",
            sentence="The matter has been allocated to {v}, who will call the client this week.",
        ),
        Detail(
            _pick("nineteen pages", "thirty-seven pages", "fifty-two pages"),
            "How long did you say the witness statement is?",
            "How big is the document the witness signed?",
            sentence="The signed witness statement runs to {v}, exhibits included.",
        ),
        Detail(
            _pick("Court 4B", "Court 11", "Court 7A"),
            "Which court room did you say the hearing is in?",
            "Where in the building do we need to be?",
            sentence="The hearing is in {v}, first on the list.",
        ),
        Detail(
            lambda rng: f"CLM-{rng.randint(100, 999)}-{code(rng, 4)}",
            "What was the claim number in the court listing?",
            "Which code does the county court use for the case?",
            tool="court_calendar",
            record="| date | court | matter | listing |\n|---|---|---|---|\n"
            "| 2026-06-02 | Kaunas County Court | {v} | final hearing |",
        ),
        Detail(
            _pick("Thaddeus Wickramasinghe", "Oyelaran Holdings Ltd", "Bracewell & Ndiaye LLP"),
            "Which party did the conflict check flag?",
            "Who turned up as a possible clash with an old file?",
            tool="conflict_check",
            record='<conflictCheck result="review">\n  <hit party="{v}" role="opponent" '
            'closed="false"/>\n</conflictCheck>',
        ),
    ),
)

HOME = Agent(
    "home automation",
    "You run the user's smart home: devices, scenes, automations and the energy meter. You "
    "never unlock a door or disarm the alarm without asking.",
    "Keep the house comfortable, safe and cheap to run, and the automations working.",
    (
        Tool(
            _tool("device_states", "Current state of devices.", room="Which room, or all"),
            lambda rng: {"room": rng.choice((*ROOMS, "all"))},
            (device_states,),
        ),
        Tool(
            _tool("automation_log", "Automation runs.", since="From when"),
            lambda rng: {"since": _date(rng)},
            (automation_log,),
        ),
        Tool(
            _tool("energy_report", "Energy use per circuit.", period="day, week or month"),
            lambda rng: {"period": rng.choice(("day", "week", "month"))},
            (energy_report,),
        ),
        Tool(
            _tool("run_scene", "Activate a scene.", scene="Scene name"),
            lambda rng: {"scene": f"{rng.choice(ROOMS)}_{rng.choice(('evening', 'night'))}"},
            (scene_ok, scene_ok, scene_failure),
        ),
    ),
    (
        "turn the {room} heating down a bit",
        "why did the {room} lights come on at {clock} last night",
        "is the {device} in the {room} still on battery?",
        "how much did the {room} circuit use this week",
        "run the evening scene",
        "Kan du slukke alt i {room}, tak.",
        "the {device} in the {room} keeps dropping off the network, any idea",
        "sit die {room} se ligte af asseblief",
        "did the leak sensor trip while we were out",
        "set the blinds to close at {clock}",
    ),
    (
        "The motion sensor fired twice; the cat is the likely culprit.",
        "That device has not reported for six hours, so I marked it unavailable.",
        "Heating used a third less than last week.",
        "The scene ran, except for one blind that did not answer.",
        "The battery is at eight percent; it will last a few days at most.",
        "I moved the automation to run after sunset instead of at a fixed time.",
        "The door lock is locked and the alarm is armed.",
        "The Zigbee mesh is weak at the far end of the garden.",
        "Nothing tripped while you were away.",
    ),
    (
        Detail(
            _pick("channel 25", "channel 15", "channel 20"),
            "Which channel did you say the Zigbee network moved to?",
            "What radio setting did the mesh end up on?",
            sentence="I moved the Zigbee network to {v}; the Wi-Fi no longer drowns it out.",
        ),
        Detail(
            _pick("nine point four kilowatt-hours", "eleven point two kilowatt-hours"),
            "How much energy did you say the heat pump used yesterday?",
            "What did the heating machine burn through the day before?",
            sentence="The heat pump used {v} yesterday, most of it before seven.",
        ),
        Detail(
            _pick("hub firmware 4.17.2", "hub firmware 5.02.9", "hub firmware 3.88.1"),
            "Which hub firmware did you say is installed now?",
            "What version is the controller box running?",
            sentence="The update finished; it is on {v} and every device came back.",
        ),
        Detail(
            _pick("Tessellate Ridge", "Umberwood Lane", "Ketterby Close"),
            "What did you name the new geofence zone?",
            "What's the label for the area that counts as arriving home?",
            sentence="I created a geofence zone called {v}, two hundred metres round the house.",
        ),
        Detail(
            lambda rng: f"0x00124b00{''.join(rng.choices('0123456789abcdef', k=8))}",
            "What was the IEEE address of the device in the device list?",
            "Which hardware id does the flaky gadget have?",
            tool="device_states",
            record="devices:\n  - id: leak_sensor.laundry\n    ieee: '{v}'\n    state: unavailable",
        ),
        Detail(
            _pick("PresenceDebounceExceeded", "ZigbeeRouteLost", "SceneLockContention"),
            "Which error did the automation log show?",
            "What went wrong according to the run history?",
            tool="automation_log",
            record="ts=2026-03-03T21:14:09Z level=error automation=porch_lights error={v}",
        ),
    ),
)

TUTOR = Agent(
    "language tutoring",
    "You are a patient language tutor: lessons, drills, corrections and a vocabulary deck. "
    "Correct gently and explain in English unless asked otherwise.",
    "Get the learner speaking with confidence before their trip, one lesson at a time.",
    (
        Tool(
            _tool("lesson_plan", "Build a lesson.", topic="What to practise"),
            lambda rng: {"topic": rng.choice(TOPICS)},
            (lesson_plan,),
        ),
        Tool(
            _tool("grade_exercise", "Mark an exercise.", answers="The learner's answers"),
            lambda rng: {"answers": f"{rng.randint(5, 20)} answers"},
            (grade_exercise,),
        ),
        Tool(
            _tool("dictionary", "Look a word up.", word="The word"),
            lambda rng: {"word": rng.choice(("huis", "kuća", "talo", "ház"))},
            (dictionary_lookup,),
        ),
        Tool(
            _tool("vocab_deck", "The learner's flashcards.", filter="due, new or all"),
            lambda rng: {"filter": rng.choice(("due", "new", "all"))},
            (vocab_deck,),
        ),
    ),
    (
        "can we do {topic} today",
        "mark my homework pls, {n} sentences",
        "what does 'uitgebreid' mean exactly",
        "how many cards are due",
        "I keep mixing up the {topic}, explain again?",
        "quick drill on {topic}, {n} minutes max",
        "Com es diu 'receipt' en català?",
        "mujhe {topic} phir se samjhao",
        "give me a dialogue about ordering food",
        "was that right: 'ik heb gisteren gewerkt'?",
    ),
    (
        "Nearly: the verb goes to the end in a subordinate clause.",
        "Eight of ten correct; the two misses were both article endings.",
        "That word is informal; in writing you would use the longer form.",
        "Twelve cards are due today, four of them new.",
        "Your pronunciation of the long vowels is much better than last week.",
        "Let's slow down and do five sentences on just that pattern.",
        "In the past tense that verb takes the other auxiliary.",
        "Good guess, but that one is a false friend.",
        "We can keep the dialogue short and repeat it with new words.",
    ),
    (
        Detail(
            _pick("seventy-three percent", "eighty-one percent", "sixty-eight percent"),
            "What score did you say I got on the placement test?",
            "How did the level check at the start go for me?",
            sentence="You scored {v} on the placement test, a solid B1.",
        ),
        Detail(
            _pick("Wiebke Nieuwenhuis", "Jozefien Vandamme", "Siebrand Oosterhout"),
            "Which conversation partner did you set me up with?",
            "Who am I supposed to chat with for speaking practice?",
            sentence="I matched you with {v} for weekly speaking practice on Thursdays.",
        ),
        Detail(
            _pick("the pluperfect", "separable verbs", "diminutives"),
            "Which grammar topic did you say I'm weakest in?",
            "What's my worst area according to you?",
            sentence="Looking at the last month, {v} is where most of your mistakes are.",
        ),
        Detail(
            _pick("Lighthouse Keeper", "Windmill Apprentice", "Canal Cartographer"),
            "What's the name of the story unit you picked for me?",
            "Which reading series am I working through?",
            sentence="I picked the {v} unit for your reading; one chapter a week.",
        ),
        Detail(
            lambda rng: f"verbs-{code(rng, 5).lower()}-deck",
            "What was the deck id in the flashcard export?",
            "Which code identifies my card collection?",
            tool="vocab_deck",
            record="front\tback\tdue\tease\n# deck: {v}\nuitgebreid\textensive\t2026-04-02\t2.5",
        ),
        Detail(
            _pick("inversion after adverbial", "dangling participle", "wrong gender article"),
            "What error did the exercise feedback mark most?",
            "What kept being flagged in my marked work?",
            tool="grade_exercise",
            record='<feedback score="64" max="100">\n  <item n="3" correct="no">{v}</item>\n'
            "</feedback>",
        ),
    ),
)

FREIGHT = Agent(
    "freight dispatch",
    "You dispatch a small fleet of trucks: loads, drivers' hours, rates, tracking and customs "
    "papers. You never accept a load below the rate floor without asking.",
    "Keep every truck loaded, every driver legal and every customer told.",
    (
        Tool(
            _tool("load_board", "Search the load board.", lane="From→to"),
            lambda rng: {"lane": rng.choice(LANES)},
            (load_board,),
        ),
        Tool(
            _tool("track", "Tracking events for a truck or load.", id="Load or truck id"),
            lambda rng: {"id": f"LD{rng.randint(100000, 999999)}"},
            (track_shipment,),
        ),
        Tool(
            _tool("rate_quote", "Quote a lane.", lane="From→to", weight="Tonnes"),
            lambda rng: {"lane": rng.choice(LANES), "weight": str(rng.randint(2, 24))},
            (rate_quote,),
        ),
        Tool(
            _tool("driver_hours", "Drivers' hours left.", depot="Which depot"),
            lambda rng: {"depot": rng.choice(TOWNS)},
            (driver_hours, customs_docs),
        ),
    ),
    (
        "anything on {lane} for tomorrow?",
        "where's {person}'s truck right now",
        "quote {lane}, {n} tonnes",
        "who has hours left for a late run",
        "has the customs paperwork cleared for the {town} load",
        "Ima li što za {lane} ovaj tjedan?",
        "is the reefer free on {day}",
        "tell the customer in {town} we're {n} min late",
        "book {person} on the {clock} pickup",
        "Bolehkah semak status muatan ke {town}?",
    ),
    (
        "Two loads on that lane pay above the floor; one needs a reefer.",
        "The truck is at the border queue, about forty minutes behind.",
        "That driver has under four hours left today.",
        "Customs released the load; the papers are attached to the job.",
        "The rate is good but the pickup window is only an hour.",
        "The customer confirmed the new delivery slot.",
        "Fuel surcharge went up this week, so the quote is a bit higher.",
        "The reefer is booked until the weekend.",
        "The driver took the break early, so the ETA moved.",
    ),
    (
        Detail(
            lambda rng: f"LD{rng.randint(100000, 999999)}-R",
            "Which load number did you book for the return leg?",
            "What reference is on the backhaul we took?",
            sentence="I booked {v} for the return leg; it pays above the floor.",
        ),
        Detail(
            _pick("Kovalenko Transport", "Trans-Adriatik d.o.o.", "Baltic Haulage UAB"),
            "Which subcontractor did you say takes the overflow?",
            "Who are we handing the extra work to?",
            sentence="The overflow goes to {v} this week; they confirmed two trucks.",
        ),
        Detail(
            _pick("four hours and ten minutes", "two hours and forty minutes"),
            "How long did you say the border delay was?",
            "How much time did we lose at the crossing?",
            sentence="The border delay came to {v}, so the delivery slot moved.",
        ),
        Detail(
            _pick("gate 14", "dock 9", "bay 31"),
            "Which gate did you say the consignee wants us at?",
            "Where at the warehouse do we unload?",
            sentence="The consignee wants us at {v}, not the main entrance.",
        ),
        Detail(
            lambda rng: f"26LT{code(rng, 14)}",
            "What was the MRN on the customs record?",
            "Which declaration number cleared the goods?",
            tool="driver_hours",
            record='{{"mrn": "{v}", "status": "released", "office": "Kybartai"}}',
        ),
        Detail(
            _pick("reefer_door_open", "tpms_low_rear_axle", "geofence_exit_unplanned"),
            "Which note did the tracking events show?",
            "What did the truck's telemetry complain about?",
            tool="track",
            record="event=delay at=2026-05-11T04:12:00Z place=kaunas truck=KN4431B note={v}",
        ),
    ),
)

LAB = Agent(
    "lab samples",
    "You are the sample-tracking assistant of a contract analytical lab: samples, runs, "
    "instruments, plate maps and exports. You never release a result that failed QC.",
    "Keep every sample accounted for and every result out on time.",
    (
        Tool(
            _tool("sample_query", "SQL over the sample registry.", where="SQL WHERE clause"),
            lambda rng: {"where": f"assay = '{rng.choice(ASSAYS)}'"},
            (sample_query,),
        ),
        Tool(
            _tool("instrument_log", "An instrument's run log.", instrument="Which one"),
            lambda rng: {"instrument": f"{rng.choice(ASSAYS).lower()}-{rng.randint(1, 4)}"},
            (instrument_log,),
        ),
        Tool(
            _tool("plate_map", "Layout of a plate.", plate="Plate barcode"),
            lambda rng: {"plate": f"PL{rng.randint(10000, 99999)}"},
            (plate_map,),
        ),
        Tool(
            _tool("export_results", "Signed link to a run's results.", run="Run id"),
            lambda rng: {"run": code(rng, 6)},
            (export_link,),
        ),
    ),
    (
        "where is sample S{n}0{n} right now",
        "how many {assay} samples are waiting",
        "did the {assay} run finish overnight?",
        "send me the export for the last {assay} run",
        "lay out a plate for {n} samples plus standards",
        "why did the plate reader stop at {clock}",
        "Koliko uzoraka čeka na {assay}?",
        "is anything on hold for more than {n} days",
        "move the {assay} batch to {day}",
        "Hoeveel monsters staan er nog open voor {assay}?",
    ),
    (
        "Three samples failed QC and are on hold until the rerun.",
        "The freezer log shows no excursion over the weekend.",
        "The run finished at 04:12 and passed system suitability.",
        "The plate reader dropped its serial link; a restart fixed it.",
        "The export link is valid for one hour.",
        "Two samples arrived without a chain-of-custody form.",
        "The standards curve looks linear over the whole range.",
        "That batch is due back to the client on Friday.",
        "I moved the overflow samples to the second freezer.",
    ),
    (
        Detail(
            _pick("rack 17, shelf C", "rack 4, shelf A", "rack 22, shelf E"),
            "Which rack did you say the retained samples are in?",
            "Where in the freezer did the leftovers go?",
            sentence="The retained samples are in {v} of the minus-eighty freezer.",
        ),
        Detail(
            _pick("zero point nine nine eight", "zero point nine nine four"),
            "What r-squared did you say the calibration curve had?",
            "How good was the fit of the standards?",
            sentence="The calibration curve came out at r² {v}, inside the limit.",
        ),
        Detail(
            _pick("Ngaire Whitcombe", "Ilse Brouwer-Tanaka", "Radomir Vukčević"),
            "Who did you say signed off the QC?",
            "Which person approved the quality check?",
            sentence="QC was signed off by {v} this morning, so the results can go out.",
        ),
        Detail(
            lambda rng: f"DEV-{rng.randint(2026, 2026)}-{rng.randint(100, 999)}",
            "What deviation number did you raise?",
            "Which record tracks the thing that went wrong?",
            sentence="I raised {v} for the missing custody forms.",
        ),
        Detail(
            lambda rng: f"COLUMN-{code(rng, 6)}",
            "What was the column serial in the instrument log?",
            "Which separation cartridge was fitted for the run?",
            tool="instrument_log",
            record="2026-02-19T03:40:11Z instrument=hplc-2 run=R88213 status=ok column={v}",
        ),
        Detail(
            lambda rng: f"S2026{rng.randint(1000, 9999)}X",
            "Which sample id was on hold in the query result?",
            "What was the code of the specimen that got stuck?",
            tool="sample_query",
            record=" sample_id | assay | status\n-----------+-------+--------\n"
            " {v} | qPCR | on hold\n(1 row)",
        ),
    ),
)

AGENTS: tuple[Agent, ...] = (LEGAL, HOME, TUTOR, FREIGHT, LAB)


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

    shape = rng.randrange(8)
    if shape == 0:
        return pick(1)[0]
    if shape == 1:
        return "Status:\n" + "\n".join(f"- [x] {s}" for s in pick(rng.randint(2, 4)))
    if shape == 2:
        return "\n".join(f"{i}. {s}" for i, s in enumerate(pick(3), 1)) + "\n\nShall I go on?"
    if shape == 3:
        return f"> {pick(1)[0]}\n\nThat's the short of it. {' '.join(pick(2))}"
    if shape == 4:
        return "```\n" + "\n".join(pick(2)) + "\n```\nThat is what I found."
    if shape == 5:
        return _fill(
            rng, "Checked {n} records for {person} ({town}); {amount} in total. " + pick(1)[0]
        )
    if shape == 6:
        return "\n\n".join(" ".join(pick(rng.randint(1, 2))) for _ in range(rng.randint(2, 3)))
    sentence = pick(1)[0]
    return f"Done — {sentence[0].lower()}{sentence[1:]}"


STEP_TEXTS = (
    None,
    None,
    "On it.",
    "Looking that up.",
    "Checking two things first.",
    "One sec, querying.",
)
