"""What users of the fifth set say, and how they later change it.

A detail comes said plainly, with its number in words, as a date relative to today, as a name
in a script the earlier sets hardly use (Georgian, Armenian, Tamil, Amharic, Sinhala,
Malayalam, Khmer, Gujarati), in another language (Swahili, Turkish, Polish, Portuguese,
Hungarian, Romanian, Tagalog, Yoruba), about a third person, inside a question ("can we move
the visit to the 14th?"), inside a pasted e-mail with its headers, inside a pasted markdown
table, in a bullet list, as a one- or two-word answer to the assistant's question ("the blue
one"), misspelt and fixed in the next message, or in two halves two messages apart.

Corrections come in every style: marked ("correction: ..."), unmarked (the new value simply
stated), far from the original, in other words for the same subject, in another language,
of a third person's detail, partial (one item of a list), twice, and retracted (the user
takes a correction back: the first value stands).

A value must not occur anywhere in a session but where it is stated: the scorer finds a fact
by its value. The generator checks it for every session it makes.
"""

from __future__ import annotations

from dataclasses import dataclass

PLAIN = "plain statement"
WORDS = "number in words"
RELATIVE = "relative date"
SCRIPT = "name in another script"
LANGUAGE = "in another language"
THIRD = "a third person's detail"
IN_QUESTION = "stated inside a question"
EMAIL = "inside a pasted e-mail"
TABLE = "inside a pasted table"
BULLETS = "in a bullet list"
ANSWER = "terse answer to the assistant's question"
TYPO = "misspelt, fixed in the next message"
HALVES = "one of two messages answering together"

# Correction styles.
MARKED = "marked"
UNMARKED = "unmarked"
FAR = "far from the original (100+ turns)"
RENAMED = "other words for the same subject"
OTHER_LANGUAGE = "in another language"
OF_THIRD = "of a third person's detail"
PARTIAL = "partial (one item of a list)"
TWICE = "corrected twice"
RETRACTED = "retracted (back to the first value)"
TYPO_FIX = "typo fixed in the next message"

# Question kinds.
Q_FACT = "user's detail"
Q_CORRECTED = "user's detail, as corrected"
Q_ASSISTANT = "the assistant's statement"
Q_TOOL = "a tool's output"
Q_SPANS = "answer spans two messages"


@dataclass(frozen=True)
class Said:
    """One detail: its kind, values, ways of saying it, a question sharing a word with it and
    one in other words; ``restate`` says it anew (a correction), ``rename`` says it anew in
    other words for the same subject."""

    kind: str
    values: tuple[str, ...]
    statements: tuple[str, ...]
    ask_shared: str
    ask_other: str
    restate: str | None = None
    rename: str | None = None


@dataclass(frozen=True)
class Pasted:
    """Two details inside one pasted text (an e-mail, a table): ``{a}`` and ``{b}``."""

    kind: str
    values: tuple[tuple[str, ...], tuple[str, ...]]
    texts: tuple[str, ...]
    asks: tuple[tuple[str, str], tuple[str, str]]


@dataclass(frozen=True)
class Bullets:
    """Three details in a bullet list; a partial correction later changes one of them."""

    values: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    #: With ``{a}``, ``{b}``, ``{c}``.
    texts: tuple[str, ...]
    asks: tuple[tuple[str, str], tuple[str, str], tuple[str, str]]


@dataclass(frozen=True)
class Answer:
    """The assistant asks; the user answers in a word or two."""

    request: str
    question: str
    values: tuple[str, ...]
    replies: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Typo:
    #: (misspelt, right) pairs.
    values: tuple[tuple[str, str], ...]
    first: str
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class Halves:
    """Two details said two messages apart that one later question needs together."""

    values: tuple[tuple[str, ...], tuple[str, ...]]
    first: tuple[str, ...]
    second: tuple[str, ...]
    ask_shared: str
    ask_other: str


@dataclass(frozen=True)
class AgentFacts:
    singles: tuple[Said, ...]
    pasted: tuple[Pasted, ...]
    bullets: Bullets
    answer: Answer
    typo: Typo
    halves: Halves


S = Said

# ---- said to every agent ------------------------------------------------------------------

SHARED: tuple[Said, ...] = (
    S(
        SCRIPT,
        ("ნინო ბერიძე", "თამარ კაპანაძე", "ლევან გელაშვილი"),
        ("my new line manager is {v}", "fyi the manager I report to now: {v}"),
        "Who's my new line manager?",
        "Who do I report to these days?",
        restate="my line manager is {v} now",
        rename="I'm under {v} from this week, org chart changed",
    ),
    S(
        SCRIPT,
        ("Անի Պետրոսյան", "Արամ Սարգսյան", "Լիլիթ Հակոբյան"),
        ("the IT person for our floor is {v}", "floor IT contact → {v}"),
        "Who is the IT person for our floor?",
        "Who do I call when my laptop dies?",
        restate="the floor IT contact is {v} now",
    ),
    S(
        SCRIPT,
        ("கார்த்திக் சுப்பிரமணியம்", "மீனாட்சி ராஜன்", "அருண் வேலு"),
        ("cover for me on Fridays is {v}", "{v} covers my Friday shifts"),
        "Who covers for me on Fridays?",
        "If I'm off at the end of the week, who picks up my work?",
        restate="my Friday cover is {v} now",
        rename="{v} will be the one standing in for me at the end of each week",
    ),
    S(
        SCRIPT,
        ("ሰላማዊት ተስፋዬ", "ዮሐንስ ገብረ", "ብርሃኑ ደስታ"),
        ("the accountant who signs off expenses is {v}", "expenses sign-off: {v}"),
        "Who signs off my expenses?",
        "Whose approval do I need to get reimbursed?",
        restate="expenses are signed off by {v} now",
    ),
    S(
        SCRIPT,
        ("ದೀಪಾ ಶೆಟ್ಟಿ", "නිමාලි පෙරේරා", "ചിത്ര നായർ"),
        ("the union rep is {v} if anything comes up", "union rep = {v}"),
        "Who is the union rep?",
        "Who do I go to if there's a dispute with management?",
        restate="the union rep is {v} now",
    ),
    S(
        SCRIPT,
        ("សុខ ចាន់ធី", "ભાવના પટેલ", "ಅನಿಲ್ ಕುಮಾರ್"),
        ("the new intern is called {v}", "intern starting monday: {v}"),
        "What's the new intern called?",
        "Who joined us on a placement this term?",
    ),
    S(
        LANGUAGE,
        ("Jumanne ijayo", "Alhamisi ijayo", "Ijumaa ijayo"),
        ("(kwa Kiswahili, sorry) mkutano wa bodi ni {v}", "board meeting: {v}, nitakuja"),
        "When is the board meeting?",
        "When do the trustees sit next?",
        restate="mkutano wa bodi sasa ni {v}",
    ),
    S(
        LANGUAGE,
        ("üçüncü kattaki mutfak", "bodrumdaki depo", "çatı terası"),  # noqa: RUF001
        ("yangın toplanma noktası: {v}", "acil durumda toplanma yeri {v}"),  # noqa: RUF001
        "Where's the fire assembly point?",
        "Where do we gather if the alarm goes off?",
        restate="yeni toplanma noktası {v}",  # noqa: RUF001
    ),
    S(
        LANGUAGE,
        ("zielona teczka", "czerwony segregator", "szara koperta"),
        ("umowy są w {v}, na półce", "papiery od najmu → {v}"),
        "Where are the contracts kept?",
        "Where did I file the lease paperwork?",
        restate="umowy przełożyłam, teraz są w {v}",
    ),
    S(
        LANGUAGE,
        ("sexta-feira às 16h", "quarta-feira às 9h30", "segunda-feira às 14h"),
        ("o técnico do ar condicionado vem {v}", "ar condicionado: técnico {v}"),
        "When is the air-con technician coming?",
        "When's the repair visit for the cooling unit?",
        restate="o técnico agora vem {v}",
    ),
    S(
        LANGUAGE,
        ("Kovácsné Ildikó", "Szabó Bence", "Farkas Réka"),
        ("a gyerek tanára {v}, ha keresne", "my kid's teacher (tanára): {v}"),
        "Who's my kid's teacher?",
        "Who teaches my child this year?",
    ),
    S(
        LANGUAGE,
        ("Ọlábísí Àdìgún", "Mabuhay Dela Cruz", "Ionuț Vlăduț"),
        ("ẹ jọ̀ọ́, my landlord is {v}", "landlord contact (proprietar): {v}"),
        "Who's my landlord?",
        "Who owns the flat I rent?",
        restate="new landlord after the sale: {v}",
    ),
    S(
        THIRD,
        ("extension 4471", "extension 6203", "extension 5518"),
        ("Ayşe from payroll is on {v}", "payroll (Ayşe) — {v}"),
        "What's Ayşe's extension in payroll?",
        "How do I ring the woman who does our wages?",
        restate="Ayşe moved desks, she's on {v} now",
        rename="payroll's number changed — Ayşe picks up on {v}",
    ),
    S(
        THIRD,
        ("allergic to sesame", "allergic to kiwi", "allergic to shellfish"),
        ("my colleague Tendai is {v}, keep that in mind for the lunch order", "Tendai: {v}"),
        "What is Tendai allergic to?",
        "What can't my colleague eat at the team lunch?",
        restate="turns out Tendai is {v}, not what I said",
    ),
    S(
        THIRD,
        ("her flight lands at 06:40", "her flight lands at 22:15", "her flight lands at 13:05"),
        ("my sister Nomvula is visiting, {v} on Saturday", "Nomvula: {v}, can you remind me"),
        "When does Nomvula's flight land?",
        "What time do I need to be at arrivals for my sister?",
        restate="Nomvula rebooked, {v} now",
    ),
    S(
        WORDS,
        ("twenty-two days", "seventeen days", "thirty-one days"),
        ("I have {v} of annual leave left", "leave left this year: {v}"),
        "How many days of annual leave do I have left?",
        "How much holiday can I still take?",
        restate="HR says it's {v} of leave left, not what I told you",
    ),
    S(
        WORDS,
        ("six hundred and fifty", "four hundred and twenty", "nine hundred and ten"),
        ("the car park permit costs {v} a year", "permit: {v} per year"),
        "How much is the car park permit?",
        "What do I pay annually to leave my car at work?",
        restate="the permit went up to {v} a year",
    ),
    S(
        RELATIVE,
        ("a week on Wednesday", "the Monday after next", "the day after tomorrow"),
        ("my appraisal is {v}", "appraisal → {v}, dreading it"),
        "When is my appraisal?",
        "When's my yearly review with the boss?",
        restate="appraisal moved to {v}",
        rename="the performance chat got pushed, now {v}",
    ),
    S(
        RELATIVE,
        ("end of next month", "three weeks from today", "this time next week"),
        ("my passport renewal is due {v}", "passport due {v}!!"),
        "When's my passport renewal due?",
        "By when do I need new travel papers?",
    ),
    S(
        PLAIN,
        ("Kyoto-Eastbourne-17", "Tallis-Orchard-58", "Marimba-Quay-26"),
        ("the meeting-room booking password is {v}", "room booking pw: {v}"),
        "What's the meeting-room booking password?",
        "How do I log in to reserve a space for a call?",
        restate="room booking pw is {v} now",
    ),
)

# ---- insurance claims ---------------------------------------------------------------------

CLAIMS = AgentFacts(
    singles=(
        S(
            PLAIN,
            ("Dariusz Wróblewski", "Folasade Okonjo", "Elif Karakaya"),
            ("the adjuster on the Mbeki claim is {v}", "Mbeki claim adjuster: {v}"),
            "Who is the adjuster on the Mbeki claim?",
            "Who's assessing the damage at the flat with the burst pipe?",
            restate="the Mbeki claim has a new adjuster, {v}",
            rename="the loss assessor for that Mbeki file will be {v} going forward",
        ),
        S(
            WORDS,
            ("two thousand five hundred", "one thousand seven hundred", "three thousand"),
            ("the excess on the Okafor policy is {v} euros", "Okafor excess: {v} EUR"),
            "What's the excess on the Okafor policy?",
            "How much does the policyholder with the stolen bike pay first?",
            restate="the Okafor excess is {v} euros, I misread the schedule",
        ),
        S(
            RELATIVE,
            ("a fortnight from Monday", "the last Friday of next month", "in ten days' time"),
            ("the Lindqvist survey is booked for {v}", "survey (Lindqvist): {v}"),
            "When is the Lindqvist survey?",
            "When does the surveyor go out to the subsidence house?",
            restate="the Lindqvist survey moved to {v}",
        ),
        S(
            IN_QUESTION,
            ("the 14th", "the 23rd", "the 9th"),
            (
                "can we move the site visit with Mr Hashemi to {v}? he can't do this week",
                "could you push Mr Hashemi's site visit to {v}?",
            ),
            "When is Mr Hashemi's site visit now?",
            "When are we going round to see the man with the cracked ceiling?",
            restate="let's make Hashemi's visit {v} instead",
        ),
        S(
            PLAIN,
            ("reserve cap of 40k", "reserve cap of 25k", "reserve cap of 60k"),
            ("my authority is a {v}, above that it goes to Priya", "I have a {v}"),
            "What's my reserve cap?",
            "How much can I sign off without escalating?",
            restate="they changed my authority, it's a {v} now",
            rename="new delegated limit: {v}",
        ),
        S(
            PLAIN,
            ("Hollowmere Drying", "Rapid Dry Tyneside", "DampAway Ltd"),
            ("our preferred drying firm is {v}", "drying firm we use: {v}"),
            "Which drying firm do we prefer?",
            "Who do we send to dehumidify flooded houses?",
            restate="we've switched to {v} for drying",
        ),
        S(
            THIRD,
            (
                "off until the 3rd of June",
                "off until the 17th of May",
                "off until the 28th of April",
            ),
            ("Priya is {v}, so referrals go to the deputy", "Priya {v}"),
            "When is Priya back?",
            "Until when is my escalation manager away?",
            restate="Priya extended her leave, she's {v}",
        ),
        S(
            PLAIN,
            ("ZR-5581-Q", "ZR-7730-K", "ZR-2094-T"),
            ("the fraud team's case number for the Greaves claim is {v}", "Greaves SIU ref {v}"),
            "What's the fraud team's case number for Greaves?",
            "What ref did the special investigations people give the suspicious one?",
        ),
    ),
    pasted=(
        Pasted(
            EMAIL,
            (
                ("policy HX-88213", "policy HX-40977", "policy HX-15260"),
                ("Bay 7", "Bay 12", "Bay 3"),
            ),
            (
                "fwd below, can you log it\n\n---------- Forwarded message ---------\nFrom: "
                "Teodora Ilieva <t.ilieva@example.net>\nDate: Tue, 3 Mar 2026 at 08:12\nSubject: "
                "car accident claim\nTo: claims@insurer.example\n\nHello,\nI was hit while "
                "parked on Saturday. My {a} covers the car. The car is now at the body shop, "
                "{b}, waiting for your engineer.\nThank you,\nTeodora",
            ),
            (
                (
                    "What's Teodora Ilieva's policy number?",
                    "Which cover is the parked-car woman on?",
                ),
                (
                    "Which bay at the body shop is Teodora's car in?",
                    "Where's the dented car waiting?",
                ),
            ),
        ),
        Pasted(
            TABLE,
            (
                ("Zoltán Berki", "Kwabena Asante", "Mirela Popescu"),
                ("8 July", "19 August", "2 September"),
            ),
            (
                "here's the rota I got\n\n| role | who | from |\n|---|---|---|\n| cover "
                "handler | {a} | {b} |\n| team lead | (vacant) | - |",
            ),
            (
                ("Who's the cover handler on the rota?", "Who is stepping in for my files?"),
                ("From what date is the cover handler on?", "When does my stand-in start?"),
            ),
        ),
    ),
    bullets=Bullets(
        (
            ("fence panels", "garden shed", "greenhouse"),
            ("carpets in the lounge", "kitchen units", "laminate in the hall"),
            ("the television", "the laptop", "the sofa"),
        ),
        (
            "the Adeyemi storm claim covers three things:\n- {a}\n- {b}\n- {c}",
            "Adeyemi items agreed:\n* {a}\n* {b}\n* {c}\nnothing else",
        ),
        (
            (
                "Which outside item does the Adeyemi claim cover?",
                "What got blown over in the garden?",
            ),
            ("Which flooring is on the Adeyemi claim?", "What got soaked on the ground floor?"),
            ("Which belonging is on the Adeyemi list?", "Which possession did the storm wreck?"),
        ),
    ),
    answer=Answer(
        "set up the new water claim for the Nakamura house",
        "Was it the pipe under the kitchen sink or the bath overflowing upstairs — which do I "
        "put as the cause?",
        ("the overflow", "kitchen one", "sink pipe"),
        ("{v}", "{v} I think", "{v}, per the call"),
        "What did we record as the cause on the Nakamura water claim?",
        "Why did the Nakamura house flood?",
    ),
    typo=Typo(
        (("CLM-41G-2207", "CLM-416-2207"), ("CLM-77B-9013", "CLM-778-9013")),
        "the complaint is about {typo}, log it",
        "Which claim is the complaint about?",
        "Which file did the customer complain about?",
    ),
    halves=Halves(
        (("the salvage agent", "the loss adjuster"), ("Seun", "Radka")),
        ("the car on the Ilic claim goes to {v} first",),
        ("and the contact there is {v}",),
        "Where does the car on the Ilic claim go, and who's the contact there?",
        "Whom do I phone about collecting the wrecked vehicle?",
    ),
)

# ---- school office ------------------------------------------------------------------------

SCHOOL = AgentFacts(
    singles=(
        S(
            PLAIN,
            ("Mrs Abernethy-Osei", "Mr Kaczmarczyk", "Ms Ravindran"),
            ("head of year 9 is {v}", "year 9 head → {v}"),
            "Who is head of year 9?",
            "Who looks after the thirteen and fourteen year olds?",
            restate="head of year 9 is {v} from now",
            rename="{v} takes over pastoral lead for that year group",
        ),
        S(
            WORDS,
            ("forty-eight pupils", "fifty-three pupils", "thirty-nine pupils"),
            ("the Kraków trip has {v} signed up", "{v} on the Kraków trip so far"),
            "How many are signed up for the Kraków trip?",
            "How big is the group going abroad in spring?",
            restate="Kraków numbers changed, {v} now",
        ),
        S(
            RELATIVE,
            ("the Tuesday after half term", "two weeks on Friday", "the first Monday back"),
            ("the fire inspection is {v}", "fire inspection {v}"),
            "When is the fire inspection?",
            "When is the safety officer coming round to check the alarms?",
            restate="fire inspection rescheduled to {v}",
            rename="the safety visit from the council is now {v}",
        ),
        S(
            IN_QUESTION,
            ("Wednesday period 5", "Thursday period 2", "Monday period 4"),
            (
                "can we move the 7B reading test to {v}? the hall is booked",
                "any chance 7B's reading test could go to {v}?",
            ),
            "When is 7B's reading test now?",
            "When do the youngest class sit their literacy check?",
            restate="put 7B's reading test on {v} instead",
        ),
        S(
            PLAIN,
            ("the blue minibus", "the hired coach", "the white minibus"),
            ("for the netball away match we're taking {v}", "netball transport: {v}"),
            "What transport are we taking to the netball away match?",
            "How are the girls getting to the away game?",
            restate="netball: we're taking {v} after all",
        ),
        S(
            THIRD,
            (
                "on phased return until Easter",
                "on jury service until the 12th",
                "on paternity leave till May",
            ),
            ("Mr Ferreira is {v}, so no cover from him", "Ferreira {v}"),
            "What's Mr Ferreira's situation?",
            "Why can't the geography teacher do cover?",
            restate="Mr Ferreira is {v} now",
        ),
        S(
            PLAIN,
            ("Gatepost-4419", "Lantern-7702", "Willow-3318"),
            ("the visitor sign-in tablet PIN is {v}", "sign-in tablet: {v}"),
            "What's the PIN for the visitor sign-in tablet?",
            "How do I unlock the thing at reception guests tap?",
            restate="tablet pin changed to {v}",
        ),
        S(
            PLAIN,
            ("Oakfield Road gate", "Birchwood Lane gate", "the side gate by the kitchens"),
            ("drop-off for the SEN taxi is at {v}", "SEN taxi drop-off: {v}"),
            "Where does the SEN taxi drop off?",
            "Where do the special-needs transport kids get out?",
        ),
    ),
    pasted=(
        Pasted(
            EMAIL,
            (
                ("Tobiasz", "Chinonso", "Eleftheria"),
                ("the 11th of March", "the 25th of March", "the 4th of March"),
            ),
            (
                "parent email, can you sort\n\nFrom: Joanna Mwangi <jmwangi@example.com>\nTo: "
                "office@school.example\nSubject: absence request\nDate: Mon, 2 Mar 2026 "
                "07:41:09 +0000\n\nGood morning,\nI'd like to request leave for my son {a} "
                "(year 8) on {b} for his grandmother's funeral.\nMany thanks,\nJoanna",
            ),
            (
                (
                    "What's the name of Joanna Mwangi's son?",
                    "Whose leave request came in for the funeral?",
                ),
                (
                    "On which date is Joanna's son off?",
                    "When will the boy be away for the funeral?",
                ),
            ),
        ),
        Pasted(
            TABLE,
            (("Lab S4", "Studio A", "Room C12"), ("Dr Mensah-Bonsu", "Mrs Halvorsen", "Mr Quispe")),
            (
                "mock exam rooming\n\n| paper | room | invigilator |\n|---|---|---|\n| "
                "chemistry | {a} | {b} |\n| english | Hall | TBC |",
            ),
            (
                ("Which room is the chemistry mock in?", "Where are the science mocks being sat?"),
                ("Who invigilates chemistry?", "Who's watching the science exam?"),
            ),
        ),
    ),
    bullets=Bullets(
        (
            ("sun cream", "a packed lunch", "a waterproof"),
            ("wellies", "trainers", "walking boots"),
            ("£14 for the coach", "£9 for the coach", "£22 for the coach"),
        ),
        (
            "letter for the 5M trip, they need:\n- {a}\n- {b}\n- {c}",
            "5M trip kit list:\n• {a}\n• {b}\n• {c}",
        ),
        (
            (
                "What do 5M need to bring first on the kit list?",
                "Which essential is top of the outing list?",
            ),
            ("Which footwear is on the 5M list?", "What shoes should the kids wear?"),
            ("How much is the coach for 5M?", "How much do parents pay for transport?"),
        ),
    ),
    answer=Answer(
        "book the hall for the year 11 assembly",
        "Morning slot or after lunch — and shall I book the projector too?",
        ("mornings, yes", "afternoon, no projector", "am + projector"),
        ("{v}", "{v} pls", "{v}"),
        "What slot did I want for the year 11 assembly?",
        "When's the gathering for the oldest pupils?",
    ),
    typo=Typo(
        (("Mrs Wojciechowkska", "Mrs Wojciechowska"), ("Mr Okonkow", "Mr Okonkwo")),
        "the new SENCo is {typo}",
        "Who is the new SENCo?",
        "Who coordinates additional needs support now?",
    ),
    halves=Halves(
        (("Ludmila", "Gaspard"), ("twenty-five past three", "ten to four")),
        ("the pupil who needs collecting early on Thursdays is {v}",),
        ("her nan comes at {v}",),
        "Which pupil goes early on Thursdays, and when does her nan come?",
        "Who leaves ahead of the bell midweek, and at what time?",
    ),
)

# ---- restaurant stock ---------------------------------------------------------------------

KITCHEN = AgentFacts(
    singles=(
        S(
            PLAIN,
            ("Halvorsen Dairy", "Moreno Lácteos", "Kilbride Creamery"),
            ("cream comes from {v}", "dairy supplier: {v}"),
            "Who supplies our cream?",
            "Which farm do we buy the milk products from?",
            restate="we moved dairy to {v}",
            rename="{v} does the milk and cream run now",
        ),
        S(
            WORDS,
            ("eighteen kilos", "twenty-seven kilos", "thirty-three kilos"),
            ("par for basmati is {v}", "basmati par {v}"),
            "What's the par for basmati?",
            "How much long-grain rice should we keep in?",
            restate="make basmati par {v}",
        ),
        S(
            RELATIVE,
            ("tomorrow week", "the Sunday after next", "a week from Thursday"),
            ("the EHO inspection is {v}", "environmental health visit {v}"),
            "When is the EHO inspection?",
            "When is the hygiene officer coming?",
            restate="EHO visit is now {v}",
            rename="the food safety inspector will come {v}",
        ),
        S(
            IN_QUESTION,
            ("Friday 7am", "Saturday 6am", "Wednesday 5am"),
            (
                "can we get the fish delivery moved to {v}?",
                "could the fish drop come {v} instead?",
            ),
            "When is the fish delivery now?",
            "When does the seafood arrive?",
            restate="fish delivery: {v} please",
        ),
        S(
            PLAIN,
            ("freezer 3", "the chest freezer", "the blast chiller"),
            ("the wagyu goes in {v}, nowhere else", "wagyu → {v}"),
            "Where does the wagyu go?",
            "Where do we keep the expensive beef?",
            restate="wagyu lives in {v} now",
        ),
        S(
            THIRD,
            ("on nights till the 20th", "on holiday till the 8th", "at the Leith site till Sunday"),
            ("sous chef Kwame is {v}", "Kwame {v}"),
            "Where's Kwame at the moment?",
            "Why isn't my second-in-command on the morning shift?",
            restate="Kwame is {v} now",
        ),
        S(
            PLAIN,
            ("Marrow-9921", "Saffron-4406", "Quince-7315"),
            ("the supplier portal login is {v}", "portal pw {v}"),
            "What's the supplier portal login?",
            "How do I get into the wholesaler's website?",
            restate="portal pw changed: {v}",
        ),
        S(
            WORDS,
            ("sixty covers", "eighty-five covers", "a hundred and ten covers"),
            ("Saturday's wedding party is {v}", "wedding sat = {v}"),
            "How many covers is Saturday's wedding?",
            "How big is the weekend marriage booking?",
        ),
    ),
    pasted=(
        Pasted(
            EMAIL,
            (
                ("€2.85 a kilo", "€3.10 a kilo", "€2.40 a kilo"),
                ("Tuesdays and Fridays", "Mondays only", "every weekday"),
            ),
            (
                "look what came in\n\n> From: Orla Brennan <orla@greengrocer.example>\n> "
                "Subject: new price list\n> Date: Thu, 5 Mar 2026 16:02 +0000\n>\n> Hi chef,\n"
                "> from April heritage tomatoes will be {a}. We now deliver {b}.\n> Orla",
            ),
            (
                (
                    "What is Orla charging for heritage tomatoes?",
                    "How much will the fancy red fruit cost?",
                ),
                ("On which days does Orla deliver now?", "When does the greengrocer drop off?"),
            ),
        ),
        Pasted(
            TABLE,
            (("Gruyère", "Taleggio", "Manchego"), ("Sipho Dube", "Anneli Koskinen", "Hamza Rafiq")),
            (
                "tasting menu changes\n\n| course | swap in | owner |\n|---|---|---|\n| cheese | "
                "{a} | {b} |\n| dessert | no change | - |",
            ),
            (
                (
                    "What's the cheese on the tasting menu now?",
                    "What are we serving before pudding?",
                ),
                ("Who owns the cheese course?", "Who is responsible for that course change?"),
            ),
        ),
    ),
    bullets=Bullets(
        (
            ("pink peppercorns", "smoked paprika", "sumac"),
            ("yuzu juice", "verjus", "pomegranate molasses"),
            ("black garlic", "wild garlic", "elephant garlic"),
        ),
        (
            "specials order for next week:\n- {a}\n- {b}\n- {c}",
            "add these to the specials order\n1. {a}\n2. {b}\n3. {c}",
        ),
        (
            ("Which spice is on the specials order?", "Which seasoning do we need extra of?"),
            ("Which sour ingredient is on the specials order?", "What acid are we getting in?"),
            ("Which garlic is on the specials order?", "What allium did we add?"),
        ),
    ),
    answer=Answer(
        "order more oil",
        "The 5-litre tins or the 20-litre drum? And rapeseed or sunflower?",
        ("big drum, rapeseed", "small tins of sunflower", "the drum pls"),
        ("{v}", "{v} ta", "{v}"),
        "Which oil did I ask for?",
        "What frying fat did I want ordered?",
    ),
    typo=Typo(
        (("Bracewel & Sons", "Bracewell & Sons"), ("Pellegrni Foods", "Pellegrini Foods")),
        "the new dry goods supplier is {typo}",
        "Who's our new dry goods supplier?",
        "Which wholesaler sends the flour and rice now?",
    ),
    halves=Halves(
        (("Brook Street", "the Quayside"), ("Tomasz", "Adwoa")),
        ("the spare walk-in key is at {v}",),
        ("{v} has it",),
        "Where's the spare walk-in key and who has it?",
        "If I'm locked out of the cold room, where do I go and whom do I ask?",
    ),
)

# ---- analytics / SQL ----------------------------------------------------------------------

ANALYTICS = AgentFacts(
    singles=(
        S(
            PLAIN,
            ("30 days without a session", "45 days without a purchase", "21 days without a login"),
            ("we define churn as {v}", "churn := {v}"),
            "How do we define churn?",
            "When do we count a customer as lost?",
            restate="churn is now {v}",
            rename="the lapsed-user rule is {v} from this quarter",
        ),
        S(
            WORDS,
            ("twelve thousand", "eight thousand five hundred", "fifteen thousand"),
            ("the weekly actives target is {v}", "WAU target {v}"),
            "What's the weekly actives target?",
            "How many people do we want using the app each week?",
            restate="WAU target revised to {v}",
        ),
        S(
            RELATIVE,
            ("next Tuesday morning", "the Thursday after next", "end of this week"),
            ("the board deck is due {v}", "deck due {v}"),
            "When is the board deck due?",
            "When do the slides for the directors have to be ready?",
            restate="board deck moved to {v}",
            rename="the directors' presentation now needs to be done {v}",
        ),
        S(
            IN_QUESTION,
            ("UTC+3", "UTC-5", "UTC+5:30"),
            (
                "can we report everything in {v} from now on? finance asked",
                "could you switch the reports to {v}?",
            ),
            "Which timezone do we report in?",
            "What clock are the dashboards on?",
            restate="reports in {v} please, finance changed their mind",
        ),
        S(
            PLAIN,
            ("analytics_prod_eu", "wh_reporting_v2", "lakehouse_gold"),
            ("the schema to query is {v}", "schema: {v}"),
            "Which schema should you query?",
            "Where do the production tables live?",
            restate="use {v} from now",
        ),
        S(
            THIRD,
            ("owns the revenue dashboard", "owns the churn model", "owns the events pipeline"),
            ("Beatriz {v}, ask her before changing it", "Beatriz: {v}"),
            "What does Beatriz own?",
            "Which piece of the data stack is my colleague responsible for?",
            restate="Beatriz {v} now, after the reorg",
        ),
        S(
            PLAIN,
            ("exclude Bulgaria", "exclude the Philippines", "exclude Iceland"),
            ("for the pricing analysis {v}, the test market skews it", "pricing: {v}"),
            "Which country do we leave out of the pricing analysis?",
            "Which test market skews the price study?",
            restate="for pricing {v} instead",
        ),
        S(
            PLAIN,
            ("seed 8675309", "seed 1618033", "seed 2718281"),
            ("use {v} for every sample so we can reproduce", "sampling {v}"),
            "Which seed do we use for sampling?",
            "What number makes our random draws repeatable?",
        ),
    ),
    pasted=(
        Pasted(
            EMAIL,
            (
                ("£74.20", "£81.95", "£66.40"),
                ("Dagrun Solberg", "Olamide Bakare", "Ilse Vandenberghe"),
            ),
            (
                "context from the CFO\n\nFrom: cfo@company.example\nTo: analytics@company."
                "example\nCc: Dagny Lindqvist\nSubject: Q1 ARPU\nX-Mailer: Outlook 16.0\n\n"
                "Please use {a} as the Q1 ARPU baseline in every chart. Questions to {b}.\n",
            ),
            (
                ("What's the Q1 ARPU baseline?", "What revenue-per-user number did the CFO give?"),
                ("Who should ARPU questions go to?", "Whom does finance want us to ask?"),
            ),
        ),
        Pasted(
            TABLE,
            (("utm_partner_xk", "utm_affiliate_zq", "utm_collab_rv"), ("3.2%", "4.8%", "2.6%")),
            (
                "from the marketing sheet\n\n| source | tag | expected CVR |\n|---|---|---|\n| "
                "partner | {a} | {b} |\n| newsletter | utm_nl | ? |",
            ),
            (
                (
                    "What's the tag for the partner source?",
                    "How are referral-partner visits labelled?",
                ),
                (
                    "What's the expected CVR for partner?",
                    "What conversion does marketing expect from referrals?",
                ),
            ),
        ),
    ),
    bullets=Bullets(
        (
            ("retention by cohort", "revenue by plan", "refunds by reason"),
            ("a funnel for checkout", "a map of signups", "a heatmap of usage"),
            ("NPS over time", "tickets per user", "CSAT by agent"),
        ),
        (
            "the dashboard needs:\n- {a}\n- {b}\n- {c}",
            "dashboard v1 scope\n  - {a}\n  - {b}\n  - {c}",
        ),
        (
            ("What's the first chart on the dashboard list?", "What leads the board view?"),
            ("What's the second item for the dashboard?", "What visual follows it?"),
            ("What's the third dashboard item?", "What support measure did we add?"),
        ),
    ),
    answer=Answer(
        "build the signup cohort table",
        "Weekly or monthly cohorts? And count from first visit or first signup?",
        ("weekly + signup", "monthly from visit", "week/signup"),
        ("{v}", "{v}", "{v} obviously"),
        "What cohort grain did I choose for signups?",
        "How did I want the new-user groups bucketed?",
    ),
    typo=Typo(
        (("dim_custmoer_v3", "dim_customer_v3"), ("fct_subscirptions", "fct_subscriptions")),
        "the source of truth table is {typo}",
        "What's the source of truth table?",
        "Which model do we trust above all others?",
    ),
    halves=Halves(
        (("Looker folder 214", "Metabase collection 88"), ("read-only", "edit")),
        ("the exec dashboards live in {v}",),
        ("and the sales team should get {v} access",),
        "Where do the exec dashboards live and what access does sales get?",
        "For the leadership reports, which place and which permission level for the sellers?",
    ),
)

# ---- grant writing ------------------------------------------------------------------------

GRANTS = AgentFacts(
    singles=(
        S(
            PLAIN,
            ("Young Carers Connect", "Bridges After School", "Roots & Routes"),
            ("the project is called {v}", "project name: {v}"),
            "What's the project called?",
            "What name goes at the top of the application?",
            restate="we renamed the project {v}",
            rename="the programme's title will be {v} on every form",
        ),
        S(
            WORDS,
            ("forty-two thousand", "thirty-eight thousand", "fifty-five thousand"),
            ("we're asking {v} pounds from the Lumen Trust", "Lumen ask: {v} pounds"),
            "How much are we asking from the Lumen Trust?",
            "What's the total request to that funder?",
            restate="the Lumen ask is {v} pounds now",
        ),
        S(
            RELATIVE,
            ("a week tomorrow", "the last day of next month", "Friday fortnight"),
            ("the Baobab Fund deadline is {v}", "Baobab deadline {v}"),
            "When is the Baobab Fund deadline?",
            "When must the East Africa application be in?",
            restate="Baobab extended to {v}",
            rename="submissions for the baobab call close {v}",
        ),
        S(
            IN_QUESTION,
            ("the 30th", "the 16th", "the 21st"),
            (
                "can we move the call with the Ceiba programme officer to {v}?",
                "could the Ceiba call be on {v} instead?",
            ),
            "When is the call with the Ceiba programme officer?",
            "When am I speaking to the person at that foundation?",
            restate="make the Ceiba call {v}",
        ),
        S(
            PLAIN,
            ("charity no. 1187342", "charity no. 1093318", "charity no. 1154409"),
            ("we're registered as {v}", "reg: {v}"),
            "What's our charity number?",
            "What registration do funders ask us to quote?",
            restate="use {v}, that's the merged entity",
        ),
        S(
            THIRD,
            (
                "can only write letters after the 10th",
                "wants to see the draft first",
                "is on sabbatical till June",
            ),
            ("our referee, Professor Achterberg, {v}", "Prof Achterberg {v}"),
            "What's the situation with Professor Achterberg?",
            "What did our academic supporter say about the reference?",
            restate="Professor Achterberg {v} now",
        ),
        S(
            PLAIN,
            ("a 15% match", "a 20% match", "a 10% match"),
            ("the council will give {v} on anything we win", "council: {v}"),
            "What match did the council promise?",
            "What will the local authority add on top?",
            restate="council now says {v}",
        ),
        S(
            PLAIN,
            ("Wellbeing-Kettle-31", "Harbour-Lantern-64", "Thistle-Comet-12"),
            ("the funder portal password is {v}", "portal pw {v}"),
            "What's the funder portal password?",
            "How do I log in to submit the application?",
        ),
    ),
    pasted=(
        Pasted(
            EMAIL,
            (
                ("Ms Onyekachi Eze", "Mr Halvard Strand", "Dr Rukhsana Bibi"),
                ("one hundred and twenty", "ninety", "two hundred"),
            ),
            (
                "partner's letter, paste into the annex\n\n-----Original Message-----\nFrom: "
                "library.services@borough.example\nSent: 02 March 2026 11:20\nSubject: letter "
                "of support\n\nOn behalf of the library service, {a} confirms we will host "
                "sessions for up to {b} families in year one.\n",
            ),
            (
                (
                    "Who signed the library's letter of support?",
                    "Who vouched for us at the book service?",
                ),
                (
                    "How many families will the library host?",
                    "How many households can the partner take?",
                ),
            ),
        ),
        Pasted(
            TABLE,
            (
                ("Kingsmead Hub", "St Aidan's Hall", "the Orchard Centre"),
                ("Thursdays 4-6pm", "Tuesdays 5-7pm", "Saturdays 10-12"),
            ),
            (
                "delivery plan\n\n| venue | sessions | lead |\n|---|---|---|\n| {a} | {b} | "
                "coordinator |\n| online | monthly | volunteer |",
            ),
            (
                ("Which venue is in the delivery plan?", "Where will the in-person work happen?"),
                ("When are the venue sessions?", "What's the regular weekly slot?"),
            ),
        ),
    ),
    bullets=Bullets(
        (
            ("fewer missed school days", "better sleep", "more time with friends"),
            ("a peer mentor each", "a named key worker", "a weekly check-in"),
            ("respite days twice a term", "a summer residential", "monthly family outings"),
        ),
        (
            "outcomes, in this order:\n- {a}\n- {b}\n- {c}",
            "our three outcomes\n- {a}\n- {b}\n- {c}",
        ),
        (
            ("What's the first outcome?", "What's our headline result for young carers?"),
            ("What's the second outcome?", "What support person do we promise?"),
            ("What's the third outcome?", "What break do the children get?"),
        ),
    ),
    answer=Answer(
        "fill in the safeguarding section",
        "Shall I name our DSL, and is the policy the 2025 version or the new draft?",
        ("yes, the 2025 one", "the new draft one", "yes + 2025"),
        ("{v}", "{v}", "{v} — thanks"),
        "Which safeguarding policy version did I say?",
        "Which child-protection document should the form cite?",
    ),
    typo=Typo(
        (("Esmé Farquharsen", "Esmé Farquharson"), ("Kofi Amponash", "Kofi Amponsah")),
        "our new treasurer is {typo}",
        "Who is our new treasurer?",
        "Who looks after the charity's money now?",
    ),
    halves=Halves(
        (("Nottingham", "Sheffield"), ("Room 2.14", "the Atrium")),
        ("the funder's assessment visit is in {v}",),
        ("at {v}, they said",),
        "Where is the funder's assessment visit — city and room?",
        "Where do we have to show up for the inspection by the grant-maker?",
    ),
)

BY_AGENT = {
    "insurance claims": CLAIMS,
    "school office": SCHOOL,
    "restaurant stock": KITCHEN,
    "analytics SQL": ANALYTICS,
    "grant writing": GRANTS,
}

# ---- how corrections are said -------------------------------------------------------------

MARKED_SAYINGS = (
    "correction: {restated}",
    "sorry, my mistake earlier — {restated}",
    "no wait, not {old}. {restated}",
    "CORRECTION — {restated}. ignore what I said before",
    "oops, got that wrong: {restated}",
)
UNMARKED_SAYINGS = ("{restated}", "fyi {restated}", "btw {restated}.", "oh and {restated}")
RENAMED_SAYINGS = ("{renamed}", "heads up — {renamed}", "so, {renamed}")
OTHER_LANGUAGE_SAYINGS = (
    "Correção: não é {old}, é {new}.",
    "Düzeltme: {old} değil, {new}.",
    "Poprawka: nie {old}, tylko {new}.",
    "Sahihisho: si {old}, ni {new}.",
    "Helyesbítés: nem {old}, hanem {new}.",
    "Corectură: nu {old}, ci {new}.",
)
AGAIN_SAYINGS = (
    "changed again, sorry: {restated}",
    "ugh, and now it's changed once more — {restated}",
    "final answer, honestly: {restated} (not {middle})",
)
RETRACT_SAYINGS = (
    "ignore my last change — {old} was right after all",
    "scrap that correction, it stays {old}",
    "my bad, false alarm: still {old}",
    "undo that, it's {old} like I first said",
)
PARTIAL_SAYINGS = (
    "same list, but swap {old} for {new}",
    "one change to that list: {new} instead of {old}",
    "keep the rest, just {new} rather than {old}",
)
TYPO_SAYINGS = ("*{v}", "sorry typo — {v}", "{v}* fat fingers", "I mean {v}")
